"""Evaluate checkpoints during training on a compact suite, through a running vLLM server, so the
training process never loads a second copy of the model.

- ``evaluate_checkpoint(...)``: for any training loop. A LoRA checkpoint (a directory with
  ``adapter_config.json``, as peft saves it) is loaded into the server under a new name through
  ``POST /v1/load_lora_adapter`` (start the server with ``--enable-lora`` and the environment
  variable ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``) and evaluated with the suite's prompts and
  scorer; records are appended to ``out/records.jsonl`` like ``primebench run``'s, so a restarted
  job does not re-evaluate a checkpoint it has finished.
- ``PrimeBenchCallback``: a Hugging Face ``TrainerCallback`` that does this at every save and
  logs ``eval_primebench/suite_score`` (and per-category scores) through ``trainer.log``, so they reach
  TensorBoard / W&B / MLflow with the checkpoint's step (main process only; optionally in the
  background while training goes on).

Full-weight checkpoints cannot be swapped into a running server: evaluate them with
``primebench run --model CHECKPOINT`` in a separate process.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_adapters.engines.vllm.backends import ServerBackend
from harness_adapters.engines.vllm.lora_scope import check_server_adapters
from harness_adapters.run.plug import BackendError, place_variant, records_lock, run_lock
from harness_adapters.suites.prompt import GENERATION
from primebench_tasks.data.codec import Document, optional
from primebench_tasks.data.panel import Panel
from primebench_tasks.suite.manifest import SuiteManifest

if TYPE_CHECKING:
    from primebench_tasks.place.result import PersonFit, Placement, ResponseCheck


def load_adapter(base_url: str, name: str, path: str | Path, timeout_s: float = 120.0) -> None:
    """Load a LoRA adapter into a running vLLM server (idempotent for an already loaded name)."""
    req = urllib.request.Request(
        base_url.rstrip("/") + "/load_lora_adapter",
        data=json.dumps({"lora_name": name, "lora_path": str(Path(path).resolve())}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout_s):  # noqa: S310
            return
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        if "already been loaded" in detail:
            return
        hint = (
            " (start the server with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and --enable-lora)"
            if exc.code in (404, 405)
            else ""
        )
        raise BackendError(
            f"server {base_url} refused to load adapter {name} from {path}: "
            f"HTTP {exc.code} {detail[:300]}{hint}"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise BackendError(f"server {base_url} is down or not answering: {exc}") from None


def evaluate_checkpoint(
    checkpoint: str | Path,
    suite: SuiteManifest,
    panel: Panel | None,
    out: str | Path,
    base_url: str,
    served_model: str,
    name: str | None = None,
    timeout_s: float = 120.0,
    batch_size: int = 32,
    *,
    lora_language_model_only: bool = False,
    server_tower_lora: bool = False,
    datasets: Mapping[str, str | Path] | None = None,
) -> CheckpointResult:
    """Evaluate the LoRA checkpoint at ``checkpoint`` on ``suite`` through the server and place
    it through the one placement path (:func:`~harness_adapters.run.session.place_variant`,
    which writes through ``write_report``: its report in ``out/checkpoints/<name>/``); returns :func:`checkpoint_result` of that
    placement. The checkpoint is inspected first as
    ``primebench run`` inspects adapters (:func:`~harness_adapters.engines.vllm.lora_scope.
    check_server_adapters`): one that changes the vision tower or connector needs a server with
    tower/connector LoRA, else it is refused unless ``lora_language_model_only``. ``panel``: None
    for the suite's own reference panels (a multi-source suite's included); ``datasets``:
    upstream lmms-eval task → local copy of its data (``primebench run --dataset``)."""
    ckpt = Path(checkpoint)
    if not (ckpt / "adapter_config.json").exists():
        raise BackendError(
            f"{ckpt} is not a LoRA checkpoint (no adapter_config.json): a running "
            "server cannot swap full weights; use `primebench run --model` on it"
        )
    name = name or ckpt.name
    plan = check_server_adapters(
        {name: ckpt},
        base_url,
        language_only=lora_language_model_only,
        server_tower_lora_asserted=server_tower_lora,
    )
    load_adapter(base_url, name, ckpt, timeout_s)
    backend = ServerBackend(base_url, served_model, [name], timeout_s=timeout_s)
    # the one placement path: the checkpoint's report beside the records, and what the
    # callback logs read from the Placement it returns
    placement, variant = place_variant(
        backend,
        suite,
        panel,
        Path(out),
        served_model,
        name,
        batch_size,
        datasets,
        notes=[plan.notes[name]] if name in plan.notes else None,
        conditions={
            "harness": "PrimeBenchCallback (a running vLLM server)",
            "backend": {"kind": "server", "base_url": base_url, "served_model": served_model},
            "decoding": {**GENERATION},
            "suite": suite["version"],
        },
    )
    return checkpoint_result(placement, variant, plan.notes.get(name))


@dataclass(frozen=True)
class CheckpointResult(Document):
    """What the callback keeps and logs of one checkpoint, read from its :class:`Placement`:
    ``suite_score`` (share right on the suite's items, in [0, 1]; None: nothing scored),
    ``predicted_full`` (the suite's predicted full score), ``n_scored`` of ``n_items``,
    ``categories`` (category → score on its items), per benchmark the misfit check
    (``misfit``) and the response check (``answers``, where the run kept answers), the run's
    ``conditions`` and ``note`` (an adapter applied in part). Once logged by the callback:
    its ``step`` and the benchmarks flagged by each check (``misfit_flagged``,
    ``answers_flagged``) and newly flagged since the previous checkpoint (``misfit_jumped``)."""

    variant: str
    suite_score: float | None
    predicted_full: float | None
    n_scored: int
    n_items: int
    categories: dict[str, float | None]
    misfit: dict[str, PersonFit]
    answers: dict[str, ResponseCheck] = field(default_factory=dict)
    conditions: dict[str, Any] = field(default_factory=dict)
    note: str | None = optional()
    step: int | None = optional()
    misfit_flagged: list[str] = field(default_factory=list)
    misfit_jumped: list[str] = field(default_factory=list)
    answers_flagged: list[str] = field(default_factory=list)


def checkpoint_result(
    placement: Placement, variant: str, note: str | None = None
) -> CheckpointResult:
    """What the callback logs of ``variant``, read from its :class:`Placement`."""
    m = placement.models[variant]
    return CheckpointResult(
        variant=variant,
        suite_score=m.suite.score.value,
        predicted_full=m.suite.predicted_full.value,
        n_scored=m.suite.n_scored,
        n_items=m.suite.n_items,
        categories={c: cp.score.value for c, cp in m.categories.items()},
        misfit={b: bp.misfit for b, bp in m.benchmarks.items()},
        answers={b: bp.responses for b, bp in m.benchmarks.items() if bp.responses is not None},
        conditions=dict(placement.conditions or {}),
        note=note or None,
    )


def _callback_base() -> type:
    from transformers import TrainerCallback

    return TrainerCallback


class PrimeBenchCallback(_callback_base()):  # type: ignore[misc]
    """At each save, evaluate ``<output_dir>/checkpoint-<step>`` (a peft adapter) on the suite
    through the running server and log ``eval_<prefix>/suite_score``, ``eval_<prefix>/n_scored``
    and one ``eval_<prefix>/<category>`` per category *at the checkpoint's step* (dashboards show
    them as ``eval/primebench/...``).

    Logging goes through ``trainer.log`` (pass ``trainer=`` or call :meth:`bind`), so every
    ``report_to`` integration — TensorBoard, W&B, MLflow — receives the scores through its
    ``on_log``, and ``state.log_history`` holds them with their step. Only the main process
    (``state.is_world_process_zero``) evaluates; the records file is locked (``filelock``), so
    two jobs sharing ``out`` never interleave. With ``asynchronous=True`` training does not wait:
    each checkpoint is evaluated in a background thread, and the finished results are logged at
    the next step end (and all of them at the end of training) with their own step.

    ``results`` keeps one :class:`CheckpointResult` per checkpoint logged (``to_json()`` for
    its JSON values). Each holds the checkpoint's misfit check per benchmark (``misfit``), the
    conditions it was run under (``conditions``) and ``misfit_jumped``: the benchmarks flagged at
    this checkpoint but not at the previous one — said on stderr as a broken checkpoint or
    template, not a worse model (logged as ``eval_<prefix>/misfit_benchmarks``)."""

    def __init__(
        self,
        suite: SuiteManifest,
        panel: Panel | None,
        base_url: str,
        served_model: str,
        out: str | Path,
        prefix: str = "primebench",
        *,
        trainer: Any = None,
        asynchronous: bool = False,
        timeout_s: float = 120.0,
        lora_language_model_only: bool = False,
        server_tower_lora: bool = False,
        datasets: Mapping[str, str | Path] | None = None,
    ) -> None:
        self.suite, self.panel, self.base_url = suite, panel, base_url
        self.datasets = datasets
        self.served_model, self.out, self.prefix = served_model, Path(out), prefix
        self.trainer, self.asynchronous, self.timeout_s = trainer, asynchronous, timeout_s
        self.lora_language_model_only = lora_language_model_only
        self.server_tower_lora = server_tower_lora
        self.results: list[CheckpointResult] = []
        """Every checkpoint logged so far, in the order logged (with its step)."""
        self._pending: list[tuple[int, Any]] = []
        self._pool: Any = None

    def bind(self, trainer: Any) -> PrimeBenchCallback:
        """Log through ``trainer.log`` (and add this callback to it if it is not there)."""
        self.trainer = trainer
        if self not in trainer.callback_handler.callbacks:
            trainer.add_callback(self)
        return self

    def _evaluate(self, ckpt: Path, step: int) -> CheckpointResult:
        self.out.mkdir(parents=True, exist_ok=True)
        with run_lock(self.out), records_lock(self.out / "records.jsonl"):
            return evaluate_checkpoint(
                ckpt,
                self.suite,
                self.panel,
                self.out,
                self.base_url,
                self.served_model,
                name=f"step-{step}",
                timeout_s=self.timeout_s,
                lora_language_model_only=self.lora_language_model_only,
                server_tower_lora=self.server_tower_lora,
                datasets=self.datasets,
            )

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if not getattr(state, "is_world_process_zero", True):
            return control
        step = int(state.global_step)
        ckpt = Path(args.output_dir) / f"checkpoint-{step}"
        if self.asynchronous:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(1, thread_name_prefix="primebench-eval")
            self._pending.append((step, self._pool.submit(self._evaluate, ckpt, step)))
        else:
            self._emit(step, self._evaluate(ckpt, step), state)
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self._flush(state, wait=False)
        return control

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        # the last epoch ends after the last save and before on_train_end, where the reporting
        # integrations close their writers: wait for the pending checkpoints here
        if control.should_training_stop or (
            state.max_steps and state.global_step >= state.max_steps
        ):
            self._flush(state, wait=True)
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self._flush(state, wait=True)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        return control

    def _flush(self, state: Any, wait: bool) -> None:
        still = []
        for step, fut in self._pending:
            if wait or fut.done():
                self._emit(step, fut.result(), state)
            else:
                still.append((step, fut))
        self._pending = still

    def _emit(self, step: int, res: CheckpointResult, state: Any) -> None:
        # ``eval_``: the integrations file these under eval/ (TensorBoard's and W&B's
        # ``eval/primebench/suite_score``), beside the Trainer's own evaluation metrics
        key = f"eval_{self.prefix}"
        flagged = sorted(b for b, f in res.misfit.items() if f.flagged)
        # a misfit that appears between checkpoints: a broken checkpoint or template, not a
        # worse model — said on stderr and kept with the result
        before = set(self.results[-1].misfit_flagged) if self.results else set()
        jumped = [b for b in flagged if b not in before]
        for b in jumped:
            worse = res.misfit[b].worse_than
            print(
                f"[primebench] warning: checkpoint step {step}: its answers on {b} fit the "
                "reference models worse than "
                + ("most" if worse is None else f"{100 * worse:.0f} %")
                + " of them, the "
                "previous checkpoint's did not — a broken checkpoint or chat template, not a "
                "worse model",
                file=sys.stderr,
                flush=True,
            )
        # answers that stop reading like the reference runs' between checkpoints (unreadable,
        # empty, truncated): said on stderr with the cause
        read = sorted(b for b, c in res.answers.items() if c.flags)
        before_read = set(self.results[-1].answers_flagged) if self.results else set()
        for b in (b for b in read if b not in before_read):
            for flag in res.answers[b].flags:
                print(
                    f"[primebench] warning: checkpoint step {step}: {b}: {flag}",
                    file=sys.stderr,
                    flush=True,
                )
        metrics = {
            f"{key}/suite_score": res.suite_score,
            **(
                {f"{key}/predicted_full": res.predicted_full}
                if res.predicted_full is not None
                else {}
            ),
            f"{key}/n_scored": res.n_scored,
            f"{key}/misfit_benchmarks": len(flagged),
            f"{key}/answers_flagged_benchmarks": len(read),
            **{f"{key}/{c}": v for c, v in res.categories.items()},
        }
        self.results.append(
            replace(
                res, step=step, misfit_flagged=flagged, misfit_jumped=jumped, answers_flagged=read
            )
        )
        if self.trainer is None:  # no trainer to log through: the history only
            state.log_history.append({**metrics, "step": step})
            return
        now = state.global_step
        state.global_step = step  # the integrations and the history take the checkpoint's step
        try:
            self.trainer.log(metrics)
        finally:
            state.global_step = now
