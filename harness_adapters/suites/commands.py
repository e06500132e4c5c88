"""``primebench suites list``: the released suites a harness or the runner takes by name (a
``primebench.commands`` plugin; ``suites history`` is the library's)."""

from __future__ import annotations

import argparse
from typing import Any


def released_rows() -> list[dict[str, Any]]:
    """One row per released suite (``task_configs/suites/*.json``), by name: what it is for, its
    version, items, benchmarks (those placed among reference models, then the design-only ones
    drawn from the user's dataset), whether its items were drawn by a probability design, which
    benchmarks need a dataset download (``offline``: every item's text, image and answer are in
    the package, so ``primebench run`` asks it with no network), and how many earlier versions are
    kept (``previous/``) so that runs made with them still place."""
    from harness_adapters.suites.documents import content_in_panel
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.suite.manifest import SuiteManifest

    root = suites_path()
    rows = []
    for path in sorted(root.glob("*.json")):
        m = SuiteManifest.read(path)
        panels = _panels(m)
        download = [
            e.name
            for e in m.benchmarks
            if not e.no_lmms_eval_task
            and not content_in_panel(panels[e.name], e.name, e.lmms_eval_task)
        ] + [e.name for e in m.design_only]
        named = [e.name for e in m.benchmarks]
        drawn = sum(e.design.n for e in m.design_only)
        rows.append(
            {
                "suite": m.name,
                "for": SUITE_PURPOSE.get(m.name, ""),
                "version": m.version,
                "items": f"{m.n_items}" + (f" + {drawn} drawn" if drawn else ""),
                "benchmarks": f"{len(named) + len(m.design_only)}: "
                + ", ".join(named)
                + (
                    f" + design-only {', '.join(e.name for e in m.design_only)}"
                    if m.design_only
                    else ""
                ),
                "drawn": all(e.design is not None for e in m.benchmarks),
                "offline": "yes" if not download else f"needs datasets: {', '.join(download)}",
                "earlier versions": len(list((root / "previous").glob(f"{m.name}-*.json"))),
            }
        )
    return rows


def _panels(m: Any) -> dict[str, Any]:
    """benchmark → the released suite's embedded reference panel (its source panels where it has
    several)."""
    from primebench_tasks.data.panel import Panel

    if m["params"].get("multi_source"):
        from primebench_tasks.pipeline.multi_source import source_panels

        return dict(source_panels(m))
    panel = Panel.load_default(m.built_from.panel)
    return {e.name: panel for e in m.benchmarks}


SUITE_PURPOSE = {
    "primebench": "the flagship: a VLM paper's seven benchmarks, ranked among 167 models",
    "primebench_mathvision": "a first run: one benchmark, 100 items, nothing to download",
    "primebench_mathvision_testmini": "MATH-Vision's whole testmini (304 items): a full check",
    "primebench_resampled": "ResampledBench's recipe on three benchmarks (a baseline)",
    "primebench_vlmeval": "VLMEvalKit's own ids: five benchmarks, a suite rank among 66",
    "primebench_wide": "the flagship + five benchmarks drawn from your copy of each dataset",
}
"""What each released suite is for, as ``suites list`` says it."""


def cmd_suites_list(args: argparse.Namespace) -> int:
    import pandas as pd

    from primebench_tasks.report.tables import markdown_table

    print(markdown_table(pd.DataFrame(released_rows())))
    print(
        "use one by name: --tasks <suite> (lmms-eval), --suite <suite> (run, tasks, place); "
        "a suite that needs datasets reads them from the hub, or from --dataset TASK=DIR"
    )
    return 0


def add_commands(tree: Any) -> None:
    tree.add_help(examples={"suites list": "primebench suites list"})
    p = tree.group("suites", "released and published suite versions").add_parser(
        "list", help="the released suites: name, version, items, benchmarks"
    )
    p.set_defaults(func=cmd_suites_list)
