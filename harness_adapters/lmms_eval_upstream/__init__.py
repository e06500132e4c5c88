"""lmms-eval's upstream task code, read as data (docs/architecture.md, "The adapters"): where a
task's YAML is and what it says (:mod:`.tasks`), its rows as suite documents with the task's own
prompt, visuals and scorer (:mod:`.documents`), the functions generated tasks call
(:mod:`.functions`), row keys built from content (:mod:`.content_keys`) and per-item scores of the
upstream metrics (:mod:`.item_scorers`). The lmms-eval plug and the vLLM runner both read it; it
imports neither."""
