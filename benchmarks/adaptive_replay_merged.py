"""The adaptive replay (``adaptive_replay.py``: the same hold-outs, checkpoints, static baseline,
stopping rule and races, the policy untouched) on the flagship's merged MMMU panel — AutoJudger's
VLMEvalKit records and M3IRT's runs joined by MMMU id, 185 models × 900 items (#55) — kept apart
from the five panels the policy was chosen on, whose committed rows other comparisons check.

    python benchmarks/adaptive_replay_merged.py [--splits 10]
    python benchmarks/adaptive_replay_merged.py --render   # the tables from the committed CSVs

Writes ``benchmarks/results/adaptive_replay_merged.{csv,md}`` and ``adaptive_races_merged.csv``
(the table in docs/results.md, checked by a test).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pandas as pd

from primebench_tasks.data.panel import Panel

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
NAME = "MMMU merged (held out)"


def _replay_module():
    spec = importlib.util.spec_from_file_location("adaptive_replay", HERE / "adaptive_replay.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["adaptive_replay"] = mod
    spec.loader.exec_module(mod)
    return mod


def render(df: pd.DataFrame, rf: pd.DataFrame) -> str:
    rp = _replay_module()
    return rp.table(df) + rp.race_table(rf) + "\n" + rp.summary(df, rf)


def main() -> None:
    rp = _replay_module()
    ap = argparse.ArgumentParser()
    rp.hold_out_options(ap)
    ap.add_argument("--render", action="store_true", help="the tables from the committed CSVs")
    args = ap.parse_args()
    csv, races_csv = RESULTS / "adaptive_replay_merged.csv", RESULTS / "adaptive_races_merged.csv"
    if args.render:
        df, rf = pd.read_csv(csv), pd.read_csv(races_csv)
    else:
        X = Panel.load_default("mmmu_merged").matrix("MMMU_DEV_VAL")
        jobs = [(rp.measure, (NAME, X, p, s)) for p, s in rp.hold_outs(args.splits)]
        jobs.append((rp.races, (NAME, X)))
        out = rp.run_parallel(jobs, args.workers, "adaptive replay (merged MMMU)")
        rows = [r for (f, _), got in zip(jobs, out, strict=True) if f is rp.measure for r in got]
        race_rows = [r for (f, _), got in zip(jobs, out, strict=True) if f is rp.races for r in got]
        df, rf = pd.DataFrame(rows), pd.DataFrame(race_rows)
        df.to_csv(csv, index=False, float_format="%.6f")
        rf.to_csv(races_csv, index=False)
    text = render(df, rf)
    (RESULTS / "adaptive_replay_merged.md").write_text(text, "utf-8")
    print(text)


if __name__ == "__main__":
    main()
