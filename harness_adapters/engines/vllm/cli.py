"""``primebench tiny-model`` (the vLLM engine's: a tiny random Qwen2-VL and LoRA adapters to try
the runner on). ``run`` and ``rank-variants`` are the run's verbs (:mod:`harness_adapters.run.commands`,
``--engine vllm``)."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

from primebench_tasks.errors import ConfigError


def cmd_tiny_model(args: argparse.Namespace) -> int:
    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl
    from harness_adapters.run.plug import require_cpu_ready

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
    """``primebench tiny-model`` (a ``primebench.commands`` plugin; ``tree``:
    :class:`primebench_tasks.cli.CommandTree`)."""
    from harness_adapters.engines.vllm.help import EXAMPLES, OPTION_HELP

    tree.add_help(OPTION_HELP, EXAMPLES)
    p = tree.sub.add_parser("tiny-model", help="build a tiny random Qwen2-VL + LoRA adapters")
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
