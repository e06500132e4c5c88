"""Help texts of the VLMEvalKit harness's commands: registered with the command tree by the
adapter's ``add_commands`` (the library's ``primebench_tasks.cli.help`` fills them in with its
own)."""

OPTION_HELP: dict[str, str] = {}
EXAMPLES: dict[str, str] = {
    "ingest vlmeval": "primebench ingest vlmeval outputs --panel P",
    "tasks vlmeval": "primebench tasks vlmeval --suite primebench --source-tsv $LMUData --lmudata "
    "$LMUData",
    "ingest vlmeval-records": "primebench ingest vlmeval-records RECORDS/ --out P",
    "evaluate vlmeval": "primebench evaluate vlmeval -- --data PrimeBench_MMMU_DEV_VAL --model M",
    "adaptive vlmeval": "primebench adaptive vlmeval --model Qwen2-VL-2B-Instruct --suite "
    "primebench_vlmeval --source-tsv $LMUData --out RUN",
}
