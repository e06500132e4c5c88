"""HELM/VHELM per-instance outputs into a panel (``primebench_tasks.data.helm``): small runs made
in HELM's own schema — crfm-helm's ``Instance``, ``PerInstanceStats``, ``Stat``, ``RunSpec``,
written with HELM's ``asdict_without_nones`` as its runner writes them — imported, matched to the
RealWorldQA reference items by their text, and refused where an instance matches no item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from tests.extras import installed

if not installed("helm"):
    pytest.skip(
        "needs crfm-helm's schema classes: pip install --no-deps -r tools/helm-requirements.txt",
        allow_module_level=True,
    )

INSTR = "Please answer directly with only the letter of the correct option and nothing else."


def _write_run(
    root: Path, model: str, items: list[tuple[str, str, list[str]]], right: dict[str, float]
) -> Path:
    """One VHELM-like RealWorldQA run of ``model`` over ``items`` (question, gold letter,
    options), each instance's exact_match from ``right`` (by HELM instance id)."""
    from helm.benchmark.adaptation.adapter_spec import AdapterSpec
    from helm.benchmark.metrics.metric import PerInstanceStats
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat
    from helm.benchmark.run_spec import RunSpec
    from helm.benchmark.scenarios.scenario import Input, Instance, Output, Reference, ScenarioSpec
    from helm.common.general import asdict_without_nones
    from helm.common.media_object import MediaObject, MultimediaObject

    name = f"real_world_qa:model={model.replace('/', '_')}"
    run = root / "runs" / "v1" / name
    run.mkdir(parents=True)
    spec = RunSpec(
        name=name,
        scenario_spec=ScenarioSpec(
            class_name="helm.benchmark.scenarios.vision_language.real_world_qa_scenario."
            "RealWorldQAScenario"
        ),
        adapter_spec=AdapterSpec(model=model, model_deployment=model),
        metric_specs=[],
    )
    instances = []
    stats = []
    from PIL import Image

    (run / "images").mkdir()
    for k, (question, letter, options) in enumerate(items):
        text = "\n".join([question, *options, INSTR])
        iid = f"id{k}"
        image = run / "images" / f"{k}.jpg"
        Image.new("RGB", (8, 8), (k * 40 % 256, 80, 120)).save(image)
        instances.append(
            Instance(
                input=Input(
                    multimedia_content=MultimediaObject(
                        [
                            MediaObject(content_type="image/jpeg", location=str(image)),
                            MediaObject(content_type="text/plain", text=text),
                        ]
                    )
                ),
                references=[Reference(Output(text=letter), tags=["correct"])],
                split="test",
                id=iid,
            )
        )
        stat = Stat(MetricName("exact_match", split="test"))
        stat.add(right[iid])
        stats.append(
            PerInstanceStats(instance_id=iid, perturbation=None, train_trial_index=0, stats=[stat])
        )
    dump = lambda obj: json.dumps(obj, indent=2)  # noqa: E731 - as HELM's runner writes
    (run / "run_spec.json").write_text(dump(asdict_without_nones(spec)))
    (run / "instances.json").write_text(dump([asdict_without_nones(i) for i in instances]))
    (run / "per_instance_stats.json").write_text(dump([asdict_without_nones(s) for s in stats]))
    return run


def _reference_items(n: int) -> list[tuple[str, str, str, list[str]]]:
    """(item id, question, gold, options as 'A. text') of the first ``n`` RealWorldQA items the
    flagship's source panel holds (text told apart)."""
    items = Panel.load_default("openvlm_realworldqa_text").items_of("RealWorldQA")
    out = []
    for r in items.head(n).itertuples():
        out.append((str(r.item_id), r.question, r.answer, json.loads(r.options)))
    return out


def test_helm_runs_into_a_panel_matched_by_text(tmp_path: Path) -> None:
    from primebench_tasks.cli import main

    ref = _reference_items(4)
    items = [(q, a, o) for _, q, a, o in ref][::-1]  # HELM's own order: not the index order
    _write_run(
        tmp_path / "out",
        "openai/gpt-4o-2024-05-13",
        items,
        {"id0": 1, "id1": 0, "id2": 1, "id3": 1},
    )
    _write_run(
        tmp_path / "out", "google/gemini-2.5-pro", items, {"id0": 0, "id1": 0, "id2": 1, "id3": 0}
    )
    code = main(
        [
            "panel",
            "import-helm",
            str(tmp_path / "out"),
            "--scenario",
            "real_world_qa",
            "--benchmark",
            "RealWorldQA",
            "--key-panel",
            "openvlm_realworldqa_text",
            "--out",
            str(tmp_path / "P"),
        ]
    )
    assert code == 0
    p = Panel.load(tmp_path / "P")
    assert p.model_names == ["google/gemini-2.5-pro", "openai/gpt-4o-2024-05-13"]
    ids = [i for i, *_ in ref][::-1]  # id0 is the last reference item, and so on
    mat = p.matrix("RealWorldQA")
    col = {str(i): k for k, i in enumerate(p.item_ids("RealWorldQA"))}
    assert [mat[1, col[i]] for i in ids] == [1, 0, 1, 1]
    assert [mat[0, col[i]] for i in ids] == [0, 0, 1, 0]
    # the item text came with the match
    assert set(p.items_of("RealWorldQA")["question"]) == {q for _, q, _, _ in ref}


def test_an_instance_matching_no_reference_item_is_refused(tmp_path: Path) -> None:
    from primebench_tasks.data.helm import read_helm_runs

    (_, q, a, o), *_ = _reference_items(1)
    wrong = "B" if a != "B" else "A"
    _write_run(tmp_path, "m/one", [(q, wrong, o)], {"id0": 1.0})
    keyed = Panel.load_default("openvlm_realworldqa_text").items_of("RealWorldQA")
    with pytest.raises(InputError, match="instance id0 matches no reference item") as e:
        read_helm_runs(tmp_path, "real_world_qa", "RealWorldQA", rule="mcq_inline", keyed_by=keyed)
    assert "instances.json" in str(e.value)


def test_without_a_rule_items_are_helm_instance_ids_and_two_runs_of_one_model_refused(
    tmp_path: Path,
) -> None:
    from primebench_tasks.data.helm import read_helm_runs

    items = [("Q one?", "A", ["A. x", "B. y"]), ("Q two?", "B", ["A. x", "B. y"])]
    _write_run(tmp_path / "a", "m/one", items, {"id0": 1.0, "id1": 0.0})
    df, rep = read_helm_runs(tmp_path / "a", "real_world_qa", "RWQ")
    got: dict[Any, float] = {(r.model, r.item_id): r.score for r in df.itertuples()}
    assert got == {("m/one", "id0"): 1.0, ("m/one", "id1"): 0.0}
    assert list(rep.imported.values()) == [("m/one", 2)]
    _write_run(tmp_path / "a" / "again", "m/one", items, {"id0": 1.0, "id1": 1.0})
    with pytest.raises(InputError, match="two runs"):
        read_helm_runs(tmp_path / "a", "real_world_qa", "RWQ")
