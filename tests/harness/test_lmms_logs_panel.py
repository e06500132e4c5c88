"""Many models' lmms-eval logs of the upstream tasks (MMMU val, MathVista testmini's format variant,
BLINK subtasks) into a panel: real lmms-eval 0.7.3 runs of its own upstream task code on local
upstream-schema stand-ins, three models that answer different items right, a rerun of one model
(the newest counts), and a model that gives no verdict (reported, left out)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import upstream_standins as standins
from tests.harness.test_lmms_released_e2e import ENV

pytestmark = pytest.mark.slow  # end to end through a real harness: the full run (CI)

pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")

MMMU = [f"validation_Art_{k}" for k in range(1, 9)]
MATHVISTA = [str(k) for k in range(1, 9)]
BLINK = [f"val_Art_Style_{k}" for k in range(1, 6)] + [f"val_Counting_{k}" for k in range(1, 5)]
TASKS = {
    "mmmu_val": "MMMU_DEV_VAL",
    "mathvista_testmini_format": "MathVista_MINI",
    "blink_art_style": "BLINK",
    "blink_counting": "BLINK",
}
# lmms-eval indexes its own task folder first and keeps the first task of a name, so the local
# copies of the upstream tasks (the same YAML, the data from a stand-in) are run with the
# defaults left out; the task code is lmms-eval's own (its functions by module path)
RUNNER = """
import sys
from lmms_eval.tasks import TaskManager
init = TaskManager.__init__
def no_defaults(self, *a, **k):
    k["include_defaults"] = False
    init(self, *a, **k)
TaskManager.__init__ = no_defaults
from lmms_eval.__main__ import cli_evaluate
sys.argv = ["lmms-eval", *sys.argv[1:]]
cli_evaluate()
"""


def _copy_task(member: Path, data: Path, out: Path) -> None:
    """The upstream task's YAML, flattened, its functions by module path, its data local."""
    import yaml

    from harness_adapters.lmms_eval_upstream.tasks import (
        FunctionRef,
        load_task_config,
        portable_ref,
    )

    class Fn(str):
        pass

    def conv(v):
        if isinstance(v, FunctionRef):
            return Fn(portable_ref(v))
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v

    cfg = {k: conv(v) for k, v in load_task_config(member).items() if k not in ("group", "tag")}
    cfg["dataset_path"] = str(data)
    cfg["dataset_kwargs"] = {"load_from_disk": True}
    cfg.pop("dataset_name", None)

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(Fn, lambda d, v: d.represent_scalar("!function", str(v)))
    (out / f"{cfg['task']}.yaml").write_text(yaml.dump(cfg, Dumper=Dumper, sort_keys=False))


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from harness_adapters.lmms_eval_upstream.tasks import find_task_yaml

    tmp = tmp_path_factory.mktemp("lmms_logs")
    docs = {
        "MMMU_DEV_VAL": standins.mmmu(MMMU, tmp / "mmmu"),
        "MathVista_MINI": standins.mathvista(MATHVISTA, tmp / "mathvista"),
        "BLINK": standins.blink(BLINK, tmp / "blink"),
    }
    tasks = tmp / "tasks"
    tasks.mkdir()
    data = {
        "mmmu_val": tmp / "mmmu",
        "mathvista_testmini_format": tmp / "mathvista",
        "blink_art_style": tmp / "blink" / "Art_Style",
        "blink_counting": tmp / "blink" / "Counting",
    }
    for task, d in data.items():
        _copy_task(find_task_yaml(task), d, tasks)
    make = {
        "MMMU_DEV_VAL": (standins.mmmu_answer, "id"),
        "MathVista_MINI": (standins.mathvista_answer, "pid"),
        "BLINK": (standins.blink_answer, "idx"),
    }
    # m1 answers the items standins.right marks right, m2 the others, m3 nothing readable
    intended = {}
    env = ENV  # offline, the answer-table model plugin, MathVista's judge off
    out = tmp / "runs"
    # m1 twice: first with m2's answers, then its own — the newer run must count
    for run, model in (("m1-old", "m1"), ("m2", "m2"), ("m3", "m3"), ("m1", "m1")):
        table = {}
        for task, bench in TASKS.items():
            fn, key = make[bench]
            table[task] = {}
            for i, doc in docs[bench].items():
                ok = standins.right(i) == (run == "m1")
                if bench == "MathVista_MINI" and standins.mathvista_scores_zero_upstream(doc):
                    ok = False  # upstream scores it 0 whatever the answer
                table[task][i] = "" if model == "m3" else fn(doc, ok)
                if model != "m3":
                    intended[(model, bench, i)] = float(ok)  # the last run's
        answers = tmp / f"{run}.json"
        answers.write_text(json.dumps(table))
        cmd = [sys.executable, "-c", RUNNER, "--model", "pb_answers"]
        cmd += ["--model_args", f"answers={answers},model_name={model}"]
        cmd += ["--tasks", ",".join(TASKS), "--include_path", str(tasks)]
        cmd += ["--log_samples", "--output_path", str(out)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp, timeout=900)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-4000:])
    return out, docs, intended


def test_logs_of_many_models_become_a_panel(logs, tmp_path, monkeypatch):
    from primebench_tasks.cli import main

    monkeypatch.setenv("API_TYPE", "dummy")  # MathVista's upstream module builds a judge client
    from primebench_tasks.data.panel import Panel

    out, docs, intended = logs
    assert main(["ingest", "lmms-eval-logs", str(out), "--out", str(tmp_path / "p")]) == 0
    # the same logs into the same folder: refused (the panel holds those benchmarks), the panel
    # kept — not silently replaced (#54); --replace writes it in place
    before = Panel.load(tmp_path / "p").content_hash
    assert main(["ingest", "lmms-eval-logs", str(out), "--out", str(tmp_path / "p")]) == 2
    assert Panel.load(tmp_path / "p").content_hash == before
    args = ["ingest", "lmms-eval-logs", str(out), "--out", str(tmp_path / "p"), "--replace"]
    assert main(args) == 0
    p = Panel.load(tmp_path / "p")
    assert sorted(p.model_names) == ["m1", "m2"]  # m3 gave no verdict: left out
    assert set(p.benchmark_names) == {"MMMU_DEV_VAL", "MathVista_MINI", "BLINK"}
    for b in p.benchmark_names:
        ids = [str(i) for i in p.item_ids(b)]
        X = p.matrix(b)
        for m in ("m1", "m2"):
            for k, i in enumerate(ids):
                if b == "MMMU_DEV_VAL" and i not in MMMU:
                    continue
                assert X[p.model_names.index(m), k] == intended.get((m, b, i)), (m, b, i)
    # the stand-ins' rows outside the lists run too: every logged row of a run task is an item
    ran = [i for i in docs["BLINK"] if i.startswith(("val_Art_Style_", "val_Counting_"))]
    assert sorted(p.item_ids("BLINK")) == sorted(ran)
    # lmms-eval 0.7.3 logs no document: the item's answer is the logged target
    items = p.items_of("MMMU_DEV_VAL").set_index("item_id")
    assert items.loc[MMMU[0], "answer"] == docs["MMMU_DEV_VAL"][MMMU[0]]["answer"]


def test_the_report_accounts_for_every_run(logs, monkeypatch):
    monkeypatch.setenv("API_TYPE", "dummy")
    from harness_adapters.harnesses.lmms_eval.logs_panel import read_logs

    out, _docs, _intended = logs
    _scores, _items, report = read_logs(out)
    assert report.files_seen == 4
    older = [k for k, why in report.skipped.items() if "another run of m1" in why]
    assert len(older) == len(TASKS)  # the older m1 run, once per task
    assert {m for m, _ in report.not_scored} == {"m3"}
    assert len(report.read) == 3


def test_refresh_the_reference_panel_from_a_model_zoo(logs, tmp_path, monkeypatch):
    """The documented path "refresh the reference panel from your own model zoo", end to end:
    the zoo's lmms-eval logs → a panel (``ingest lmms-eval-logs``) → ``refresh --records`` that
    panel against a suite built on the reference panel → a new published suite version whose
    panel holds the zoo's models beside the reference ones (docs/library.md, refresh loop)."""
    from primebench_tasks.cli import main
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.pipeline.manifest import read_manifest

    monkeypatch.setenv("API_TYPE", "dummy")
    out, _docs, intended = logs
    zoo = tmp_path / "zoo"
    assert main(["ingest", "lmms-eval-logs", str(out), "--out", str(zoo)]) == 0
    # the reference: M3IRT's panel (MathVista, MMMU: the item ids the zoo's logs carry); the zoo
    # also ran BLINK, which this reference does not hold: refused by name, nothing written
    suite = tmp_path / "suite"
    assert main(["build", "primebench", "--default", "m3irt", "--out", str(suite)]) == 0
    refreshed = tmp_path / "suites"
    args = ["refresh", "--default", "m3irt", "--records", str(zoo)]
    args += ["--suite", str(suite / "manifest.json"), "--out", str(refreshed)]
    assert main(args) == 2
    assert not (refreshed / "versions").exists()
    # the zoo's answers to the reference's items (its stand-in extras are items no reference
    # holds: refused too): those records
    from primebench_tasks.data.importers import panel_records

    ref = Panel.load_default("m3irt")
    recs = panel_records(Panel.load(zoo))
    held = {(b, str(i)) for b in ref.benchmark_names for i in ref.item_ids(b)}
    keep = [(b, i) in held for b, i in zip(recs["benchmark"], recs["item_id"], strict=True)]
    only = tmp_path / "zoo_m3irt.csv"
    recs[keep].to_csv(only, index=False)
    args[4] = str(only)
    assert main([*args, "--force"]) == 0
    versions = sorted((refreshed / "versions").iterdir())
    assert versions, "a new suite version is published"
    new = read_manifest(versions[-1] / "manifest.json")
    assert new["version"] != read_manifest(suite / "manifest.json")["version"]
    (panel_dir,) = (refreshed / "panels").iterdir()
    grown = Panel.load(panel_dir)
    assert {"m1", "m2"} <= set(grown.model_names)
    assert len(grown.model_names) == 24 + 2
    # the zoo's scores are in the refreshed panel as they were logged
    b = "MathVista_MINI"
    ids = [str(i) for i in grown.item_ids(b)]
    row = grown.model_names.index("m1")
    for (m, bb, i), v in intended.items():
        if m == "m1" and bb == b and i in ids:
            assert grown.matrix(b)[row, ids.index(i)] == v
