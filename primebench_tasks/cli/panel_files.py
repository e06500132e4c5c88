"""The files of a panel: ``primebench panel export`` and the layouts ``panel import --help`` states
(#82)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from primebench_tasks.cli.plugin import load_panel
from primebench_tasks.data.defaults import default_names

IMPORT_LAYOUTS = """\
layouts (primebench panel export writes any panel this way):

  AI2D_TEST.csv (--scores; one row per item, a column per model, scores in the metric's range):
    item_id,Qwen2-VL-7B,InternVL2-8B,GPT-4o
    1001,1,0,1
    1002,0,0,
    1003,1,1,1

  models.csv (--models):
    model,release_date,params_b
    Qwen2-VL-7B,2024-08-30,8.3
    InternVL2-8B,2024-07-04,8.1

  items.jsonl (--items, optional: id, question, options, answer, image path):
    {"id": "1001", "question": "Which label ...?", "options": ["A", "B"], "answer": "A", "image": "img/1001.png"}
"""


IMPORT_PARSER: dict[str, Any] = {
    "help": "import a wide response matrix into a panel directory",
    "description": "Import one benchmark's per-item results of many models (run once per "
    "benchmark into the same --out to add more).",
    "epilog": IMPORT_LAYOUTS,
    "formatter_class": argparse.RawDescriptionHelpFormatter,
}
SCORES_HELP = (
    "CSV of scores: one row per item (first column item_id, id or index; a column per model) or "
    "one row per model (first column model; a column per item id, <no_image>ID for a blind "
    "run); empty = no score"
)
MODELS_HELP = "model metadata CSV: model, release_date (YYYY-MM-DD or YYYY.M), params_b"


def cmd_panel_export(args: argparse.Namespace) -> int:
    from primebench_tasks.data.export import export_panel

    panel = load_panel(args)
    written = export_panel(panel, args.out, args.benchmark or None)
    print(
        f"wrote {len(written)} files to {args.out} ({', '.join(p.name for p in written[:6])}"
        + (", ..." if len(written) > 6 else "")
        + f"); import them back: cd {shlex.quote(str(args.out))} && bash import.sh"
    )
    return 0


def add_panel_export(panel: Any) -> None:
    """``panel export`` on the ``panel`` sub-command group."""
    p = panel.add_parser(
        "export",
        help="write a panel (embedded or imported) as the files panel import reads",
        description="Write a panel's scores (BENCH.csv), item content (BENCH.items.jsonl, "
        "images/), models (models.csv) and the import line of each benchmark (import.sh): "
        "the layouts to copy for your own results; importing them gives the panel back.",
    )
    p.add_argument("--panel", help="a panel folder")
    p.add_argument("--default", choices=default_names(), help="an embedded panel")
    p.add_argument(
        "--benchmark", action="append", default=[], help="only this benchmark (repeatable)"
    )
    p.add_argument("--out", required=True, help="the folder to write the files into")
    p.set_defaults(func=cmd_panel_export)
