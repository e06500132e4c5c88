"""The hostile battery, run folders: a resumed adaptive race asks again the items an outage
failed (a failure never spends a later run's budget, as in ``run --adaptive``), and one folder
holds one kind of run — an adaptive run is not resumed on a static run's records, nor the
reverse. The backend answers as recorded MATH-Vision models (no engine)."""

from __future__ import annotations

import json

import pytest

from harness_adapters.run.adaptive_loop import run_adaptive
from harness_adapters.run.errors import BackendError
from harness_adapters.run.race_loop import rank_variants_adaptive
from harness_adapters.run.records import RecordFile
from harness_adapters.run.request import RunRequest
from harness_adapters.run.session import execute
from primebench_tasks.adaptive.result import AdaptiveSettings
from tests.harness.conftest import mathvision, suite20  # noqa: F401 - the fixtures
from tests.harness.test_adaptive_run import (
    BENCH,
    HELD,
    RecordedModel,
    RecordedVariants,
    _adapter_dir,
    static_run,
)


class OutageVariants(RecordedVariants):
    """Answers as recorded, except that the calls numbered in ``down`` (1-based, one call per
    variant per round) fail as an unreachable server's do; failed items are not counted as
    asked."""

    def __init__(self, panel, by_variant: dict, down: set[int]):
        super().__init__(panel, by_variant)
        self.down, self.calls = down, 0

    def generate(self, messages, adapter, max_new_tokens=None, regex=None):
        self.calls += 1
        if self.calls in self.down:
            return [ConnectionError("connection refused") for _ in messages]
        return super().generate(messages, adapter, max_new_tokens, regex)


@pytest.fixture
def race(tmp_path, mathvision, suite20):  # noqa: F811 - the imported fixtures
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["X"]}))
    strong, weak = "Gemini-Pro", "GPT4-CoT_TextOnly"
    ref = mathvision.subset_models([m for m in mathvision.model_names if m not in (strong, weak)])
    ad = {"a1": str(_adapter_dir(tmp_path / "a1"))}

    def req(out):
        return RunRequest(
            model=str(model), suite=suite20, out=tmp_path / out, name="m", adapters=ad
        )

    return req, {BENCH: ref}, {None: strong, "a1": weak}


def test_a_race_resumed_after_an_outage_asks_the_failed_items_again(race, mathvision):  # noqa: F811
    req, panels, variants = race
    settings = AdaptiveSettings(None, 30, 5)
    straight = RecordedVariants(mathvision, variants)
    doc = rank_variants_adaptive(req("s"), panels, settings, backend=straight)
    # the second round's calls (both variants) fail: the race stops there
    first = OutageVariants(mathvision, variants, down={3, 4})
    with pytest.raises(BackendError, match="every one of its 5 requests of this round failed"):
        rank_variants_adaptive(req("r"), panels, settings, backend=first)
    failed = [r for r in RecordFile(req("r").out / "records.jsonl").read() if r["status"] != "ok"]
    assert len(failed) == 10
    second = RecordedVariants(mathvision, variants)
    again = rank_variants_adaptive(req("r"), panels, settings, backend=second)
    # the failed items were asked again, first: the resumed race is the uninterrupted one
    assert first.asked + second.asked == straight.asked
    assert again.items == doc.items and again.stopped_because == doc.stopped_because
    assert again.verdict == doc.verdict


def test_an_adaptive_run_continues_a_static_runs_records(tmp_path, mathvision, suite20):  # noqa: F811
    """#71: an adaptive run into a static run's folder continues its answers — never asked
    again (a suite of items chosen, not drawn: they are known items of the design estimate, not
    its draw) — and a static run never continues an adaptive one. #80: ``--max-items`` counts
    what the test adds (on 97d5833 the static answers spent it and the README's line asked
    nothing)."""
    req, reference = static_run(tmp_path, mathvision, suite20)
    model = tmp_path / "model"
    static_ids = {r["item_id"] for r in RecordFile(tmp_path / "run" / "records.jsonl").read()}
    assert len(static_ids) == 20
    backend = RecordedModel(mathvision, HELD)
    doc = run_adaptive(req, {BENCH: reference}, AdaptiveSettings(None, 15, 5), backend=backend)
    assert len(backend.asked) == 15 and not set(backend.asked) & static_ids
    e = doc.models["m"].benchmarks[BENCH]
    assert e.items == 35 and e.stopped_because.startswith(
        "item budget (15) spent (items drawn by the test; 20 continued"
    )
    assert e.design.continued_items == 20 and not e.design.continued_as_draw
    more = RecordedModel(mathvision, HELD)
    doc = run_adaptive(req, {BENCH: reference}, AdaptiveSettings(None, 30, 5), backend=more)
    assert len(more.asked) == 15 and not set(more.asked) & static_ids
    assert doc.models["m"].benchmarks[BENCH].design.draws == 30
    # nor the reverse: a static run into an adaptive run's folder
    run_adaptive(
        RunRequest(model=str(model), suite=suite20, out=tmp_path / "ad", name="m"),
        {BENCH: reference},
        AdaptiveSettings(None, 10, 5),
        backend=RecordedModel(mathvision, HELD),
    )
    with pytest.raises(BackendError, match="holds an adaptive run; this one is static"):
        execute(
            RunRequest(model=str(model), suite=suite20, out=tmp_path / "ad", name="m"),
            mathvision,
            backend=RecordedModel(mathvision, HELD),
        )


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nests deeper"),
        ('{"schema": "primebench.run/1", "x": NaN}', "not a number JSON allows"),
        ('{"schema": "primebench.run/1", "x": "\\ud800"}', "surrogate"),
    ],
    ids=["deep", "nan", "surrogate"],
)
def test_a_damaged_run_spec_is_one_line_naming_the_file(tmp_path, text, match) -> None:
    """#79: run_spec.json nested 100,000 deep gave a RecursionError (it was read by a plain
    json.loads, so NaN and lone surrogates passed too); now the strict reader of every typed
    document refuses each in one line naming the file."""
    from harness_adapters.run.request import read_run_spec
    from primebench_tasks.errors import InputError

    path = tmp_path / "run_spec.json"
    path.write_text(text)
    with pytest.raises(InputError, match=match) as e:
        read_run_spec(path)
    assert "run_spec.json" in str(e.value)
