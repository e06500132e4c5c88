"""``primebench run``, ``primebench rank-variants`` and ``primebench tiny-model``."""

from __future__ import annotations

import argparse
import glob
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primebench_tasks.data.defaults import default_names
from primebench_tasks.errors import ConfigError, PrimeBenchError
from primebench_tasks.evaluate.defaults import (
    ADAPTIVE_BATCH,
    ADAPTIVE_MAX_ITEMS,
    ADAPTIVE_TARGET_WIDTH,
    DEFAULT_ESTIMATOR,
    ESTIMATOR_NAMES,
    N_BOOT,
)

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel


def _say(msg: str) -> None:
    print(f"[primebench] {msg}", file=sys.stderr, flush=True)


def _reference_panel(args: argparse.Namespace, suite: dict) -> Panel:
    """--panel DIR, --default NAME, else the embedded panel the suite was built from."""
    from primebench_tasks.data.panel import Panel

    if args.panel:
        panel = Panel.load(args.panel)
    else:
        name = args.default or suite["built_from"]["panel"]
        if name not in default_names():
            raise PrimeBenchError(
                f"suite was built from panel {name!r}, which is not embedded: "
                "give the reference panel with --panel DIR"
            )
        panel = Panel.load_default(name)
    if panel.content_hash != suite["built_from"].get("panel_hash"):
        _say(
            f"note: reference panel {panel.name} ({panel.content_hash}) is not the one the "
            f"suite was built from ({suite['built_from'].get('panel_hash')})"
        )
    return panel


def _adapters(specs: list[str]) -> dict[str, str]:
    """``NAME=PATH`` or ``PATH`` (named by its folder); a ``PATH`` with ``*?[`` is a glob of
    adapter folders (those holding ``adapter_config.json``)."""
    out: dict[str, str] = {}
    expanded: list[str] = []
    for s in specs:
        if "=" not in s and any(c in s for c in "*?["):
            hits = sorted(p for p in glob.glob(s) if (Path(p) / "adapter_config.json").exists())
            if not hits:
                raise PrimeBenchError(
                    f"--lora {s!r}: no adapter folder (with adapter_config.json) matches"
                )
            expanded += hits
        else:
            expanded.append(s)
    for s in expanded:
        if "=" in s:
            name, path = s.split("=", 1)
        else:
            name, path = Path(s.rstrip("/")).name, s
        if name in out:
            raise PrimeBenchError(f"two adapters named {name!r}")
        out[name] = path
    return out


def _request(args: argparse.Namespace, adapters: dict[str, str]):  # type: ignore[no-untyped-def]
    from harness_adapters.placement import resolve_suite
    from harness_adapters.vllm.session import RunRequest, engine_settings

    suite = resolve_suite(args.suite)
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
    )
    return req, _reference_panel(args, suite)


def _adaptive(args: argparse.Namespace, req: Any, panel: Panel, variants: bool = False) -> int:
    from harness_adapters.placement import reference_panels
    from harness_adapters.vllm.adaptive_session import (
        AdaptiveSettings,
        rank_variants_adaptive,
        run_adaptive,
    )

    width = getattr(args, "target_width", 0)
    settings = AdaptiveSettings(
        target_width=None if width <= 0 else width,
        max_items=args.max_items,
        round_size=args.round_size,
    )
    given = None if args.panel is None and args.default is None else panel
    panels = reference_panels(req.suite, given)
    if variants:
        rank_variants_adaptive(req, panels, settings, _say, seed=args.seed)
        print((req.out / "adaptive_variants.md").read_text("utf-8"))
    else:
        run_adaptive(req, panels, settings, _say)
        print((req.out / "adaptive.md").read_text("utf-8"))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from harness_adapters.vllm.session import execute, write_run_report

    req, panel = _request(args, _adapters(args.lora))
    if args.adaptive:
        return _adaptive(args, req, panel)
    summary = execute(req, panel, _say)
    print("\n".join(summary.lines()))
    placed = write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
    print((req.out / "report.md").read_text("utf-8"))
    return 0 if placed["n_scored"].min() > 0 else 1


def cmd_rank_variants(args: argparse.Namespace) -> int:
    from harness_adapters.vllm.session import execute, write_run_report, write_variant_report

    paths = sorted({p for pattern in args.adapters for p in glob.glob(pattern)})
    paths = [p for p in paths if (Path(p) / "adapter_config.json").exists()]
    if not paths:
        raise PrimeBenchError(
            f"no adapter directories (with adapter_config.json) match {args.adapters}"
        )
    args.model = args.base
    req, panel = _request(args, _adapters(paths))
    if args.adaptive:
        return _adaptive(args, req, panel, variants=True)
    summary = execute(req, panel, _say)
    print("\n".join(summary.lines()))
    write_run_report(req, panel, args.estimator, args.n_boot, args.seed)
    write_variant_report(req, args.n_boot, args.seed)
    print((req.out / "variants.md").read_text("utf-8"))
    return 0


def cmd_tiny_model(args: argparse.Namespace) -> int:
    from harness_adapters.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl

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


def _engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--suite",
        required=True,
        help="suite manifest JSON, or a released suite's name (primebench, ...)",
    )
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
    p.add_argument("--name", help="the base model's name in records (default: directory name)")
    p.add_argument("--panel", help="reference panel directory (default: the suite's own)")
    p.add_argument("--default", choices=default_names())
    p.add_argument(
        "--backend",
        choices=["vllm", "server", "ray"],
        default="vllm",
        help="vllm: one offline engine here; server: a running OpenAI-compatible "
        "server; ray: --replicas vLLM engines on a Ray cluster",
    )
    p.add_argument("--ray", action="store_true", help="same as --backend ray")
    p.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="ray: vLLM engines (Ray Data actors), each with --tensor-parallel-size "
        "GPUs on a GPU cluster",
    )
    p.add_argument(
        "--ray-address",
        help="ray: the cluster (default: $RAY_ADDRESS, else a local cluster started for this run)",
    )
    p.add_argument(
        "--cpus-per-replica",
        type=float,
        default=1.0,
        help="ray on a CPU-only cluster: CPUs reserved per replica",
    )
    p.add_argument("--base-url", help="server backend: http://HOST:PORT/v1")
    p.add_argument("--served-model", help="server backend: served name of the base model")
    p.add_argument("--timeout", type=float, default=120.0, help="server request timeout (s)")
    p.add_argument(
        "--concurrency",
        type=int,
        default=8,
        help="server backend: requests in flight (match the server's "
        "--max-num-seqs x --data-parallel-size)",
    )
    p.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="server backend: environment variable holding this endpoint's API key "
        "(default: no key; OPENAI_API_KEY is sent only to api.openai.com)",
    )
    p.add_argument(
        "--tensor-parallel-size", "--tp", type=int, help="GPUs per engine (tensor parallelism)"
    )
    p.add_argument("--gpu-memory-utilization", type=float)
    p.add_argument("--max-model-len", type=int)
    p.add_argument("--max-lora-rank", type=int)
    p.add_argument("--max-loras", type=int)
    p.add_argument("--max-num-seqs", type=int)
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument(
        "--dtype",
        choices=["auto", "float32", "bfloat16", "float16"],
        help="engine dtype (default: vLLM's auto; bfloat16 on CPU)",
    )
    p.add_argument(
        "--lora-language-model-only",
        action="store_true",
        help="accept adapters that also change the vision tower or connector where the engine "
        "cannot apply that part: only their language-model part is applied, and the report "
        "says so (default: such a run is refused)",
    )
    p.add_argument(
        "--server-tower-lora",
        action="store_true",
        help="server backend: the server was started with --enable-tower-connector-lora (used "
        "only when it serves no /server_info to check; the report says it was not verified)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="items per request batch (records are fsynced after each batch)",
    )
    p.add_argument("--max-new-tokens", type=int)
    p.add_argument("--no-base", action="store_true", help="run only the adapters")
    p.add_argument(
        "--estimator",
        default=DEFAULT_ESTIMATOR,
        choices=ESTIMATOR_NAMES,
        help=f"full-score estimator (default: {DEFAULT_ESTIMATOR})",
    )
    p.add_argument("--n-boot", type=int, default=N_BOOT)
    p.add_argument("--seed", type=int, default=0)


def _adaptive_options(p: argparse.ArgumentParser, target: bool) -> None:
    a = p.add_argument_group("adaptive evaluation (--adaptive)")
    a.add_argument(
        "--adaptive",
        action="store_true",
        help="ask, in rounds, the items of the suite's benchmarks that tell the most (the whole "
        "item pool of each benchmark, not only the suite's items)"
        + (
            "; stops each test at --target-width or --max-items; writes adaptive.json/.md"
            if target
            else "; the same items for every variant, until adjacent variants are separated at "
            "95 %% or --max-items are spent; writes adaptive_variants.json/.md"
        ),
    )
    if target:
        a.add_argument(
            "--target-width",
            type=float,
            default=ADAPTIVE_TARGET_WIDTH,
            help="stop a benchmark's test when the 90 %% interval of its predicted full score "
            "is narrower than this (0: run to --max-items)",
        )
    a.add_argument(
        "--max-items", type=int, default=ADAPTIVE_MAX_ITEMS, help="items per benchmark at most"
    )
    a.add_argument(
        "--round-size",
        type=int,
        default=ADAPTIVE_BATCH,
        help="items per benchmark per round (a round is one engine batch per variant)",
    )


def add_commands(tree: Any) -> None:
    """``primebench run``, ``rank-variants``, ``tiny-model`` (a ``primebench.commands``
    plugin; ``tree``: :class:`primebench_tasks.cli.CommandTree`)."""
    sub = tree.sub
    p = sub.add_parser("run", help="evaluate a model (+ LoRA adapters) on a suite with vLLM")
    p.add_argument("--model", required=True, help="model directory or cached repo id")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=PATH")
    _engine_options(p)
    _adaptive_options(p, target=True)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("rank-variants", help="rank LoRA variants of one base model on a suite")
    p.add_argument("--base", required=True, help="base model directory or cached repo id")
    p.add_argument("--adapters", nargs="+", required=True, help="adapter dirs or globs")
    _engine_options(p)
    _adaptive_options(p, target=False)
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
