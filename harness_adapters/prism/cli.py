"""``primebench prism build | run | score``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness_adapters.run.options import adapter_specs, reference_panel, say
from primebench_tasks.errors import InputError, PrimeBenchError

JUDGE_HELP = "vllm:MODEL_DIR | vllm-server:MODEL@URL | openai:MODEL@URL | rules (default: rules)"


def _engine(args: argparse.Namespace) -> dict:
    """The local engine's settings the options give (a ``vllm:`` judge's; none under an engine
    without them)."""
    return {
        "max_model_len": getattr(args, "max_model_len", None),
        "max_num_seqs": getattr(args, "max_num_seqs", None),
        "enforce_eager": getattr(args, "enforce_eager", False) or None,
        "gpu_memory_utilization": getattr(args, "gpu_memory_utilization", None),
        "tensor_parallel_size": getattr(args, "tensor_parallel_size", None),
        "max_lora_rank": getattr(args, "max_lora_rank", None),
    }


def _judge(spec: str, cache: Path, args: argparse.Namespace, key_env: str = "judge_api_key_env"):
    """A judge from ``spec``; its endpoint gets only the key of the option ``key_env`` names
    (``--judge-api-key-env`` for the judge, ``--audit-judge-api-key-env`` for the audit judge)."""
    from harness_adapters.judges.base import make_judge

    return make_judge(
        spec,
        cache,
        say,
        timeout_s=getattr(args, "judge_timeout", 120.0),
        api_key_env=getattr(args, key_env, None),
        **{k: v for k, v in _engine(args).items() if k != "max_lora_rank"},
    )


def cmd_build(args: argparse.Namespace) -> int:
    from harness_adapters.prism.build import build
    from primebench_tasks.pipeline.manifest import read_manifest

    out = Path(args.out)
    if args.suite:
        suite = read_manifest(args.suite)
        panel = reference_panel(args, suite)
    else:
        suite = None
        if not (args.panel or args.default):
            raise PrimeBenchError("give --suite, or --panel/--default for a panel pool")
        from primebench_tasks.data.panel import Panel

        panel = Panel.load(args.panel) if args.panel else Panel.load_default(args.default)
    judge = _judge(args.judge, out / "judge_cache", args)
    doc = build(
        panel, out, judge, suite, args.benchmarks, tuple(args.seeds), args.k, tuple(args.axes), say
    )
    print(f"{len(doc['items'])} items; artifacts per axis: {doc['axes']}")
    if judge is not None:
        print(f"generator {judge.id}: {judge.calls} call(s), {len(judge.failures)} failed")
    return 0


def _budgets(specs: list[str]) -> dict[str, int]:
    from harness_adapters.prism.run import BUDGETS

    out = dict(BUDGETS)
    for s in specs:
        if "=" in s:
            axis, n = s.split("=", 1)
            if axis not in out:
                raise PrimeBenchError(f"--budget {s}: unknown axis {axis!r}")
            out[axis] = int(n)
        else:
            out = {a: int(s) for a in out}
    return out


def cmd_run(args: argparse.Namespace) -> int:
    from harness_adapters.run.request import run_lock

    with run_lock(Path(args.out)):  # a second run into the folder is refused, not interleaved
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from harness_adapters.prism.build import read_build
    from harness_adapters.prism.run import RECORD_SCHEMA, run_prism
    from harness_adapters.prism.score import MATCHERS
    from harness_adapters.run.commands import SKIPPED_ENGINES
    from harness_adapters.run.engine import engine_named, request_fields_of
    from harness_adapters.run.request import ENGINE_FIELDS, freeze_spec
    from primebench_tasks.prism.prompts import EVALUEE

    index, store = read_build(args.prism)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    adapters = adapter_specs(args.lora)
    name = args.name or Path(args.model.rstrip("/")).name
    budgets = _budgets(args.budget)
    # the model through the engine the user names (#81): checked as a run checks it
    engine = engine_named(args.engine)
    if engine.name in SKIPPED_ENGINES:
        raise PrimeBenchError(SKIPPED_ENGINES[engine.name])
    if not callable(getattr(engine, "open_model", None)):
        raise PrimeBenchError(f"engine {engine.name!r} cannot run PRISM (it has no open_model)")
    fields = request_fields_of(engine, args, ENGINE_FIELDS)
    opened = engine.open_model(args.model, adapters, fields.get("engine_args"))  # type: ignore[attr-defined]
    freeze_spec(
        out,
        {
            "schema": RECORD_SCHEMA,
            "suite": index["suite"],
            "model": name,
            "model_path": str(args.model),
            "prompt_kwargs": EVALUEE,
            "generation": {
                "temperature": 0,
                "top_p": 1.0,
                "budgets": budgets,
                "builders": index["builders"],
            },
            "adapters": opened.adapters,
        },
        "prism_run_spec.json",
    )
    backend = opened.start()
    flip = _judge(args.flip_judge, out / "judge_cache", args)
    variants = ([None] if not args.no_base else []) + sorted(adapters)
    summary = run_prism(
        backend,
        index,
        store,
        name,
        variants,
        out,
        MATCHERS,
        flip,
        budgets,
        tuple(args.axes),
        args.batch_size,
        say,
    )
    for v, per in summary.items():
        print(f"{v}: " + ", ".join(f"{a} {n}" for a, n in per.items()))
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from harness_adapters.prism.score import score

    out = Path(args.out)
    judge = _judge(args.judge, out / "judge_cache", args)
    audit = (
        _judge(args.audit_judge, out / "audit_cache", args, "audit_judge_api_key_env")
        if args.audit_judge
        else None
    )
    doc = score(
        args.prism,
        args.runs,
        out,
        judge,
        audit,
        args.n_boot,
        args.seed,
        args.audit_items,
        sc_variant=args.sc_variant,
        mq_partial=args.mq_partial,
    )
    print((out / "leaderboard.md").read_text("utf-8"))
    return 0 if doc["models"] else 1


def _harness(name: str) -> Any:
    """The installed harness ``name`` (its PRISM export and ingest; prism imports no harness)."""
    from primebench_tasks.suite.harness import harness_for

    h = harness_for(".", name)
    if h.prism_export is None or h.prism_ingest is None:
        raise InputError(f"harness {name!r} cannot run PRISM's single-turn axes")
    return h


def cmd_prism_tasks(args: argparse.Namespace) -> int:
    """``primebench prism tasks HARNESS``: the single-turn axes as that harness's tasks."""
    axes = [a.strip() for a in args.axes.split(",") if a.strip()] if args.axes else None
    out = _harness(args.harness).prism_export(Path(args.prism), Path(args.out), axes)
    if args.harness == "vlmeval":
        for name, path in out.items():
            print(f"{name}: {path}")
        print(
            f"run: LMUData={args.out} primebench evaluate vlmeval -- --data {' '.join(out)} "
            "--model <model>"
        )
    elif args.harness == "lmms-eval":
        print(
            f"wrote {len(out)} files to {args.out}; run: lmms-eval --include_path {args.out} "
            "--tasks prism --log_samples ..."
        )
    else:
        print(f"wrote {len(out)} task(s) to {args.out}")
    return 0


def cmd_prism_ingest(args: argparse.Namespace) -> int:
    """``primebench prism ingest HARNESS``: that harness's results on the axes → run records."""
    h = _harness(args.harness)
    n = h.prism_ingest(Path(args.output), Path(args.prism), Path(args.out), args.model)
    print(f"appended {n} record(s) to {Path(args.out) / 'prism_records.jsonl'}")
    return 0
