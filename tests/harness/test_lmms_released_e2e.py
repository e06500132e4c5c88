"""The released ``primebench`` suite through the real upstream lmms-eval 0.7.3 task code.

For every released benchmark: lmms-eval runs the generated task (the upstream dataset schema in a
local stand-in, the upstream prompt, visual and scoring code) with a model that answers some items
right and others wrong; exactly the manifest's items run; each item's ingested score equals what
the upstream scorer gives for that answer; ``primebench place`` places the run. The same answers
through the vLLM runner and through VLMEvalKit's run.py give the same item scores and the same
placement.
"""

from __future__ import annotations

import json
import os

import pytest

from harness_adapters.harnesses.lmms_eval.ingest import read_run
from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks
from harness_adapters.lmms_eval_upstream.functions import exact_answer_score
from harness_adapters.suites.released import suites_path
from primebench_tasks.data.cards import card
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import manifest_items, read_manifest
from primebench_tasks.pipeline.multi_source import source_panels
from tests.fixtures import upstream_standins as standins
from tests.fixtures.lmms_runs import plugin_env, run_lmms_eval

pytestmark = pytest.mark.slow  # end to end through a real harness: the full run (CI)

pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
ENV = plugin_env()


@pytest.fixture(scope="module")
def released_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("released")
    # under another name, so its tasks do not clash with the installed ones
    manifest = read_manifest(suites_path() / "primebench.json").renamed("primebench_standin")
    items = manifest_items(manifest)
    ids = {b: v for by_b in items.values() for b, v in by_b.items()}
    # every upstream benchmark of the suite from the stand-in its benchmark card names
    upstream = {b: card(b) for b in ids if card(b).lmms_eval is not None}
    assert sorted(upstream) == [
        "BLINK",
        "MMMU_DEV_VAL",
        "MathVista_MINI",
        "OCRBench",
        "RealWorldQA",
    ]
    docs = {b: standins.for_benchmark(b)[0](ids[b], tmp / b) for b in upstream}
    make = {b: standins.for_benchmark(b)[1] for b in upstream}
    generate_tasks(
        manifest,
        source_panels(manifest),
        tmp / "tasks",
        datasets={c.lmms_eval.task: tmp / b for b, c in upstream.items() if c.lmms_eval},
    )
    tasks = json.loads((tmp / "tasks" / "primebench_items.json").read_text())
    mv = Panel.load_default("mathvision").items_of("MATH-Vision_MINI").set_index("item_id")
    table, intended = {}, {}
    for t, t_ids in tasks.items():
        meta = (tmp / "tasks" / f"{t}.yaml").read_text()
        b = next(b for b in ids if f"benchmark: {b}\n" in meta)
        table[t] = {}
        for i in t_ids:
            ok = standins.right(i)
            if b == "MathVista_MINI" and standins.mathvista_scores_zero_upstream(docs[b][i]):
                ok = False  # upstream scores it 0 whatever the answer (see the helper)
            intended[(b, i)] = ok
            if b == "MATH-Vision_MINI":
                table[t][i] = str(mv.loc[i, "answer"]) if ok else "Z"
            else:
                table[t][i] = make[b](docs[b][i], ok)
    (tmp / "answers.json").write_text(json.dumps(table))
    run_lmms_eval(
        "primebench_standin",
        tmp / "out",
        include=tmp / "tasks",
        model="pb_answers",
        model_args=f"answers={tmp / 'answers.json'},contexts={tmp / 'contexts.json'}",
        env=ENV,
        cwd=tmp,
        timeout=900,
    )
    return manifest, docs, intended, table, tmp


@pytest.mark.heavy
def test_released_suite_runs_exactly_its_items_with_upstream_scores(released_run):
    manifest, docs, intended, table, tmp = released_run
    recs = read_run(tmp / "out", suite_version=manifest["version"])
    got = {(r.benchmark, r.item_id): r.score for r in recs.itertuples()}
    want_items = {
        (b, i)
        for by_b in manifest_items(manifest).values()
        for b, v in by_b.items()
        for i in v
        if b != "AI2D_TEST"  # no lmms-eval task (the manifest says why)
    }
    assert set(got) == want_items
    for b in ("MathVista_MINI", "MMMU_DEV_VAL", "BLINK", "MATH-Vision_MINI", "OCRBench"):
        scores = [s for (bb, _), s in got.items() if bb == b]
        assert 0 < sum(scores) < len(scores), b  # some right, some wrong
    # every score is what the upstream scorer gives for that answer, computed here in-process
    os.environ.setdefault("API_TYPE", "dummy")
    from lmms_eval.tasks.blink import utils as blink_utils
    from lmms_eval.tasks.mathvista import utils as mathvista_utils
    from lmms_eval.tasks.mmmu import utils as mmmu_utils
    from lmms_eval.tasks.ocrbench import utils as ocrbench_utils
    from lmms_eval.tasks.realworldqa import utils as realworldqa_utils

    from harness_adapters.lmms_eval_upstream.item_scorers import ITEM_SCORERS, score_number

    upstream = {
        "MathVista_MINI": (mathvista_utils, "mathvista"),
        "MMMU_DEV_VAL": (mmmu_utils, "mmmu"),
        "BLINK": (blink_utils, "blink"),
        "OCRBench": (ocrbench_utils, "ocrbench"),
        "RealWorldQA": (realworldqa_utils, "number"),
    }
    tasks = json.loads((tmp / "tasks" / "primebench_items.json").read_text())
    # item ids are unique within a benchmark only (MathVista pid 129, OCRBench index 129)
    bench_ids = {b for by_b in manifest_items(manifest).values() for b in by_b}
    b_of = {
        t: next(
            b for b in bench_ids if f"benchmark: {b}\n" in (tmp / "tasks" / f"{t}.yaml").read_text()
        )
        for t in tasks
    }
    task_of = {(b_of[t], i): t for t, v in tasks.items() for i in v}
    mv = Panel.load_default("mathvision").items_of("MATH-Vision_MINI").set_index("item_id")
    for (b, i), score in got.items():
        answer = table[task_of[(b, i)]][i] if b != "MATH-Vision_MINI" else None
        if b == "MATH-Vision_MINI":
            doc = {
                "answer": mv.loc[i, "answer"],
                "options": json.loads(mv.loc[i, "options"] or "[]"),
            }
            expected = exact_answer_score(
                doc, table[next(t for t, v in tasks.items() if i in v and "math_vision" in t)][i]
            )
        else:
            module, name = upstream[b]
            metric, scorer = (
                ("exact_match", score_number(0.0, 1.0)) if name == "number" else ITEM_SCORERS[name]
            )
            value = getattr(
                module,
                {
                    "MathVista_MINI": "mathvista_process_results",
                    "MMMU_DEV_VAL": "mmmu_process_results",
                    "BLINK": "blink_process_results",
                    "OCRBench": "ocrbench_process_results",
                    "RealWorldQA": "realworldqa_process_results",
                }[b],
            )(docs[b][i], [answer])
            expected = scorer(value[metric], module)
        assert score == expected, (b, i, answer)
        assert score == float(intended[(b, i)]), (b, i, answer)


@pytest.mark.heavy
def test_place_reads_the_run_and_places_it(released_run):
    from primebench_tasks.cli import main

    manifest, _docs, intended, _t, tmp = released_run
    # the stand-in suite is not released: give its manifest
    (tmp / "suite.json").write_text(manifest.to_json())
    assert (
        main(
            [
                "place",
                str(tmp / "out"),
                "--suite",
                str(tmp / "suite.json"),
                "--out",
                str(tmp / "report"),
                "--n-boot",
                "200",
            ]
        )
        == 0
    )
    doc = json.loads((tmp / "report" / "report.json").read_text())
    assert doc["schema"] == "primebench.placement/1" and doc["suite"] == manifest["version"]
    ((model, r),) = doc["models"].items()
    by_b = {}
    for (b, _i), ok in intended.items():
        by_b.setdefault(b, []).append(float(ok))
    # AI2D has no lmms-eval task: missing with the reason, not an error (and not placed)
    assert doc["missing"][model]["AI2D_TEST"]["missing"] == 154
    assert "ai2d" in doc["missing"][model]["AI2D_TEST"]["why"]
    for b, e in r["benchmarks"].items():
        if b == "AI2D_TEST":
            assert e["n_scored"] == 0
            continue
        assert e["n_scored"] == e["n_items"] == 100
        assert e["score"]["value"] == pytest.approx(sum(by_b[b]) / len(by_b[b]))
        for key in ("score", "predicted_full", "predicted_rank"):
            v = e[key]
            assert v["lo"] <= v["value"] <= v["hi"], (b, key, v)
        assert 1 <= e["predicted_rank"]["value"] <= e["n_reference"] + 1
    assert set(r["categories"]) == set(manifest["categories"])
    # the run's conditions as lmms-eval recorded them, beside the reference runs' (#56)
    cond = doc["conditions"]
    assert cond["harness"] == "lmms-eval" and cond.get("lmms_eval_version")
    assert "unknown" not in cond["lmms_eval_version"]
    # MathVista, MMMU and BLINK run upstream tasks; MATH-Vision is asked from the panel's content
    upstream = {t["upstream_task"] for t in cond["tasks"].values()} - {None}
    assert (
        cond["model"] and upstream and all("generation_kwargs" in t for t in cond["tasks"].values())
    )
    assert all(ref["models"] >= 1 for ref in doc["reference"].values())
    assert all("misfit" in e for e in r["benchmarks"].values())
    md = (tmp / "report" / "report.md").read_text()
    assert "## Run conditions" in md and "- harness: lmms-eval" in md and "| fit |" in md
    # no reference model has every benchmark: the suite is ranked on imputed reference scores
    # of the benchmarks whose scores impute; AI2D (no lmms-eval task) is not in this run's rank
    rank, basis = r["suite"]["predicted_rank"], r["suite"]["rank_basis"]
    assert rank["lo"] <= rank["value"] <= rank["hi"] and rank["out_of"] == basis["n_reference"] + 1
    assert basis["benchmarks"] == ["MMMU_DEV_VAL", "RealWorldQA", "OCRBench", "BLINK"]
    assert basis["not_scored"] == ["AI2D_TEST"] and basis["imputed_cells"] > 0
    assert set(basis["left_out"]) == {"MathVista_MINI", "MATH-Vision_MINI"}
    assert "not in the rank: AI2D_TEST" not in md and "AI2D_TEST — not scored in this run" in md
    assert r["suite"]["score"]["lo"] <= r["suite"]["score"]["value"] <= r["suite"]["score"]["hi"]
    assert (tmp / "report" / "report.md").read_text().startswith("# primebench_standin")
    assert (tmp / "report" / "placement.png").stat().st_size > 10_000
    # byte-identical on rerun
    first = (tmp / "report" / "report.json").read_bytes()
    assert (
        main(
            [
                "place",
                str(tmp / "out"),
                "--suite",
                str(tmp / "suite.json"),
                "--out",
                str(tmp / "report"),
                "--n-boot",
                "200",
            ]
        )
        == 0
    )
    assert (tmp / "report" / "report.json").read_bytes() == first


def test_place_detects_a_failed_or_partial_run(tmp_path):
    from primebench_tasks.cli import main
    from primebench_tasks.errors import InputError

    with pytest.raises(InputError, match="did not finish"):
        from harness_adapters.harnesses.lmms_eval.place import place_run

        place_run(tmp_path)
    manifest = read_manifest(suites_path() / "primebench.json")
    run = tmp_path / "run" / "m"
    run.mkdir(parents=True)
    ((mv_b, mv_ids),) = [
        (b, v)
        for by_b in manifest_items(manifest).values()
        for b, v in by_b.items()
        if b == "MATH-Vision_MINI"
    ]
    meta = {"primebench_suite": manifest["version"], "benchmark": mv_b}
    (run / "20260101_results.json").write_text(
        json.dumps(
            {"model_name": "m", "configs": {"primebench_math_vision_mini": {"metadata": meta}}}
        )
    )
    (run / "20260101_samples_primebench_math_vision_mini.jsonl").write_text(
        "".join(
            json.dumps({"doc_id": k, "primebench_item": {"item_id": i, "score": 1.0}}) + "\n"
            for k, i in enumerate(mv_ids)
        )
    )
    with pytest.raises(InputError, match="no result for .*MMMU_DEV_VAL.*OCRBench"):
        place_run(tmp_path / "run")
    assert main(["place", str(tmp_path / "run"), "--allow-partial", "--n-boot", "50"]) == 0
    doc = json.loads((tmp_path / "run" / "primebench" / "report.json").read_text())
    assert doc["missing"]["m"]["BLINK"] == {"missing": 100, "of": 100}


class _SameAnswers:
    """Gives the vLLM runner, for each request, the response the lmms-eval run got for the same
    item (found by the request's content), so both harnesses see identical responses: what is
    compared is how each asks, scores and places, not what a model answers."""

    kind = "same-answers"

    def __init__(self, by_request: dict[str, str]) -> None:
        self.by_request = by_request

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        return [self.by_request[json.dumps(m, sort_keys=True)] for m in messages]


@pytest.mark.heavy
def test_the_vllm_runner_runs_and_places_the_flagship_as_lmms_eval_does(released_run, tmp_path):
    """The multi-source flagship suite through the vLLM runner with no --panel: MathVista, MMMU,
    BLINK, OCRBench and RealWorldQA (the last two matched by their text) read from the upstream
    datasets (--dataset), asked with lmms-eval's own prompts
    and images, scored by the upstream code; the same responses give the same item scores and
    the same report as ``primebench place`` on the lmms-eval run."""
    from harness_adapters.run.messages import chat_messages
    from harness_adapters.run.records import RecordFile
    from harness_adapters.run.request import RunRequest
    from harness_adapters.run.session import execute, write_run_report
    from harness_adapters.suites.documents import suite_docs
    from primebench_tasks.cli import main

    os.environ.setdefault("API_TYPE", "dummy")  # MathVista's upstream module, as above
    manifest, _docs, intended, table, tmp = released_run
    data = {
        c.lmms_eval.task: tmp / c.name
        for c in map(card, ("MathVista_MINI", "MMMU_DEV_VAL", "BLINK", "OCRBench", "RealWorldQA"))
        if c.lmms_eval
    }
    docs = suite_docs(manifest, source_panels(manifest), data)
    tasks = json.loads((tmp / "tasks" / "primebench_items.json").read_text())
    asked = json.loads((tmp / "contexts.json").read_text())
    by_request: dict[str, str] = {}
    upstream_items = 0
    for d in docs:
        (task,) = [
            t
            for t, ids in tasks.items()
            if d.item_id in ids
            and f"benchmark: {d.benchmark}\n" in (tmp / "tasks" / f"{t}.yaml").read_text()
        ]
        if d.benchmark != "MATH-Vision_MINI":  # the prompt and images lmms-eval built
            assert [d.text(), len(d.visuals())] == asked[task][d.item_id], (task, d.item_id)
            upstream_items += 1
        key = json.dumps(chat_messages(d), sort_keys=True)
        assert key not in by_request  # every request is told apart by its content
        by_request[key] = table[task][d.item_id]
    assert upstream_items == 500  # AI2D is not asked: no lmms-eval task to ask it with
    model = tmp_path / "pb_answers"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"text_config": {"hidden_size": 8}}))
    req = RunRequest(
        model=str(model),
        suite=manifest,
        out=tmp_path / "run",
        data={k: str(v) for k, v in data.items()},
    )
    execute(req, None, None, backend=_SameAnswers(by_request))
    done = RecordFile(req.out / "records.jsonl").finished()
    got = {(b, i): r["score"] for (_v, b, i), r in done.items()}
    assert got == {k: float(v) for k, v in intended.items()}
    write_run_report(req, None, n_boot=200)
    (tmp_path / "suite.json").write_text(manifest.to_json())
    assert (
        main(
            [
                "place",
                str(tmp / "out"),
                "--suite",
                str(tmp_path / "suite.json"),
                "--out",
                str(tmp_path / "placed"),
                "--n-boot",
                "200",
            ]
        )
        == 0
    )
    ((_, runner),) = json.loads((req.out / "report.json").read_text())["models"].items()
    ((_, placed),) = json.loads((tmp_path / "placed" / "report.json").read_text())["models"].items()
    for part in ("benchmarks", "categories", "suite"):
        assert _placement_part(runner, part) == _placement_part(placed, part), part
    _same_answers_read(runner, placed)


@pytest.mark.heavy
def test_vlmevalkit_places_the_same_answers_as_lmms_eval_does(released_run, tmp_path):
    """The same answers through VLMEvalKit's run.py (its own prompts, answer extraction and
    scoring; rows found by VLMEvalKit's index, OCRBench and RealWorldQA checked against the
    records' text) as through lmms-eval: the same item scores on the six benchmarks both run, and
    the same placement — per benchmark, per category and for the suite."""
    from harness_adapters.harnesses.vlmeval import read_work_dir
    from primebench_tasks.cli import main
    from tests.fixtures import vlmeval_standins as S
    from tests.harness.test_vlmeval import _vlmeval_available
    from tests.harness.test_vlmeval_suite import _run_in_vlmeval

    if not _vlmeval_available():
        pytest.skip("needs VLMEvalKit (not on PyPI; its git checkout on the path)")
    manifest, _docs, intended, _t, tmp = released_run
    six = sorted({b for b, _i in intended})
    assert "AI2D_TEST" not in six and len(six) == 6
    wanted: dict[str, dict[str, bool]] = {}
    for (b, i), ok in intended.items():
        wanted.setdefault(b, {})[i] = ok
    (tmp_path / "answers.json").write_text(json.dumps(wanted))
    writers = {
        "MMMU_DEV_VAL": S.mmmu_tsv,
        "OCRBench": lambda p, ids: S.records_tsv(p, ids, "openvlm_ocrbench_text", "OCRBench"),
        "RealWorldQA": lambda p, ids: S.records_tsv(
            p, ids, "openvlm_realworldqa_text", "RealWorldQA"
        ),
    }
    flagship = read_manifest(suites_path() / "primebench.json")
    assert manifest_items(flagship) == manifest_items(manifest)  # the flagship, renamed
    work = _run_in_vlmeval(
        tmp_path,
        flagship,
        "primebench",
        writers,
        only=six,
        env={"PRIMEBENCH_FAKE_VLM_ANSWERS": str(tmp_path / "answers.json")},
    )
    records, _ = read_work_dir(work)
    got = {(r.benchmark, r.item_id): r.score for r in records.itertuples()}
    assert got == {k: float(v) for k, v in intended.items()}
    placed = {}
    for name, args in (
        ("lmms_eval", [str(tmp / "out"), "--suite", str(tmp_path / "suite.json")]),
        ("vlmeval", ["--vlmeval", str(work), "--allow-partial"]),
    ):
        (tmp_path / "suite.json").write_text(manifest.to_json())
        out = tmp_path / f"placed_{name}"
        assert main(["place", *args, "--out", str(out), "--n-boot", "200"]) == 0
        ((_, placed[name]),) = json.loads((out / "report.json").read_text())["models"].items()
    for part in ("benchmarks", "categories", "suite"):
        assert _placement_part(placed["vlmeval"], part) == _placement_part(
            placed["lmms_eval"], part
        ), part


ANSWER_KEYS = ("responses", "answers", "not_comparable")
"""What the response check adds (it reads each harness's own answer text and finish reasons,
which differ by harness: the runner's records say why generation stopped, lmms-eval's logs do
not)."""


def _placement_part(model: dict, part: str) -> object:
    """One part of a model's placement without the response check's additions."""
    value = model[part]
    if part == "suite":
        return {k: v for k, v in value.items() if k not in ANSWER_KEYS}
    if part == "benchmarks":
        return {b: {k: v for k, v in e.items() if k not in ANSWER_KEYS} for b, e in value.items()}
    return value


def _same_answers_read(a: dict, b: dict) -> None:
    """The same answers read the same: equal empty and unreadable shares on every benchmark both
    profiled."""
    for bench, e in a["benchmarks"].items():
        pa, pb = (e.get("responses") or {}), (b["benchmarks"][bench].get("responses") or {})
        if pa and pb:
            for share in ("empty", "unreadable"):
                assert pa["profile"][share] == pb["profile"][share], (bench, share)
