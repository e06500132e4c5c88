"""The vLLM engine's options on ``primebench run`` and ``rank-variants`` (the run's own options:
:mod:`harness_adapters.run.options`)."""

from __future__ import annotations

import argparse


def vllm_options(p: argparse.ArgumentParser) -> None:
    """The vLLM engine's own options on the run verbs: the backend (offline, server, Ray), the
    server's address and key, the Ray replicas, the engine's settings and LoRA scope."""
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
