"""Help texts of the run verbs' own options (``run``, ``rank-variants``, whatever the engine):
registered with the command tree by :func:`harness_adapters.run.commands.add_commands` (an
engine registers its own options' texts)."""

OPTION_HELP: dict[str, str] = {
    "--batch-size": "requests per batch (records are written after each)",
    "--lora": "adapter NAME=PATH, or a glob of adapter folders (repeatable)",
    "--max-new-tokens": "generated tokens per answer",
    "--n-boot": "bootstrap resamples for the intervals",
    "--no-base": "do not evaluate the base model itself",
}
EXAMPLES: dict[str, str] = {
    "run": "primebench run --model DIR --lora 'ckpts/*' --suite primebench_mathvision --out RUN",
    "rank-variants": "primebench rank-variants --base DIR --adapters 'ckpts/*' --suite "
    "primebench_mathvision --out RUN",
}
