"""``primebench suites list``: the released suites a harness or the runner takes by name (a
``primebench.commands`` plugin; ``suites history`` is the library's)."""

from __future__ import annotations

import argparse
from typing import Any


def released_rows() -> list[dict[str, Any]]:
    """One row per released suite (``task_configs/suites/*.json``), by name: its version, items,
    benchmarks, whether its items were drawn by a probability design, and how many earlier
    versions are kept (``previous/``) so that runs made with them still place."""
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.suite.manifest import SuiteManifest

    root = suites_path()
    rows = []
    for path in sorted(root.glob("*.json")):
        m = SuiteManifest.read(path)
        rows.append(
            {
                "suite": m.name,
                "version": m.version,
                "items": m.n_items,
                "benchmarks": ", ".join(e.name for e in m.benchmarks),
                "drawn": all(e.design is not None for e in m.benchmarks),
                "earlier versions": len(list((root / "previous").glob(f"{m.name}-*.json"))),
            }
        )
    return rows


def cmd_suites_list(args: argparse.Namespace) -> int:
    import pandas as pd

    from primebench_tasks.report.tables import markdown_table

    print(markdown_table(pd.DataFrame(released_rows())))
    print("use one by name: --tasks <suite> (lmms-eval), --suite <suite> (run, tasks, place)")
    return 0


def add_commands(tree: Any) -> None:
    tree.add_help(examples={"suites list": "primebench suites list"})
    p = tree.group("suites", "released and published suite versions").add_parser(
        "list", help="the released suites: name, version, items, benchmarks"
    )
    p.set_defaults(func=cmd_suites_list)
