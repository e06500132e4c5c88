"""Design-only benchmarks on the vLLM runner (#81): the wide suite's five design-only members
(MMStar, ChartQA, TextVQA val, POPE, ScienceQA-IMG) drawn from the user's copy of each dataset
(``--dataset TASK=DIR``) by the very draw the generated lmms-eval task runs, asked, recorded with
their key, stratum and draw, and placed by their design — on stand-ins of each upstream schema,
in two row orders. A benchmark whose dataset cannot be read is listed missing with why."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from primebench_tasks.data.cards import design_only_cards
from primebench_tasks.suite.content_design import design_only_document
from primebench_tasks.suite.manifest import SuiteManifest
from tests.fixtures import design_standins as standins

pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
pytest.importorskip("datasets", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")

KINDS = standins.KINDS
N_ROWS, N_DRAWN = 36, 12


def wide_suite(base: SuiteManifest) -> SuiteManifest:
    """``base`` plus the wide suite's design-only cards, each drawing ``N_DRAWN`` items."""
    cards = design_only_cards("primebench_wide")
    return base.with_design_only(
        [design_only_document(c, N_DRAWN) for c in cards], f"{base.name}_design"
    )


def right(key: str) -> bool:
    """Whether the stand-in model answers the item of content key ``key`` right."""
    return int(key[:4], 16) % 3 != 0


def standin_data(tmp: Path, suite: SuiteManifest, order_seed: int):
    """Stand-ins of every design-only benchmark in a shuffled row order: (task → folder, the
    answer of every drawn item by content key, the draw on the unshuffled rows)."""
    folders, answers, drawn = {}, {}, {}
    for e in suite.design_only:
        kind = KINDS[e.name]
        rows = standins.ROWS[kind](N_ROWS)
        d = standins.lmms_draw(rows, e.design, e.name)
        drawn[e.name] = {key: h for key, h, _ in d.items}
        for key, _, pos in d.items:
            answers[(e.name, key)] = standins.ANSWERS[kind](rows[pos], right(key))
        shuffled = rows[:]
        random.Random(order_seed).shuffle(shuffled)
        standins.write(kind, shuffled, tmp / kind)
        folders[str((e.upstream or {})["task"])] = str(tmp / kind)
    return folders, answers, drawn


class DesignAnswers:
    """Answers the design-only items from ``answers`` (by the messages — prompt and image —
    their own documents give; items whose messages are the same, as POPE's three splits of one
    image and question, in the order the run asks them), every other item 'Z'."""

    kind = "fake"

    def __init__(self, docs, answers) -> None:
        from harness_adapters.run.messages import chat_messages

        self.by_message: dict[str, list[str]] = {}
        for d in docs:
            if d.design is not None:
                m = json.dumps(chat_messages(d), sort_keys=True)
                self.by_message.setdefault(m, []).append(answers[(d.benchmark, d.item_id)])

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        out = []
        for m in messages:
            queue = self.by_message.get(json.dumps(m, sort_keys=True))
            out.append(queue.pop(0) if queue else "Z")
        return out


def run(tmp: Path, suite: SuiteManifest, data: dict, answers: dict) -> Path:
    from harness_adapters.run.request import RunRequest
    from harness_adapters.run.session import execute, write_run_report
    from harness_adapters.suites.documents import design_docs

    model = tmp / "model"
    model.mkdir(parents=True, exist_ok=True)
    (model / "config.json").write_text(json.dumps({"architectures": ["X"]}))
    req = RunRequest(model=str(model), suite=suite, out=tmp / "run", name="m", data=data)
    docs, _ = design_docs(suite, data)
    execute(req, None, backend=DesignAnswers(docs, answers))
    write_run_report(req, None, n_boot=50)
    return tmp / "run"


@pytest.fixture(scope="module")
def suite():
    from harness_adapters.suites.released import resolve_suite

    return wide_suite(resolve_suite("primebench_mathvision"))


def test_the_runner_asks_exactly_the_design_and_places_it_whatever_the_row_order(suite, tmp_path):
    placed = []
    for seed in (1, 2):
        data, answers, drawn = standin_data(tmp_path / f"d{seed}", suite, seed)
        out = run(tmp_path / f"r{seed}", suite, data, answers)
        records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
        for e in suite.design_only:
            mine = {r["item_id"]: r for r in records if r["benchmark"] == e.name}
            # the draw on the unshuffled rows, asked of the shuffled copy: key, stratum, draw
            assert {k: r["stratum"] for k, r in mine.items()} == drawn[e.name], e.name
            for key, r in mine.items():
                assert r["score"] == float(right(key)), (e.name, key)
                assert sum(N for N, _ in r["pool"]["strata"].values()) == N_ROWS
        report = json.loads((out / "report.json").read_text())["models"]["m"]
        assert sorted(report["design_only"]) == sorted(KINDS)
        for name, e in report["design_only"].items():
            assert e["n_scored"] == N_DRAWN and e["interval_from"] == "design"
            hits = [right(k) for k in drawn[name]]
            if len(e["strata"]) == 1:  # one stratum: the estimate is its items' mean
                assert e["predicted_full"]["value"] == pytest.approx(sum(hits) / N_DRAWN)
        placed.append(report["design_only"])
    assert placed[0] == placed[1]  # another row order: the same items, the same placement


def test_a_design_only_dataset_that_cannot_be_read_is_missing_with_why(suite, tmp_path, capsys):
    data, answers, _ = standin_data(tmp_path / "d", suite, 1)
    pope = str(suite.design_only_entry("POPE").upstream["task"])
    data[pope] = str(tmp_path / "no-such-folder")
    out = run(tmp_path / "r", suite, data, answers)
    report = json.loads((out / "report.json").read_text())
    assert "POPE" not in report["models"]["m"]["design_only"]
    why = report["missing"]["m"]["POPE"]["why"]
    assert why.startswith("design-only: not asked in this run") and "--dataset" in why
    assert sorted(report["models"]["m"]["design_only"]) == sorted(set(KINDS) - {"POPE"})


def test_the_runners_design_only_placement_is_the_lmms_eval_paths_for_the_same_answers(
    suite, tmp_path
):
    """The same answers placed from the runner's records and from lmms-eval-shaped records of
    the same items (what ``primebench place`` reads from lmms-eval's logs) give the same
    design-only placement: one placement, whichever harness asked."""
    import pandas as pd

    from harness_adapters.run.report import write_placement

    data, answers, _ = standin_data(tmp_path / "d", suite, 3)
    out = run(tmp_path / "r", suite, data, answers)
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    frame = pd.DataFrame(
        [{k: r.get(k) for k in ("model", "benchmark", "item_id", "score", "stratum")}
         | {"pool": json.dumps(r["pool"]) if "pool" in r else None} for r in recs]
    )  # fmt: skip
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(suite.to_json(), "utf-8")
    doc = write_placement(frame, suite.version, tmp_path / "placed", suite=suite_file, n_boot=50)
    runner = json.loads((out / "report.json").read_text())["models"]["m"]["design_only"]
    assert doc.to_json()["models"]["m"]["design_only"] == runner
