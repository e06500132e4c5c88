"""``check_harness``: the harness protocol (:mod:`primebench_tasks.suite.harness`) checked on one
harness and one of its runs, as scikit-learn's ``check_estimator`` checks an estimator — run over
every installed harness in the tests, and by anyone who plugs in a new one."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from primebench_tasks.cli.plugin import CommandTree
from primebench_tasks.suite.harness import Harness, HarnessRun, check_records


def check_harness(harness: Any, sample_run: str | Path, empty: str | Path) -> HarnessRun:
    """Check that ``harness`` keeps the harness protocol on one of its runs, as scikit-learn's
    ``check_estimator`` checks an estimator; raises AssertionError naming the harness and the
    broken rule, and returns the run it read:

    - it is a :class:`~primebench_tasks.suite.harness.Harness` with a one-word ``name`` and a ``summary``;
      ``prism_export`` / ``prism_ingest`` are callables or None;
    - it recognises ``sample_run`` (a folder it wrote) and not ``empty`` (an empty folder);
    - ``read_run(sample_run)`` gives records with :data:`~primebench_tasks.suite.harness.RECORD_COLUMNS`, scores in [0, 1] or
      NaN (a missing answer, never 0), one row per (model, benchmark, item), a suite version,
      and conditions that are JSON values;
    - ``add_commands`` adds its sub-commands to a command tree of its own.
    """
    name = getattr(harness, "name", repr(harness))
    assert isinstance(harness, Harness), f"{name}: not a Harness (primebench_tasks.suite.harness)"
    assert (
        isinstance(harness.name, str)
        and harness.name
        and not any(c.isspace() for c in harness.name)
    ), f"{name}: its name must be one word"
    assert isinstance(harness.summary, str) and harness.summary, f"{name}: no summary"
    for hook in ("prism_export", "prism_ingest"):
        value = getattr(harness, hook)
        assert value is None or callable(value), f"{name}: {hook} is neither None nor callable"
    assert harness.detect(Path(sample_run)), f"{name}: does not recognise its own run"
    assert not harness.detect(Path(empty)), f"{name}: recognises an empty folder as a run"
    run = harness.read_run(Path(sample_run))
    assert isinstance(run, HarnessRun), f"{name}: read_run must return a HarnessRun"
    check_records(run, name)
    assert isinstance(run.suite_version, str) and run.suite_version, f"{name}: no suite version"
    scores = run.records["score"].astype(float)
    bad = [s for s in scores if not math.isnan(s) and not 0.0 <= s <= 1.0]
    assert not bad, f"{name}: scores outside [0, 1]: {bad[:3]}"
    keys = run.records[["model", "benchmark", "item_id"]].astype(str)
    assert not keys.duplicated().any(), f"{name}: a (model, benchmark, item) appears twice"
    json.dumps(dict(run.conditions), allow_nan=False)  # raises where a condition is no JSON value
    sub = argparse.ArgumentParser(prog="primebench").add_subparsers(dest="command")
    harness.add_commands(CommandTree(sub))
    assert sub.choices, f"{name}: add_commands adds no sub-command"
    return run
