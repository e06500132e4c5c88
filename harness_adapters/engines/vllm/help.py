"""Help texts of the vLLM engine's options (on ``run`` and ``rank-variants``; PRISM's runs share
them) and of ``tiny-model``: registered with the command tree by the
adapter's ``add_commands`` (the library's ``primebench_tasks.cli.help`` fills them in with its
own)."""

OPTION_HELP: dict[str, str] = {
    "--backend": "vllm: an offline engine here; server: a running OpenAI-compatible endpoint",
    "--base-url": "the server's OpenAI-compatible URL (…/v1)",
    "--enforce-eager": "no CUDA graphs (slower; less memory)",
    "--gpu-memory-utilization": "share of GPU memory for the engine (on a CPU: of RAM)",
    "--max-lora-rank": "largest adapter rank (default: from the adapters)",
    "--max-loras": "adapters resident at once",
    "--max-model-len": "context length (default: the model's own)",
    "--max-num-seqs": "sequences per engine step",
    "--served-model": "the base model's name on the server",
    "--tensor-parallel-size": "GPUs per model copy",
    "--timeout": "seconds per request",
    "--adapters": "number of LoRA adapters",
    "--rank": "LoRA rank",
    "out": "output directory",
}
EXAMPLES: dict[str, str] = {
    "tiny-model": "primebench tiny-model tiny --adapters 3",
}
