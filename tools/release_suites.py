"""Rebuild the released suites and their lmms-eval task configs (run from the repository root).

    python tools/release_suites.py [--check]

Released:

- ``primebench`` — the compact suite of real upstream benchmarks: MathVista testmini and MMMU val
  (M3IRT panel, 24 VLMs), BLINK val (VLMEvalKit's published records of 86 VLMs, the
  ``openvlm_blink`` panel; the authors' 19 before) through the real upstream
  lmms-eval tasks with verified row keys, and MATH-Vision testmini (16 set-ups) as the local task
  with real images. Built per benchmark on its own models (``pipeline.multi_source``).
- ``primebench_vlmeval`` — the VLMEvalKit suite: AI2D_TEST and MMMU_DEV_VAL (AutoJudger's
  VLMEvalKit records, 169 VLMs), BLINK, OCRBench and RealWorldQA (the OpenVLM leaderboard's
  published VLMEvalKit records: 86, 188 and 172 VLMs), every item keyed by VLMEvalKit's
  ``index`` and every model by its VLMEvalKit id — so it runs in VLMEvalKit as is (``primebench
  tasks vlmeval``) and the models that have all five benchmarks give a suite-level rank. Built per
  benchmark on its own models like ``primebench``; no lmms-eval tasks (lmms-eval's rows of these
  datasets carry no VLMEvalKit index: see ``primebench keys lmms-eval``).
- ``primebench_resampled`` — ResampledBench (farthest-point sampling over the items' text
  embeddings, pooled across benchmarks; §4) on VLMEvalKit's published records of BLINK, OCRBench
  and RealWorldQA (the embedded ``openvlm_records`` panel, 202 VLMs; its text space is MiniLM's
  fixed 64-d projection): 300 items, fidelity ρ with AvgRank on the 76 models that have all three.
  Keyed by VLMEvalKit ``index``: runs in VLMEvalKit as is; no lmms-eval tasks (OCRBench and
  RealWorldQA have no verified lmms-eval row key).
- ``primebench_wide`` — the flagship's seven benchmarks (the same items, panels and ranks) plus
  the design-only benchmarks of the cards (``[design_only]``: MMStar, POPE, ScienceQA-IMG,
  ChartQA, TextVQA val; 12 in all), each drawn on the user's machine from the dataset itself
  (``suite.content_design``: 100 items a benchmark, ``DESIGN_ONLY_ITEMS``) and placed by its
  design; runs in lmms-eval (``--tasks primebench_wide``).
- ``primebench_mathvision`` — the PRIMEBench pipeline on the embedded MATH-Vision testmini panel.
- ``primebench_mathvision_testmini`` — all 304 testmini items (Stage 0 only), the local benchmark
  users can copy for their private benchmarks.

Writes ``task_configs/suites/<name>.json`` and ``task_configs/lmms_eval/<name>/``; a released
manifest of another version is kept in ``task_configs/suites/previous/``. With ``--check`` nothing
is written: it fails when the committed files differ from a rebuild.

The rebuild is byte-identical on every CPU and BLAS kernel (the k-means cells, projections and
farthest points are computed exactly: ``primebench_tasks/numerics.py``); the test
``tests/harness/test_lmms_eval.py::test_released_suites_rebuild_under_every_blas_kernel`` checks it
under ``OPENBLAS_CORETYPE`` Haswell, Sandybridge and the machine's own kernel.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks
from harness_adapters.lmms_eval_upstream.tasks import VERIFIED_UPSTREAM
from primebench_tasks.data.cards import design_only_cards, released_sources
from primebench_tasks.data.panel import Panel
from primebench_tasks.pipeline.manifest import read_manifest, write_manifest
from primebench_tasks.pipeline.multi_source import Source, build_multi_source_suite
from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
from primebench_tasks.place.calibration import calibration_entry
from primebench_tasks.place.standing import VLMEVAL_RECORDS
from primebench_tasks.suite.content_design import DESIGN_ONLY_ITEMS, design_only_document
from primebench_tasks.suite.manifest import SuiteManifest, versioned

SINGLE = {
    "primebench_mathvision": ("mathvision", "stage3"),
    "primebench_mathvision_testmini": ("mathvision", "stage0"),
}
RELEASED_SOURCES = released_sources("primebench")
"""(embedded panel, benchmark) of the ``primebench`` suite, in manifest order: the benchmark
cards' ``[[released]]`` tables (``primebench_tasks/data/cards/``)."""
VLMEVAL_SOURCES = released_sources("primebench_vlmeval")
"""(embedded panel, benchmark) of the ``primebench_vlmeval`` suite, in manifest order (the cards)."""


RESAMPLED_N = 300
"""Items of the released ResampledBench suite (8 % of the records panel's 3,666)."""


def resampled_manifest() -> dict[str, Any]:
    """ResampledBench on the embedded records panel (``projection_dim`` None: the panel's text
    space is already the fixed projection ``primebench build resampled`` applies)."""
    import numpy as np

    from primebench_tasks.pipeline.manifest import build_manifest
    from primebench_tasks.pipeline.resampled import resampled_suite

    panel = Panel.load_default("openvlm_records")
    have = np.ones(len(panel.model_names), dtype=bool)
    for b in panel.benchmark_names:
        have &= np.isfinite(panel.matrix(b)).any(axis=1)
    common = [m for m, ok in zip(panel.model_names, have, strict=True) if ok]
    res = resampled_suite(
        panel.subset_models(common), n=RESAMPLED_N, space="text", projection_dim=None, seed=0
    )
    selected: dict[str, dict[str, Any]] = {}
    for b, pos in res.selected.items():
        selected.setdefault(panel.category_of(b), {})[b] = pos
    m = build_manifest(
        "primebench_resampled",
        panel,
        selected,
        {
            "selector": "fps",
            "n": RESAMPLED_N,
            "space": "text",
            "encoder": "all-MiniLM-L6-v2, fixed 64-d projection (stored in the panel)",
            "per_benchmark": False,
            "seed": 0,
        },
        [],
        {
            "rho": res.rho,
            "protocol": "same-models: mean on selected items vs -AvgRank (Eq. 1), on the "
            f"{len(common)} models with every benchmark",
            "n_models": len(common),
        },
        aggregate="item_mean",
    )
    for c in m["categories"].values():
        for e in c["benchmarks"].values():
            e["vlmeval"] = {"dataset": e["vlmeval_dataset"], "key": "index"}
    return SuiteManifest.from_document(versioned(m))


def vlmeval_manifest() -> tuple[dict[str, Any], dict[str, Panel]]:
    panels = {n: Panel.load_default(n) for n, _ in VLMEVAL_SOURCES}
    sources = [Source(panels[n], b) for n, b in VLMEVAL_SOURCES]
    notes = {
        s.benchmark: {
            "upstream": None,
            "vlmeval": {
                "dataset": s.panel.benchmarks.set_index("benchmark").loc[
                    s.benchmark, "vlmeval_dataset"
                ],
                "key": "index",
                "evidence": "the panel's item ids are the `index` of VLMEvalKit's own records "
                "of this dataset (published evaluation files)",
            },
        }
        for s in sources
    }
    return _multi_source("primebench_vlmeval", sources, notes)


def _multi_source(
    name: str, sources: list[Source], notes: dict[str, Any], until: str = "stage3"
) -> tuple[dict[str, Any], dict[str, Panel]]:
    """A released multi-source suite (each benchmark built on its own panel, with the placement
    calibration) and benchmark → panel."""
    manifest = build_multi_source_suite(
        name,
        sources,
        PipelineParams(until=until),
        annotations=notes,
        calibrate=lambda panel, params: calibration_entry(panel, params, seed=params.seed),
    )
    return manifest, {s.benchmark: s.panel for s in sources}


# released text, part of the flagship's version: it keeps the spelling it was released with
# (`keys build`, now `keys lmms-eval`; the old spelling still runs, with a note, for one release)
NO_LMMS_EVAL_TASK = {
    "AI2D_TEST": "lmms-eval's ai2d rows carry no id and the AutoJudger panel no item text or image "
    "to key them by content here; `primebench keys build` maps a VLMEvalKit AI2D_TEST TSV to "
    "a local copy of the upstream rows (then `primebench tasks lmms-eval --keys`). Run it in "
    "VLMEvalKit or the vLLM runner (items from the VLMEvalKit TSV)",
}
"""Benchmarks of the flagship that its lmms-eval folder does not run, and why (placed from the
other harnesses; an lmms-eval run is placed on the rest and says so)."""


def _text_keys(panel: Panel, benchmark: str, rule: str) -> dict[str, str]:
    """Item → text key of a benchmark lmms-eval keys by content (its source panel holds only the
    items their text tells apart: ``tools/build_embedded.py``, ``TEXT_KEYED``)."""
    from primebench_tasks.data.text_keys import panel_text_keys

    keys, ambiguous = panel_text_keys(panel.items_of(benchmark), rule)
    if ambiguous:
        raise SystemExit(f"{panel.name}: {len(ambiguous)} items share a text key")
    return keys


def primebench_manifest() -> tuple[dict[str, Any], dict[str, Panel]]:
    """The flagship: seven benchmarks, each placed among the largest keyed panel the data holds
    (the cards' ``[[released]]`` tables), the same items in lmms-eval, VLMEvalKit and the vLLM
    runner."""
    panels = {n: Panel.load_default(n) for n, _ in RELEASED_SOURCES}
    sources = []
    text_keys: dict[str, tuple[str, dict[str, str]]] = {}
    notes: dict[str, dict[str, Any]] = {}
    for n, b in RELEASED_SOURCES:
        panel = panels[n]
        row = panel.benchmarks.set_index("benchmark").loc[b]
        up = VERIFIED_UPSTREAM.get(row["lmms_eval_task"])
        if up is not None and up.text_key is not None:
            text_keys[b] = (up.text_key, _text_keys(panel, b, up.text_key))
        sources.append(Source(panel, b))
        note: dict[str, Any] = {
            "vlmeval": {
                "dataset": row["vlmeval_dataset"],
                "key": "index"
                if b in VLMEVAL_INDEXED
                else "its id column (pid or id, found in the TSV)",
                "reference_runs": VLMEVAL_REFERENCE.get(b, VLMEVAL_RECORDS),
            },
        }
        if up is None:
            note["upstream"] = None
            if b in NO_LMMS_EVAL_TASK:
                note["no_lmms_eval_task"] = NO_LMMS_EVAL_TASK[b]
            else:
                note["local_task"] = (
                    "item text, options, answers and images are embedded; lmms-eval's "
                    "mathvision_testmini reads no row key that could be checked here"
                )
        else:
            kind = (
                "task keyed by content"
                if up.text_key
                else "task"
                if up.variant is None and up.subtask_pattern is None
                else f"variant of group {up.task}"
                if up.variant
                else f"one task per subtask of group {up.task}"
            )
            note["upstream"] = {
                "task": up.variant or up.task,
                "key": up.key,
                "kind": kind,
                "evidence": up.evidence,
            }
        notes[b] = note
    # six categories from different model sets: Stage 3 has nothing to compare them on
    manifest, by_bench = _multi_source("primebench", sources, notes, until="stage2")
    for c in manifest["categories"].values():
        for b, e in c["benchmarks"].items():
            if b in text_keys:
                rule, keys = text_keys[b]
                e["upstream"]["text_keys"] = {
                    "rule": rule,
                    "keys": {i: keys[i] for i in e["item_ids"]},
                }
    return SuiteManifest.from_document(versioned(manifest)), by_bench


VLMEVAL_REFERENCE = {
    "MathVista_MINI": "M3IRT's own runs (not scored by VLMEvalKit's rules)",
    "MATH-Vision_MINI": "the MATH-V authors' runs (not scored by VLMEvalKit's rules)",
}
"""How each flagship benchmark's reference runs were scored (the placement's leaderboard standing
is given only where they are VLMEvalKit's records, as the leaderboard's are)."""
VLMEVAL_INDEXED = {"AI2D_TEST", "BLINK", "OCRBench", "RealWorldQA"}
"""Flagship benchmarks whose item ids are VLMEvalKit's own ``index`` (the others are the upstream
ids — MathVista's ``pid``, MATH-Vision's and MMMU's ``id`` — found in the user's TSV)."""


WIDE = "primebench_wide"
"""The widest released suite that runs in lmms-eval (#72): the flagship plus the cards'
design-only benchmarks."""


PREVIOUS = "previous"
"""``task_configs/suites/previous/<name>-<version>.json``: every earlier released version, kept so
that runs made with it can still be placed (``primebench place`` finds a manifest by version)."""


def _release(manifest: dict[str, Any], root: Path) -> Path:
    """Write ``suites/<name>.json``; a committed manifest of another version moves to
    ``suites/previous/`` first."""
    path = root / "suites" / f"{manifest['name']}.json"
    if path.exists():
        old = read_manifest(path)
        if old["version"] != manifest["version"]:
            keep = root / "suites" / PREVIOUS / f"{old['name']}-{old['version']}.json"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_bytes(path.read_bytes())
    write_manifest(manifest, path)
    return path


SHARED_DATA = "_data"
"""``task_configs/lmms_eval/_data/``: the local tasks' data files, one content-named copy read by
every released suite that has those rows (no generated file is committed twice)."""


def _tasks(manifest: dict[str, Any], panels: Any, root: Path, written: set[Path]) -> None:
    """The released suite's lmms-eval folder: it points at the committed manifest instead of
    holding a copy, and its local data files go to the shared ``_data`` folder."""
    lmms = root / "lmms_eval"
    paths = generate_tasks(
        manifest,
        panels,
        lmms / manifest["name"],
        released=root / "suites" / f"{manifest['name']}.json",
        shared_data=lmms / SHARED_DATA,
    )
    written.update(p.resolve() for p in paths)


def build(root: Path) -> list[str]:
    out = []
    written: set[Path] = set()
    manifest, by_bench = primebench_manifest()
    _release(manifest, root)
    _tasks(manifest, by_bench, root, written)
    out.append(f"primebench: {manifest['n_items']} items, version {manifest['version']}")
    wide = manifest.with_design_only(
        [design_only_document(c, DESIGN_ONLY_ITEMS) for c in design_only_cards(WIDE)], WIDE
    )
    _release(wide, root)
    _tasks(wide, by_bench, root, written)
    out.append(
        f"{WIDE}: {len(wide.benchmarks) + len(wide.design_only)} benchmarks, "
        f"{wide['n_items']} listed items + {len(wide.design_only)} × {DESIGN_ONLY_ITEMS} drawn, "
        f"version {wide['version']}"
    )
    vm, _ = vlmeval_manifest()
    _release(vm, root)
    out.append(f"primebench_vlmeval: {vm['n_items']} items, version {vm['version']}")
    rm = resampled_manifest()
    _release(rm, root)
    out.append(f"primebench_resampled: {rm['n_items']} items, version {rm['version']}")
    for name, (default, until) in SINGLE.items():
        panel = Panel.load_default(default)
        params = PipelineParams(until=until)
        m = run_pipeline(panel, params).manifest(panel, name, calibration_entry(panel, params))
        _release(m, root)
        _tasks(m, panel, root, written)
        out.append(f"{name}: {m['n_items']} items, version {m['version']}")
    for stale in sorted((root / "lmms_eval" / SHARED_DATA).glob("*")):
        if stale.resolve() not in written:  # rows no released suite reads any more
            stale.unlink()
    return out


def coverage_table(manifest: dict[str, Any]) -> str:
    """The table (docs/harnesses.md) of the released ``primebench`` suite (generated, checked by a test)."""
    from primebench_tasks.data.model_dates import newest_release

    lines = [
        "| benchmark | category | source panel (models, newest dated) | suite items | "
        "lmms-eval task and vLLM runner | row key | VLMEvalKit |",
        "|---|---|---|---|---|---|---|",
    ]
    for cat, c in manifest["categories"].items():
        for b, e in c["benchmarks"].items():
            up = e.get("upstream")
            if e.get("no_lmms_eval_task"):
                task, key = "— (not run: no verified row key; the manifest says why)", "—"
            elif up:
                task = f"`{up['task']}` (upstream {up['kind']})"
                key = (
                    f"text ({up['text_keys']['rule']})" if up.get("text_keys") else f"`{up['key']}`"
                )
            else:
                task = f"local task (embedded items and images; `{e['lmms_eval_task']}` not used)"
                key = "`id` (embedded)"
            newest, _ = newest_release(Panel.load_default(e["source"]["panel"]))
            vlm = e.get("vlmeval") or {}
            lines.append(
                f"| {b} | {cat} | {e['source']['panel']} ({len(e['source']['models'])}, "
                f"{newest or 'undated'}) | {len(e['item_ids'])} | {task} | {key} | "
                f"`{vlm.get('dataset', '—')}` by {vlm.get('key', '—')} |"
            )
    return "\n".join(lines) + "\n"


def wide_table(manifest: SuiteManifest) -> str:
    """The table (docs/harnesses.md) of the released wide suite's design-only benchmarks: what
    each card says (metric, strata, key), the size and its interval, where its ranks come from
    and whether its estimate has model assistance (generated, checked by a test)."""
    from primebench_tasks.place.standing import LEADERBOARD, LEADERBOARD_COLUMNS
    from primebench_tasks.suite.content_design import interval_width

    lines = [
        "| benchmark | category | metric | lmms-eval task | strata | content key | items "
        "(90 % interval) | ranks | model assistance |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in manifest.design_only:
        d = e.design
        strata = f"`{d.strata_field}`" if d.strata_field else "one stratum"
        if d.view is None:
            key = ", ".join(d.key_fields) + (
                f" + image hash of `{d.image_field}`" if d.image_field else ""
            )
        else:  # the cross-harness view's fields; the image ranks one text's rows, not keys (#81)
            from primebench_tasks.data.design_views import design_view

            by = design_view(d.view).strata_column
            strata = f"`{by}`" if d.strata_field and by else "one stratum"
            key = (
                f"view `{d.view}`: "
                + ", ".join(d.key_fields)
                + (f"; one text's rows ranked by `{d.image_field}`" if d.image_field else "")
            )
        column = LEADERBOARD_COLUMNS.get(e.vlmeval_dataset or "")
        ranks = (
            f"leaderboard `{LEADERBOARD}` (`{column}`): all and its year's models"
            if column
            else "none (no reference runs; not on the leaderboard)"
        )
        lines.append(
            f"| {e.name} | {e.category} | {e.metric} | `{e.lmms_eval_task}` | "
            f"{strata} | {key} | "
            f"{d.n} (±{interval_width(d.n) / 2:.3f} at most) | {ranks} | none: the design alone |"
        )
    return "\n".join(lines) + "\n"


def _differences(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b)
    diff = [f"{a / n}" for n in cmp.left_only + cmp.right_only + cmp.diff_files]
    for sub in cmp.common_dirs:
        diff += _differences(a / sub, b / sub)
    return diff


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with a rebuild, write nothing")
    ap.add_argument(
        "--table", action="store_true", help="print the coverage table of docs/harnesses.md"
    )
    ap.add_argument(
        "--wide-table",
        action="store_true",
        help="print the design-only table of docs/harnesses.md",
    )
    args = ap.parse_args()
    if args.wide_table:
        print(wide_table(SuiteManifest.read(Path("task_configs/suites") / f"{WIDE}.json")), end="")
        return
    if args.table:
        print(coverage_table(primebench_manifest()[0]), end="")
        return
    committed = Path("task_configs")
    if not args.check:
        for line in build(committed):
            print(line)
        return
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        diff = [
            d
            for d in _differences(committed, Path(tmp))
            if "__pycache__" not in d and Path(d) != committed / "suites" / PREVIOUS
        ]
    if diff:
        print("released suites differ from a rebuild:\n  " + "\n  ".join(diff))
        sys.exit(1)
    print("released suites match a rebuild")


if __name__ == "__main__":
    main()
