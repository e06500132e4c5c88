"""What a run asks for and what its answers were made with: the run request (model, adapters,
suite, output folder, backend and engine settings), the frozen spec beside the records
(``run_spec.json``, schema ``primebench.run/1``; a resume must match it) and the run folder's
lock. Shared by every engine and harness driver (docs/architecture.md, "Run records and
reports")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness_adapters.run.errors import BackendError
from primebench_tasks.data.folder_lock import FolderLock
from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.suite.manifest import SuiteManifest


@dataclass
class EngineSettings:
    """The local engine's options a run asks for (vLLM's names; the engine reads them). CPU
    defaults; on a GPU start from the settings in docs/runner.md."""

    max_model_len: int | None = None
    """None: the model's own context length (from its config)."""
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None
    """The share of the GPU's memory (on vLLM's CPU backend: of RAM) the engine reserves. None:
    0.9 on a GPU; on a CPU a share that fits what is free (the engine's ``memory_share``)."""
    max_lora_rank: int | None = None
    """None: the largest rank of the adapters given, rounded up to a rank vLLM supports."""
    max_loras: int = 4
    max_num_seqs: int = 32
    enforce_eager: bool = False
    limit_images: int = 1
    dtype: str | None = None
    """None: vLLM's ``auto`` (bfloat16 on CPU even for a float32 checkpoint)."""
    enable_tower_connector_lora: bool = False
    """Apply adapters' vision-tower and connector matrices too; set by the runner from what the
    adapters change (:mod:`harness_adapters.engines.vllm.lora_scope`), not by hand."""
    extra: dict[str, Any] = field(default_factory=dict)


RUN_SCHEMA = "primebench.run/1"


@dataclass
class RunRequest:
    """What to run: a base model (local directory or cached repo id), named LoRA adapters, the
    suite, and where to write."""

    model: str
    suite: SuiteManifest
    out: Path
    adapters: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    include_base: bool = True
    backend: str = "vllm"
    base_url: str | None = None
    served_model: str | None = None
    timeout_s: float = 120.0
    concurrency: int = 8
    api_key_env: str | None = None
    engine: EngineSettings = field(default_factory=EngineSettings)
    batch_size: int = 32
    max_new_tokens: int | None = None
    replicas: int = 1
    ray_address: str | None = None
    cpus_per_replica: float = 1.0
    lora_language_model_only: bool = False
    """Accept adapters with a vision-tower/connector part the engine cannot apply, applying only
    their language-model part (``--lora-language-model-only``; the report says so)."""
    data: dict[str, str] = field(default_factory=dict)
    """Upstream lmms-eval task → a local copy of its dataset (``--dataset``), for benchmarks whose
    items the reference panel holds only as ids (read from the hub otherwise)."""
    server_tower_lora: bool = False
    """Server backend: the user asserts the server runs with ``--enable-tower-connector-lora``
    (used only when the server does not say so itself; the report says it was not verified)."""

    @property
    def model_name(self) -> str:
        return self.name or Path(self.model.rstrip("/")).name

    def variants(self) -> list[str | None]:
        base: list[str | None] = [None] if self.include_base else []
        return base + sorted(self.adapters)


def base_spec(
    req: RunRequest, conditions: Mapping[str, Any], adapters: Mapping[str, Any]
) -> dict[str, Any]:
    """The run spec every engine freezes (schema :data:`RUN_SCHEMA`): the suite, the model, the
    prompt kwargs and decoding the run's requests are built with, the engine's ``conditions``
    (harness, backend and versions, prompt, decoding, suite: shown in the placement report) and
    its ``adapters`` (name → path, rank, weights digest, what is applied)."""
    from harness_adapters.suites.prompt import GENERATION, PROMPT_KWARGS

    return {
        "conditions": dict(conditions),
        "schema": RUN_SCHEMA,
        "suite": req.suite["version"],
        "suite_name": req.suite["name"],
        "model": req.model_name,
        "model_path": str(req.model),
        "prompt_kwargs": PROMPT_KWARGS,
        "generation": {
            **GENERATION,
            "max_new_tokens": req.max_new_tokens or GENERATION["max_new_tokens"],
        },
        "adapters": dict(adapters),
    }


_SPEC_FIELDS: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "suite": str,
    "model": str,
    "adapters": dict,
    "adaptive": (dict, type(None)),
    "documents": dict,
    "conditions": dict,
    "generation": dict,
    "prompt_kwargs": (dict, str),
}
"""A frozen run spec's fields and their JSON types (``adapters`` is required)."""


def read_run_spec(path: Path) -> dict[str, Any]:
    """A run folder's frozen spec (``run_spec.json``), checked: a JSON object whose fields have
    their types (:data:`_SPEC_FIELDS`; ``adapters``: name → object) — else an ``InputError``
    naming the file and the field, never a traceback (a truncated or hand-edited spec)."""
    import json

    from primebench_tasks.data.io import utf8_text
    from primebench_tasks.errors import InputError

    f = str(path)
    try:
        spec = json.loads(utf8_text(path.read_bytes(), f))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg}): the run's frozen spec is damaged; give another --out",
            file=f,
            row=exc.lineno,
        ) from None
    if not isinstance(spec, dict):
        raise InputError(
            f"the run's frozen spec is a JSON {type(spec).__name__}, not an object", file=f
        )
    if "adapters" not in spec:
        raise InputError("the run's frozen spec has no adapters", file=f, field="adapters")
    for key, kind in _SPEC_FIELDS.items():
        if key in spec and not isinstance(spec[key], kind):
            raise InputError(
                f"{key} is a JSON {type(spec[key]).__name__} in the run's frozen spec",
                file=f,
                field=key,
            )
    for name, a in spec["adapters"].items():
        if not isinstance(a, dict):
            raise InputError(f"adapter {name!r} is not an object", file=f, field=f"adapters.{name}")
    return spec


def freeze_spec(out: Path, spec: dict[str, Any], name: str = "run_spec.json") -> None:
    """Write ``out/name``, or check that an existing one matches (adapters may grow)."""
    path = out / name
    if path.exists():
        old = read_run_spec(path)
        for key in ("schema", "suite", "model", "model_path", "prompt_kwargs", "generation"):
            if old.get(key) != spec.get(key):
                raise BackendError(
                    f"{out} holds a run with a different {key} "
                    f"({old.get(key)!r} vs {spec.get(key)!r}); use another --out"
                )
        # a static run's records are the static suite's answers, an adaptive run's the items its
        # test drew: an adaptive run may continue a static one (its answers are the suite's
        # stratified draw, which the test's design estimate reads, and they count in its item
        # budget), never the other way (a static run would count drawn items as the suite's)
        kinds = ["adaptive" if d.get("adaptive") else "static" for d in (old, spec)]
        if kinds == ["adaptive", "static"]:
            raise BackendError(
                f"{out} holds an adaptive run; this one is static: a static run does not "
                "continue an adaptive one (its drawn items are not the suite's); use another "
                "--out (an adaptive run may continue a static one)"
            )
        for name, a in spec["adapters"].items():
            was = old["adapters"].get(name)
            # what was applied counts too (a run from before it was recorded has no "applied")
            keys = [
                k
                for k in ("path", "rank", "weights", "applied")
                if k in a and (was is None or k in was)
            ]
            if was is not None and any(was[k] != a[k] for k in keys):
                raise BackendError(
                    f"{out}: adapter {name} was run from {old['adapters'][name]}"
                    f", now {a}; give it another name"
                )
        # an adaptive run's items were chosen by its policy: another one (a later version's
        # default) would not ask what the interrupted run would have asked
        for what in ("policy", "guard"):
            was, now = ((d.get("adaptive") or {}).get(what) for d in (old, spec))
            if was is not None and now is not None and was != now:
                raise BackendError(
                    f"{out} holds an adaptive run under the {what} {was!r}, this one's is "
                    f"{now!r}; use another --out"
                )
        # what the records were asked: the same ids, prompts and gold answers per benchmark
        # (suite_docs.documents_digest) — the same dataset at another path is fine, another
        # revision of it is not (a spec from before the digest was kept has none to compare)
        for what, was_d, now_d in (
            ("static items", old.get("documents"), spec.get("documents")),
            (
                "adaptive item pools",
                (old.get("adaptive") or {}).get("documents"),
                (spec.get("adaptive") or {}).get("documents"),
            ),
        ):
            was_d, now_d = was_d or {}, now_d or {}
            changed = [b for b in sorted(set(was_d) & set(now_d)) if was_d[b] != now_d[b]]
            if changed:
                raise BackendError(
                    f"{out} holds a run whose {what} of {', '.join(changed)} had other ids, "
                    "prompts or answers than this run's documents (another revision of the "
                    "dataset given by --dataset, or of the panel); use another --out"
                )
        spec = {**spec, "adapters": {**old["adapters"], **spec["adapters"]}}
    atomic_write_text(path, canonical_json(spec))


def run_lock(out: Path) -> FolderLock:
    """The run folder's lock (``RUN/run.lock``), held by every writer of a run folder for its
    whole run — ``run`` and ``rank-variants``, static or adaptive, on any engine or harness
    driver, and the training callback's evaluation of a checkpoint: a second one into the same
    folder is refused, not interleaved (it would ask the same items again, move an adaptive
    run's budget and, under a harness driver, write the same round folder). A killed run's lock
    goes with its process: the resume takes it at once."""
    return FolderLock(
        out,
        name="run.lock",
        doing="being written by another run",
        refused="two runs into one folder at once are refused (wait for it to end, or give "
        "another --out)",
        reentrant=True,
    )


def engine_settings(**kw: Any) -> EngineSettings:
    """EngineSettings from CLI values (None = default)."""
    base = asdict(EngineSettings())
    base.update({k: v for k, v in kw.items() if v is not None})
    return EngineSettings(**base)
