"""VLMEvalKit results of an exported suite → records ``(model, benchmark, item_id, score)``.

Every evaluation of a registered PrimeBench dataset leaves ``<model>_<dataset>_primebench.json``
next to VLMEvalKit's prediction file (:mod:`harness_adapters.harnesses.vlmeval.registration`). It names the
per-row result table VLMEvalKit wrote and how a row's score is read from it:

- ``hit`` — the multiple-choice result (``*_<judge>_result.xlsx``; AI2D, MMMU, BLINK, …): 0/1;
- ``mathvista_post_check`` — MathVista's ``*_<judge>.xlsx`` with the extracted ``res``: the row's
  verdict is VLMEvalKit's own ``post_check(line, prefetch=False)``, the function its
  ``MathVista_acc`` counts with.
- ``ocrbench`` — OCRBench's prediction file (``prediction``, ``answer`` as a Python list,
  ``category``): VLMEvalKit's OCRBench rule per row (an accepted answer occurs in the prediction;
  :func:`harness_adapters.harnesses.vlmeval.records.ocrbench_hit`), whose sum is VLMEvalKit's own total.
- ``eval_score`` — the VQA datasets' ``*_results`` table (ChartQA's relaxed accuracy, TextVQA's
  VQA accuracy): the row's ``eval_score`` in [0, 1], the mean of which is VLMEvalKit's Overall;
- ``yorn_score`` — the yes/no datasets' ``*_auxmatch`` table (POPE): its ``score``, VLMEvalKit's
  ``answer == extracted``.

A design-only benchmark's sidecar (#81) also carries the draw its rows came from (``design``:
strata N_h and n_h, the pool's fingerprint, each item's stratum): its records get ``stratum``
and ``pool``, which the placement holds to the suite's design.

Rows map to items by ``index`` through the sidecar's index → item map. Every file must parse and
every row must score before anything is returned; the same (model, benchmark) evaluated twice
(two ``run.py`` eval folders) must agree, else it is an error naming both files.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from harness_adapters.harnesses.vlmeval.registration import SIDECAR_SCHEMA, SIDECAR_SUFFIX
from primebench_tasks.data.io import read_json_document
from primebench_tasks.errors import InputError, shown


def _table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".xlsx":
            return pd.read_excel(path)
        if path.suffix in (".tsv", ".csv"):
            return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")
        return pd.read_json(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable table is reported the same way
        raise InputError(f"cannot read results table: {exc}", file=str(path)) from None


SCORE_RULES = (
    "hit",
    "mathvista_post_check",
    "mathvision_post_check",
    "ocrbench",
    "eval_score",
    "yorn_score",
)


def _number_column(
    df: pd.DataFrame, col: str, ok: Callable[[pd.Series], pd.Series], want: str, path: Path
) -> list[float]:
    """Column ``col`` as floats, every value a number that ``ok`` accepts; the first that is
    not is refused, naming the file, row and field (``is not {want}``)."""
    s = pd.to_numeric(df[col], errors="coerce")
    bad = s.isna() | ~ok(s)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise InputError(
            f"{col} {shown(df[col].iloc[i])} is not {want}", file=str(path), row=i + 2, field=col
        )
    return [float(x) for x in s]


def _scores(df: pd.DataFrame, rule: str, path: Path) -> list[float]:
    if rule == "hit":
        return _number_column(df, "hit", lambda s: s.isin([0, 1]), "0 or 1", path)
    if rule in ("mathvista_post_check", "mathvision_post_check"):
        import importlib

        from harness_adapters.harnesses.vlmeval.registration import RULE_BASED, import_vlmeval

        import_vlmeval()
        upstream = "MathVista" if rule == "mathvista_post_check" else "MathVision"
        post_check = importlib.import_module(RULE_BASED[upstream][0]).post_check
        return [1.0 if post_check(df.iloc[i], prefetch=False) else 0.0 for i in range(len(df))]
    if rule == "ocrbench":
        return _ocrbench_scores(df, path)
    if rule == "eval_score":  # VQA accuracy / relaxed accuracy of the item, in [0, 1]
        return _number_column(
            df, "eval_score", lambda s: s.between(0.0, 1.0), "a number in [0, 1]", path
        )
    if rule == "yorn_score":  # VLMEvalKit's `answer == extracted`, written as a boolean
        truth = {True: 1.0, False: 0.0, "True": 1.0, "False": 0.0}  # 1 and 0 are True, False
        out = []
        for i, v in enumerate(df["score"]):
            if v not in truth:
                raise InputError(
                    f"score {shown(v)} is not True or False",
                    file=str(path),
                    row=i + 2,
                    field="score",
                )
            out.append(truth[v])
        return out
    raise InputError(f"unknown score rule {rule!r}", file=str(path), field="score_rule")


def _ocrbench_scores(df: pd.DataFrame, path: Path) -> list[float]:
    import ast

    from harness_adapters.harnesses.vlmeval.records import ocrbench_hit

    for col in ("prediction", "answer", "category"):
        if col not in df.columns:
            raise InputError(f"no {col!r} column", file=str(path), row=1, field=col)
    out = []
    for i in range(len(df)):
        r = df.iloc[i]
        try:
            answers = ast.literal_eval(str(r["answer"]))
        except (ValueError, SyntaxError):
            raise InputError(
                f"answer {shown(r['answer'])} is not a list of accepted answers",
                file=str(path),
                row=i + 2,
                field="answer",
            ) from None
        if not isinstance(answers, list):
            answers = [answers]
        # str() of the cell as VLMEvalKit reads it (an empty prediction is "nan" there too)
        hit = ocrbench_hit(str(r["prediction"]), [str(a) for a in answers], str(r["category"]))
        out.append(float(hit))
    return out


def index_key(x: Any) -> str:
    """A VLMEvalKit ``index`` as the export's ``index_to_item`` keys it: a result table read
    back with the index as floats gives ``5.0`` for row ``5``."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def read_sidecar(path: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """One evaluation's records from its sidecar and result table."""
    doc = read_json_document(path, "PrimeBench VLMEvalKit result", SIDECAR_SCHEMA)
    for key, kind in (
        ("suite", str),
        ("model", str),
        ("benchmark", str),
        ("dataset", str),
        ("index_to_item", dict),
    ):
        if not isinstance(doc.get(key), kind):
            raise InputError(
                f"the sidecar has no valid {key!r} ({kind.__name__} expected)",
                file=str(path),
                field=key,
            )
    result_file = doc.get("result_file")
    if result_file and (
        not isinstance(result_file, str) or Path(result_file).name != result_file
    ):  # a bare file name beside the sidecar: never ../.. or an absolute path
        raise InputError(
            f"result_file {result_file!r} is not a file name beside the sidecar",
            file=str(path),
            field="result_file",
        )
    if not result_file:
        raise InputError(
            f"VLMEvalKit's evaluation of {doc['dataset']} ({doc.get('upstream_class')}) "
            "wrote no per-row result table that primebench can read",
            file=str(path),
            field="result_file",
        )
    if doc.get("score_rule") not in SCORE_RULES:
        raise InputError(
            f"unknown score_rule {doc.get('score_rule')!r} (known: {', '.join(SCORE_RULES)})",
            file=str(path),
            field="score_rule",
        )
    table = path.with_name(doc["result_file"])
    if not table.exists():
        raise InputError("the result table this sidecar names is missing", file=str(table))
    df = _table(table)
    if "index" not in df.columns:
        raise InputError("no 'index' column", file=str(table), row=1, field="index")
    imap = doc["index_to_item"]
    idx = [index_key(x) for x in df["index"]]
    stray = [i for i in idx if i not in imap]
    if stray:
        raise InputError(
            f"{len(stray)} row(s) are not items of the exported dataset, e.g. {stray[:5]}",
            file=str(table),
            field="index",
        )
    missing = sorted(set(imap) - set(idx))
    scores = _scores(df, doc["score_rule"], table)
    rows = pd.DataFrame(
        {
            "model": doc["model"],
            "benchmark": doc["benchmark"],
            "item_id": [imap[i] for i in idx],
            "condition": "vl",
            "score": scores,
            # the model's raw answer as VLMEvalKit recorded it (what the response check reads):
            # VLMEvalKit writes every asked row's prediction, and an empty answer comes back
            # from the table as an empty cell (NaN) — an empty answer, not a missing one
            "response": (
                ["" if v is None or v != v else str(v) for v in df["prediction"]]
                if "prediction" in df.columns
                else None
            ),
        }
    )
    design = doc.get("design")
    if design is not None:  # a design-only benchmark: each item's stratum and the draw
        items = design.get("items") if isinstance(design, dict) else None
        if not isinstance(items, dict) or not all(i in items for i in rows["item_id"]):
            raise InputError(
                "the sidecar's design does not give the stratum of every item of its table",
                file=str(path),
                field="design.items",
            )
        pool = {"strata": design.get("strata"), "fingerprint": design.get("fingerprint")}
        rows["stratum"] = [str(items[i]) for i in rows["item_id"]]
        rows["pool"] = [pool] * len(rows)
    doc = {**doc, "missing_items": missing, "table": str(table)}
    return doc, rows


def read_work_dir(
    work_dir: str | Path, model: str | None = None
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Records of every PrimeBench evaluation under ``work_dir`` (a ``run.py --work-dir`` or one
    model's folder in it), and the sidecars read."""
    side = sorted(Path(work_dir).rglob(f"*{SIDECAR_SUFFIX}"))
    if not side:
        raise InputError(
            "no evaluated PrimeBench dataset here (no *_primebench.json; run "
            "VLMEvalKit through `primebench evaluate vlmeval` so the datasets are "
            "registered)",
            file=str(work_dir),
        )
    seen: dict[tuple[str, str], tuple[str, pd.DataFrame]] = {}
    docs = []
    for p in side:
        doc, rows = read_sidecar(p)
        if model is not None and doc["model"] != model:
            continue
        key = (doc["model"], doc["benchmark"])
        if key in seen:
            other, prev = seen[key]
            a = prev.set_index("item_id")["score"]
            b = rows.set_index("item_id")["score"].reindex(a.index)
            if len(a) != len(rows) or not all(
                math.isclose(x, y) for x, y in zip(a, b, strict=True)
            ):
                raise InputError(
                    f"model {key[0]} has two different results for {key[1]} "
                    f"({other} and {p}); keep one eval folder or pass --model",
                    file=str(p),
                )
            continue
        seen[key] = (str(p), rows)
        docs.append(doc)
    if not seen:
        raise InputError(f"no PrimeBench evaluation of model {model!r} here", file=str(work_dir))
    return pd.concat([r for _, r in seen.values()], ignore_index=True), docs


def read_results(work_dir: str | Path, model: str | None = None) -> pd.DataFrame:
    """Records of every PrimeBench evaluation under ``work_dir``."""
    return read_work_dir(work_dir, model)[0]
