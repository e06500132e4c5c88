"""The misfit check end to end through the placement every harness shares (#56:
``harness_adapters.run.report.write_report`` — lmms-eval's and VLMEvalKit's ``place``, the vLLM
runner, Ray, rank-variants): on the released VLMEvalKit suite, a reference model's own answers
place unflagged; the same answers with AI2D's pattern reversed (right on the items the panel
finds hardest, wrong on the easiest, the same count right) keep their numbers but are flagged
on AI2D — in report.json, report.md and on stderr — and nowhere else."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from harness_adapters.run.report import reference_panels, write_report
from harness_adapters.suites.released import resolve_suite
from primebench_tasks.suite.manifest import as_suite


def test_a_healthy_run_passes_and_a_broken_benchmark_is_flagged(tmp_path, capsys):
    suite = resolve_suite("primebench_vlmeval")
    panels = reference_panels(suite)
    sm = as_suite(suite)
    model = "InternVL2-8B" if "InternVL2-8B" in panels["AI2D_TEST"].model_names else None
    model = model or panels["AI2D_TEST"].model_names[0]
    cols, healthy = [], []
    for e in sm.benchmarks:
        p = panels[e.name]
        ids = [str(i) for i in p.item_ids(e.name)]
        row = p.matrix(e.name)[p.model_names.index(model)] if model in p.model_names else None
        for i in e.item_ids:
            cols.append((e.name, str(i)))
            healthy.append(np.nan if row is None else float(row[ids.index(str(i))]))
    index = pd.MultiIndex.from_tuples(cols, names=["benchmark", "item_id"])
    broken = np.array(healthy)
    ai2d = np.array([c[0] == "AI2D_TEST" for c in cols])
    p = panels["AI2D_TEST"]
    ids = [str(i) for i in p.item_ids("AI2D_TEST")]
    easiness = np.nanmean(p.matrix("AI2D_TEST"), axis=0)
    pos = np.flatnonzero(ai2d)
    ease = easiness[[ids.index(cols[k][1]) for k in pos]]
    n_right = int(np.nansum(broken[pos] >= 0.5))
    broken[pos] = 0.0
    broken[pos[np.argsort(ease, kind="stable")[:n_right]]] = 1.0  # the hardest n_right right
    new = pd.DataFrame([healthy, broken], index=["healthy", "broken"], columns=index)
    doc = write_report(suite, new, {}, tmp_path, n_boot=200).to_json()
    fits = {
        m: {b: e["misfit"] for b, e in r["benchmarks"].items()} for m, r in doc["models"].items()
    }
    assert not any(f["flagged"] for f in fits["healthy"].values()), fits["healthy"]
    assert fits["broken"]["AI2D_TEST"]["flagged"], fits["broken"]["AI2D_TEST"]
    assert not any(f["flagged"] for b, f in fits["broken"].items() if b != "AI2D_TEST")
    assert (
        fits["broken"]["AI2D_TEST"]["items"] == len(pos)
        and 0 < fits["broken"]["AI2D_TEST"]["p_value"] <= 0.02
    )
    # the broken run keeps its numbers: the same score on AI2D's items, and a placement
    rep = json.loads((tmp_path / "report.json").read_text())["models"]
    assert (
        rep["broken"]["benchmarks"]["AI2D_TEST"]["score"]["value"]
        == rep["healthy"]["benchmarks"]["AI2D_TEST"]["score"]["value"]
    )
    assert rep["broken"]["suite"]["misfit"][0].startswith(
        "answers on AI2D_TEST fit the reference models worse than"
    )
    assert rep["healthy"]["suite"]["misfit"] == []
    md = (tmp_path / "report.md").read_text()
    assert md.count("- **misfit**: answers on AI2D_TEST") == 1 and "**misfit** (p = " in md
    err = capsys.readouterr().err
    assert "warning: broken: answers on AI2D_TEST fit the reference models worse" in err
    assert "healthy: answers on" not in err  # no misfit warning (a top-of-panel note may be)
