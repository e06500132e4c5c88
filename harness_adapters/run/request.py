"""What a run asks for and what its answers were made with: the run request (model, adapters,
suite, output folder, the engine's own arguments), the frozen spec beside the records
(``run_spec.json``, schema ``primebench.run/1``; a resume must match it) and the run folder's
lock. Shared by every engine and harness driver (docs/architecture.md, "Run records and
reports")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_adapters.run.errors import BackendError
from primebench_tasks.data.codec import Document, optional, rest
from primebench_tasks.data.folder_lock import FolderLock
from primebench_tasks.data.io import atomic_write_text, canonical_json
from primebench_tasks.suite.manifest import SuiteManifest

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
    batch_size: int = 32
    max_new_tokens: int | None = None
    data: dict[str, str] = field(default_factory=dict)
    """Upstream lmms-eval task → a local copy of its dataset (``--dataset``), for benchmarks whose
    items the reference panel holds only as ids (read from the hub otherwise)."""
    engine_args: Any = None
    """What the engine's own options asked for, in a type the engine owns (vLLM:
    ``engines.vllm.settings.VllmArgs``; None: the engine's defaults). The run never reads it:
    the engine records what of it matters in the spec's conditions."""

    @property
    def model_name(self) -> str:
        return self.name or Path(self.model.rstrip("/")).name

    def variants(self) -> list[str | None]:
        base: list[str | None] = [None] if self.include_base else []
        return base + sorted(self.adapters)


ENGINE_FIELDS = ("engine_args",)
"""The :class:`RunRequest` fields an engine's ``request_fields`` may set: its own arguments,
opaque to the run (the others are the run's own: the model, the suite, the folder, the adapters,
batching, decoding, the datasets)."""


def base_spec(
    req: RunRequest, conditions: Mapping[str, Any], adapters: Mapping[str, Any]
) -> RunSpec:
    """The run spec every engine freezes (schema :data:`RUN_SCHEMA`): the suite, the model, the
    prompt kwargs and decoding the run's requests are built with, the engine's ``conditions``
    (harness, backend and versions, prompt, decoding, suite: shown in the placement report) and
    its ``adapters`` (name → path, rank, weights digest, what is applied)."""
    from harness_adapters.suites.prompt import GENERATION, PROMPT_KWARGS

    return RunSpec(
        conditions=dict(conditions),
        schema=RUN_SCHEMA,
        suite=req.suite["version"],
        suite_name=req.suite["name"],
        model=req.model_name,
        model_path=str(req.model),
        prompt_kwargs=PROMPT_KWARGS,
        generation={
            **GENERATION,
            "max_new_tokens": req.max_new_tokens or GENERATION["max_new_tokens"],
        },
        adapters={n: dict(a) for n, a in adapters.items()},
    )


@dataclass(frozen=True)
class RunSpec(Document):
    """What a run folder's answers were made with, typed (``run_spec.json``; schema
    :data:`RUN_SCHEMA`, or PRISM's records schema for ``prism_run_spec.json``): the suite
    version and name (a PRISM build's spec names its suite by an object), the model's name and
    path, the prompt kwargs and decoding the requests were built with, the engine's or
    harness's ``conditions`` (shown in the placement report), every adapter (name → path,
    rank, weights digest, what of it is applied, a note), the digest of the static documents
    asked (``documents``: benchmark → digest) and an adaptive run's settings, policy, guard and
    pool digests (``adaptive``). A resume must match it (:func:`freeze_spec`); fields another
    writer adds are kept in ``extra``, as written. Read by :meth:`from_json` (a field of
    another type: an ``InputError`` naming the file and the field, never a traceback)."""

    json_what = "run spec"

    adapters: Mapping[str, Mapping[str, Any]]
    schema: str | None = optional()
    suite: str | Mapping[str, Any] | None = optional()
    model: str | None = optional()
    suite_name: str | None = optional()
    model_path: str | None = optional()
    prompt_kwargs: Mapping[str, Any] | str | None = optional()
    generation: Mapping[str, Any] | None = optional()
    conditions: Mapping[str, Any] | None = optional()
    documents: Mapping[str, Any] | None = optional()
    adaptive: Mapping[str, Any] | None = optional()
    extra: Mapping[str, Any] = rest()

    @classmethod
    def of(cls, spec: RunSpec | Mapping[str, Any], file: str = "run spec") -> RunSpec:
        """``spec`` itself, or the spec the JSON object ``spec`` holds."""
        return spec if isinstance(spec, RunSpec) else cls.from_json(spec, file)

    def with_(self, **changes: Any) -> RunSpec:
        """The spec with ``changes`` (e.g. ``documents=``, ``adaptive=``)."""
        from dataclasses import replace

        return replace(self, **changes)

    @property
    def kind(self) -> str:
        """``adaptive`` or ``static``."""
        return "adaptive" if self.adaptive else "static"


def read_run_spec(path: Path) -> RunSpec:
    """A run folder's frozen spec (``run_spec.json``), read by the strict reader the other typed
    documents use (no NaN, no lone surrogate, no nesting past its depth limit: an
    ``InputError`` naming the file, not a ``RecursionError``) and checked
    (:meth:`RunSpec.from_json`)."""
    from primebench_tasks.data.io import strict_json_loads, utf8_text

    f = str(path)
    text = utf8_text(path.read_bytes(), f)
    return RunSpec.from_json(strict_json_loads(text, "the run's frozen spec", f), f)


BACKEND_IDENTITY = ("kind", "base_url", "served_model")
"""The fields of a run's ``conditions.backend`` that say who answered: a resume must keep them."""


def freeze_spec(
    out: Path, spec: RunSpec | Mapping[str, Any], name: str = "run_spec.json"
) -> RunSpec:
    """Write ``out/name``, or check that an existing one matches (adapters may grow); returns
    the spec written."""
    path = out / name
    new = RunSpec.of(spec, str(path))
    if path.exists():
        old = read_run_spec(path)
        for key in ("schema", "suite", "model", "model_path", "prompt_kwargs", "generation"):
            if getattr(old, key) != getattr(new, key):
                raise BackendError(
                    f"{out} holds a run with a different {key} "
                    f"({getattr(old, key)!r} vs {getattr(new, key)!r}); use another --out"
                )
        # who answers: another engine or endpoint would mix two servers' answers as one model's
        # (and the spec would name only the second); the identity is the backend's kind, address
        # and served name — versions may move between a run and its resume
        who = [
            {k: b.get(k) for k in BACKEND_IDENTITY if k in b}
            for b in ((d.conditions or {}).get("backend") for d in (old, new))
            if isinstance(b, Mapping)
        ]
        if len(who) == 2 and who[0] != who[1]:
            raise BackendError(
                f"{out} holds answers made by {json.dumps(who[0], sort_keys=True)}; this run's "
                f"are made by {json.dumps(who[1], sort_keys=True)}: the two would be placed as one model's; resume with "
                "the same engine and endpoint, or use another --out"
            )
        # a static run's records are the static suite's answers, an adaptive run's the items its
        # test drew: an adaptive run may continue a static one (its answers are the suite's
        # stratified draw, which the test's design estimate reads, and they count in its item
        # budget), never the other way (a static run would count drawn items as the suite's)
        kinds = [old.kind, new.kind]
        if kinds == ["adaptive", "static"]:
            raise BackendError(
                f"{out} holds an adaptive run; this one is static: a static run does not "
                "continue an adaptive one (its drawn items are not the suite's); use another "
                "--out (an adaptive run may continue a static one)"
            )
        for name, a in new.adapters.items():
            was = old.adapters.get(name)
            # what was applied counts too (a run from before it was recorded has no "applied")
            keys = [
                k
                for k in ("path", "rank", "weights", "applied")
                if k in a and (was is None or k in was)
            ]
            if was is not None and any(was[k] != a[k] for k in keys):
                raise BackendError(
                    f"{out}: adapter {name} was run from {dict(old.adapters[name])}"
                    f", now {dict(a)}; give it another name"
                )
        # an adaptive run's items were chosen by its policy: another one (a later version's
        # default) would not ask what the interrupted run would have asked
        for what in ("policy", "guard"):
            was, now = ((d.adaptive or {}).get(what) for d in (old, new))
            if was is not None and now is not None and was != now:
                raise BackendError(
                    f"{out} holds an adaptive run under the {what} {was!r}, this one's is "
                    f"{now!r}; use another --out"
                )
        # the test's own settings: a resume may raise the item budget (go on asking) or move the
        # target, never lower the budget below what the run was given (its answers would be
        # reported as a budget spent that was never this one) nor change the round size or the
        # interval's level (they shaped the draws and the stop)
        was_a, now_a = old.adaptive or {}, new.adaptive or {}
        for what in ("round_size", "level"):
            if what in was_a and what in now_a and was_a[what] != now_a[what]:
                raise BackendError(
                    f"{out} holds an adaptive run with {what} {was_a[what]!r}, this one asks "
                    f"{now_a[what]!r}; resume it with the same, or use another --out"
                )
        if (
            "max_items" in was_a
            and "max_items" in now_a
            and now_a["max_items"] < was_a["max_items"]
        ):
            raise BackendError(
                f"{out} holds an adaptive run given --max-items {was_a['max_items']}; this one "
                f"gives {now_a['max_items']}: a resume may raise the item budget, never lower "
                f"it (give --max-items {was_a['max_items']} or more, or use another --out)"
            )
        # what the records were asked: the same ids, prompts and gold answers per benchmark
        # (suite_docs.documents_digest) — the same dataset at another path is fine, another
        # revision of it is not (a spec from before the digest was kept has none to compare)
        for what, was_d, now_d in (
            ("static items", old.documents, new.documents),
            (
                "adaptive item pools",
                (old.adaptive or {}).get("documents"),
                (new.adaptive or {}).get("documents"),
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
        new = new.with_(adapters={**old.adapters, **new.adapters})
    atomic_write_text(path, canonical_json(new.to_json()))
    return new


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
