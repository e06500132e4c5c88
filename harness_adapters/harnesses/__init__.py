"""The harness plugs (docs/architecture.md, "The adapters"): ``lmms_eval/`` and ``vlmeval/`` —
each detects and reads its harness's runs, writes its tasks and registers through the
``primebench.harnesses`` entry point. They never import an engine or each other."""
