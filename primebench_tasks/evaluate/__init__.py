"""Validation: does a selection rank held-out models like the full benchmark, and how far are
its predicted full scores from the truth (docs/architecture.md, "The library's layers") — the
hold-out protocols (:mod:`.protocols`), their splits (:mod:`.splits`), ``validate``
(:mod:`.validate`) and the adaptive test's replay validation (:mod:`.adaptive_validation`). The
placement it measures is :mod:`primebench_tasks.place`; the adaptive test
:mod:`primebench_tasks.adaptive`."""
