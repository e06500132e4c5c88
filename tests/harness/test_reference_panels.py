"""#73: a command loads its reference panels once — checked, asked from and placed on."""

from __future__ import annotations

import pytest

from harness_adapters.run import report
from harness_adapters.suites.released import suites_path
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError
from primebench_tasks.pipeline.manifest import read_manifest


def test_reference_panels_are_loaded_once_per_suite(monkeypatch):
    suite = read_manifest(suites_path() / "primebench_mathvision.json")
    loads: list[str] = []
    real = Panel.load_default

    def counted(name, *a, **k):
        loads.append(name)
        return real(name, *a, **k)

    monkeypatch.setattr(report, "_LOADED", {})
    monkeypatch.setattr(Panel, "load_default", staticmethod(counted))
    first = report.reference_panels(suite)
    second = report.reference_panels(suite)
    assert loads == ["mathvision"] and first == second
    assert all(first[b] is second[b] for b in first)
    second.clear()  # a caller's dict is its own
    assert report.reference_panels(suite) == first
    # a given panel is checked against the suite every time it differs
    other = real("m3irt")
    with pytest.raises(InputError, match="not the one the suite was built from"):
        report.reference_panels(suite, other)
