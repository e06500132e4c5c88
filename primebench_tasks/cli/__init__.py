"""The ``primebench`` command, one module per command family (``panel_commands``,
``build_commands``, ``evaluate_commands``), the plugin API (``plugin``: what a
``primebench.commands`` entry point receives), the option checks (``options``) and ``main``."""

from primebench_tasks.cli.main import build_parser, main
from primebench_tasks.cli.panel_commands import panel_info_text
from primebench_tasks.cli.plugin import CommandTree, check_out_dir, load_panel, parse_pairs

__all__ = [
    "CommandTree",
    "build_parser",
    "check_out_dir",
    "load_panel",
    "main",
    "panel_info_text",
    "parse_pairs",
]
