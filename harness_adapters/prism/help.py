"""Help texts of PRISM's commands (``primebench prism ...``): registered with the command tree
by the adapter's ``add_commands`` (the library's ``primebench_tasks.cli.help`` fills them in
with its own)."""

OPTION_HELP: dict[str, str] = {
    "--audit-items": "items per axis re-graded by the audit judge",
    "--axes": "PRISM axes to include",
    "--seeds": "item-sampling seeds (the union of their samples is built)",
    "output_dir": "lmms-eval --output_path folder",
}
EXAMPLES: dict[str, str] = {
    "prism build": "primebench prism build --suite primebench_mathvision --default mathvision --out "
    "B --judge rules",
    "prism run": "primebench prism run --prism B --model DIR --lora a=PATH --out R",
    "prism tasks lmms-eval": "primebench prism tasks lmms-eval --prism B --out T",
    "prism ingest lmms-eval": "primebench prism ingest lmms-eval L --prism B --out R --model M",
    "prism tasks vlmeval": "primebench prism tasks vlmeval --prism B --lmudata DIR",
    "prism ingest vlmeval": "primebench prism ingest vlmeval W --prism B --out R --model M",
    "prism score": "primebench prism score --prism B --runs R --out S --judge rules",
}
