"""The suite contract: the typed, versioned suite manifest every builder writes and every harness,
runner and placement reads (:mod:`primebench_tasks.suite.manifest`)."""

from primebench_tasks.suite.manifest import (
    AGGREGATES,
    SCHEMA,
    BenchmarkEntry,
    SourcePanel,
    SuiteManifest,
    as_suite,
    versioned,
)

__all__ = [
    "AGGREGATES",
    "SCHEMA",
    "BenchmarkEntry",
    "SourcePanel",
    "SuiteManifest",
    "as_suite",
    "versioned",
]
