"""The released suites and what every runner asks of a suite (docs/architecture.md, "The
adapters"): where the released suites are (:mod:`.released`), a suite's documents
(:mod:`.documents`) and the harness-neutral prompt, decoding and scorer (:mod:`.prompt`)."""
