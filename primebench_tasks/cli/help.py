"""Help texts shared by many of the library's ``primebench`` options, and an example for every
library command: filled into the parser after every part (and every plugin, with the texts it
registered: each harness adapter keeps its own help beside it) has added its commands, so that
each option has a help line with its default and each command an example (``tests/test_cli.py``
checks)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

OPTION_HELP = {
    "--panel": "panel directory (from `primebench panel import`)",
    "--default": "an embedded data set instead of --panel (`primebench panel list`)",
    "--seed": "random seed (same inputs and seed give the same bytes)",
    "--out": "output directory",
    "--name": "name written into the outputs",
    "--scores": "wide CSV response matrix (items x models or models x items)",
    "--benchmark": "benchmark name (the catalogue's, or a new one with --category)",
    "--category": "category of a benchmark the catalogue does not know",
    "--orientation": "matrix orientation (default: detected from the header)",
    "--models": "number of simulated models",
    "--missing": "share of records left missing (NaN)",
    "--until": "last stage to run",
    "--n": "items to keep",
    "--space": "embedding space (text or vl)",
    "--per-benchmark": "spread the budget over benchmarks in proportion to their size",
    "--budget": "items of the stress set (default: the frontier's own size)",
    "--selectors": "comma list of selectors, or all (`primebench_tasks.select.registry`)",
    "--estimators": "comma list: mean, weighted, pirt, gpirt, aipw",
    "--protocol": "heldout: random halves; chrono: oldest models build; frontier: the "
    "strongest 15 percent held out (fidelity at the top); e2e: stages 1-3 refit per split; same: "
    "build and score on all models; adaptive: the adaptive test replayed with held-out models' "
    "recorded answers, against the static default suite of the same size (random 20 percent "
    "and frontier hold-outs per benchmark; --budgets: item counts, default 25,50,100)",
    "--splits": "number of seeded random build/held-out splits",
    "--batch": "items per encoder batch (one cache chunk each)",
    "--max-drop": "refit when the frozen suite's rho drops by more than this",
    "--min-percentile": "refit when the suite falls below this percentile of random suites",
    "--min-gain": "publish a refit only if it gains at least this rho",
    "--random-suites": "random suites of the same size for the percentile",
    "dir": "suite directory (from `primebench refresh`)",
    "--aggregator": "how the axes combine into PScore",
    "--k": "benchmarks kept frozen (leaderboards) / categories (panels)",
    "--start": "share of the dated models the suite is frozen on",
    "--waves": "waves of newer models",
}

EXAMPLES = {
    "panel list": "primebench panel list",
    "panel info": "primebench panel info --default m3irt",
    "panel import-helm": "primebench panel import-helm benchmark_output/runs/v1 --scenario "
    "real_world_qa --benchmark RealWorldQA --out panels/helm_rwqa",
    "panel import-leaderboard": "primebench panel import-leaderboard openvlm-2026.csv --out LB "
    "&& primebench place out/ --leaderboard LB",
    "panel import": "primebench panel import --scores AI2D_TEST.csv --benchmark AI2D_TEST "
    "--models models.csv --out P",
    "panel export": "primebench panel export --default autojudger --benchmark AI2D_TEST --out "
    "files && cd files && bash import.sh",
    "simulate": "primebench simulate --scale 0.05 --out sim",
    "build primebench": "primebench build primebench --default autojudger --out out/autojudger",
    "build resampled": "primebench build resampled --panel P --n 1000 --space text --out R",
    "build frontier": "primebench build frontier --default autojudger --out F",
    "validate": "primebench validate --default m3irt --budgets 10,25,50,100 --splits 20 --out V",
    "embed": "primebench embed --panel P --encoder minilm --space text",
    "refresh": "primebench refresh --panel P --records new.csv --suite S/manifest.json --out SD",
    "suites history": "primebench suites history SD",
    "replay": "primebench replay --default openvlm --out RP",
    "prism aggregate": "primebench prism aggregate --axis-means axes.csv --out PA",
}


def _walk(p: argparse.ArgumentParser, path: list[str]):
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _walk(sp, [*path, name])


def is_group(p: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in p._actions)


def finish_help(
    ap: argparse.ArgumentParser,
    option_help: Mapping[str, str] | None = None,
    examples: Mapping[str, str] | None = None,
) -> None:
    """Fill missing option help from :data:`OPTION_HELP` and the plugins' ``option_help``, show
    every default, and give each command its example from :data:`EXAMPLES` and the plugins'
    ``examples`` (registered with :meth:`~primebench_tasks.cli.plugin.CommandTree.add_help`)."""
    helps = {**OPTION_HELP, **(option_help or {})}
    all_examples = {**EXAMPLES, **(examples or {})}
    for path, p in _walk(ap, []):
        if not path:
            continue
        for a in p._actions:
            if isinstance(a, argparse._HelpAction | argparse._SubParsersAction):
                continue
            key = a.option_strings[0] if a.option_strings else a.dest
            if not a.help:
                a.help = helps.get(key)
            if (
                a.help
                and a.default not in (None, False, "", argparse.SUPPRESS)
                and "%(default)" not in a.help
                and "default" not in a.help
            ):
                a.help += " (default: %(default)s)"
        example = all_examples.get(" ".join(path))
        if example and not p.epilog:
            p.epilog = f"example:\n  {example}"
            p.formatter_class = argparse.RawDescriptionHelpFormatter


def missing_help(ap: argparse.ArgumentParser) -> list[str]:
    """Options without help and commands without an example (for the test)."""
    out = []
    for path, p in _walk(ap, []):
        if not path:
            continue
        name = " ".join(path)
        if not is_group(p) and not p.epilog:
            out.append(f"{name}: no example")
        for a in p._actions:
            if isinstance(a, argparse._HelpAction | argparse._SubParsersAction):
                continue
            if not a.help:
                out.append(f"{name} {a.option_strings[0] if a.option_strings else a.dest}")
    return out
