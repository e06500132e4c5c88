"""Reading the answers end to end (the runner's path, a fake engine): a run whose answers are
reasoning text with no final answer is flagged with the cause and marked not comparable; a
healthy run is not. Records keep the response, the finish reason and the token count."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_adapters.run.engine import Generation
from harness_adapters.run.records import RecordFile
from harness_adapters.run.request import RunRequest
from harness_adapters.run.session import execute, write_run_report
from primebench_tasks.pipeline.manifest import build_manifest

REASONING = (
    "Let me think step by step. The figure shows several shapes; counting the edges of each and "
    "comparing them with the others, the pattern continues in the same way, so the next one "
    "follows from the rule above."
)


class Answering:
    """A fake engine: the gold letter of each prompt (``healthy``), else reasoning text with no
    final answer, stopped at the token budget."""

    kind = "fake"

    def __init__(self, gold_by_prompt: dict[str, str], healthy: bool) -> None:
        self.gold_by_prompt, self.healthy = gold_by_prompt, healthy

    def generate(self, messages, adapter):
        out = []
        for m in messages:
            prompt = m[0]["content"][-1]["text"]
            if self.healthy:
                out.append(Generation(self.gold_by_prompt[prompt], "stop", 1))
            else:
                out.append(Generation(REASONING, "length", 64))
        return out


@pytest.fixture(scope="module")
def mc_suite(mathvision):
    """A suite of 30 MATH-Vision items that have options (multiple choice)."""
    b = mathvision.benchmark_names[0]
    items = mathvision.items_of(b)
    pos = np.flatnonzero(items["options"].notna().to_numpy())[:30]
    return build_manifest("mc", mathvision, {mathvision.category_of(b): {b: pos}}, {}, [], {})


def _gold_by_prompt(suite, mathvision) -> dict[str, str]:
    from harness_adapters.suites.documents import suite_docs

    return {d.text(): d.answer() for d in suite_docs(suite, mathvision)}


@pytest.mark.parametrize("healthy", [True, False])
def test_unreadable_reasoning_is_flagged_with_its_cause_and_a_healthy_run_is_not(
    tmp_path, mathvision, mc_suite, healthy
):
    model = tmp_path / "base"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps({"text_config": {"hidden_size": 128, "num_hidden_layers": 2}})
    )
    backend = Answering(_gold_by_prompt(mc_suite, mathvision), healthy)
    req = RunRequest(model=str(model), suite=mc_suite, out=tmp_path / "run")
    execute(req, mathvision, None, backend=backend)
    rec = RecordFile(req.out / "records.jsonl").read()[0]
    assert rec["finish_reason"] == ("stop" if healthy else "length")
    assert rec["output_tokens"] == (1 if healthy else 64)
    # the shared scorer says what it read and whether it fell back to the first character
    assert rec["parse_fallback"] is (not healthy)
    assert rec["parsed"] == (rec["answer"] if healthy else "L")
    write_run_report(req, mathvision, n_boot=50)
    doc = json.loads((req.out / "report.json").read_text())
    suite = doc["models"]["base"]["suite"]
    b = mathvision.benchmark_names[0]
    entry = doc["models"]["base"]["benchmarks"][b]["responses"]
    md = (req.out / "report.md").read_text()
    if healthy:
        assert entry["flags"] == [] and entry["comparable"] is True
        assert "answers" not in suite and "not comparable" not in md
        return
    assert entry["comparable"] is False and suite["not_comparable"] == [b]
    assert entry["profile"]["unreadable"] == 1.0 and entry["profile"]["truncated"] == 1.0
    causes = " ".join(suite["answers"])
    unread = "100 % of the answers to option or yes/no questions held no answer the parser"
    assert unread + " could read" in causes
    assert "100 % of the answers stopped at the token budget" in causes
    assert "no reference run's answers known; fixed limit 3 %" in causes  # a panel of scores only
    assert "**not comparable** on" in md and "**answers**:" in md


def test_old_records_without_finish_reasons_still_place(tmp_path):
    """A record file written before responses kept their finish reason is read as it is: no
    truncation share (unknown), the other shares as before."""
    from harness_adapters.run.session import recorded_responses

    out = tmp_path / "run"
    out.mkdir()
    rows = [
        {
            "model": "m",
            "benchmark": "B",
            "item_id": str(k),
            "status": "ok",
            "score": 1.0,
            "response": "A",
        }
        for k in range(3)
    ]
    (out / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = recorded_responses(RecordFile(out / "records.jsonl").finished(), ["m"])
    assert list(got["response"]) == ["A", "A", "A"] and got["finish_reason"].isna().all()


def _lmms_log(out, version: str, ids, answers, responses) -> None:
    """An lmms-eval --log_samples folder of one task on the flagship's BLINK: each sample's
    primebench_item (id, score) and its raw answer in ``resps``."""
    out.mkdir()
    meta = {"primebench_suite": version, "benchmark": "BLINK"}
    res = {"configs": {"primebench_blink": {"metadata": meta}}, "model_name": "m"}
    res["date"] = "20260101_000000"
    (out / "20260101_results.json").write_text(json.dumps(res))
    lines = [
        {
            "doc_id": k,
            "resps": [[r]],
            "primebench_item": {"item_id": i, "score": float(r.strip() == a)},
        }
        for k, (i, a, r) in enumerate(zip(ids, answers, responses, strict=True))
    ]
    (out / "20260101_samples_primebench_blink.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )


@pytest.mark.parametrize("healthy", [True, False])
def test_lmms_eval_logs_of_reasoning_text_are_flagged_against_the_reference_runs(
    tmp_path, capsys, healthy
):
    """`primebench place` over lmms-eval logs: the answers come from the logs' ``resps`` and are
    compared with the BLINK reference runs' own profiles (VLMEvalKit's records)."""
    from harness_adapters.suites.released import suites_path
    from primebench_tasks.cli import main
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.pipeline.manifest import read_manifest

    suite = read_manifest(suites_path() / "primebench.json")
    ids = list(suite.entry("BLINK").item_ids)
    items = Panel.load_default("openvlm_blink").items.set_index("item_id")
    answers = [str(items.loc[i, "answer"]) for i in ids]
    rng = np.random.default_rng(0)
    said = [a if rng.random() < 0.6 else "B" for a in answers]  # a plausible healthy model
    responses = said if healthy else [REASONING] * len(ids)
    _lmms_log(tmp_path / "run", suite.version, ids, answers, responses)
    code = main(
        [
            "place",
            str(tmp_path / "run"),
            "--allow-partial",
            "--n-boot",
            "50",
            "--out",
            str(tmp_path / "report"),
        ]
    )
    assert code == 0
    doc = json.loads((tmp_path / "report" / "report.json").read_text())
    entry = doc["models"]["m"]["benchmarks"]["BLINK"]["responses"]
    assert entry["limits"]["basis"] == "reference" and entry["limits"]["reference_runs"] > 50
    err = capsys.readouterr().err
    if healthy:
        assert entry["flags"] == [] and "held no answer" not in err
        return
    assert entry["comparable"] is False
    unread = "100 % of the answers to option or yes/no questions held no answer the parser"
    assert unread + " could read (reference runs: median" in " ".join(entry["flags"])
    assert "not comparable" in err
