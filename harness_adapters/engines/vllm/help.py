"""Help texts of the vLLM runner's and its engine's options (``run``, ``rank-variants``,
``tiny-model``; PRISM's runs share the engine options): registered with the command tree by the
adapter's ``add_commands`` (the library's ``primebench_tasks.cli.help`` fills them in with its
own)."""

OPTION_HELP: dict[str, str] = {
    "--backend": "vllm: an offline engine here; server: a running OpenAI-compatible endpoint",
    "--base-url": "the server's OpenAI-compatible URL (…/v1)",
    "--batch-size": "requests per batch (records are written after each)",
    "--enforce-eager": "no CUDA graphs (slower; less memory)",
    "--gpu-memory-utilization": "share of GPU memory for the engine (on a CPU: of RAM)",
    "--lora": "adapter NAME=PATH, or a glob of adapter folders (repeatable)",
    "--max-lora-rank": "largest adapter rank (default: from the adapters)",
    "--max-loras": "adapters resident at once",
    "--max-model-len": "context length (default: the model's own)",
    "--max-new-tokens": "generated tokens per answer",
    "--max-num-seqs": "sequences per engine step",
    "--n-boot": "bootstrap resamples for the intervals",
    "--no-base": "do not evaluate the base model itself",
    "--served-model": "the base model's name on the server",
    "--tensor-parallel-size": "GPUs per model copy",
    "--timeout": "seconds per request",
    "--adapters": "number of LoRA adapters",
    "--rank": "LoRA rank",
    "out": "output directory",
}
EXAMPLES: dict[str, str] = {
    "run": "primebench run --model DIR --lora 'ckpts/*' --suite primebench_mathvision --out RUN",
    "rank-variants": "primebench rank-variants --base DIR --adapters 'ckpts/*' --suite "
    "primebench_mathvision --out RUN",
    "tiny-model": "primebench tiny-model tiny --adapters 3",
}
