"""``primebench run --adaptive`` without an engine: a backend that answers as one held-out
MATH-Vision set-up answered (its recorded scores), so the run's answers are that model's and its
true full score is known. Checked: items are asked in rounds, from the whole pool; the test stops
at the budget or the target width; a run stopped early and resumed asks exactly the items an
uninterrupted run asks (none twice); the report's figures are the library's estimate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness_adapters.lmms_eval_upstream.functions import doc_to_text, exact_answer_score
from harness_adapters.run.adaptive_loop import run_adaptive
from harness_adapters.run.records import RecordFile
from harness_adapters.run.request import RunRequest
from harness_adapters.suites.documents import benchmark_rows
from harness_adapters.suites.prompt import PROMPT_KWARGS
from primebench_tasks.adaptive.result import AdaptiveSettings
from primebench_tasks.place.result import Placement
from primebench_tasks.place.variant_ranking import VariantRanking

BENCH = "MATH-Vision_MINI"
HELD = "Qwen-VL-Max"


class RecordedModel:
    """Answers an item's gold answer when the recorded model got it right, else 'Z'."""

    kind = "fake"

    def __init__(self, panel, model: str):
        y = panel.matrix(BENCH)[panel.model_names.index(model)]
        self.right = {
            doc_to_text(r, PROMPT_KWARGS): (r, y[k] >= 0.5)
            for k, r in enumerate(benchmark_rows(panel, BENCH))
        }
        self.asked: list[str] = []
        self.batches: list[int] = []

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        out = []
        self.batches.append(len(messages))
        for m in messages:
            doc, right = self.right[m[0]["content"][-1]["text"]]
            self.asked.append(doc["id"])
            out.append(str(doc["answer"]) if right else "Z")
        return out


@pytest.fixture
def setup(tmp_path, mathvision, suite20):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps({"architectures": ["Qwen2VLForConditionalGeneration"]})
    )
    reference = mathvision.subset_models([m for m in mathvision.model_names if m != HELD])
    return model, {BENCH: reference}, suite20


def _req(model, suite, out):
    return RunRequest(model=str(model), suite=suite, out=out, name="m")


def static_run(tmp_path, mathvision, suite):
    """A static run of ``suite`` by the held-out model into ``tmp_path/run``: its request and
    the reference panel without that model."""
    from harness_adapters.run.session import execute

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps({"architectures": ["Qwen2VLForConditionalGeneration"]})
    )
    req = _req(model, suite, tmp_path / "run")
    execute(req, mathvision, backend=RecordedModel(mathvision, HELD))
    return req, mathvision.subset_models([m for m in mathvision.model_names if m != HELD])


def test_the_recorded_answers_score_as_recorded(mathvision):
    rows = benchmark_rows(mathvision, BENCH)
    # the runner's local scorer reads one number or letter: a tuple answer such as "(3,-4)"
    # (item 2955) cannot be matched by it
    wrong = [r["id"] for r in rows if exact_answer_score(r, str(r["answer"])) != 1.0]
    assert wrong == ["2955"]
    assert all(exact_answer_score(r, "Z") == 0.0 for r in rows if str(r["answer"]) != "Z")


def test_adaptive_run_asks_the_pool_in_rounds_and_reports(setup, mathvision, tmp_path):
    model, panels, suite = setup
    backend = RecordedModel(mathvision, HELD)
    doc = run_adaptive(
        _req(model, suite, tmp_path / "run"),
        panels,
        AdaptiveSettings(target_width=None, max_items=30, round_size=5),
        backend=backend,
    )
    assert backend.batches == [5] * 6 and len(set(backend.asked)) == 30
    suite_ids = set(suite["categories"]["Math Reasoning"]["benchmarks"][BENCH]["item_ids"])
    assert set(backend.asked) - suite_ids, "the pool is the benchmark, not only the suite"
    e = doc.models["m"].benchmarks[BENCH]
    assert e.items == 30 and e.stopped_because == "item budget (30) spent"
    pf = e.predicted_full
    assert pf.lo <= pf.value <= pf.hi
    recs = RecordFile(tmp_path / "run" / "records.jsonl").read()
    assert e.score_on_items_asked == round(float(np.mean([r["score"] for r in recs])), 6)
    assert e.predicted_rank.out_of == 16
    assert (tmp_path / "run" / "adaptive.md").read_text().count("| MATH-Vision_MINI |") == 1
    assert len(recs) == 30 and {r["model"] for r in recs} == {"m"}


def test_resumed_run_asks_what_an_uninterrupted_run_asks(setup, mathvision, tmp_path, monkeypatch):
    import primebench_tasks.adaptive.benchmark as adaptive

    model, panels, suite = setup
    straight = RecordedModel(mathvision, HELD)
    run_adaptive(
        _req(model, suite, tmp_path / "a"), panels, AdaptiveSettings(None, 40, 5), backend=straight
    )
    first, second = RecordedModel(mathvision, HELD), RecordedModel(mathvision, HELD)
    run_adaptive(
        _req(model, suite, tmp_path / "b"), panels, AdaptiveSettings(None, 15, 5), backend=first
    )
    run_adaptive(
        _req(model, suite, tmp_path / "b"), panels, AdaptiveSettings(None, 40, 5), backend=second
    )
    assert first.asked + second.asked == straight.asked  # none twice, same order
    # each budget's calibration is kept beside the records, and read back on a resume
    kept = sorted((tmp_path / "b" / "calibration").glob("adaptive-calibration-*.json"))
    assert len(kept) == 2  # budgets 15 and 40: other counts, other calibrations
    assert {p.name for p in (tmp_path / "a" / "calibration").iterdir()} <= {p.name for p in kept}

    def replayed(*_a, **_k):
        raise AssertionError("a resumed run replayed the calibration")

    monkeypatch.setattr(adaptive, "calibration_runs", replayed)
    again = RecordedModel(mathvision, HELD)
    run_adaptive(
        _req(model, suite, tmp_path / "b"), panels, AdaptiveSettings(None, 40, 5), backend=again
    )
    assert again.asked == []  # all done: nothing is asked


@pytest.mark.parametrize(
    ("what", "field", "value"),
    [("policy", "pirt_weight", 0.5), ("guard", "uniform_share", 0.3)],
)
def test_a_run_under_another_policy_or_guard_is_not_resumed(
    setup, mathvision, tmp_path, what, field, value
):
    """A run started by a version whose default policy, or draw and guard settings, was another
    is not continued: it would not ask what the interrupted run would have asked, and its draws
    would not follow from this version's design."""
    from harness_adapters.run.errors import BackendError

    model, panels, suite = setup
    out = tmp_path / "p"
    settings = AdaptiveSettings(None, 10, 5)
    run_adaptive(_req(model, suite, out), panels, settings, backend=RecordedModel(mathvision, HELD))
    spec = json.loads((out / "run_spec.json").read_text())
    spec["adaptive"][what][field] = value
    (out / "run_spec.json").write_text(json.dumps(spec))
    backend = RecordedModel(mathvision, HELD)
    with pytest.raises(BackendError, match=f"holds an adaptive run under the {what}"):
        run_adaptive(
            _req(model, suite, out), panels, AdaptiveSettings(None, 20, 5), backend=backend
        )
    assert backend.asked == []


def test_a_wide_target_stops_after_the_first_round(setup, mathvision, tmp_path):
    model, panels, suite = setup
    backend = RecordedModel(mathvision, HELD)
    doc = run_adaptive(
        _req(model, suite, tmp_path / "w"), panels, AdaptiveSettings(0.99, 100, 5), backend=backend
    )
    e = doc.models["m"].benchmarks[BENCH]
    assert e.items == 5 and e.stopped_because == "interval narrower than 0.99"


def test_a_panel_without_content_is_named(setup, tmp_path, mathvision):
    model, panels, suite = setup
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.errors import InputError
    from primebench_tasks.suite.manifest import as_suite

    m3 = Panel.load_default("m3irt")
    b = m3.benchmark_names[0]
    entry = {"item_ids": ["x"], "score_range": [0, 1], "metric": "accuracy"}
    manifest = as_suite({**suite, "categories": {"c": {"benchmarks": {b: entry}}}, "n_items": 1})
    with pytest.raises(InputError, match="no item text/answer"):
        run_adaptive(_req(model, manifest, tmp_path / "c"), {b: m3}, AdaptiveSettings())


class RecordedVariants(RecordedModel):
    """Each variant (None = base, else the adapter's name) answers as one recorded model."""

    def __init__(self, panel, by_variant: dict):
        self.models = {a: RecordedModel(panel, m) for a, m in by_variant.items()}
        self.asked, self.batches = [], []

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        m = self.models[adapter]
        out = m.generate(messages, adapter)
        self.asked += [(adapter, i) for i in m.asked[-len(messages) :]]
        return out


def _adapter_dir(path: Path) -> Path:
    import struct

    path.mkdir(parents=True)
    (path / "adapter_config.json").write_text(json.dumps({"r": 2}))
    key = "base_model.model.model.language_model.layers.0.self_attn.q_proj.lora_A.weight"
    raw = json.dumps({key: {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()
    (path / "adapter_model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(16))
    return path


def test_rank_variants_adaptive_separates_and_resumes(tmp_path, mathvision, suite20):
    from harness_adapters.run.race_loop import rank_variants_adaptive

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["X"]}))
    strong, weak = "Gemini-Pro", "GPT4-CoT_TextOnly"
    ref = mathvision.subset_models([m for m in mathvision.model_names if m not in (strong, weak)])
    panels = {BENCH: ref}
    ad = {"a1": str(_adapter_dir(tmp_path / "a1"))}

    def req(out):
        return RunRequest(
            model=str(model), suite=suite20, out=tmp_path / out, name="m", adapters=ad
        )

    straight = RecordedVariants(mathvision, {None: strong, "a1": weak})
    doc = rank_variants_adaptive(req("s"), panels, AdaptiveSettings(None, 60, 5), backend=straight)
    assert doc.schema == "primebench.variant_ranking/1" and doc.race == "adaptive"
    assert doc.order == ["m", "m+a1"]
    assert doc.items is not None and doc.stopped_because is not None
    n = doc.items[BENCH]
    assert 0 < n <= 60  # rounds of 5 draws with replacement: a repeated draw asks nothing new
    if doc.verdict.fully_ordered:
        assert doc.stopped_because.startswith("every adjacent pair separated")
    else:
        assert doc.stopped_because == "item budget (60 per benchmark) spent"
    # the file reads back as the document returned
    assert VariantRanking.read(tmp_path / "s" / "adaptive_variants.json") == doc
    # both variants were asked the same items, in the same order
    base = [i for a, i in straight.asked if a is None]
    assert base == [i for a, i in straight.asked if a == "a1"] and len(base) == n
    # a run stopped early and resumed asks what the uninterrupted run asked
    first = RecordedVariants(mathvision, {None: strong, "a1": weak})
    rank_variants_adaptive(req("r"), panels, AdaptiveSettings(None, 10, 5), backend=first)
    second = RecordedVariants(mathvision, {None: strong, "a1": weak})
    again = rank_variants_adaptive(req("r"), panels, AdaptiveSettings(None, 60, 5), backend=second)
    assert again.items == doc.items and again.verdict == doc.verdict
    assert first.asked + second.asked == straight.asked
    assert (tmp_path / "r" / "adaptive_variants.md").read_text().startswith("# Variants of m")
    # one placement (#80): every variant placed on the suite from the race's draws, as a
    # static run's report — the same file, the suite score and ranks
    placed = Placement.read(tmp_path / "s" / "report.json")
    assert placed.estimator == "race" and set(placed.models) == {"m", "m+a1"}
    assert (tmp_path / "s" / "report.md").exists() and (tmp_path / "s" / "placement.png").exists()
    for name in ("m", "m+a1"):
        b = placed.models[name].benchmarks[BENCH]
        assert b.interval_from == "design" and b.n_items <= n
        full = b.predicted_full
        assert full.lo <= full.value <= full.hi
        assert placed.models[name].suite.predicted_full.value is not None
    # the race orders them as the placement does
    strong_full = placed.models["m"].benchmarks[BENCH].predicted_full.value
    assert strong_full > placed.models["m+a1"].benchmarks[BENCH].predicted_full.value


class UpstreamModel:
    """Answers the flagship's MMMU items from upstream-schema stand-ins: right where
    ``standins.right(item)``, in the form the upstream scorer reads."""

    kind = "fake"

    def __init__(self, rows: dict):
        self.rows = rows
        self.asked: list[str] = []

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        import re

        from tests.fixtures import upstream_standins as standins

        out = []
        for m in messages:
            text = " ".join(
                p["text"] for turn in m for p in turn["content"] if p.get("type") == "text"
            )
            item = re.search(r"Stand-in question \d+ for (\S+)\?", text).group(1)
            self.asked.append(item)
            out.append(standins.mmmu_answer(self.rows[item], standins.right(item)))
        return out


@pytest.fixture
def flagship_mmmu(tmp_path):
    """The released flagship's MMMU (its panel holds ids only: the items are read from the
    upstream dataset), with a stand-in dataset of every item of its reference panel."""
    pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
    from tests.fixtures import upstream_standins as standins
    from tests.harness.conftest import flagship_benchmark

    b = "MMMU_DEV_VAL"
    suite, panel, pool = flagship_benchmark(b, "flagship_mmmu")
    return b, suite, panel, pool, lambda ids, out: standins.mmmu(ids, out, extra=0)


def _upstream_req(model, suite, b: str, tmp_path: Path) -> RunRequest:
    """A run of ``suite`` into ``tmp_path/run``, the upstream dataset in ``tmp_path/mmmu``."""
    data = {suite.entry(b).lmms_eval_task: str(tmp_path / "mmmu")}
    return RunRequest(model=str(model), suite=suite, out=tmp_path / "run", name="m", data=data)


def test_adaptive_run_asks_an_upstream_benchmark_from_its_whole_pool(
    setup, flagship_mmmu, tmp_path
):
    """`run --adaptive` on the flagship: MMMU's pool (every item of its reference panel, not
    only the suite's) is read from the upstream dataset (--dataset) and asked and scored by the
    upstream task's code."""
    from tests.fixtures import upstream_standins as standins

    model, _, _ = setup
    b, suite, panel, pool, write = flagship_mmmu
    rows = write(pool, tmp_path / "mmmu")
    backend = UpstreamModel(rows)
    req = _upstream_req(model, suite, b, tmp_path)
    doc = run_adaptive(
        req, {b: panel}, AdaptiveSettings(target_width=None, max_items=15), backend=backend
    )
    assert len(backend.asked) == len(set(backend.asked)) == 15
    assert set(backend.asked) <= set(pool)
    assert set(backend.asked) - set(suite.entry(b).item_ids), "the pool, not only the suite"
    recs = RecordFile(tmp_path / "run" / "records.jsonl").read()
    assert {r["item_id"]: r["score"] for r in recs} == {
        i: float(standins.right(i)) for i in backend.asked
    }
    e = doc.models["m"].benchmarks[b]
    assert e.items == 15 and e.pool == len(pool) == 900
    assert e.predicted_full.lo <= e.predicted_full.value <= e.predicted_full.hi


def test_an_upstream_dataset_lacking_a_pool_item_is_refused(setup, flagship_mmmu, tmp_path):
    from primebench_tasks.errors import InputError

    model, _, _ = setup
    b, suite, panel, pool, write = flagship_mmmu
    write(pool[:-1], tmp_path / "mmmu")
    req = _upstream_req(model, suite, b, tmp_path)
    with pytest.raises(InputError, match=pool[-1]):
        run_adaptive(req, {b: panel}, AdaptiveSettings(max_items=5), backend=UpstreamModel({}))
    assert not (tmp_path / "run" / "records.jsonl").exists()


def test_a_resumed_run_refuses_another_revision_of_the_dataset(setup, flagship_mmmu, tmp_path):
    """The frozen spec keeps a digest of what each pool asks (ids, prompts, gold answers): the
    same dataset at another path resumes, a copy where one gold answer differs is refused
    before anything is asked."""
    import datasets

    from harness_adapters.run.errors import BackendError

    model, _, _ = setup
    b, suite, panel, pool, write = flagship_mmmu
    rows = write(pool, tmp_path / "mmmu")
    run_adaptive(
        _upstream_req(model, suite, b, tmp_path),
        {b: panel},
        AdaptiveSettings(target_width=None, max_items=5),
        backend=UpstreamModel(rows),
    )
    # the same content elsewhere: resumed, five more items asked
    write(pool, tmp_path / "copy")
    moved = _upstream_req(model, suite, b, tmp_path)
    moved.data = {suite.entry(b).lmms_eval_task: str(tmp_path / "copy")}
    backend = UpstreamModel(rows)
    run_adaptive(moved, {b: panel}, AdaptiveSettings(None, 10), backend=backend)
    assert len(backend.asked) == 5
    # another revision: the last pool item's gold answer changed
    ds = datasets.load_from_disk(str(tmp_path / "copy"))
    last = len(ds["validation"]) - 1
    answer = ds["validation"][last]["answer"]
    revised = ds["validation"].map(
        lambda r, k: {"answer": r["answer"] + "9" if k == last else r["answer"]}, with_indices=True
    )
    datasets.DatasetDict({"validation": revised}).save_to_disk(str(tmp_path / "revised"))
    assert (
        datasets.load_from_disk(str(tmp_path / "revised"))["validation"][last]["answer"] != answer
    )
    moved.data = {suite.entry(b).lmms_eval_task: str(tmp_path / "revised")}
    backend = UpstreamModel(rows)
    with pytest.raises(BackendError, match=f"adaptive item pools of {b} had other ids"):
        run_adaptive(moved, {b: panel}, AdaptiveSettings(None, 15), backend=backend)
    assert backend.asked == []


def test_the_whole_flagships_pools_come_from_the_upstream_datasets(tmp_path, monkeypatch):
    """Every flagship benchmark's pool is every item of its reference panel: MATH-Vision from the
    panel's content; MMMU, MathVista and BLINK (a group of subtasks) from upstream-schema
    stand-ins, each document's prompt and images built by the upstream task's code."""
    pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
    from harness_adapters.run.adaptive_loop import item_pools
    from harness_adapters.run.report import reference_panels
    from harness_adapters.suites.prompt import PROMPT_KWARGS
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.data.cards import card
    from primebench_tasks.pipeline.manifest import read_manifest
    from tests.fixtures import upstream_standins as standins

    monkeypatch.setenv("API_TYPE", "dummy")  # MathVista's upstream utils build a judge client
    flagship = read_manifest(suites_path() / "primebench.json")
    panels = reference_panels(flagship)
    data = {}
    for b, p in panels.items():
        if card(b).lmms_eval is not None:
            standins.for_benchmark(b)[0]([str(i) for i in p.item_ids(b)], tmp_path / b, extra=0)
            data[card(b).lmms_eval.task] = str(tmp_path / b)
    pools = item_pools(flagship, panels, AdaptiveSettings(), data=data)
    assert {p.benchmark: len(p.docs) for p in pools} == {
        "MMMU_DEV_VAL": 900,
        "MATH-Vision_MINI": 304,
        "MathVista_MINI": 1000,
        "BLINK": 1901,
        "OCRBench": 959,  # the items their text tells apart, matched by it
        "RealWorldQA": 708,
    }  # AI2D: no lmms-eval task, no pool
    for p in pools:
        assert [d.item_id for d in p.docs] == [
            str(i) for i in panels[p.benchmark].item_ids(p.benchmark)
        ]
        shared = p.benchmark == "MATH-Vision_MINI"
        for d in p.docs[:: len(p.docs) // 7]:
            assert d.text() and d.visuals(), (p.benchmark, d.item_id)
            assert (d.text() == doc_to_text(d.doc, PROMPT_KWARGS)) == shared, p.benchmark


def test_a_second_run_into_a_held_folder_is_refused(setup, mathvision, tmp_path):
    """Another process runs into RUN (it holds RUN/run.lock): an adaptive run, a race or a
    static run into RUN is refused before it asks or writes anything — not interleaved with it,
    which would ask the same items twice, move an adaptive run's budget (#54: a static run
    into a held folder wrote 95 records into it) and, under lmms-eval, share its round folders.
    Once the holder is gone (killed: the kernel drops its lock), the same run goes through."""
    from harness_adapters.run.race_loop import rank_variants_adaptive
    from harness_adapters.run.session import execute
    from primebench_tasks.data.folder_lock import FolderLockedError
    from tests.conftest import run_lock_held_elsewhere

    model, panels, suite = setup
    out = tmp_path / "run"
    backend = RecordedModel(mathvision, HELD)
    settings = AdaptiveSettings(None, 10, 5)
    with run_lock_held_elsewhere(out) as holder:
        refused = rf"{out} is being written by another run \(process {holder.pid}\).*--out"
        with pytest.raises(FolderLockedError, match=f"^{refused}"):
            run_adaptive(_req(model, suite, out), panels, settings, backend=backend)
        with pytest.raises(FolderLockedError, match=f"^{refused}"):
            rank_variants_adaptive(_req(model, suite, out), panels, settings, backend=backend)
        with pytest.raises(FolderLockedError, match=f"^{refused}"):
            execute(_req(model, suite, out), panels[BENCH], backend=backend)
        assert backend.asked == [] and sorted(p.name for p in out.iterdir()) == [
            "run.lock",
            "run.lock.owner",
        ]
    doc = run_adaptive(_req(model, suite, out), panels, settings, backend=backend)
    assert doc.models["m"].benchmarks[BENCH].items == 10 and len(backend.asked) == 10
    assert not (out / "run.lock.owner").exists()  # released at the end


class AllWrong:
    """A model that answers every item wrong (the tiny random model's behaviour)."""

    kind = "fake"

    def __init__(self):
        self.asked = 0

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        self.asked += len(messages)
        return ["Z"] * len(messages)


def test_an_all_wrong_model_is_never_placed_above_the_evidence(setup, mathvision, tmp_path):
    """The issue's tiny model: 0 right of the items asked. The item model alone placed it at
    0.066 [0.004, 0.097] and above a reference model; the guarded test's interval holds the
    design estimate of its answers, and it is ranked above no reference model whose full score
    exceeds the interval's upper end."""
    model, panels, suite = setup
    out = tmp_path / "wrong"
    doc = run_adaptive(_req(model, suite, out), panels, AdaptiveSettings(), backend=AllWrong())
    e = doc.models["m"].benchmarks[BENCH]
    pf, design = e.predicted_full, e.design
    assert e.score_on_items_asked == 0.0 and e.items >= 5
    # the design estimate is unbiased, so it may fall a little outside [0, 1]; the interval
    # holds it clipped there
    assert pf.lo <= min(max(design.estimate, 0.0), 1.0) <= pf.hi
    assert pf.lo <= pf.value <= pf.hi < 0.08
    # the item model alone said 0.09; the guard moved it to the evidence, ranked last
    assert design.guard_moved and design.model_predicted > 0.08 > pf.value
    assert e.predicted_rank.value == e.predicted_rank.out_of
    assert abs(pf.value - design.estimate) <= 0.5 * design.se + 1e-6
    reference = panels[BENCH].matrix(BENCH).mean(axis=1)
    above = reference > pf.hi  # every reference model whose full score exceeds the interval
    assert e.predicted_rank.value > int(above.sum())  # ranked below all of them
    # the draws are kept beside the records: one per item asked, each with its probability
    ledger = json.loads((out / "draws.json").read_text())
    (test,) = ledger["tests"]
    assert len(test["draws"]) == e.items == design.draws
    assert all(0 < d["q"] <= 1 for d in test["draws"])


def test_a_round_drawn_but_not_answered_is_asked_on_resume(setup, mathvision, tmp_path):
    """A run killed after its round's draws were kept and before their answers: the resumed run
    asks those items (what was drawn), not a new draw — and ends where an uninterrupted run ends."""
    model, panels, suite = setup
    straight = RecordedModel(mathvision, HELD)
    a = run_adaptive(
        _req(model, suite, tmp_path / "a"), panels, AdaptiveSettings(None, 20, 5), backend=straight
    )
    first = RecordedModel(mathvision, HELD)
    run_adaptive(
        _req(model, suite, tmp_path / "b"), panels, AdaptiveSettings(None, 20, 5), backend=first
    )
    records = tmp_path / "b" / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    records.write_text("".join(lines[:-5]))  # the last round's answers lost
    (tmp_path / "b" / "adaptive.json").unlink()
    again = RecordedModel(mathvision, HELD)
    b = run_adaptive(
        _req(model, suite, tmp_path / "b"), panels, AdaptiveSettings(None, 20, 5), backend=again
    )
    assert again.asked == straight.asked[-5:]
    assert b.to_json()["models"] == a.to_json()["models"]  # the documents (NaN shares: None)


def test_an_adaptive_run_continues_a_drawn_static_suite(mathvision, tmp_path):
    """#71: the released MATH-Vision suite's 100 items are a stratified draw of the whole pool
    (304 items, 25 strata). An adaptive run into its static run's folder asks only new items,
    and its design estimate reads the static answers as that draw (their Horvitz–Thompson term)
    with the new draws: the estimate with no draw yet is the static design's own."""
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.pipeline.manifest import read_manifest

    suite = read_manifest(suites_path() / "primebench_mathvision.json")
    req, reference = static_run(tmp_path, mathvision, suite)
    static_ids = {r["item_id"] for r in RecordFile(tmp_path / "run" / "records.jsonl").read()}
    assert len(static_ids) == 100
    at_once = run_adaptive(  # a target any interval meets: it stops before drawing
        req,
        {BENCH: reference},
        AdaptiveSettings(1.0, 10, 5),
        backend=RecordedModel(mathvision, HELD),
    )
    e0 = at_once.models["m"].benchmarks[BENCH]
    assert e0.items == 100 and e0.design.draws == 0 and e0.design.continued_items == 100
    assert e0.design.continued_as_draw
    # no draw yet: the design estimate is the static draw's Horvitz–Thompson estimate
    y = mathvision.matrix(BENCH)[mathvision.model_names.index(HELD)]
    ids = [str(i) for i in mathvision.item_ids(BENCH)]
    design = suite.entry(BENCH).design
    m0 = np.nanmean(reference.matrix(BENCH), axis=0)
    ht = m0.sum()
    for h, stratum in enumerate(design.strata):
        members = [k for k, i in enumerate(ids) if design.stratum.get(i) == h]
        ht += stratum.N / len(members) * sum(y[k] - m0[k] for k in members)
    assert e0.design.estimate == pytest.approx(ht / len(ids), abs=1e-6)
    # #80: --max-items counts what the test adds: 10 drawn beyond the 100 static answers
    more = RecordedModel(mathvision, HELD)
    doc = run_adaptive(req, {BENCH: reference}, AdaptiveSettings(None, 10, 5), backend=more)
    e = doc.models["m"].benchmarks[BENCH]
    assert len(more.asked) == 10 and not set(more.asked) & static_ids
    assert e.items == 110 and e.design.draws == 10 and e.design.continued_as_draw
    assert e.stopped_because.startswith("item budget (10) spent (items drawn by the test; 100")


def _twenty_drawn(setup, mathvision, tmp_path):
    """A finished 20-item adaptive run of the recorded model: its folder, draws.json, the draws."""
    model, panels, suite = setup
    out = tmp_path / "run"
    run_adaptive(
        _req(model, suite, out),
        panels,
        AdaptiveSettings(None, 20, 5),
        backend=RecordedModel(mathvision, HELD),
    )
    path = out / "draws.json"
    return out, path, json.loads(path.read_text())


@pytest.mark.parametrize(
    "edit",
    [
        {"field": "q", "to": 1e-6},  # a weight the design never gave: 10⁶ × one answer
        {"field": "rest", "to": 0.0},
        {"field": "m", "to": 1.0},
        {"field": "theta", "to": 3.0},
    ],
)
def test_an_edited_draw_is_refused_on_resume(setup, mathvision, tmp_path, edit):
    """A draws.json whose draws do not follow from the run's answers — an edited probability,
    prediction, remaining sum or round ability — is refused in one line naming the file, the
    test and the field, before anything is asked."""
    from primebench_tasks.errors import InputError

    model, panels, suite = setup
    out, path, doc = _twenty_drawn(setup, mathvision, tmp_path)
    if edit["field"] == "theta":
        doc["tests"][0]["thetas"][2] = edit["to"]
    else:
        doc["tests"][0]["draws"][7][edit["field"]] = edit["to"]
    path.write_text(json.dumps(doc))
    again = RecordedModel(mathvision, HELD)
    with pytest.raises(InputError, match="do not follow from the run's answers") as e:
        run_adaptive(_req(model, suite, out), panels, AdaptiveSettings(None, 30, 5), backend=again)
    assert (
        "draws.json" in str(e.value) and f"m / {BENCH}" in str(e.value) and "draws" in str(e.value)
    )
    assert again.asked == []


@pytest.mark.parametrize("damage", ["remove", "empty", "rename"])
def test_answers_without_their_draws_are_refused_on_resume(setup, mathvision, tmp_path, damage):
    """#79: an adaptive run whose draws.json is removed, emptied or names another model is not
    resumed as a static run continued (on 97d5833: rc 0, the drawn answers read as "continued"
    static answers, the guard dropped, the interval narrowed beyond the panel): its answers
    outside the static suite with no draw are refused, naming the file, before anything is
    asked."""
    from primebench_tasks.errors import InputError

    model, panels, suite = setup
    out, path, doc = _twenty_drawn(setup, mathvision, tmp_path)
    if damage == "remove":
        path.unlink()
    elif damage == "empty":
        doc["tests"] = []
        path.write_text(json.dumps(doc))
    else:
        for t in doc["tests"]:
            t["model"] = "someone else"
        path.write_text(json.dumps(doc))
    again = RecordedModel(mathvision, HELD)
    with pytest.raises(InputError, match="without their draws") as e:
        run_adaptive(_req(model, suite, out), panels, AdaptiveSettings(None, 30, 5), backend=again)
    assert "draws.json" in str(e.value) and f"m / {BENCH}" in str(e.value)
    assert again.asked == []


@pytest.mark.parametrize(
    "again, match",
    [
        (AdaptiveSettings(None, 10, 5), "never lower it"),
        (AdaptiveSettings(None, 30, 4), "round_size 5"),
    ],
)
def test_a_resume_never_lowers_the_budget_or_changes_the_rounds(
    setup, mathvision, tmp_path, again, match
):
    """#79: a 20-item run resumed with --max-items 10 exited 0, rewrote run_spec.json, said
    "item budget (10) spent" on 20 items and was placed again; now refused in one line, before
    anything is asked, the frozen settings untouched (raising the budget goes on asking)."""
    from harness_adapters.run.errors import BackendError

    model, panels, suite = setup
    out, _, _ = _twenty_drawn(setup, mathvision, tmp_path)
    spec = (out / "run_spec.json").read_bytes()
    backend = RecordedModel(mathvision, HELD)
    with pytest.raises(BackendError, match=match):
        run_adaptive(_req(model, suite, out), panels, again, backend=backend)
    assert backend.asked == [] and (out / "run_spec.json").read_bytes() == spec


def test_an_adaptive_run_is_placed_like_the_static_suite(setup, mathvision, tmp_path):
    """#80: an adaptive run writes report.json/.md/.png through the one placement path — the
    suite score, its category, ranks among the reference panel and the leaderboard — each
    benchmark's predicted full score the test's own point with its interval at 95 %."""
    from primebench_tasks.adaptive.placement import interval_95

    model, panels, suite = setup
    out = tmp_path / "run"
    doc = run_adaptive(
        _req(model, suite, out), panels, AdaptiveSettings(None, 30, 5),
        backend=RecordedModel(mathvision, HELD),
    )  # fmt: skip
    test = doc.models["m"].benchmarks[BENCH]
    placed = Placement.read(out / "report.json")
    b = placed.models["m"].benchmarks[BENCH]
    p, lo, hi = test.predicted_full.value, test.predicted_full.lo, test.predicted_full.hi
    assert b.interval_from == "adaptive" and b.predicted_full.value == p
    lo95, hi95 = interval_95(p, lo, hi, doc.settings.level)
    assert (b.predicted_full.lo, b.predicted_full.hi) == pytest.approx((lo95, hi95))
    assert lo95 <= lo and hi <= hi95  # wider than the test's 90 % interval
    assert b.n_items == 30 and b.predicted_rank.out_of == 16
    s = placed.models["m"].suite
    assert s.predicted_full.value == p and s.predicted_rank is not None  # a one-benchmark suite
    assert placed.estimator == "adaptive"
    assert (out / "report.md").read_text().startswith("# ")
    assert (out / "placement.png").exists()


def test_the_runner_and_the_replay_drive_one_test(setup, mathvision, tmp_path):
    """#80: one test in the library (``adaptive.session``): for the same answers and the same
    round seeds, ``replay`` draws the items a run asks, in the run's order, and reports its
    number."""
    from primebench_tasks.adaptive.ledger import draw_seed
    from primebench_tasks.adaptive.replay import replay

    model, panels, suite = setup
    out = tmp_path / "run"
    backend = RecordedModel(mathvision, HELD)
    doc = run_adaptive(
        _req(model, suite, out), panels, AdaptiveSettings(None, 20, 5), backend=backend
    )
    # the answers the run would record for every pool item (its scorer on the recorded model)
    y = mathvision.matrix(BENCH)[mathvision.model_names.index(HELD)]
    rows = benchmark_rows(mathvision, BENCH)
    y_run = np.array(
        [
            exact_answer_score(r, str(r["answer"]) if y[k] >= 0.5 else "Z")
            for k, r in enumerate(rows)
        ],
        float,
    )
    Y_ref = panels[BENCH].matrix(BENCH).astype(float)
    Y_ref = Y_ref[np.isfinite(Y_ref).any(axis=1)]
    r = replay(
        Y_ref, y_run[None, :], (20,), batch=5, design="item_model",
        round_seed=lambda _v, drawn: draw_seed(suite["version"], "m", BENCH, drawn),
    )  # fmt: skip
    ids = [str(r_["id"]) for r_ in rows]
    assert [ids[k] for k in r["order"][0][:20]] == backend.asked
    assert (
        round(float(r["predicted"][0, 0]), 6)
        == doc.models["m"].benchmarks[BENCH].predicted_full.value
    )


def test_an_adaptive_run_lists_the_design_only_benchmarks_missing_with_why(
    setup, mathvision, tmp_path
):
    """#81: a suite's design-only benchmarks (no reference panel to test adaptively) are never
    silently absent from an adaptive run's placement: each is missing, with why."""
    from primebench_tasks.data.cards import design_only_cards
    from primebench_tasks.suite.content_design import design_only_document

    model, panels, suite = setup
    cards = design_only_cards("primebench_wide")
    wide = suite.with_design_only([design_only_document(c, 12) for c in cards], "tiny_wide")
    out = tmp_path / "a"
    run_adaptive(
        _req(model, wide, out), panels, AdaptiveSettings(None, 10, 5),
        backend=RecordedModel(mathvision, HELD),
    )  # fmt: skip
    placed = Placement.read(out / "report.json")
    missing = (placed.missing or {})["m"]
    assert {c.name for c in cards} <= set(missing)
    for c in cards:
        assert missing[c.name]["why"].startswith("design-only: an adaptive test asks")
    assert placed.models["m"].benchmarks[BENCH].predicted_full.value is not None
