"""Evaluate checkpoints during training on a compact suite, through a running vLLM server, so the
training process never loads a second copy of the model.

- ``evaluate_checkpoint(...)``: for any training loop. A LoRA checkpoint (a directory with
  ``adapter_config.json``, as peft saves it) is loaded into the server under a new name through
  ``POST /v1/load_lora_adapter`` (start the server with ``--enable-lora`` and the environment
  variable ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``) and evaluated with the suite's prompts and
  scorer; records are appended to ``out/records.jsonl`` like ``primebench run``'s, so a restarted
  job does not re-evaluate a checkpoint it has finished.
- ``PrimeBenchCallback``: a Hugging Face ``TrainerCallback`` that does this at every save and adds
  ``primebench/suite_score`` (and per-category scores) to ``state.log_history``.

Full-weight checkpoints cannot be swapped into a running server: evaluate them with
``primebench run --model CHECKPOINT`` in a separate process.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from harness_adapters.suite_docs import suite_docs
from harness_adapters.vllm.backends import BackendError, ServerBackend
from harness_adapters.vllm.records import RecordFile, variant_name
from harness_adapters.vllm.runner import run_variants
from harness_adapters.vllm.session import score_frame
from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.variants import suite_scores


def load_adapter(base_url: str, name: str, path: str | Path, timeout_s: float = 120.0) -> None:
    """Load a LoRA adapter into a running vLLM server (idempotent for an already loaded name)."""
    req = urllib.request.Request(
        base_url.rstrip("/") + "/load_lora_adapter",
        data=json.dumps({"lora_name": name, "lora_path": str(Path(path).resolve())}).encode(),
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s):  # noqa: S310
            return
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        if "already been loaded" in detail:
            return
        hint = (" (start the server with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and "
                "--enable-lora)" if exc.code in (404, 405) else "")
        raise BackendError(f"server {base_url} refused to load adapter {name} from {path}: "
                           f"HTTP {exc.code} {detail[:300]}{hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise BackendError(f"server {base_url} is down or not answering: {exc}") from None


def evaluate_checkpoint(checkpoint: str | Path, suite: dict[str, Any], panel: Panel,
                        out: str | Path, base_url: str, served_model: str,
                        name: str | None = None, timeout_s: float = 120.0,
                        batch_size: int = 32) -> dict[str, Any]:
    """Evaluate the LoRA checkpoint at ``checkpoint`` on ``suite`` through the server; returns
    ``{"variant", "suite_score", "n_scored", "n_items", "categories": {category: score}}``."""
    ckpt = Path(checkpoint)
    if not (ckpt / "adapter_config.json").exists():
        raise BackendError(f"{ckpt} is not a LoRA checkpoint (no adapter_config.json): a running "
                           "server cannot swap full weights; use `primebench run --model` on it")
    name = name or ckpt.name
    load_adapter(base_url, name, ckpt, timeout_s)
    backend = ServerBackend(base_url, served_model, [name], timeout_s=timeout_s)
    records = RecordFile(Path(out) / "records.jsonl")
    docs = suite_docs(suite, panel)
    run_variants(backend, docs, served_model, [name], records, suite["version"], batch_size,
                 progress=None)
    variant = variant_name(served_model, name)
    scores, cats = score_frame(records, [variant], suite)
    X = scores.to_numpy(float)
    per_cat = {c: float(scores.loc[:, (cats == c).to_numpy()].mean(axis=1).iloc[0])
               for c in dict.fromkeys(cats)}
    return {"variant": variant, "suite_score": float(suite_scores(X, cats.to_numpy(object))[0]),
            "n_scored": int((X == X).sum()), "n_items": X.shape[1], "categories": per_cat}


def _callback_base() -> type:
    from transformers import TrainerCallback

    return TrainerCallback


class PrimeBenchCallback(_callback_base()):  # type: ignore[misc]
    """At each save, evaluate ``<output_dir>/checkpoint-<step>`` (a peft adapter) on the suite
    through the running server and log the suite score."""

    def __init__(self, suite: dict[str, Any], panel: Panel, base_url: str, served_model: str,
                 out: str | Path, prefix: str = "primebench") -> None:
        self.suite, self.panel, self.base_url = suite, panel, base_url
        self.served_model, self.out, self.prefix = served_model, Path(out), prefix
        self.results: list[dict[str, Any]] = []

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        res = evaluate_checkpoint(ckpt, self.suite, self.panel, self.out, self.base_url,
                                  self.served_model, name=f"step-{state.global_step}")
        log = {"step": state.global_step, f"{self.prefix}/suite_score": res["suite_score"],
               f"{self.prefix}/n_scored": res["n_scored"],
               **{f"{self.prefix}/{c}": v for c, v in res["categories"].items()}}
        state.log_history.append(log)
        self.results.append({"step": state.global_step, **res})
        return control
