"""The hostile battery, the reference runs' response profiles (``response_profiles.csv`` beside a
panel): a value out of its range or not a number is one line naming the file, the row and the
field — never a limit a run is held to (on 4d9a95b a share of −46.7 % marked a healthy run "not
comparable", and one of 1e9 let a run 99 % unreadable pass) — and a repeated row never counts as
another reference run (two runs repeated ten times flagged a healthy run at 56 % "option A")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from primebench_tasks.data.panel import PROFILES_FILE, Panel
from primebench_tasks.errors import InputError

EMBEDDED = (
    Path(__file__).resolve().parents[2] / "primebench_tasks/data/embedded/openvlm_realworldqa"
)


@pytest.fixture()
def panel_dir(tmp_path) -> Path:
    out = tmp_path / "rwqa"
    shutil.copytree(EMBEDDED, out)
    return out


def _edit(root: Path, row: int, field: str, value: object) -> None:
    path = root / PROFILES_FILE
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[row, field] = str(value)
    df.to_csv(path, index=False)


def test_the_shipped_profiles_read(panel_dir) -> None:
    p = Panel.load(panel_dir)
    assert len(p.response_profiles) == 172 and p.response_profiles["n"].dtype.kind == "i"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n", "many"),
        ("n", "0"),
        ("n", "2.5"),
        ("unreadable", "-0.467"),
        ("unreadable", "1e9"),
        ("empty", "inf"),
        ("top_option", "high"),
        ("top_excess", "1.5"),
        ("length", "-3"),
        ("model", ""),
    ],
)
def test_a_bad_value_is_one_line_naming_row_and_field(panel_dir, field, value) -> None:
    _edit(panel_dir, 4, field, value)
    with pytest.raises(InputError) as e:
        Panel.load(panel_dir)
    msg = str(e.value)
    assert PROFILES_FILE in msg and "row 6" in msg and repr(field) in msg


def test_a_repeated_row_does_not_count_as_another_reference_run(panel_dir) -> None:
    path = panel_dir / PROFILES_FILE
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    pd.concat([df, df.iloc[[3, 3]]]).to_csv(path, index=False)
    with pytest.raises(InputError, match="repeats the profile of model") as e:
        Panel.load(panel_dir)
    assert "row 174" in str(e.value)
