"""Help texts of the lmms-eval harness's commands: registered with the command tree by the
adapter's ``add_commands`` (the library's ``primebench_tasks.cli.help`` fills them in with its
own)."""

OPTION_HELP: dict[str, str] = {
    "--manifest": "suite manifest JSON (a build's manifest.json)",
    "output_dir": "lmms-eval --output_path folder",
}
EXAMPLES: dict[str, str] = {
    "tasks lmms-eval": "primebench tasks lmms-eval --manifest S/manifest.json --panel P --out T",
    "path lmms-eval": "lmms-eval --include_path $(primebench path lmms-eval) --tasks primebench",
    "ingest lmms-eval": "primebench ingest lmms-eval out/ --panel P",
    "adaptive lmms-eval": "primebench adaptive lmms-eval --model llava_hf --model_args "
    "pretrained=llava-hf/llava-1.5-7b-hf --suite primebench_mathvision --out RUN",
    "keys lmms-eval": "primebench keys lmms-eval --vlmeval-tsv AI2D_TEST.tsv --upstream DIR --task ai2d "
    "--out keys.json",
}
