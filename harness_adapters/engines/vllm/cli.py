"""``primebench run``, ``primebench rank-variants`` and ``primebench tiny-model``."""

from __future__ import annotations

import argparse
import glob
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_adapters.engines.vllm.cli_options import (
    adapter_specs,
    adaptive_options,
    engine_options,
    given_panel,
)
from harness_adapters.run.options import (
    adaptive_settings,
    print_adaptive,
    refuse_adaptive_only,
    refuse_nothing_placed,
    say,
)
from primebench_tasks.errors import ConfigError, PrimeBenchError

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel


def _request(args: argparse.Namespace, adapters: dict[str, str]):
    from harness_adapters.run.report import reference_panels
    from harness_adapters.run.request import RunRequest, engine_settings
    from harness_adapters.suites.released import resolve_suite
    from primebench_tasks.cli.plugin import parse_pairs

    suite = resolve_suite(args.suite)
    panel = given_panel(args)
    reference_panels(suite, panel)  # refused here, before any engine starts
    if args.ray:
        args.backend = "ray"
    engine = engine_settings(
        max_model_len=args.max_model_len,
        tensor_parallel_size=args.tensor_parallel_size,
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_lora_rank=args.max_lora_rank,
        max_loras=args.max_loras,
        max_num_seqs=args.max_num_seqs,
        enforce_eager=args.enforce_eager or None,
        dtype=args.dtype,
    )
    req = RunRequest(
        model=args.model,
        suite=suite,
        out=Path(args.out),
        adapters=adapters,
        name=args.name,
        include_base=not args.no_base,
        backend=args.backend,
        base_url=args.base_url,
        served_model=args.served_model,
        timeout_s=args.timeout,
        engine=engine,
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens,
        concurrency=args.concurrency,
        api_key_env=args.api_key_env,
        replicas=args.replicas,
        ray_address=args.ray_address,
        cpus_per_replica=args.cpus_per_replica,
        lora_language_model_only=args.lora_language_model_only,
        server_tower_lora=args.server_tower_lora,
        data=parse_pairs(args.dataset, "--dataset", "TASK=DIR") if args.dataset else {},
    )
    return req, panel


def _adaptive(
    args: argparse.Namespace, req: Any, panel: Panel | None, variants: bool = False
) -> int:
    from harness_adapters.engines.vllm.adaptive_session import rank_variants_adaptive, run_adaptive
    from harness_adapters.run.report import reference_panels

    settings = adaptive_settings(args)
    panels = reference_panels(req.suite, panel)
    if variants:
        rank_variants_adaptive(req, panels, settings, say, seed=args.seed)
        print((req.out / "adaptive_variants.md").read_text("utf-8"))
    else:
        print_adaptive(run_adaptive(req, panels, settings, say), req.out)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from harness_adapters.engines.vllm.engine import execute
    from harness_adapters.run.request import run_lock
    from harness_adapters.run.session import write_run_report

    refuse_adaptive_only(args)
    req, panel = _request(args, adapter_specs(args.lora))
    if args.adaptive:
        return _adaptive(args, req, panel)
    with run_lock(req.out):  # the records and the report: one writer at a time
        summary = execute(req, panel, say)
        print("\n".join(summary.lines()))
        placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
    print((req.out / "report.md").read_text("utf-8"))
    _refuse_unscored(req, placed)
    return 0


def _refuse_unscored(req: Any, placed: Any) -> None:
    """Say on stderr which variants had failed items; fail the command for a variant with no
    scored item (its report gives it no score and no rank)."""
    from harness_adapters.run.session import run_failures

    some, none = run_failures(req, placed)
    for line in some:
        say(f"warning: {line}")
    refuse_nothing_placed(none, req.out)


def cmd_rank_variants(args: argparse.Namespace) -> int:
    refuse_adaptive_only(args)
    from harness_adapters.engines.vllm.engine import execute
    from harness_adapters.run.request import run_lock
    from harness_adapters.run.session import write_run_report, write_variant_report

    found = [p for pattern in args.adapters for p in sorted(glob.glob(pattern))]
    twice = sorted({p for p in found if found.count(p) > 1})
    if twice:
        raise PrimeBenchError(
            f"--adapters names {', '.join(twice)} more than once; give each adapter once"
        )
    paths = sorted(p for p in found if (Path(p) / "adapter_config.json").exists())
    if not paths:
        raise PrimeBenchError(
            f"no adapter directories (with adapter_config.json) match {args.adapters}"
        )
    args.model = args.base
    req, panel = _request(args, adapter_specs(paths))
    if args.adaptive:
        return _adaptive(args, req, panel, variants=True)
    with run_lock(req.out):
        summary = execute(req, panel, say)
        print("\n".join(summary.lines()))
        placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
        _refuse_unscored(req, placed)
        write_variant_report(req, args.n_boot, args.seed)
    print((req.out / "variants.md").read_text("utf-8"))
    return 0


def cmd_tiny_model(args: argparse.Namespace) -> int:
    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl
    from harness_adapters.run.cpu_setup import require_cpu_ready

    require_cpu_ready()
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} exists and is not empty; choose another folder")
    # built in a temporary sibling and renamed at the end: a failure (e.g. no torchvision)
    # leaves no half-written model behind
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        build_tiny_qwen2vl(tmp / "base", seed=args.seed)
        for i in range(args.adapters):
            build_lora_adapter(
                tmp / "base",
                tmp / f"lora{i + 1}",
                seed=args.seed + i + 1,
                r=args.rank,
                targets=args.adapter_targets,
            )
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {out / 'base'} and {args.adapters} adapter(s) lora1..lora{args.adapters}")
    return 0


def add_commands(tree: Any) -> None:
    """``primebench run``, ``rank-variants``, ``tiny-model`` (a ``primebench.commands``
    plugin; ``tree``: :class:`primebench_tasks.cli.CommandTree`)."""
    from harness_adapters.engines.vllm.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    sub = tree.sub
    p = sub.add_parser("run", help="evaluate a model (+ LoRA adapters) on a suite with vLLM")
    p.add_argument("--model", required=True, help="model directory or cached repo id")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=PATH")
    engine_options(p)
    adaptive_options(p, target=True)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("rank-variants", help="rank LoRA variants of one base model on a suite")
    p.add_argument("--base", required=True, help="base model directory or cached repo id")
    p.add_argument("--adapters", nargs="+", required=True, help="adapter dirs or globs")
    engine_options(p)
    adaptive_options(p, target=False)
    p.set_defaults(func=cmd_rank_variants, no_base=False)
    p = sub.add_parser("tiny-model", help="build a tiny random Qwen2-VL + LoRA adapters")
    p.add_argument("out")
    p.add_argument("--adapters", type=int, default=3)
    p.add_argument("--rank", type=int, default=8)
    p.add_argument(
        "--adapter-targets",
        choices=["language", "all-linear"],
        default="language",
        help="language: q/v projections of the text model; all-linear: every linear layer, "
        "vision tower and connector included (needs tower/connector LoRA in vLLM)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_tiny_model)
