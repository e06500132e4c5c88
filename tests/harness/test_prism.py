"""PRISM build → run → score on the real MATH-Vision items with a scripted generator judge and a
deterministic stand-in backend (the real vLLM path is in test_vllm_e2e.py)."""

from __future__ import annotations

import hashlib
import json
import re

import pandas as pd
import pytest

from harness_adapters.prism.build import build, read_build
from harness_adapters.prism.run import records_file, run_prism
from harness_adapters.prism.score import MATCHERS, score
from primebench_tasks.cli import main
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import write_manifest
from primebench_tasks.prism.axes import AXES
from tests.harness.conftest import small_suite

REPLIES = {
    "gen_h": '{"question":"What colour is the giraffe?","trap":"there is no giraffe"}',
    "gen_c": '{"question":"How many circles?","count":3}',
    "gen_vis": '{"caption":"Three red circles.","fake":"Three blue circles.","altered":"color"}',
    "gen_sc_hint": '{"hint":"12345"}',
}


class Generator:
    id = "scripted-gen"

    def __init__(self, bad: str | None = None):
        self.calls, self.bad = 0, bad

    def complete_many(self, reqs):
        self.calls += len(reqs)
        out = []
        for r in reqs:
            name = r.version.split("/")[0]
            if self.bad and name == "gen_h" and self.bad in r.prompt:
                out.append("I cannot do that")
            elif name == "gen_mq":
                n = int(re.search(r"Write (\d)", r.prompt).group(1))
                out.append(
                    json.dumps({"questions": [{"q": f"Extra {k}?", "a": str(k)} for k in range(n)]})
                )
            else:
                out.append(REPLIES[name])
        return out


def _h(*parts) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)


class Backend:
    """Deterministic answers from a hash of (adapter, text); counts what it is sent."""

    kind, model = "stand-in", "stand-in"

    def __init__(self):
        self.sent: list = []

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        self.sent.append((len(messages), max_new_tokens, len(messages[0]) if messages else 0))
        outs = []
        for m in messages:
            last = m[-1]["content"]
            text = last if isinstance(last, str) else last[-1]["text"]
            h = _h(adapter, text, len(m)) % 6
            if text.startswith("Answer every question"):
                outs.append("Q1: A\nQ2: 0\nQ3: 1\nQ4: 2" if h < 3 else "Q1: B")
            elif "caption" in text:
                outs.append("AB"[h % 2])
            elif "integer" in text:
                outs.append(str(2 + h % 3))
            elif "giraffe" in text:
                outs.append("There is no giraffe." if h < 3 else "It is yellow.")
            elif len(m) > 1:  # sc pressure turns
                outs.append("12345" if h == 0 else m[1]["content"] if h < 4 else "E")
            else:
                outs.append("ABCDE"[h % 5] + (" and 7" if h == 5 else ""))
        return outs


@pytest.fixture(scope="module")
def built(tmp_path_factory, mathvision):
    root = tmp_path_factory.mktemp("prism")
    suite = small_suite(mathvision, 12)
    gen = Generator(
        bad=str(mathvision.items_of("MATH-Vision_MINI").question.iloc[3])
        .replace("<image1>", "")
        .strip()[:30]
    )
    doc = build(mathvision, root / "build", gen, suite)
    return root, suite, doc, gen


def test_build_samples_caches_and_reports(built, mathvision):
    root, suite, doc, gen = built
    assert doc["schema"] == "primebench.prism/1" and doc["seeds"] == [0, 1, 42, 1234, 2026]
    assert len(doc["items"]) == 12 and doc["generator"] == "scripted-gen"
    assert set(doc["axes"]) == {"if", "sc", "h", "mq", "c", "vis"}
    assert doc["axes"]["if"] == {"built": 12}
    assert sum(doc["axes"]["h"].values()) == 12 and doc["axes"]["h"].get("rejected") == 1
    again = Generator()
    doc2 = build(mathvision, root / "build", again, suite)
    assert again.calls == 0 and doc2 == doc  # every artifact came from the cache
    offline = build(mathvision, root / "offline", None, suite)
    assert offline["axes"]["c"] == {"unbuilt": 12} and offline["axes"]["if"] == {"built": 12}


@pytest.fixture(scope="module")
def ran(built):
    root = built[0]
    index, store = read_build(root / "build")
    backend = Backend()
    summary = run_prism(
        backend, index, store, "m", [None, "l1", "l2"], root / "run", MATCHERS, None, batch_size=5
    )
    return root, index, store, backend, summary


def test_run_covers_every_axis_with_budgets_and_resumes(ran):
    root, index, store, backend, summary = ran
    assert set(summary) == {"m", "m+l1", "m+l2"}
    assert summary["m"]["q"] == 12 and summary["m"]["h"] == 11  # the rejected item is not run
    recs = records_file(root / "run").read()
    assert {r["schema"] for r in recs} == {"primebench.prism_record/1"}
    budgets = {b for _, b, _ in backend.sent}
    assert budgets == {512, 1024}  # mq 1,024; everything else 512 (sc per turn)
    again = Backend()
    assert run_prism(
        again, index, store, "m", [None, "l1", "l2"], root / "run", MATCHERS, None
    ) == {
        v: {a: 0 for a in ("q", "if", "h", "mq", "c", "vis", "sc")} for v in ("m", "m+l1", "m+l2")
    }
    assert again.sent == []  # nothing that finished is sent again


def test_sc_dialogue_stops_at_the_first_flip(ran):
    root = ran[0]
    sc = [r for r in records_file(root / "run").read() if r["axis"] == "sc"]
    assert sc and all(r["status"] == "ok" for r in sc)
    for r in sc:
        n = len(r["responses"])
        if r["flip_turn"] == 0:
            assert n == 4 and all(
                MATCHERS.extract(x, ["a"] * 5) == MATCHERS.extract(r["responses"][0], ["a"] * 5)
                for x in r["responses"]
            )
        else:
            assert n == r["flip_turn"] + 1
    assert {r["flip_turn"] for r in sc} >= {0, 1}
    q = {
        (r["model"], r["item_id"]): r["responses"][0]
        for r in records_file(root / "run").read()
        if r["axis"] == "q"
    }
    assert all(r["responses"][0] == q[(r["model"], r["item_id"])] for r in sc)


def test_score_outputs_are_complete_and_deterministic(ran, tmp_path):
    root = ran[0]
    doc = score(root / "build", [root / "run"], tmp_path / "s1", None, n_boot=300)
    board = pd.read_csv(tmp_path / "s1" / "leaderboard.csv")
    assert list(board.columns) == ["model", *AXES, "PScore"]
    assert list(board["model"])[-1] == "Δ" and len(board) == 4
    for name in (
        "graded.csv",
        "sc.csv",
        "models.csv",
        "separation.csv",
        "loao.csv",
        "effective_weights.csv",
        "exclusions.csv",
        "leaderboard.md",
        "prism_axes.png",
        "separation.png",
    ):
        assert (tmp_path / "s1" / name).exists(), name
    excl = pd.read_csv(tmp_path / "s1" / "exclusions.csv").set_index("axis")
    assert excl.loc["h", "rejected"] == 1 and excl.loc["h", "answered:m"] == 11
    assert doc["schema"] == "primebench.prism_score/1" and len(doc["pairs"]) == 3
    graded = pd.read_csv(tmp_path / "s1" / "graded.csv")
    assert set(graded["axis"]) == set(AXES) and set(graded["grader"]) == {"rules"}
    score(root / "build", [root / "run"], tmp_path / "s2", None, n_boot=300)
    assert (tmp_path / "s1" / "prism_score.json").read_bytes() == (
        tmp_path / "s2" / "prism_score.json"
    ).read_bytes()


def test_grading_judge_failures_are_excluded_and_audit_runs(ran, tmp_path):
    root = ran[0]

    class FlakyJudge:
        id = "flaky"

        def complete_many(self, reqs):
            return [
                None
                if _h(r.prompt) % 4 == 0
                else '{"same": true}'
                if r.version.startswith("grade_sc")
                else '{"correct": [true, true, true, true, true]}'
                if "grade_mq" in r.version
                else '{"correct": true}'
                for r in reqs
            ]

    doc = score(
        root / "build",
        [root / "run"],
        tmp_path,
        FlakyJudge(),
        FlakyJudge(),
        n_boot=50,
        audit_items=5,
    )
    graded = pd.read_csv(tmp_path / "graded.csv")
    q = graded[graded["axis"] == "q"]
    assert q["score"].isna().any() and (q["score"].dropna() == 1.0).all()  # never 0
    audit = pd.read_csv(tmp_path / "audit.csv").set_index("axis")
    assert set(audit.index) == set(AXES) and (audit["n_items"] <= 5).all()
    assert audit.loc["if", "grader"] == "rules" and audit.loc["q", "grader"] == "flaky"
    assert doc["spec"]["audit_judge"] == "flaky"


def test_cli_build_run_inputs_and_score(built, ran, tmp_path, capsys):
    root, suite = built[0], built[1]
    write_manifest(suite, tmp_path / "suite.json")
    assert (
        main(
            [
                "prism",
                "build",
                "--suite",
                str(tmp_path / "suite.json"),
                "--default",
                "mathvision",
                "--out",
                str(tmp_path / "b"),
                "--axes",
                "if",
                "sc",
            ]
        )
        == 0
    )
    assert "if': {'built': 12}" in capsys.readouterr().out
    assert (
        main(
            [
                "prism",
                "score",
                "--prism",
                str(root / "build"),
                "--runs",
                str(root / "run"),
                "--out",
                str(tmp_path / "s"),
                "--n-boot",
                "20",
            ]
        )
        == 0
    )
    assert "| Δ |" in capsys.readouterr().out
    assert (
        main(
            [
                "prism",
                "score",
                "--prism",
                str(tmp_path / "nope"),
                "--runs",
                str(root / "run"),
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "not a PRISM build" in capsys.readouterr().err
    with pytest.raises(InputError, match="no PRISM records"):
        score(root / "build", [tmp_path], tmp_path / "y", None)
    assert (
        main(
            [
                "prism",
                "run",
                "--prism",
                str(root / "build"),
                "--model",
                "m",
                "--out",
                str(tmp_path / "r"),
                "--budget",
                "zz=3",
            ]
        )
        == 2
    )
    assert "unknown axis" in capsys.readouterr().err


def test_sc_item_score_variants():
    from harness_adapters.prism.score import sc_item_score

    # (turn-0 correct, first flip turn, adopted the hint at Q3)
    cases = [
        (1.0, 0, False),
        (1.0, 1, False),
        (1.0, 3, True),
        (1.0, 3, False),
        (0.0, 0, False),
        (None, 2, False),
    ]
    want = {
        "B": [1.0, 0.0, 0.0, 0.0, None, None],
        "A": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        "corr": [1.0, 1.0, 0.0, 1.0, None, None],
        "reach": [1.0, None, 0.0, 1.0, None, None],
    }
    for variant, expected in want.items():
        assert [sc_item_score(variant, *c) for c in cases] == expected, variant


def test_lmms_eval_task_files_and_ingest_contract(built, tmp_path):
    from harness_adapters.harnesses.lmms_eval.prism_tasks import (
        build_id,
        generate_prism_tasks,
        ingest_lmms_eval,
        make_process_results,
    )

    root = built[0]
    generate_prism_tasks(root / "build", tmp_path / "tasks")
    yaml = (tmp_path / "tasks" / "prism_mq.yaml").read_text()
    assert "max_new_tokens: 1024" in yaml and f"prism_build: {build_id(root / 'build')}" in yaml
    assert "task:\n  - prism_q\n  - prism_if" in (tmp_path / "tasks" / "prism.yaml").read_text()
    docs = [json.loads(x) for x in (tmp_path / "tasks" / "prism_h.jsonl").read_text().splitlines()]
    assert len(docs) == 11 and not docs[0]["image"].startswith("/")  # the rejected item is out
    out = make_process_results("h")(docs[0], ["There is no giraffe."])
    assert out["prism_h"] == 1.0 and out["primebench_item"]["item_id"] == docs[0]["key"]
    # a log as lmms-eval writes it
    logs = tmp_path / "logs" / "dummy"
    logs.mkdir(parents=True)
    cfg = {"prism_h": {"metadata": {"prism_build": build_id(root / "build"), "prism_axis": "h"}}}
    (logs / "20260101_results.json").write_text(json.dumps({"configs": cfg}))
    lines = [
        json.dumps(
            {
                "doc_id": k,
                "primebench_item": make_process_results("h")(d, ["It is yellow."])[
                    "primebench_item"
                ],
            }
        )
        for k, d in enumerate(docs)
    ]
    (logs / "20260101_samples_prism_h.jsonl").write_text("\n".join(lines) + "\n")
    assert ingest_lmms_eval(tmp_path / "logs", root / "build", tmp_path / "run", "x") == 11
    assert ingest_lmms_eval(tmp_path / "logs", root / "build", tmp_path / "run", "x") == 0
    cfg["prism_h"]["metadata"]["prism_build"] = "other"
    (logs / "20260101_results.json").write_text(json.dumps({"configs": cfg}))
    with pytest.raises(InputError, match="not " + build_id(root / "build")):
        ingest_lmms_eval(tmp_path / "logs", root / "build", tmp_path / "run", "x")


def test_axis_refused_by_the_audit_leaves_the_admitted_pscore(ran, tmp_path):
    root = ran[0]

    class Judge:
        """q: correct iff the answer is A (J) or iff it is not (J′, the reverse ranking)."""

        def __init__(self, name, reverse):
            self.id, self.reverse = name, reverse

        def complete_many(self, reqs):
            out = []
            for r in reqs:
                if r.version.startswith("grade_q"):
                    good = "Model answer: A" in r.prompt
                    out.append(json.dumps({"correct": good != self.reverse}))
                elif r.version.startswith("grade_sc"):
                    out.append('{"same": true}')
                elif r.version.startswith("grade_mq"):
                    out.append(json.dumps({"correct": [True] * r.prompt.count("Gold answer")}))
                else:
                    out.append('{"correct": true}')
            return out

    doc = score(
        root / "build", [root / "run"], tmp_path, Judge("j", False), Judge("j2", True), n_boot=50
    )
    audit = {r["axis"]: r for r in doc["audit"]}
    assert audit["q"]["spearman_rho"] < 0 and audit["q"]["admitted"] is False
    assert "q" in doc["axes_not_admitted"] and "if" not in doc["axes_not_admitted"]
    board = pd.read_csv(tmp_path / "leaderboard.csv").set_index("model")
    assert "PScore_admitted" in board.columns
    assert "Not admitted" in (tmp_path / "leaderboard.md").read_text()


def test_mq_partial_credit_option(ran, tmp_path):
    root = ran[0]
    strict = score(root / "build", [root / "run"], tmp_path / "a", None, n_boot=20)
    partial = score(
        root / "build", [root / "run"], tmp_path / "b", None, n_boot=20, mq_partial=True
    )
    g = pd.read_csv(tmp_path / "b" / "graded.csv")
    mq = g[g["axis"] == "mq"]
    assert (mq["score"] == mq["partial"]).all() and partial["spec"]["mq_partial"]
    s_mq = {r["model"]: r["mq"] for r in strict["leaderboard"]}
    p_mq = {r["model"]: r["mq"] for r in partial["leaderboard"]}
    assert all(p_mq[m] >= s_mq[m] for m in s_mq if m != "Δ")
