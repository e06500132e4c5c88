"""The single-turn PRISM axes of a build as VLMEvalKit datasets, and their results back as PRISM
run records.

``primebench prism tasks vlmeval --prism BUILD --lmudata DIR`` writes, per axis with usable
artifacts, ``DIR/PrimeBench_PRISM_<axis>.tsv`` (VLMEvalKit columns ``index``, ``image`` as base64,
``question`` = exactly the text the vLLM runner sends; plus ``key``, ``axis`` and the rule
grader's ``grade``) and ``DIR/primebench_prism_vlmeval_config.json``. ``primebench evaluate vlmeval``
registers them (:func:`register_prism`) as a VQA dataset on VLMEvalKit's ``ImageBaseDataset``:
its default prompt (image, then text) and, for evaluation, the project's rule grader of the axis
(:func:`harness_adapters.prism.single_turn.rule_score`), written per row to
``<eval file>_primebench_result.xlsx`` (``index``, ``key``, ``score``). ``primebench prism
ingest-vlmeval WORK --prism BUILD --out RUN --model NAME`` appends the answers to the run's
records as the lmms-eval path does; ``prism score`` then grades them with the chosen judge.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pandas as pd

from harness_adapters.prism.build import read_build
from harness_adapters.prism.run import SINGLE_TURN, records_file
from harness_adapters.prism.single_turn import axis_rows, build_id, rule_score
from primebench_tasks.data.io import atomic_write_text, canonical_json, read_json_document
from primebench_tasks.errors import InputError

CONFIG_NAME = "primebench_prism_vlmeval_config.json"
SCHEMA = "primebench.prism-vlmeval/1"
RESULT_SUFFIX = "_primebench_result"


def dataset_name(axis: str) -> str:
    return f"PrimeBench_PRISM_{axis}"


def export_prism(
    build_dir: str | Path, lmudata: str | Path, axes: list[str] | None = None
) -> dict[str, Path]:
    """Write the axes' TSVs (then the config, last); returns dataset name → TSV path."""
    from primebench_tasks.data.io import check_image_file

    index, store = read_build(build_dir)
    bid = build_id(build_dir)
    dst = Path(lmudata)
    dst.mkdir(parents=True, exist_ok=True)
    bad = sorted(set(axes or []) - set(SINGLE_TURN))
    if bad:
        raise InputError(
            f"not single-turn PRISM axes: {bad} (those are {list(SINGLE_TURN)}; "
            "sc is multi-turn and runs through the vLLM runner)",
            field="--axes",
        )
    out: dict[str, Path] = {}
    config: dict[str, Any] = {"schema": SCHEMA, "build": bid, "data": {}}
    for axis in axes or SINGLE_TURN:
        rows = axis_rows(index, store, axis)
        if not rows:
            continue
        table = []
        for k, r in enumerate(rows, start=1):
            if not r["image"]:
                raise InputError(
                    f"item {r['key']} has no image; VLMEvalKit's image datasets "
                    "drop rows without one",
                    field="image",
                )
            check_image_file(r["image"])
            table.append(
                {
                    "index": k,
                    "image": base64.b64encode(Path(r["image"]).read_bytes()).decode(),
                    "question": r["text"],
                    "key": r["key"],
                    "axis": axis,
                    "grade": json.dumps(r["grade"], sort_keys=True),
                }
            )
        name = dataset_name(axis)
        out[name] = atomic_write_text(
            dst / f"{name}.tsv", pd.DataFrame(table).to_csv(sep="\t", index=False)
        )
        config["data"][name] = {"class": name, "dataset": name, "axis": axis, "n_items": len(table)}
    if not out:
        raise InputError("the build has no usable single-turn artifact", file=str(build_dir))
    atomic_write_text(dst / CONFIG_NAME, canonical_json(config))
    return out


def register_prism(lmudata: str | Path) -> dict[str, type]:
    """Register the PRISM datasets exported to ``lmudata`` (if any) with ``vlmeval``."""
    path = Path(lmudata) / CONFIG_NAME
    if not path.exists():
        return {}
    from harness_adapters.harnesses.vlmeval.registration import import_vlmeval

    D = import_vlmeval()
    from vlmeval.dataset.image_base import ImageBaseDataset

    cfg = read_json_document(path, "PRISM VLMEvalKit export config", SCHEMA)
    out: dict[str, type] = {}
    for name, spec in cfg["data"].items():
        cls = type(
            name,
            (PrismAxisMixin, ImageBaseDataset),
            {
                "TYPE": "VQA",
                "PRISM": {**spec, "build": cfg["build"]},
                "DATASET_URL": {name: f"{name}.tsv"},
                "DATASET_MD5": {},
                "__module__": "vlmeval.dataset",
            },
        )
        D.DATASET_CLASSES[:] = [
            c for c in D.DATASET_CLASSES if getattr(c, "PRISM", {}).get("dataset") != name
        ]
        D.DATASET_CLASSES.insert(0, cls)
        setattr(D, name, cls)
        if name not in D.SUPPORTED_DATASETS:
            D.SUPPORTED_DATASETS.append(name)
        out[name] = cls
    return out


class PrismAxisMixin:
    """A PRISM axis dataset: scored by the project's rule grader of the axis."""

    PRISM: dict[str, Any] = {}

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return [cls.PRISM["dataset"]] if cls.PRISM else []

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> pd.DataFrame:
        from vlmeval.smp import dump, get_intermediate_file_path, load

        from harness_adapters.harnesses.vlmeval.registration import PrimeBenchMixin

        try:
            data = load(eval_file)
            axis = self.PRISM["axis"]
            scores = [
                rule_score(axis, json.loads(g), "" if pd.isna(p) else str(p))
                for g, p in zip(data["grade"], data["prediction"], strict=True)
            ]
            result = pd.DataFrame(
                {
                    "index": data["index"],
                    "key": data["key"],
                    "build": self.PRISM["build"],
                    "prediction": data["prediction"],
                    "score": scores,
                }
            )
            dump(result, get_intermediate_file_path(eval_file, RESULT_SUFFIX, "xlsx"))
            # an item whose instruction cannot be verified is excluded (None), for every model
            kept = [s for s in scores if s is not None]
            mean = sum(kept) / len(kept) if kept else None
            summary = pd.DataFrame({"axis": [axis], "n": [len(kept)], "score": [mean]})
            dump(summary, get_intermediate_file_path(eval_file, "_acc", "csv"))
        except BaseException as exc:
            PrimeBenchMixin.OUTCOMES[self.PRISM["dataset"]] = exc
            raise
        PrimeBenchMixin.OUTCOMES[self.PRISM["dataset"]] = eval_file
        return summary


def ingest_vlmeval(
    work_dir: str | Path, build_dir: str | Path, run_dir: str | Path, model: str
) -> int:
    """Append the VLMEvalKit answers of ``model`` on the build's PRISM datasets to ``run_dir``'s
    records; items already recorded are skipped. Returns lines appended."""
    index, _ = read_build(build_dir)
    keys = {
        f"{it['benchmark']}/{it['item_id']}": (it["benchmark"], it["item_id"])
        for it in index["items"]
    }
    bid = build_id(build_dir)
    rows: list[dict[str, Any]] = []
    files = sorted(Path(work_dir).rglob(f"{model}_PrimeBench_PRISM_*{RESULT_SUFFIX}.xlsx"))
    if not files:
        raise InputError(
            f"no PRISM result of model {model!r} (<model>_PrimeBench_PRISM_<axis>"
            f"{RESULT_SUFFIX}.xlsx)",
            file=str(work_dir),
        )
    for f in files:
        axis = f.name[len(f"{model}_PrimeBench_PRISM_") : -len(f"{RESULT_SUFFIX}.xlsx")]
        if axis not in SINGLE_TURN:
            continue
        df = pd.read_excel(
            f, keep_default_na=False, dtype={"key": str, "prediction": str, "build": str}
        )
        other = sorted(set(df["build"]) - {bid})
        if other:
            raise InputError(
                f"the results are of PRISM build {other[0]}, not {bid}", file=str(f), field="build"
            )
        for k, (key, pred) in enumerate(zip(df["key"], df["prediction"], strict=True)):
            if key not in keys:
                raise InputError(
                    f"item {key} is not in this build", file=str(f), row=k + 2, field="key"
                )
            b, i = keys[key]
            rows.append(
                {
                    "model": model,
                    "adapter": None,
                    "axis": axis,
                    "benchmark": b,
                    "item_id": i,
                    "status": "ok",
                    "responses": [pred],
                    "error": None,
                    "source": "vlmeval",
                }
            )
    rf = records_file(Path(run_dir))
    done = rf.finished()
    seen: dict[tuple[str, str, str, str], list[str]] = {}
    new = []
    for r in rows:
        key4 = (r["model"], r["axis"], r["benchmark"], r["item_id"])
        if key4 in seen:  # the same item in two eval folders must carry the same answer
            if seen[key4] != r["responses"]:
                raise InputError(
                    f"model {model} answered {r['benchmark']}/{r['item_id']} "
                    f"({r['axis']}) differently in two eval folders; keep one",
                    file=str(work_dir),
                )
            continue
        seen[key4] = r["responses"]
        if key4 not in done:
            new.append(r)
    rf.append(new)
    atomic_write_text(
        Path(run_dir) / "prism_vlmeval_source.json",
        canonical_json({"build": bid, "work_dir": str(work_dir), "model": model}),
    )
    return len(new)
