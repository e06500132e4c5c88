"""The vLLM runner's command-line parts: engine and adaptive options, adapter specs,
the reference panel (also used by ``primebench prism run``)."""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import TYPE_CHECKING

from harness_adapters.run.options import adaptive_budget_options
from primebench_tasks.cli.options import name_text
from primebench_tasks.data.defaults import default_names
from primebench_tasks.errors import PrimeBenchError
from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR, ESTIMATOR_NAMES, N_BOOT
from primebench_tasks.suite.manifest import SuiteManifest

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel


def given_panel(args: argparse.Namespace) -> Panel | None:
    """The reference panel the user named (--panel DIR or --default NAME), else None: the
    suite's own reference panels (:func:`harness_adapters.run.report.reference_panels`, the one
    policy of every harness: a panel other than the one the suite was built from is refused)."""
    from primebench_tasks.data.panel import Panel

    if args.panel:
        return Panel.load(args.panel)
    if args.default:
        return Panel.load_default(args.default)
    return None


def reference_panel(args: argparse.Namespace, suite: SuiteManifest) -> Panel:
    """The one reference panel of a single-panel suite (PRISM builds on one panel)."""
    from harness_adapters.run.report import reference_panels

    panels = {p.content_hash: p for p in reference_panels(suite, given_panel(args)).values()}
    if len(panels) != 1:
        raise PrimeBenchError(
            f"suite {suite['name']} has {len(panels)} reference panels (a multi-source suite); "
            "this command needs a suite built on one panel"
        )
    return next(iter(panels.values()))


def adapter_specs(specs: list[str]) -> dict[str, str]:
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


def engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--suite",
        required=True,
        help="suite manifest JSON, or a released suite's name (primebench, ...)",
    )
    p.add_argument("--out", required=True, help="run directory (resumes when it exists)")
    p.add_argument(
        "--name",
        type=name_text,
        help="the base model's name in records (default: directory name)",
    )
    p.add_argument("--panel", help="reference panel directory (default: the suite's own)")
    p.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="TASK=DIR",
        help="a local copy (datasets.save_to_disk folder; a group's subtasks in "
        "DIR/<dataset_name>) of upstream lmms-eval task TASK's dataset, for benchmarks whose "
        "items the reference panel holds only as ids (mathvista_testmini, mmmu_val, blink); "
        "default: the hub",
    )
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


def adaptive_options(p: argparse.ArgumentParser, target: bool) -> None:
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
    adaptive_budget_options(a, target, "a round is one engine batch per variant")
