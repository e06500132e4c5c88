"""The README's generated sections are the committed outputs of their scripts: the markdown in
benchmarks/results/ is what the script renders from its committed CSV/JSON, and the README or a
page under docs/ holds it verbatim between markers."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RESEARCH = ROOT / "research" / "adaptive"
"""The investigation that chose the adaptive test's constants (its scripts and tables)."""


def _script(name: str):
    path = ROOT / "benchmarks" / f"{name}.py"
    if not path.exists():
        path = RESEARCH / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _readme_block(marker: str) -> str:
    from tests.docs import doc_block

    return doc_block(marker)


def test_selector_evidence_is_rendered_from_the_committed_csv():
    mod = _script("selector_evidence")
    cells = pd.read_csv(RESULTS / "selector_cells.csv")
    mae = pd.read_csv(RESULTS / "selector_mae.csv")
    text = mod.render(cells, mae, int(cells["n"].max()))
    assert text == (RESULTS / "selector_evidence.md").read_text("utf-8")
    assert _readme_block("selector-evidence") == text


def test_held_out_selector_evidence_is_rendered_from_the_committed_csv():
    mod = _script("selector_evidence")
    cells = pd.read_csv(RESULTS / "selector_heldout_cells.csv")
    mae = pd.read_csv(RESULTS / "selector_heldout_mae.csv")
    text = mod.render_held_out(cells, mae, int(cells["n"].max()))
    assert text == (RESULTS / "selector_heldout.md").read_text("utf-8")
    assert _readme_block("selector-heldout") == text
    labels = {p.split(" ")[0] for p in cells["panel"]}
    assert labels == {label for _, label in mod.HELD_OUT}


def test_the_constant_grid_builds_selectors():
    """The grid's factories construct and fit (they once broke on a signature change)."""
    import numpy as np

    mod = _script("selector_evidence")
    X = (np.random.default_rng(0).random((30, 40)) > 0.5).astype(float)
    sel = mod._grid_factory(4, 0.5)(5, 0, None).fit(X)
    assert len(sel.indices_) == 5


def test_selector_evidence_covers_every_embedded_panel_and_budget():
    mod = _script("selector_evidence")
    cells = pd.read_csv(RESULTS / "selector_cells.csv")
    labels = {p.split(" ")[0] for p in cells["panel"]}
    assert {label for _, label in mod.REAL} <= labels
    assert {label for label, _ in mod.SIMULATED} <= set(cells["panel"])
    budgets = set(cells["budget"])
    assert {f"{b} per category" for b in mod.ITEM_BUDGETS} <= budgets
    assert {"1%", "2%", "5%"} <= budgets


@pytest.mark.parametrize("name", ["validate_scale", "pipeline_scale"])
def test_scale_figures_are_rendered_from_the_committed_json(name):
    mod = _script(name)
    res = json.loads((RESULTS / f"{name}.json").read_text("utf-8"))
    text = mod.render(res)
    assert text == (RESULTS / f"{name}.md").read_text("utf-8")
    assert _readme_block(name.replace("_", "-")) == text


def test_real_panel_results_are_rendered_from_the_committed_json():
    spec = importlib.util.spec_from_file_location("results", ROOT / "tools" / "results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = json.loads((RESULTS / "real_panels.json").read_text("utf-8"))
    text = mod.render(res)
    assert text == (RESULTS / "real_panels.md").read_text("utf-8")
    assert _readme_block("real-panels") == text


def test_real_panel_results_reproduce():
    """The committed figures are what the current code computes (the main job's panel and the
    smallest one; tools/results.py runs all)."""
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline

    res = json.loads((RESULTS / "real_panels.json").read_text("utf-8"))
    for row in res["rows"]:
        if row["panel"] not in ("autojudger", "mathvision"):
            continue
        out = run_pipeline(Panel.load_default(row["panel"]), PipelineParams())
        n = sum(len(v) for d in out.selected.values() for v in d.values())
        assert (n, round(out.fidelity, 3)) == (row["suite_items"], row["end_to_end_rho"])


@pytest.mark.parametrize("name", ["openvlm", "autojudger"])
def test_replay_tables_are_the_committed_output(name):
    committed = (RESULTS / f"replay_{name}.md").read_text("utf-8")
    assert _readme_block(f"replay-{name}") == committed


def test_replay_openvlm_reproduces():
    spec = importlib.util.spec_from_file_location("results", ROOT / "tools" / "results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.replay("openvlm") == (RESULTS / "replay_openvlm.md").read_text("utf-8")


def test_records_import_section_is_rendered_from_the_committed_json():
    mod = _script("records_import")
    res = json.loads((RESULTS / "records_import.json").read_text("utf-8"))
    text = mod.render(res)
    assert text == (RESULTS / "records_import.md").read_text("utf-8")
    assert _readme_block("records-import") == text
    # the goals, on the committed figures
    assert res["seconds"] <= 30 and res["files"] == res["scored"] + res["skipped"] == 566
    assert res["ocrbench_within_half_point"] >= 0.95 * res["ocrbench_matched"]
    for d in res["datasets"].values():
        same, n = d["agreement"]
        assert same == n


def test_adaptive_replay_table_is_rendered_from_the_committed_csv():
    mod = _script("adaptive_replay")
    df = pd.read_csv(RESULTS / "adaptive_replay.csv")
    text = mod.table(df) + mod.race_table(pd.read_csv(RESULTS / "adaptive_races.csv"))
    assert text == (RESULTS / "adaptive_replay.md").read_text("utf-8")
    assert _readme_block("adaptive-replay") == text
    assert {"random", "frontier"} <= set(df["protocol"]) and set(df["items"]) == {25, 50, 100}


def test_the_docs_hold_the_unguarded_adaptive_summary_rendered_from_the_committed_csvs():
    mod = _script("adaptive_replay")
    df = pd.read_csv(RESULTS / "adaptive_replay.csv")
    rf = pd.read_csv(RESULTS / "adaptive_races.csv")
    text = mod.summary(df, rf)
    assert text == (RESULTS / "adaptive_summary.md").read_text("utf-8")
    # the item model's test before the guard (#71): docs/results.md keeps its summary
    results = (ROOT / "docs" / "results.md").read_text("utf-8")
    assert _readme_block("adaptive-summary") == text and text in results  # verbatim
    # the summary's figures are the full table's: every panel, and the goal count
    every = mod.cells(df)
    goal = mod.goal_cells(every)
    assert f"met (bold) in {int((goal.ratio <= 0.7).sum())} of {len(goal)} cells" in text
    assert text.count("**") == 2 * int((goal.ratio <= 0.7).sum())
    for b in df.benchmark.unique():
        assert f"| {b} (" in text


def test_ratio_range_is_the_paired_bootstrap_by_hand():
    """Equal errors: every resample's ratio is 1. One split, adaptive (1, 0) and static (1, 1):
    a resample's ratio is 1, ½ or 0 with probability ¼, ½, ¼, so its 5 % and 95 % quantiles
    are 0 and 1. Two splits drawn within each: split a's errors (1, 1) / (1, 1), split b's
    (0, 0) / (1, 1) — every resample keeps two rows of each, so the ratio is always 2/4 (drawn
    across splits it would range over 0–1)."""
    mod = _script("adaptive_replay")
    one = np.zeros(4)
    assert mod.ratio_range([0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], one) == (1.0, 1.0)
    assert mod.ratio_range([1.0, 0.0], [1.0, 1.0], np.zeros(2)) == (0.0, 1.0)
    split = np.array(["a", "a", "b", "b"])
    assert mod.ratio_range([1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], split) == (0.5, 0.5)


def test_coverage_noise_is_the_binomial_range_by_hand():
    """Binomial(10, 0.9): P(X ≤ 6) = 0.013 < 5 % ≤ P(X ≤ 7) = 0.070, P(X ≤ 9) = 1 − 0.9¹⁰ =
    0.651 < 95 %: the range is 7/10–10/10."""
    mod = _script("adaptive_replay")
    assert mod.coverage_noise(10) == (0.7, 1.0)


def test_adaptive_predictor_is_the_one_the_committed_procedure_chooses():
    """benchmarks/adaptive_choice.py: the table is rendered from its committed CSV, and the
    library's default policy is the candidate the procedure chooses on all panels."""
    from dataclasses import replace

    from primebench_tasks.adaptive.policy import AdaptivePolicy

    mod = _script("adaptive_choice")
    df = pd.read_csv(RESEARCH / "results" / "adaptive_choice.csv")
    text = mod.render(df)
    assert text == (RESEARCH / "results" / "adaptive_choice.md").read_text("utf-8")
    assert _readme_block("adaptive-choice") == text
    c = mod.cells(df)
    panels = list(dict.fromkeys(c["panel"]))
    assert len(panels) == 5 and set(df["predictor"]) == {x.label for x in mod.CANDIDATES}
    # the policy was chosen before p-IRT's weight beyond the panel (adaptive_outside_weight.py)
    chosen = replace(AdaptivePolicy(), beyond_weight=0.5).label
    assert mod.choose(c, panels) == chosen and f"**`{chosen}`**" in text


def test_adaptive_interval_is_the_one_the_committed_procedure_chooses():
    """benchmarks/adaptive_interval_choice.py: the table is rendered from its committed CSV, and
    the library's calibration folds and top-of-panel hull are the candidate it chooses."""
    import inspect

    from primebench_tasks.adaptive.benchmark import AdaptiveBenchmark
    from primebench_tasks.adaptive.defaults import ADAPTIVE_FOLDS

    mod = _script("adaptive_interval_choice")
    df = pd.read_csv(RESEARCH / "results" / "adaptive_interval_choice.csv")
    text = mod.table(df)
    assert text == (RESEARCH / "results" / "adaptive_interval_choice.md").read_text("utf-8")
    assert _readme_block("adaptive-interval-choice") == text
    assert set(df["candidate"]) == {mod.label(*c) for c in mod.CANDIDATES}
    params = inspect.signature(AdaptiveBenchmark).parameters
    default = (params["folds"].default, params["frontier_at_top"].default)
    assert default == (ADAPTIVE_FOLDS, True)
    assert f"**{mod.label(*default)}**" in text


def test_interval_choice_loss_and_tie_break_by_hand():
    """Coverage 0.95 on random hold-outs is 0.03 over the band, 0.80 on the frontier 0.05
    under its floor; a tie goes to the later candidate."""
    mod = _script("adaptive_interval_choice")
    a, b = (mod.label(*c) for c in mod.CANDIDATES[:2])
    idx = pd.MultiIndex.from_tuples(
        [("p", "random"), ("p", "frontier"), ("q", "random"), ("q", "frontier")],
        names=["benchmark", "protocol"],
    )
    cover = pd.DataFrame({a: [0.95, 0.80, 0.90, 0.90], b: [0.90, 0.90, 0.90, 0.85]}, index=idx)
    loss = mod.losses(cover, ["p", "q"])
    assert loss[a] == pytest.approx(0.08) and loss[b] == pytest.approx(0.0)
    assert mod.choose(loss) == b
    assert mod.choose(mod.losses(cover, ["q"])) == b  # 0 and 0: the later


def _rendered(name: str, marker: str):
    """The script ``name`` and its committed CSV, after checking that its ``table`` of the CSV
    is the committed markdown and the docs' block ``marker``."""
    mod = _script(name)
    where = RESULTS if (RESULTS / f"{name}.csv").exists() else RESEARCH / "results"
    df = pd.read_csv(where / f"{name}.csv")
    text = mod.table(df)
    assert text == (where / f"{name}.md").read_text("utf-8")
    assert _readme_block(marker) == text
    return mod, df


def test_adaptive_items_needed_table_is_rendered_from_the_committed_csv():
    mod, _ = _rendered("adaptive_items_needed", "adaptive-items-needed")
    assert mod.grid(154)[-1] == 154 and mod.grid(100)[:6] == (5, 10, 15, 20, 25, 30)


def test_top_shift_table_is_rendered_from_the_committed_csv():
    mod, df = _rendered("adaptive_top_shift", "adaptive-top-shift")
    assert set(df.rule) == set(mod.RULES)


def _deployed_top_rule() -> str:
    from primebench_tasks.adaptive.defaults import ADAPTIVE_NEAREST_SHIFT

    return "all rows" if ADAPTIVE_NEAREST_SHIFT is None else f"nearest {ADAPTIVE_NEAREST_SHIFT}"


def test_top_rule_is_the_one_the_committed_procedure_chooses():
    mod = _script("adaptive_top_shift")
    r = mod.ratios(pd.read_csv(RESEARCH / "results" / "adaptive_top_shift.csv"))
    assert mod.chosen(r) == _deployed_top_rule()
    assert f"On all five: **`{_deployed_top_rule()}`**" in _readme_block("adaptive-top-shift")


def test_top_rule_loss_and_leave_one_out_by_hand():
    mod = _script("adaptive_top_shift")
    rules = list(mod.RULES)
    # two panels, one cell each; rule 1 wins on P (ratio 0.5 against 1.0), rule 0 on Q
    # (e^-1 against e^-0.2); over both, rule 0: (log 1 − 1) / 2 = −0.5, rule 1:
    # (log 0.5 − 0.2) / 2 = −0.447, every other rule 0 (ratio 1)
    rows = []
    for p, ratio in (("P", {0: 1.0, 1: 0.5}), ("Q", {0: np.exp(-1), 1: np.exp(-0.2)})):
        for k, rule in enumerate(rules):
            rows.append({"panel": p, "rule": rule, "ratio": ratio.get(k, 1.0)})
    r = pd.DataFrame(rows)
    assert mod.losses(r).loc["P", rules[1]] == pytest.approx(np.log(0.5))
    assert mod.chosen(r) == rules[0]
    assert mod.lopo(r) == {"P": rules[0], "Q": rules[1]}  # each chosen on the other panel


def _same_errors(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Two comparisons' rows (``panel``, ``protocol``, ``split``, ``items``, ``abs_err_sum``,
    ``static_abs_err_sum``, ``held_out``) hold the same errors, hold-out by hold-out (both
    committed, 6 decimals)."""
    keys = ["panel", "protocol", "split", "items"]
    a, b = a.set_index(keys).sort_index(), b.set_index(keys).sort_index()
    assert len(a) and list(a.index) == list(b.index)
    tol = 1e-6 * (a.held_out + 1)
    assert (abs(a.abs_err_sum - b.abs_err_sum) <= tol).all()
    assert (abs(a.static_abs_err_sum - b.static_abs_err_sum) <= tol).all()


def test_top_shift_deployed_rule_is_the_blend_of_the_outside_weight_comparison():
    """The top-of-panel comparison ran before p-IRT's weight beyond the panel was chosen: its
    deployed rule's errors are the outside-weight comparison's earlier point (``w=0.5``), hold-out
    by hold-out — and that comparison's deployed rule is the replay's (below)."""
    top = pd.read_csv(RESEARCH / "results" / "adaptive_top_shift.csv")
    out = pd.read_csv(RESEARCH / "results" / "adaptive_outside_weight.csv")
    _same_errors(top[top.rule == _deployed_top_rule()], out[out.rule == "w=0.5"])


def test_outside_weight_table_is_rendered_and_chooses_the_librarys_weight():
    """benchmarks/adaptive_outside_weight.py: the table is rendered from its committed CSV; the
    rule it chooses on all five panels is the library's weight beyond the panel."""
    from primebench_tasks.adaptive.defaults import ADAPTIVE_BEYOND_WEIGHT

    mod, df = _rendered("adaptive_outside_weight", "adaptive-outside-weight")
    assert set(df.rule) == set(mod.RULES)
    deployed = f"w={ADAPTIVE_BEYOND_WEIGHT:g} beyond"
    assert deployed == mod.DEPLOYED and mod.chosen(mod.ratios(df)) == deployed
    assert f"On all five: **`{deployed}`**" in _readme_block("adaptive-outside-weight")


def test_outside_weight_deployed_rule_is_the_replays():
    """The comparison's deployed rule is the library's: on every panel, hold-out, split and item
    count its errors sum to the adaptive replay's (both committed, 6 decimals)."""
    out = pd.read_csv(RESEARCH / "results" / "adaptive_outside_weight.csv")
    rep = pd.read_csv(RESULTS / "adaptive_replay.csv").rename(columns={"benchmark": "panel"})
    keys = ["panel", "protocol", "split", "items"]
    g = rep.groupby(keys)
    replayed = pd.DataFrame(
        {
            "abs_err_sum": g.adaptive_err.sum(),
            "static_abs_err_sum": g.static_err.sum(),
            "held_out": g.size(),
        }
    ).reset_index()
    dep = out[out.rule == _script("adaptive_outside_weight").DEPLOYED]
    _same_errors(dep, replayed)


def test_outside_weight_points_and_stacked_weight_by_hand():
    """Two rows, one count: base 0.5 and 0.6, p-IRT 0.7 and 0.9, ridge 0.3 and 0.5, the first
    outside the interior and beyond, the second at the top (outside, not beyond). With w = 0.75
    outside both move by ¼·(p-IRT − ridge) = 0.1; beyond only the first. Stacked on both rows
    with truths 0.58 and 0.64: d = (0.4, 0.4), t − b = (0.08, 0.04) → w − ½ = 0.048/0.32 = 0.15."""
    mod = _script("adaptive_outside_weight")
    parts = {
        "base": np.array([[0.5], [0.6]]),
        "pirt": np.array([[0.7], [0.9]]),
        "ridge": np.array([[0.3], [0.5]]),
        "outside": np.array([[True], [True]]),
        "beyond": np.array([[True], [False]]),
    }
    w = np.array([0.75])
    assert mod.moved(parts, w)[:, 0] == pytest.approx([0.6, 0.7])
    assert mod.moved(parts, w, "beyond")[:, 0] == pytest.approx([0.6, 0.6])
    assert list(mod.moved(parts, np.array([0.5]))[:, 0]) == [0.5, 0.6]  # ½: the base, exactly
    both = np.array([True, True])
    got = mod.stacked_weight(parts, np.array([0.58, 0.64]), both)
    assert got == pytest.approx([0.65])
    # far off: clipped to [0, 1]; no row outside: ½
    assert mod.stacked_weight(parts, np.array([5.0, 5.0]), both) == pytest.approx([1.0])
    assert mod.stacked_weight(parts, np.array([0.58, 0.64]), ~both) == pytest.approx([0.5])


def test_alpha_choice_table_is_rendered_and_keeps_one_alpha():
    """benchmarks/adaptive_alpha_choice.py: the table is rendered from its committed CSV; the
    library's α is the better fixed candidate, and no calibrated rule gains 0.001 in mean log
    ratio over it (why the library keeps one α, docs/results.md)."""
    from primebench_tasks.adaptive.defaults import ADAPTIVE_RIDGE_ALPHA

    mod, df = _rendered("adaptive_alpha_choice", "adaptive-alpha-choice")
    assert set(df.alpha) == set(mod.ALPHAS) and ADAPTIVE_RIDGE_ALPHA in mod.ALPHAS
    loss = mod.comparison.rule_losses(mod.ratios(df), mod.RULES).mean()
    fixed = [f"α={a:g}" for a in mod.ALPHAS]
    assert loss[fixed].idxmin() == f"α={ADAPTIVE_RIDGE_ALPHA:g}"
    for rule in mod.RULES:
        assert loss[rule] > loss[f"α={ADAPTIVE_RIDGE_ALPHA:g}"] - 0.001


def test_alpha_choice_deployed_alpha_is_the_replays():
    """The comparison's deployed α replays the library's test as it stood before p-IRT's
    weight beyond the panel (the blend there): its errors are the top-of-panel comparison's
    deployed rule's, hold-out by hold-out (both committed, 6 decimals)."""
    from primebench_tasks.adaptive.defaults import ADAPTIVE_RIDGE_ALPHA

    alpha = pd.read_csv(RESEARCH / "results" / "adaptive_alpha_choice.csv")
    top = pd.read_csv(RESEARCH / "results" / "adaptive_top_shift.csv")
    _same_errors(alpha[alpha.alpha == ADAPTIVE_RIDGE_ALPHA], top[top.rule == _deployed_top_rule()])


def test_alpha_choice_calibration_loss_and_pick_by_hand():
    """Random-fold errors at one count (0.1, 0.3, 0.2): median 0.2, deviations (0.1, 0.1, 0) →
    1/15; at another (0, 0, 0.3) → median 0, 0.1; the mean over counts 1/12. With the frontier
    rows (0.5, 0.7) (median 0.6, deviations 0.1, 0.1) and (NaN, 0.4) (0.4: deviation 0): counts
    (0.1 + 0.1 + 0.2)/5 = 0.08 and 0.3/4 = 0.075. A calibrated rule takes the α with the least
    loss, the smaller on a tie."""
    mod = _script("adaptive_alpha_choice")

    class Bench:
        calibration = (
            np.array([[0.1, 0.0], [0.3, 0.0], [0.2, 0.3], [0.5, np.nan], [0.7, 0.4]]),
            None,
            np.array([False, False, False, True, True]),
            None,
        )

    assert mod.calibration_loss(Bench()) == pytest.approx((1 / 15 + 0.1) / 2)
    assert mod.calibration_loss(Bench(), all_rows=True) == pytest.approx((0.08 + 0.075) / 2)
    rows = []
    for split, losses in ((0, (0.2, 0.1)), (1, (0.1, 0.1))):
        for a, loss in zip(mod.ALPHAS, losses, strict=True):
            rows.append(
                {
                    "panel": "P",
                    "models": 9,
                    "protocol": "random",
                    "split": split,
                    "items": 25,
                    "alpha": a,
                    "loss_random": loss,
                    "loss_all": 0.0,
                    "abs_err_sum": a,
                    "static_abs_err_sum": 1.0,
                    "held_out": 1,
                }
            )
    picks = mod.by_rule(pd.DataFrame(rows))
    got = picks[picks.rule == "calibrated: random folds"].set_index("split").alpha
    assert got.to_dict() == {0: mod.ALPHAS[1], 1: mod.ALPHAS[0]}


def test_slip_probe_table_is_rendered_and_its_deployed_rule_is_the_replays():
    """benchmarks/adaptive_slip_probe.py: the table is rendered from its committed CSV; its
    ``deployed`` rule replays the library's test as it stood before p-IRT's weight beyond the
    panel (its errors are the top-of-panel comparison's deployed rule's, hold-out by hold-out);
    and no probing rule is better over every cell than the test the library keeps (why it asks
    no probes, docs/results.md)."""
    mod, df = _rendered("adaptive_slip_probe", "adaptive-slip-probe")
    assert set(df.rule) == set(mod.RULES)
    top = pd.read_csv(RESEARCH / "results" / "adaptive_top_shift.csv")
    _same_errors(df[df.rule == "deployed"], top[top.rule == _deployed_top_rule()])
    loss = mod.comparison.rule_losses(mod.comparison.rule_ratios(df), mod.RULES).mean()
    assert loss.idxmin() == "deployed"


def test_slip_trigger_table_is_rendered_and_flags_no_slipping_model():
    """benchmarks/adaptive_slip_trigger.py: the table is rendered from its committed CSV, every
    hold-out of the replay is in it, and the asked items' slip posterior flags under 10 % of
    the tests of models that slip (why only probes could see a slip, docs/results.md)."""
    mod, df = _rendered("adaptive_slip_trigger", "adaptive-slip-trigger")
    assert df.slips.any() and set(df.protocol) == {"random", "frontier"}
    assert df.split[df.protocol == "random"].nunique() == 10
    for c in mod.COUNTS:
        assert (df[f"posterior_{c}"][df.slips] > mod.FLAG).mean() < 0.1


def test_goal_reach_table_is_rendered_and_its_deployed_rows_are_the_replays():
    """benchmarks/adaptive_goal_reach.py: the tables are rendered from its committed CSV; its
    deployed test at 25, 50 and 100 items is the replay's (adaptive_replay.csv), test by test
    and hold-out by hold-out; every variant is measured on the same tests at the goal's counts;
    and the deployed test needs more than 100 items to reach the goal on AI2D's random
    hold-outs — the figure docs/results.md quotes."""
    mod, df = _rendered("adaptive_goal_reach", "adaptive-goal-reach")
    assert set(df.variant) == {"deployed", *mod.VARIANTS}
    deployed = df[df.variant == "deployed"]
    rep = pd.read_csv(RESULTS / "adaptive_replay.csv")
    keys = ["benchmark", "protocol", "split", "items"]
    got = deployed[deployed["items"].isin((25, 50, 100))].groupby(keys)
    want = rep.set_index(keys)
    for key, d in got:
        w = want.loc[[key]]
        assert len(d) == len(w)
        assert np.sort(d.err.to_numpy()) == pytest.approx(np.sort(w.adaptive_err), abs=2e-6)
        assert np.sort(d.static_err.to_numpy()) == pytest.approx(np.sort(w.static_err), abs=2e-6)
    assert {(b, p) for b, p in zip(df.benchmark, df.protocol, strict=True)} == set(mod.CELLS)
    sizes = df.groupby(["variant", "items"]).size()
    assert sizes.loc[list(mod.VARIANTS)].nunique() == 1
    ai2d = df[df.benchmark == "autojudger AI2D_TEST"]
    mae = ai2d[ai2d.variant == "deployed"].groupby("items")[["err", "static_err"]].mean()
    assert mae.err[100] > mod.GOAL * mae.static_err[100]
    curve = ai2d[ai2d.variant == "deployed, uncalibrated"].groupby("items").err.mean()
    goal = mod.GOAL * ai2d[ai2d["items"] == 100].groupby("variant").static_err.mean().iloc[0]
    assert curve.index[curve <= goal].min() == 300
    results = " ".join((ROOT / "docs" / "results.md").read_text("utf-8").split())
    assert "AI2D's random hold-outs need 300 adaptive items to reach 0.7 × the static" in results


def test_slip_posterior_and_point_by_hand():
    """One slip rate 0.5 against none, prior ½. A probe passed by a typical model with
    probability 0.8 and failed: likelihoods 0.2 (f = 0) and 0.6 (f = ½) → posterior ¼ / ¾,
    E[1 − f] = ¼ + ¾·½ = 0.625. Two passed (0.8, 0.5): 0.4 and 0.4·0.25 = 0.1 → 0.8 / 0.2,
    E[1 − f] = 0.9. The slipped point (3 + 4 + 0.5·10) / 20 = 0.6."""
    mod = _script("adaptive_slip_probe")
    grid = np.array([0.5])
    assert mod.slip_posterior(np.array([0.8]), np.array([0.0]), 0.5, grid) == pytest.approx(
        (0.625, 0.75)
    )
    got = mod.slip_posterior(np.array([0.8, 0.5]), np.array([1.0, 1.0]), 0.5, grid)
    assert got == pytest.approx((0.9, 0.2))
    assert mod.slipped_point(3.0, 4.0, 10.0, 0.5, 20) == pytest.approx(0.6)
    # the defaults: probes all passed leave a typical model typical; all failed, a slipper
    ceiling, slip = mod.slip_posterior(np.full(5, 0.97), np.ones(5))
    assert ceiling > 0.99 and slip < 0.02
    ceiling, slip = mod.slip_posterior(np.full(5, 0.97), np.zeros(5))
    assert ceiling < 0.5 and slip > 0.99


def test_slip_probes_ask_the_neighbours_surest_items_and_correct_a_slipper():
    """On a simulated 2PL panel: the probing round asks, once the test has PROBE_AT answers,
    the unasked items the model's neighbours pass most often; later rounds never ask them again;
    a model that fails every probe is probed again and predicted lower than the same answers
    with the probes passed, and with the probes kept out (no correction) the two differ only by
    the probes' own answers."""
    from primebench_tasks.adaptive.policy import AdaptivePolicy

    mod = _script("adaptive_slip_probe")
    rng = np.random.default_rng(0)
    theta, b = rng.normal(size=60), rng.normal(size=120)
    X = (rng.random((60, 120)) < 1 / (1 + np.exp(b[None, :] - theta[:, None]))).astype(float)
    proc = mod.SlipProbes(X[1:], AdaptivePolicy())
    y = X[0]
    asked, answers = np.zeros(120, bool), np.full(120, np.nan)
    while asked.sum() < mod.SlipProbes.at:
        pick = proc.pick(answers, asked, 5)
        asked[pick], answers[pick] = True, y[pick]
    rate = proc._typical(answers, asked)
    probes = proc.pick(answers, asked, 5)
    unasked = np.flatnonzero(~asked)
    assert set(probes) == set(unasked[np.argsort(-rate[unasked], kind="stable")[: mod.PROBES]])
    asked[probes] = True
    passed, failed = answers.copy(), answers.copy()
    passed[probes], failed[probes] = 1.0, 0.0
    point_passed = proc.point(passed, asked)[1]
    again = proc.pick(failed, asked, 5)  # every probe failed: the posterior says slip
    assert len(proc.probes) == mod.PROBES + mod.EXTRA and not set(again) & set(probes)
    asked[again], failed[again] = True, 0.0
    assert proc.point(failed, asked)[1] < point_passed - 0.05
    kept = mod.KeptOut(X[1:], AdaptivePolicy())
    kept.probes = proc.probes[: mod.PROBES]
    asked[again] = False
    diff = kept.point(passed, asked)[1] - kept.point(np.where(asked, failed, np.nan), asked)[1]
    assert diff == pytest.approx(mod.PROBES / 120)


def test_items_needed_pools_the_splits_by_hand():
    mod = _script("adaptive_items_needed")
    d = pd.DataFrame(
        {
            "static_mae": [0.035, 0.030],
            "items_needed": [10.0, 20.0],  # each split's own first crossing
            "curve": ["5:0.05;10:0.03;20:0.02", "5:0.04;10:0.05;20:0.01"],
        }
    )
    # pooled static 0.0325; pooled curve 0.045, 0.040, 0.015: first at or under it at 20
    need, mae = mod.pooled_need(d)
    assert need == 20 and mae == pytest.approx(0.015)
    assert mod.pooled_need(d.assign(static_mae=[0.01, 0.01])) == (
        None,
        pytest.approx(np.nan, nan_ok=True),
    )


def test_adaptive_speed_table_is_the_benchmark_output():
    mod = _script("adaptive_speed")
    doc = json.loads((RESULTS / "adaptive_speed.json").read_text("utf-8"))
    text = mod.markdown(doc)
    assert text == (RESULTS / "adaptive_speed.md").read_text("utf-8")
    assert _readme_block("adaptive-speed") == text


def test_misfit_replay_table_is_rendered_from_the_committed_csv():
    mod = _script("misfit_replay")
    df = pd.read_csv(RESULTS / "misfit_replay.csv")
    text = mod.render(df)
    assert text == (RESULTS / "misfit_replay.md").read_text("utf-8")
    assert _readme_block("misfit-replay") == text
    assert {"random", "frontier"} <= set(df["holdout"]) and set(df["level"]) == {0.02, 0.05}
    # the docs' figures: healthy held-out runs flagged in at most 5 % at the library's level
    from primebench_tasks.place.defaults import MISFIT_LEVEL

    g = df[(df["fault"] == "healthy") & (df["level"] == MISFIT_LEVEL) & (df["items"] == 100)]
    share = g.groupby(["panel", "holdout"])[["flagged", "runs"]].sum()
    assert (share["flagged"] / share["runs"]).max() <= 0.05


def test_flagship_placement_table_is_rendered_from_the_committed_csv():
    """#55: the flagship's panels of ≥ 80 models, placement and ranking on held-out models."""
    mod = _script("flagship_placement")
    df = pd.read_csv(RESULTS / "flagship_placement.csv")
    text = mod.table(df, mod.models_with_every_benchmark())
    assert text == (RESULTS / "flagship_placement.md").read_text("utf-8")
    assert _readme_block("flagship-placement") == text
    assert set(df["benchmark"]) == {"MMMU_DEV_VAL", "BLINK", "AI2D_TEST", "OCRBench", "RealWorldQA"}
    assert set(df["protocol"]) == {"random", "frontier", "chronological"}
    assert mod.models_with_every_benchmark() == 0


def test_merged_mmmu_adaptive_replay_is_rendered_from_the_committed_csvs():
    """#55: the adaptive replay on the flagship's merged MMMU panel (185 models)."""
    mod = _script("adaptive_replay_merged")
    df = pd.read_csv(RESULTS / "adaptive_replay_merged.csv")
    rf = pd.read_csv(RESULTS / "adaptive_races_merged.csv")
    text = mod.render(df, rf)
    assert text == (RESULTS / "adaptive_replay_merged.md").read_text("utf-8")
    assert _readme_block("adaptive-replay-merged") == text
    assert set(df["benchmark"]) == {mod.NAME} and set(df["models"]) == {185}


def test_flagship_floor_table_is_rendered_from_the_committed_csvs():
    """#55: the error floor the flagship's items set (answers simulated from the fitted 2PL)."""
    mod = _script("flagship_floor")
    df = pd.read_csv(RESULTS / "flagship_floor.csv")
    real = pd.read_csv(RESULTS / "flagship_placement.csv")
    text = mod.table(df, real)
    assert text == (RESULTS / "flagship_floor.md").read_text("utf-8")
    assert _readme_block("flagship-floor") == text
    assert set(df["protocol"]) == {"random", "frontier"}
    assert df.error.abs().mean() < real.error.abs().mean()  # the floor is below the real error


def test_suite_rank_imputation_tables_are_rendered_from_the_committed_csvs():
    """#55: the flagship's suite rank on imputed reference scores — which benchmarks impute,
    hidden scores of complete models, held-out models placed on the suite."""
    mod = _script("suite_rank_imputation")
    frames = [
        pd.read_csv(RESULTS / f"suite_rank_imputation_{n}.csv")
        for n in ("which", "hidden", "held_out")
    ]
    text = mod.render(*frames)
    assert text == (RESULTS / "suite_rank_imputation.md").read_text("utf-8")
    assert _readme_block("suite-rank-imputation") == text
    which, hidden, held = frames
    assert set(which.benchmark[which.in_rank]) == {
        "MMMU_DEV_VAL",
        "RealWorldQA",
        "AI2D_TEST",
        "OCRBench",
        "BLINK",
    }
    # the imputation beats the benchmark's mean on every measured repeat
    by = hidden.pivot(index="repeat", columns="method", values="mae")
    assert (by["imputed"] < by["benchmark mean"]).all()
    # the same held-out protocol at 5 % of the items (no 100-item floor)
    floor0 = pd.read_csv(RESULTS / "suite_rank_imputation_floor0.csv")
    text = mod.render_held_out(floor0)
    assert text == (RESULTS / "suite_rank_imputation_floor0.md").read_text("utf-8")
    assert _readme_block("suite-share-5") == text
    assert floor0["share"].iloc[0] <= 0.05 < held["share"].iloc[0]


def test_the_default_pair_is_the_one_the_design_comparison_chooses():
    """research/placement/design_comparison.py: the table is rendered from its committed CSV,
    the docs hold it, and the library's default selector and estimator are the pair it
    chooses; the old default's figures stay in it."""
    from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR
    from primebench_tasks.select.default import DEFAULT_SELECTOR

    path = ROOT / "research" / "placement" / "design_comparison.py"
    spec = importlib.util.spec_from_file_location("design_comparison", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results = ROOT / "research" / "placement" / "results"
    df = pd.read_csv(results / "design_comparison.csv")
    text = mod.render(mod.summary(df))
    assert text == (results / "design_comparison.md").read_text("utf-8")
    assert _readme_block("design-comparison") == text
    choice = mod.choice(mod.summary(df))
    assert choice.loc[choice["chosen"], "pair"].tolist() == [
        f"{DEFAULT_SELECTOR}+{DEFAULT_ESTIMATOR}"
    ]
    assert "cross_validated+pirt" in set(choice["pair"])  # the old default, beside the new
    assert set(df["protocol"]) == {"random", "frontier", "chronological", "gap"}
    assert set(df["k"]) == {25, 50, 100}


def test_response_replay_table_is_rendered_and_chooses_the_librarys_quantile():
    """The response check's replay (benchmarks/response_replay.py): the committed table is its
    CSV's rendering, included in docs/results.md, and the library's reference quantile is the
    one with the most faults flagged among those whose healthy runs are flagged in ≤ 2 %."""
    import numpy as np

    from primebench_tasks.place.responses import REFERENCE_QUANTILE

    mod = _script("response_replay")
    df = pd.read_csv(RESULTS / "response_replay.csv")
    text = mod.table(df[df["quantile"] == REFERENCE_QUANTILE]) + mod.choice_table(df)
    assert text == (RESULTS / "response_replay.md").read_text("utf-8")
    assert _readme_block("response-replay") == text
    ok = {}
    for q, g in df.groupby("quantile"):
        h = g[g["fault"] == "healthy"]
        f = g[g["fault"].isin(mod.FAULTS) & (g["share"] == 0.10)]
        if np.average(h.flagged, weights=h.runs) <= mod.HEALTHY_GOAL:
            ok[q] = np.average(f.flagged, weights=f.runs)
    assert max(ok, key=ok.get) == REFERENCE_QUANTILE


def test_the_default_accuracy_table_is_the_shipped_default_rendered_from_its_csv():
    """benchmarks/placement_design.py: the shipped default's accuracy (the README's figure and
    the figures the docs give for the default), rendered from its committed CSV into
    docs/results.md; the pair measured is the library's default, with the 95 % coverage that
    reports show beside the 90 %, on every released benchmark's panel."""
    from primebench_tasks.place.defaults import DEFAULT_ESTIMATOR
    from primebench_tasks.select.default import DEFAULT_SELECTOR

    mod = _script("placement_design")
    df = pd.read_csv(RESULTS / "default_accuracy.csv")
    text = mod.render(df)
    assert text == (RESULTS / "default_accuracy.md").read_text("utf-8")
    assert _readme_block("default-accuracy") == text
    assert mod.DEFAULT == (DEFAULT_SELECTOR, DEFAULT_ESTIMATOR)
    assert set(zip(df["selector"], df["estimator"], strict=True)) == {mod.DEFAULT}
    assert df["cover95"].notna().all() and set(df["k"]) == {25, 50, 100}
    assert {"MathVista_MINI", "MATH-Vision_MINI", "MMMU_DEV_VAL", "BLINK"} <= set(df["benchmark"])


def test_the_guarded_adaptive_test_is_the_one_the_committed_comparison_chooses():
    """research/adaptive/adaptive_guard.py: the choice's table and the comparison's tables are
    rendered from their committed CSVs; the README holds the summary verbatim; the library's
    ε and k are the candidate the rule picks, and the comparison ran that default."""
    from primebench_tasks.adaptive.defaults import ADAPTIVE_GUARD_K, ADAPTIVE_UNIFORM_SHARE

    mod = _script("adaptive_guard")
    results = RESEARCH / "results"
    choice = pd.read_csv(results / "adaptive_guard_choice.csv")
    text = mod.choice_table(choice)
    assert text == (results / "adaptive_guard_choice.md").read_text("utf-8")
    assert _readme_block("adaptive-guard-choice") == text
    picked = mod.chosen(choice)
    assert picked == f"guarded information ε={ADAPTIVE_UNIFORM_SHARE:g} k={ADAPTIVE_GUARD_K:g} both"
    df = pd.read_csv(results / "adaptive_guard.csv")
    text = mod.comparison_table(df)
    assert text == (results / "adaptive_guard.md").read_text("utf-8")
    assert _readme_block("adaptive-guard") == text
    summary = mod.summary(df)
    assert summary == (results / "adaptive_guard_summary.md").read_text("utf-8")
    readme = (ROOT / "README.md").read_text("utf-8")
    assert _readme_block("adaptive-guard-summary") == summary and summary in readme
    assert set(df.method) >= {mod.DEFAULT, "unguarded", "static design", "random items, mean"}
    assert set(df.protocol) == {
        "random", "frontier", "chronological", "gap", "synthetic", "synthetic_shift", "cross_source"
    }  # fmt: skip
    assert set(df.panel) == set(mod.PANELS) and df.draw.max() == 19


def test_the_sequential_design_table_is_rendered_from_its_csv():
    """#89: the comparison of the sequential design with a random sample (and the earlier
    item-model test) is its CSV's rendering, included in docs/results.md; the replay it ran is
    the library's default design."""
    import inspect

    from primebench_tasks.adaptive.replay import replay

    mod = _script("sequential_design")
    df = pd.read_csv(RESULTS / "sequential_design.csv")
    text = mod.table(df)
    assert text == (RESULTS / "sequential_design.md").read_text("utf-8")
    assert _readme_block("sequential-design") == text
    assert inspect.signature(replay).parameters["design"].default == "sequential"
    assert {"sequential"} <= set(df["design"]) and set(df["holdout"]) == {"random", "frontier"}
