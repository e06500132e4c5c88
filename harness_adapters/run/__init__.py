"""A run, whatever engine or harness answers it (docs/architecture.md, "The adapters"): both
loops (:mod:`.static_loop`, :mod:`.adaptive_loop`), the session — spec freezing, the run and
variant reports (:mod:`.session`) —, the run request and its frozen spec (:mod:`.request`), the
records file (:mod:`.records`), the chat messages of a suite document (:mod:`.messages`), the
generation interface an engine offers (:mod:`.engine`), the placement of a run's scores
(:mod:`.report`), ``primebench place`` (:mod:`.place_command`) and the command options every
harness's adaptive command shares (:mod:`.options`). Engines (``engines/vllm/``) and harness
plugs (``harnesses/``) plug into it; it imports neither."""
