"""``primebench prism build | run | score``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness_adapters.vllm.cli import _adapters, _reference_panel, _say
from primebench_tasks.data.defaults import default_names
from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.evaluate.defaults import N_BOOT_VARIANTS
from primebench_tasks.prism.axes import AXES

JUDGE_HELP = "vllm:MODEL_DIR | vllm-server:MODEL@URL | openai:MODEL@URL | rules (default: rules)"


def _engine(args: argparse.Namespace) -> dict:
    return {
        "max_model_len": args.max_model_len,
        "max_num_seqs": args.max_num_seqs,
        "enforce_eager": args.enforce_eager or None,
        "gpu_memory_utilization": args.gpu_memory_utilization,
        "tensor_parallel_size": args.tensor_parallel_size,
        "max_lora_rank": getattr(args, "max_lora_rank", None),
    }


def _judge(  # type: ignore[no-untyped-def]
    spec: str, cache: Path, args: argparse.Namespace, key_env: str = "judge_api_key_env"
):
    """A judge from ``spec``; its endpoint gets only the key of the option ``key_env`` names
    (``--judge-api-key-env`` for the judge, ``--audit-judge-api-key-env`` for the audit judge)."""
    from harness_adapters.judges.base import make_judge

    return make_judge(
        spec,
        cache,
        _say,
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
        panel = _reference_panel(args, suite)
    else:
        suite = None
        if not (args.panel or args.default):
            raise PrimeBenchError("give --suite, or --panel/--default for a panel pool")
        from primebench_tasks.data.panel import Panel

        panel = Panel.load(args.panel) if args.panel else Panel.load_default(args.default)
    judge = _judge(args.judge, out / "judge_cache", args)
    doc = build(
        panel, out, judge, suite, args.benchmarks, tuple(args.seeds), args.k, tuple(args.axes), _say
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
    from harness_adapters.prism.build import read_build
    from harness_adapters.prism.run import RECORD_SCHEMA, run_prism
    from harness_adapters.prism.score import MATCHERS
    from harness_adapters.vllm.backends import (
        OfflineBackend,
        ServerBackend,
        check_adapter,
        check_model,
    )
    from harness_adapters.vllm.lora_scope import check_adapters, check_server_adapters
    from harness_adapters.vllm.session import engine_settings, freeze_spec
    from primebench_tasks.prism.prompts import EVALUEE

    index, store = read_build(args.prism)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    adapters = _adapters(args.lora)
    name = args.name or Path(args.model.rstrip("/")).name
    budgets = _budgets(args.budget)
    if args.backend == "server":
        if not args.base_url:
            raise PrimeBenchError("--backend server needs --base-url http://HOST:PORT/v1")
        plan = check_server_adapters(adapters, args.base_url)
        backend = ServerBackend(
            args.base_url, args.served_model or args.model, sorted(adapters), timeout_s=args.timeout
        )
        checked = {n: {"path": p} for n, p in adapters.items()}
    else:
        engine = engine_settings(**_engine(args))
        model = check_model(args.model)
        ads = [
            check_adapter(n, p, model, engine.max_lora_rank) for n, p in sorted(adapters.items())
        ]
        plan = check_adapters(adapters, model)
        engine.enable_tower_connector_lora = plan.tower_lora
        checked = {a.name: {"path": str(a.path), "rank": a.rank} for a in ads}
        backend = None
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
            "adapters": {
                n: {**a, "applied": plan.spec()[n]["applied"]} if n in plan.scopes else a
                for n, a in checked.items()
            },
        },
        "prism_run_spec.json",
    )
    if backend is None:
        backend = OfflineBackend(args.model, ads, engine)
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
        _say,
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


def cmd_tasks(args: argparse.Namespace) -> int:
    from harness_adapters.prism.lmms_tasks import generate_prism_tasks

    written = generate_prism_tasks(args.prism, args.out)
    print(
        f"wrote {len(written)} files to {args.out}; run: lmms-eval --include_path {args.out} "
        "--tasks prism --log_samples ..."
    )
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from harness_adapters.prism.lmms_tasks import ingest_lmms_eval

    n = ingest_lmms_eval(args.output_dir, args.prism, args.out, args.model)
    print(f"appended {n} record(s) to {Path(args.out) / 'prism_records.jsonl'}")
    return 0


def cmd_vlmeval_export(args: argparse.Namespace) -> int:
    from harness_adapters.prism.vlmeval_tasks import export_prism

    axes = [a.strip() for a in args.axes.split(",") if a.strip()] if args.axes else None
    out = export_prism(args.prism, args.lmudata, axes)
    for name, path in out.items():
        print(f"{name}: {path}")
    print(
        f"run: LMUData={args.lmudata} primebench vlmeval run -- --data {' '.join(out)} "
        "--model <model>"
    )
    return 0


def cmd_ingest_vlmeval(args: argparse.Namespace) -> int:
    from harness_adapters.prism.vlmeval_tasks import ingest_vlmeval

    n = ingest_vlmeval(args.work_dir, args.prism, args.out, args.model)
    print(f"appended {n} record(s) to {Path(args.out) / 'prism_records.jsonl'}")
    return 0


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-model-len", type=int)
    p.add_argument("--max-num-seqs", type=int)
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--gpu-memory-utilization", type=float)
    p.add_argument("--tensor-parallel-size", type=int)


def add_commands(tree: Any) -> None:
    """``primebench prism build|run|tasks|ingest-lmms-eval|score`` (a ``primebench.commands``
    plugin; ``tree``: :class:`primebench_tasks.cli.CommandTree`)."""
    prism = tree.group("prism", "PRISM-VLM axes")
    p = prism.add_parser(
        "build", help="sample the PRISM items and build their per-axis artifacts (cached)"
    )
    p.add_argument("--suite", help="suite manifest: its items are the pool (default pool)")
    p.add_argument("--panel", help="panel directory (the suite's reference panel, or the pool)")
    p.add_argument("--default", choices=default_names())
    p.add_argument("--benchmarks", nargs="+", help="panel pool: these benchmarks only")
    p.add_argument("--out", required=True, help="build directory (reused when it exists)")
    p.add_argument("--judge", default="rules", help="generator judge: " + JUDGE_HELP)
    p.add_argument(
        "--judge-timeout",
        type=float,
        default=120.0,
        help="seconds per judge request (server judges)",
    )
    p.add_argument(
        "--judge-api-key-env",
        metavar="NAME",
        help="environment variable holding the judge endpoint's API key (default: "
        "none; OPENAI_API_KEY only for api.openai.com)",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 42, 1234, 2026])
    p.add_argument("--k", type=int, default=100, help="items per benchmark per seed")
    p.add_argument(
        "--axes",
        nargs="+",
        default=["if", "sc", "h", "mq", "c", "vis"],
        choices=["if", "sc", "h", "mq", "c", "vis"],
    )
    _engine_args(p)
    p.set_defaults(func=cmd_build)

    p = prism.add_parser("run", help="run a model (+ LoRA adapters) on the PRISM axes")
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--model", required=True, help="model directory, or served name")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--name", help="the base model's name in records")
    p.add_argument("--no-base", action="store_true")
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
    p.add_argument("--backend", choices=["vllm", "server"], default="vllm")
    p.add_argument("--base-url")
    p.add_argument("--served-model")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--flip-judge", default="rules", help="sc flip detection: " + JUDGE_HELP)
    p.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="AXIS=N|N",
        help="output-token budget override (default q/if/h/c/vis 512, mq 1024, sc 512 per turn)",
    )
    p.add_argument("--axes", nargs="+", default=list(AXES), choices=list(AXES))
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-lora-rank", type=int)
    _engine_args(p)
    p.set_defaults(func=cmd_run)

    p = prism.add_parser("tasks", help="lmms-eval tasks prism_<axis> (single-turn axes)")
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_tasks)

    p = prism.add_parser("ingest-lmms-eval", help="lmms-eval prism_<axis> logs → run records")
    p.add_argument("output_dir")
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--out", required=True, help="run directory")
    p.add_argument("--model", required=True, help="the model's name in the records")
    p.set_defaults(func=cmd_ingest)

    p = prism.add_parser(
        "vlmeval-export", help="the single-turn axes as VLMEvalKit datasets (LMUData TSVs)"
    )
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--lmudata", required=True, help="LMUData folder to write to")
    p.add_argument("--axes", help="comma-separated single-turn axes (default: every built one)")
    p.set_defaults(func=cmd_vlmeval_export)

    p = prism.add_parser(
        "ingest-vlmeval", help="VLMEvalKit PrimeBench_PRISM_<axis> results → run records"
    )
    p.add_argument("work_dir", help="run.py's --work-dir")
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--out", required=True, help="run directory")
    p.add_argument("--model", required=True, help="the model's name in VLMEvalKit")
    p.set_defaults(func=cmd_ingest_vlmeval)

    p = prism.add_parser("score", help="grade runs: leaderboard, PScore, separation, audit")
    p.add_argument("--prism", required=True, help="build directory")
    p.add_argument("--runs", nargs="+", required=True, help="run directories")
    p.add_argument("--out", required=True)
    p.add_argument("--judge", default="rules", help="grading judge: " + JUDGE_HELP)
    p.add_argument(
        "--judge-timeout",
        type=float,
        default=120.0,
        help="seconds per judge request (server judges)",
    )
    p.add_argument(
        "--judge-api-key-env",
        metavar="NAME",
        help="environment variable holding the judge endpoint's API key (default: "
        "none; OPENAI_API_KEY only for api.openai.com)",
    )
    p.add_argument("--audit-judge", help="second judge J′ for the cross-judge audit")
    p.add_argument(
        "--audit-judge-api-key-env",
        metavar="NAME",
        help="environment variable holding the audit judge endpoint's API key (default: none; "
        "the judge's key is never sent to the audit judge)",
    )
    p.add_argument("--audit-items", type=int, default=200)
    p.add_argument(
        "--sc-variant",
        choices=["B", "A", "corr", "reach"],
        default="B",
        help="the sc definition in the leaderboard and PScore (App. E.2; default "
        "sc_B, turn-0-correct items)",
    )
    p.add_argument(
        "--mq-partial",
        action="store_true",
        help="score mq by partial credit instead of all-or-nothing",
    )
    p.add_argument("--n-boot", type=int, default=N_BOOT_VARIANTS)
    p.add_argument("--seed", type=int, default=0)
    _engine_args(p)
    p.set_defaults(func=cmd_score)
