"""Benchmark-level leaderboards: models x benchmarks scores with release dates (no items).

Stage 1 and Stage 3 and shelf-life checks can run on a Leaderboard alone, e.g. the OpenVLM
snapshot of 284 VLMs x 8 benchmarks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from primebench_tasks.data.catalogue import lookup
from primebench_tasks.data.importers import parse_release_date
from primebench_tasks.data.io import atomic_write, atomic_write_text, canonical_json, content_hash
from primebench_tasks.errors import InputError

SCHEMA = "primebench.leaderboard/1"
_META_COLUMNS = {
    "name",
    "model",
    "date",
    "release_date",
    "params_b",
    "params_estimated",
    "family",
    "avg8",
    "avg",
}


@dataclass
class Leaderboard:
    """Scores (models x benchmarks, in [0, 1], NaN = not reported) with model metadata.

    ``scores`` is indexed by model name; ``models`` has MODEL_COLUMNS in the same order;
    ``categories`` maps each benchmark to its capability category.
    """

    name: str
    scores: pd.DataFrame
    models: pd.DataFrame
    categories: dict[str, str]

    @classmethod
    def from_csv(
        cls,
        path: str | Path,
        name: str | None = None,
        scale: float = 100.0,
        categories: dict[str, str] | None = None,
    ) -> Leaderboard:
        """Read a leaderboard CSV: one row per model (``name``/``model``), optional ``date``,
        ``family``, ``params_b``; every other numeric column is a benchmark score in
        [0, ``scale``] (percentages by default)."""
        p = Path(path)
        f = str(p)
        try:
            df = pd.read_csv(p, dtype=str, keep_default_na=False)
        except pd.errors.EmptyDataError:
            raise InputError("file is empty", file=f, row=1) from None
        except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            raise InputError(f"cannot read CSV: {exc}", file=f) from None
        name_col = "name" if "name" in df.columns else "model" if "model" in df.columns else None
        if name_col is None:
            raise InputError("no model column (name/model)", file=f, row=1, field="name")
        bench_cols = [c for c in df.columns if c not in _META_COLUMNS]
        if not bench_cols:
            raise InputError("no benchmark columns", file=f, row=1)
        cats = {}
        for b in bench_cols:
            given = (categories or {}).get(b)
            cats[b] = lookup(b, given).category
        dup = df[name_col].duplicated()
        if dup.any():
            i = int(np.flatnonzero(dup.to_numpy())[0])
            raise InputError(
                f"duplicate model {df[name_col].iloc[i]!r}", file=f, row=i + 2, field=name_col
            )
        vals = np.full((len(df), len(bench_cols)), np.nan)
        for j, b in enumerate(bench_cols):
            for i, v in enumerate(df[b]):
                s = v.strip()
                if not s:
                    continue
                try:
                    x = float(s)
                except ValueError:
                    raise InputError(
                        f"non-numeric score {v!r}", file=f, row=i + 2, field=b
                    ) from None
                if not 0 <= x <= scale:
                    raise InputError(f"score {x} outside [0, {scale}]", file=f, row=i + 2, field=b)
                vals[i, j] = x / scale
        date_col = (
            "date"
            if "date" in df.columns
            else ("release_date" if "release_date" in df.columns else None)
        )
        models = pd.DataFrame(
            {
                "model": df[name_col].str.strip(),
                "family": df["family"].replace("", None) if "family" in df.columns else None,
                "release_date": [
                    parse_release_date(v, f, i + 2) for i, v in enumerate(df[date_col])
                ]
                if date_col
                else None,
                "params_b": pd.to_numeric(df["params_b"].replace("", None))
                if "params_b" in df.columns
                else np.nan,
            }
        )
        scores = pd.DataFrame(
            vals, index=pd.Index(models["model"], name="model"), columns=bench_cols
        )
        return cls(name=name or p.stem, scores=scores, models=models, categories=cats)

    @property
    def content_hash(self) -> str:
        return content_hash(
            self.scores.to_csv()
            + self.models.to_csv(index=False)
            + json.dumps(self.categories, sort_keys=True)
        )

    def save(self, path: str | Path) -> Path:
        root = Path(path)
        atomic_write(root / "scores.parquet", lambda p: self.scores.to_parquet(p))
        atomic_write(root / "models.parquet", lambda p: self.models.to_parquet(p, index=False))
        atomic_write_text(
            root / "leaderboard.json",
            canonical_json(
                {
                    "schema": SCHEMA,
                    "name": self.name,
                    "categories": self.categories,
                    "content_hash": self.content_hash,
                }
            ),
        )
        return root

    @classmethod
    def load(cls, path: str | Path) -> Leaderboard:
        root = Path(path)
        meta = json.loads((root / "leaderboard.json").read_text("utf-8"))
        if meta.get("schema") != SCHEMA:
            raise InputError(
                f"unsupported schema {meta.get('schema')!r}",
                file=str(root / "leaderboard.json"),
                field="schema",
            )
        lb = cls(
            name=meta["name"],
            scores=pd.read_parquet(root / "scores.parquet"),
            models=pd.read_parquet(root / "models.parquet"),
            categories=meta["categories"],
        )
        if lb.content_hash != meta["content_hash"]:
            raise InputError(
                "content hash does not match leaderboard.json",
                file=str(root / "leaderboard.json"),
                field="content_hash",
            )
        return lb

    @classmethod
    def load_default(cls, name: str = "openvlm") -> Leaderboard:
        from primebench_tasks.data.defaults import default_path

        return cls.load(default_path(name))

    def subset_models(self, models: list[str]) -> Leaderboard:
        idx = self.models.set_index("model").loc[models].reset_index()
        return Leaderboard(self.name, self.scores.loc[models], idx, self.categories)
