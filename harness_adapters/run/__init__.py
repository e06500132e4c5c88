"""A run, whatever engine or harness answers it (docs/architecture.md, "The adapters"): the run
request and its frozen spec (:mod:`.request`), the records file (:mod:`.records`), the chat
messages of a suite document (:mod:`.messages`), the adaptive test's round loop
(:mod:`.adaptive`) and the command options every harness's adaptive command shares
(:mod:`.options`). Engines (``vllm/``: offline, server, Ray, the training callback) and harness
drivers (``lmms_eval/``, ``vlmeval/``) plug into it; it imports neither."""
