"""Engines plug into the run (#73): the protocol, its check, the entry points, and a stub engine
(no vLLM) that runs ``primebench run`` and ``rank-variants --adaptive`` end to end through the
run's verbs, loops, records and reports."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import harness_adapters.run.engine as engine_module
from harness_adapters.run.engine import CheckedRun, Engine, check_engine, engines
from harness_adapters.run.request import RunRequest, base_spec
from primebench_tasks.cli import main
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import PrimeBenchError


class StubBackend:
    """Answers MATH-Vision testmini from its answer key: the base model right on items whose id
    is divisible by 3, adapter ``strong`` on all but every tenth, ``weak`` on every fifth."""

    kind = "stub"

    def __init__(self) -> None:
        items = Panel.load_default("mathvision").items_of("MATH-Vision_MINI")
        self.key = [
            (str(r.question).replace("<image1>", "").strip(), str(r.item_id), str(r.answer))
            for r in items.itertuples()
        ]
        self.asked = 0

    def _item(self, text: str) -> tuple[str, str]:
        hits = [(i, a) for q, i, a in self.key if q and q in text]
        assert hits, text[:200]
        return max(hits, key=lambda h: len(h[0]))

    def generate(
        self, messages: Any, adapter: str | None, max_new_tokens: Any = None, regex: Any = None
    ) -> list[str | Exception]:
        out: list[str | Exception] = []
        for m in messages:
            self.asked += 1
            item, answer = self._item(m[0]["content"][-1]["text"])
            k = int(item)
            right = {None: k % 3 == 0, "strong": k % 10 != 0, "weak": k % 5 == 0}[adapter]
            out.append(answer if right else "Z")
        return out


class StubEngine:
    """An engine with no model: every request answered by :class:`StubBackend`."""

    name = "stub"
    summary = "answers from the answer key (tests)"

    def __init__(self) -> None:
        self.checked: list[RunRequest] = []

    def add_options(self, parser: Any) -> None:
        parser.add_argument("--stub-note", default="none")

    def request_fields(self, args: Any) -> dict[str, Any]:
        return {"engine_args": {"note": args.stub_note}}

    def check(self, req: RunRequest) -> CheckedRun:
        self.checked.append(req)
        conditions = {"harness": "primebench run (stub engine)", "backend": {"kind": "stub"}}
        adapters = {a: {"path": p, "rank": 0} for a, p in sorted(req.adapters.items())}
        return CheckedRun(spec=base_spec(req, conditions, adapters), start=StubBackend)


@pytest.fixture
def stub(monkeypatch):
    engine = StubEngine()
    installed = engine_module.installed_engines()
    ep = SimpleNamespace(name="stub", value="tests:StubEngine", load=lambda: engine)
    monkeypatch.setattr(engine_module, "installed_engines", lambda: [*installed, ep])
    return engine


def test_the_protocol_is_checked_and_names_what_is_missing():
    assert isinstance(StubEngine(), Engine)
    assert check_engine(StubEngine(), "x").name == "stub"
    with pytest.raises(PrimeBenchError, match="lacks request_fields, check") as e:
        check_engine(
            SimpleNamespace(name="half", summary="", add_options=print), "entry point half"
        )
    assert "entry point half" in str(e.value)


def test_the_installed_engines_come_by_entry_point_and_names_do_not_clash():
    found = engines()
    assert "vllm" in found and found["vllm"].name == "vllm"
    ep = SimpleNamespace(name="stub", value="tests:StubEngine", load=StubEngine)
    assert set(engines([ep])) == {"stub"}
    with pytest.raises(PrimeBenchError, match="two engines are named 'stub'"):
        engines([ep, ep])
    bad = SimpleNamespace(name="bad", value="tests:object", load=object)
    with pytest.raises(PrimeBenchError, match="is not a PRIMEBench engine"):
        engines([bad])


def test_an_unknown_engine_is_refused_by_name(tmp_path, capsys):
    rc = main(
        ["run", "--engine", "nope", "--model", "m", "--suite", "primebench_mathvision",
         "--out", str(tmp_path / "r")]
    )  # fmt: skip
    assert rc == 2 and "no engine 'nope' is installed" in capsys.readouterr().err


def test_primebench_run_on_a_stub_engine_end_to_end(tmp_path, stub, capsys):
    out = tmp_path / "run"
    rc = main(
        ["run", "--engine", "stub", "--model", str(tmp_path / "base"), "--name", "base",
         "--suite", "primebench_mathvision", "--out", str(out), "--n-boot", "50"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0, err
    # #79: the run ends by naming every file it wrote
    (closing,) = [ln for ln in err.splitlines() if "] wrote " in ln]
    for name in ("records.jsonl", "run_spec.json", "report.json", "report.md", "placement.png"):
        assert str(out / name) in closing
    (req,) = stub.checked
    # #81: the engine's own arguments ride in the request, opaque to the run
    assert req.engine_args == {"note": "none"} and req.model_name == "base"
    spec = json.loads((out / "run_spec.json").read_text())
    assert spec["conditions"]["harness"] == "primebench run (stub engine)"
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 100 and {r["status"] for r in records} == {"ok"}
    # the answer key's right answers were scored right by the run's own scorer
    assert {r["item_id"] for r in records if r["score"] == 1.0} == {
        r["item_id"] for r in records if int(r["item_id"]) % 3 == 0
    }
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "primebench.placement/1" and set(report["models"]) == {"base"}
    assert report["conditions"]["backend"] == {"kind": "stub"}
    # a rerun resumes: nothing left to ask, the same report
    first = (out / "report.json").read_bytes()
    assert main(
        ["run", "--engine", "stub", "--model", str(tmp_path / "base"), "--name", "base",
         "--suite", "primebench_mathvision", "--out", str(out), "--n-boot", "50"]
    ) == 0  # fmt: skip
    assert (out / "report.json").read_bytes() == first


def test_rank_variants_adaptive_on_a_stub_engine_end_to_end(tmp_path, stub, capsys):
    for name in ("strong", "weak"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "adapter_config.json").write_text("{}")
    out = tmp_path / "race"
    rc = main(
        ["rank-variants", "--engine", "stub", "--base", str(tmp_path / "base"), "--name", "base",
         "--adapters", str(tmp_path / "strong"), str(tmp_path / "weak"),
         "--suite", "primebench_mathvision", "--out", str(out), "--adaptive",
         "--max-items", "60", "--round-size", "20", "--n-boot", "50"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    from primebench_tasks.place.variant_ranking import VariantRanking

    doc = VariantRanking.read(out / "adaptive_variants.json")
    assert doc.race == "adaptive" and doc.suite_name == "primebench_mathvision"
    assert doc.order[0] == "base+strong" and doc.order[-1] in ("base+weak", "base")
    assert doc.items is not None and 0 < doc.items["MATH-Vision_MINI"] <= 60
    assert Path(out / "adaptive_variants.md").read_text().startswith("# Variants of base")


def test_engines_use_the_run_through_its_plug_in_six_statements_at_most():
    """#73's measure, per engine since #81: imports of ``harness_adapters.run`` inside each
    engine's folder — at most 6 statements for vLLM, 2 for the ``openai`` engine (its client
    and its plug-in), every one of them of ``run/plug.py`` (import-linter keeps them to the plug;
    this keeps their number), and no run verb defined there."""
    import ast

    root = Path(__file__).resolve().parents[2] / "harness_adapters" / "engines"
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(root.rglob("*.py")):
        mine = found.setdefault(path.relative_to(root).parts[0], [])
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "harness_adapters.run"
            ):
                mine.append((path.name, str(node.module)))
            if isinstance(node, ast.Import):
                mine += [
                    (path.name, a.name)
                    for a in node.names
                    if a.name.startswith("harness_adapters.run")
                ]
    assert len(found["vllm"]) <= 6, found["vllm"]
    assert len(found["openai_api"]) <= 3, found["openai_api"]
    every = [m for fs in found.values() for _, m in fs]
    assert set(every) == {"harness_adapters.run.plug"}, found
    verbs = (root / "vllm" / "cli.py").read_text("utf-8")
    assert 'add_parser("run"' not in verbs and 'add_parser("rank-variants"' not in verbs


def test_a_second_engine_is_under_sixty_lines_of_its_own():
    """#81: the ``openai`` engine is its plug-in module (the client is shared with vLLM's server
    mode) and is under 60 lines."""
    plugin = Path(__file__).resolve().parents[2] / "harness_adapters/engines/openai_api/plugin.py"
    assert len(plugin.read_text("utf-8").splitlines()) < 60


def test_a_broken_engine_takes_no_other_engines_options(monkeypatch):
    """On c29237c one engine that failed to load took every engine's options out of ``run``
    (vLLM's ``--backend`` became an unknown argument) and stopped every run; now it adds none of
    its own, the others add theirs and run, and naming it says what broke."""
    import argparse

    from harness_adapters.run.commands import engine_options

    (vllm,) = [ep for ep in engine_module.installed_engines() if ep.name == "vllm"]
    broken = SimpleNamespace(name="broken", value="no_such_module:ENGINE", load=_no_module)
    monkeypatch.setattr(engine_module, "installed_engines", lambda: [broken, vllm])
    p = argparse.ArgumentParser()
    engine_options(p, lambda _p: None)
    assert p.parse_args(["--backend", "server"]).backend == "server"
    assert engine_module.engine_named("vllm").name == "vllm"  # the broken one is not loaded
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        engine_module.engine_named("broken")


def _no_module() -> Any:
    import importlib

    return importlib.import_module("no_such_module")


def _with_engines(monkeypatch, *extra: Any) -> None:
    installed = [ep for ep in engine_module.installed_engines() if ep.name == "vllm"]
    monkeypatch.setattr(engine_module, "installed_engines", lambda: [*installed, *extra])


class _Clashing(StubEngine):
    name = "clash"

    def add_options(self, parser: Any) -> None:
        parser.add_argument("--model")  # the run's own option


class _Raising(StubEngine):
    name = "raising"

    def add_options(self, parser: Any) -> None:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "load", [_Clashing, _Raising, lambda: StubEngine], ids=["clash", "raises", "a-class"]
)
def test_one_broken_engine_breaks_no_command(monkeypatch, capsys, load):
    """#79: an installed engine whose options clash with the run's, whose add_options raises, or
    whose entry point is a class gave a traceback on ``primebench place --help``; now the other
    commands and engines work, it is said in one line, and naming it is refused in one line."""
    ep = SimpleNamespace(name="bad", value="tests:bad", load=lambda: load())
    _with_engines(monkeypatch, ep)
    with pytest.raises(SystemExit) as e:
        main(["place", "--help"])
    assert e.value.code == 0
    assert "Traceback" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr()
    assert "--backend" in out.out  # vLLM's options are still there


def test_only_the_named_engines_options_are_loaded(monkeypatch, capsys, stub):
    """#81: ``run --help`` shows the default engine's options, ``--engine stub --help`` the
    stub's and not vLLM's; a second engine may reuse an option name another engine has (each
    is loaded alone), and an engine whose options clash with the run's is refused by name."""
    with pytest.raises(SystemExit):
        main(["run", "--engine", "stub", "--help"])
    out = capsys.readouterr().out
    assert "--stub-note" in out and "--backend" not in out and "engine stub" in out
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--backend" in out and "--stub-note" not in out
    ep = SimpleNamespace(name="clash", value="tests:clash", load=_Clashing)
    _with_engines(monkeypatch, ep)
    rc = main(["run", "--engine", "clash", "--model", "m", "--suite", "primebench_mathvision",
               "--out", "x"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "engine 'clash'" in err and "cannot add its options" in err


def test_an_engine_entry_point_naming_a_class_is_refused():
    with pytest.raises(PrimeBenchError, match="names the class StubEngine"):
        check_engine(StubEngine, "entry point stub")


def test_an_unknown_or_empty_engine_name_loads_no_engine(monkeypatch, tmp_path, capsys):
    loaded: list[str] = []
    ep = SimpleNamespace(name="other", value="tests:other", load=lambda: loaded.append("x"))
    _with_engines(monkeypatch, ep)
    with pytest.raises(PrimeBenchError, match="no engine 'nosuch' is installed") as e:
        engine_module.engine_named("nosuch")
    assert "other" in str(e.value) and "vllm" in str(e.value) and loaded == []
    with pytest.raises(PrimeBenchError, match="--engine must name an engine"):
        engine_module.engine_named("")


class _Returns(StubEngine):
    """A stub engine whose fields, check or backend break the protocol in one way."""

    name = "odd"

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def request_fields(self, args: Any) -> Any:
        return {
            "fields-list": ["engine_args"],
            "fields-unknown": {"model": "x"},
        }.get(self.how, {"engine_args": None})

    def check(self, req: RunRequest) -> Any:
        good = super().check(req)
        if self.how == "check-none":
            return None
        if self.how == "check-dict":
            return {"spec": good.spec, "start": good.start}
        if self.how == "start-not-callable":
            return CheckedRun(spec=good.spec, start=3)  # type: ignore[arg-type]
        backend = StubBackend()
        wrong = {
            "fewer": lambda m, a, **k: backend.generate(m, a)[:-1],
            "more": lambda m, a, **k: [*backend.generate(m, a), "A"],
            "ints": lambda m, a, **k: [1 for _ in m],
            "none": lambda m, a, **k: None,
        }[self.how]
        return CheckedRun(spec=good.spec, start=lambda: SimpleNamespace(kind="odd", generate=wrong))


@pytest.mark.parametrize(
    "how",
    ["fields-list", "fields-unknown", "check-none", "check-dict", "start-not-callable",
     "fewer", "more", "ints", "none"],
)  # fmt: skip
def test_what_an_engine_returns_is_checked_in_one_line(monkeypatch, tmp_path, capsys, how):
    """#79: an engine's bad request fields, a check() that returns None or a dict, a start that
    cannot be called, a backend that answers fewer or more than asked, ints or None: one line
    naming the engine (no traceback); before anything is asked, no run file is written."""
    engine = _Returns(how)
    ep = SimpleNamespace(name="odd", value="tests:odd", load=lambda: engine)
    _with_engines(monkeypatch, ep)
    out = tmp_path / "run"
    rc = main(
        ["run", "--engine", "odd", "--model", str(tmp_path / "base"), "--name", "base",
         "--suite", "primebench_mathvision", "--out", str(out), "--n-boot", "20"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc != 0 and "Traceback" not in err
    assert "'odd'" in err or "odd" in err.splitlines()[-1]
    if how.startswith(("fields", "check", "start")):
        assert not (out / "run_spec.json").exists() and not (out / "records.jsonl").exists()


def test_an_adaptive_run_into_a_folder_it_cannot_make_is_one_line(tmp_path, stub, capsys):
    """#79 (expected to hold, now tested): an adaptive run whose --out cannot be made (its
    parent is a file: what a read-only or full disk gives as root) stops in one line naming the
    folder, with no traceback, and asks nothing."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = blocker / "run"
    rc = main(
        ["run", "--engine", "stub", "--adaptive", "--model", str(tmp_path / "base"),
         "--name", "base", "--suite", "primebench_mathvision", "--out", str(out),
         "--max-items", "10"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc != 0 and "Traceback" not in err and "a-file" in err


class _Judging(StubEngine):
    """A stub engine that opens judges: its backend answers from the answer key."""

    def judge(self, kind: str, target: str, **options: Any) -> Any:
        from harness_adapters.run.engine import JudgeBackend

        self.opened = (kind, target, sorted(options))
        return JudgeBackend(StubBackend(), f"{kind}:{target}", False, True)


def test_judges_reach_any_engine_by_name(monkeypatch, tmp_path):
    """#81: PRISM's judges open their model through the engine the spec names
    (``run.engine.judge_engine``), not by importing an engine: a judging engine of any name
    serves ``NAME:TARGET``; an engine without ``judge`` is refused by name."""
    from harness_adapters.judges.base import make_judge

    engine = _Judging()
    _with_engines(monkeypatch, SimpleNamespace(name="stub", value="tests:j", load=lambda: engine))
    judge = make_judge("stub:my-model", tmp_path, timeout_s=5.0, api_key_env=None)
    assert judge is not None and judge.id == "stub:my-model" and judge.retries == 2
    assert engine.opened == ("stub", "my-model", ["api_key_env", "settings", "timeout_s"])
    plain = StubEngine()
    plain.name = "plain"
    _with_engines(monkeypatch, SimpleNamespace(name="plain", value="tests:p", load=lambda: plain))
    with pytest.raises(PrimeBenchError, match="engine 'plain' cannot open a judge"):
        make_judge("plain:x", tmp_path)


def test_the_engine_a_command_line_names():
    from harness_adapters.run.commands import named_engine

    assert named_engine(None) == "vllm" and named_engine(["--model", "m"]) == "vllm"
    assert named_engine(["--engine", "openai", "--base-url", "u"]) == "openai"
    assert named_engine(["--engine=stub"]) == "stub"
    assert named_engine(["--model", "m", "--engine"]) == "vllm"  # the verb's parser refuses it


@pytest.mark.parametrize("broken", ["start", "whole_run"])
def test_an_engine_whose_start_or_whole_run_returns_none_is_one_line(
    tmp_path, stub, capsys, broken
):
    """Battery 7 (battery 6's last two): ``start()`` or ``whole_run`` returning None ended in a
    traceback, the spec left behind; now one line naming the engine, and no half-begun run."""
    base = stub.check

    def check(req: RunRequest) -> CheckedRun:
        spec = base(req).spec
        if broken == "start":
            return CheckedRun(spec=spec, start=lambda: None)  # type: ignore[arg-type,return-value]
        return CheckedRun(spec=spec, start=StubBackend, whole_run=lambda *a: None)

    stub.check = check  # type: ignore[method-assign]
    out = tmp_path / "run"
    rc = main(
        ["run", "--engine", "stub", "--model", str(tmp_path / "base"), "--name", "base",
         "--suite", "primebench_mathvision", "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"engine 'stub': {broken}() returned NoneType" in err
    assert not (out / "run_spec.json").exists()
