"""``primebench`` sub-commands of the lmms-eval adapter: `tasks lmms-eval`, `path lmms-eval`, `ingest lmms-eval`, `ingest lmms-eval-logs`, `adaptive lmms-eval`, `keys lmms-eval` (a ``primebench.commands`` plugin)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.cli import load_panel, parse_pairs
from primebench_tasks.errors import InputError, PrimeBenchError

if TYPE_CHECKING:
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.suite.manifest import SuiteManifest


def sized_suite_line(manifest: SuiteManifest, n: int) -> str:
    """What ``tasks lmms-eval --design-items N`` says of the suite it sized: the design's widest
    90 % interval at ``n`` items, or — past any dataset's size — that it is a census."""
    from primebench_tasks.suite.content_design import interval_width

    half = interval_width(n) / 2
    return (
        f"suite {manifest.name} ({manifest.version}): its {len(manifest.design_only)} "
        f"design-only benchmarks draw {n} items each; "
        + (
            f"the design's 90 % interval is at most ±{half:.3f} at that size (a score near one "
            "half; narrower toward 0 or 1)"
            if half >= 0.0005
            else "as many as a dataset of that size holds: a census of each dataset of fewer "
            "items (every item asked, its score exact, no interval)"
        )
    )


def refuse_shadowing(manifest: SuiteManifest) -> None:
    """Refuse tasks of a suite that is not a released one under a released suite's task name: on
    ``--include_path`` they would run as the released suite (lmms-eval ran a user's 100 items as
    ``primebench``). A released suite (any of its versions) keeps its name."""
    from harness_adapters.harnesses.lmms_eval.taskgen import slug, suite_task_name
    from harness_adapters.suites.released import find_manifest
    from primebench_tasks.suite.manifest import RELEASED_SUITE_NAMES

    task = suite_task_name(manifest)
    if task not in {slug(n) for n in RELEASED_SUITE_NAMES}:
        return
    try:
        released = find_manifest(manifest.version)
    except InputError:
        released = None
    if released is None or released.name != manifest.name:
        raise InputError(
            f"suite {manifest.name!r} ({manifest.version}) is not the released {task!r}, yet its "
            f"lmms-eval tasks would take that name and shadow it under --include_path; give it "
            f"a name of its own: --name {manifest.name}_mine (or build it with --name)",
            field="name",
        )


def cmd_tasks_lmms(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.taskgen import (
        MANIFEST_FILE,
        generate_tasks,
        suite_task_name,
    )
    from harness_adapters.suites.released import resolve_suite

    keys = parse_pairs(args.upstream_key, "--upstream-key", "TASK=FIELD")
    datasets = parse_pairs(args.dataset, "--dataset", "TASK=DIR")
    manifest = resolve_suite(args.manifest)  # a file, or a released suite by name
    if args.name:
        manifest = manifest.renamed(args.name)
    refuse_shadowing(manifest)
    if args.design_items is not None:
        manifest = manifest.with_design_items(args.design_items)
        print(sized_suite_line(manifest, args.design_items))
    if manifest.document["params"].get("multi_source") and not (args.panel or args.default):
        from primebench_tasks.pipeline.multi_source import source_panels

        panels: Panel | dict[str, Panel] = source_panels(manifest)
    else:
        panels = load_panel(args)
    written = generate_tasks(
        manifest, panels, args.out, keys, args.upstream_path, datasets or None, args.keys
    )
    print(
        f"wrote {len(written)} files to {args.out}; run: lmms-eval --include_path {args.out} "
        f"--tasks {suite_task_name(manifest)} --log_samples ... and place it with "
        f"primebench place OUT --suite {Path(args.out) / MANIFEST_FILE}"
        + (f" --panel {args.panel}" if args.panel else "")
    )
    return 0


def cmd_lmms_path(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval import task_path

    print(task_path())
    return 0


def cmd_ingest_lmms(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.ingest import read_run
    from primebench_tasks.data.panel import Panel, panel_lock
    from primebench_tasks.pipeline.manifest import read_manifest
    from primebench_tasks.refresh.records import append_records

    version = read_manifest(args.suite)["version"] if args.suite else None
    records = read_run(args.output_dir, args.model, version)
    root = Path(args.panel)
    with panel_lock(root):  # read-modify-write as one step
        panel, rep = append_records(Panel.load(root), records, str(args.output_dir))
        if rep.n_new:
            panel.save(root)
    print("\n".join(rep.lines()))
    return 0


def cmd_ingest_lmms_logs(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.logs_panel import logs_panel
    from primebench_tasks.data.importers import save_imported_panel, saved_panel_text

    panel, report = logs_panel(
        args.logs,
        name=args.name or Path(args.out).name,
        max_unscored=args.max_unscored,
        upstream_paths=list(args.upstream_path),
    )
    done = save_imported_panel(panel, args.out, replace=args.replace)
    print("\n".join(report.lines()))
    print(saved_panel_text(done, args.out, panel))
    return 0


def cmd_keys_build(args: argparse.Namespace) -> int:
    from collections.abc import Mapping
    from typing import Any

    from harness_adapters.lmms_eval_upstream.content_keys import (
        build_keys,
        load_upstream_rows,
        write_keys,
    )

    rows: list[Mapping[str, Any]] = list(load_upstream_rows(args.upstream, args.split))
    doc = build_keys(args.vlmeval_tsv, rows, args.task, args.dataset, str(args.upstream))
    write_keys(doc, args.out)
    print(
        f"wrote {args.out}: {doc['n_vlmeval_rows']} VLMEvalKit rows mapped 1:1 onto "
        f"{doc['n_upstream_rows']} upstream rows of {args.task}; generate tasks with "
        f"primebench tasks lmms-eval ... --keys {args.out}"
    )
    return 0


def cmd_adaptive_lmms(args: argparse.Namespace) -> int:
    from harness_adapters.harnesses.lmms_eval.adaptive import run_adaptive_lmms
    from harness_adapters.run.options import adaptive_settings, print_adaptive
    from harness_adapters.run.report import reference_panels
    from harness_adapters.suites.released import resolve_suite

    suite = resolve_suite(args.suite)
    given = load_panel(args) if (args.panel or args.default) else None
    settings = adaptive_settings(args)
    doc = run_adaptive_lmms(
        args.model,
        args.model_args,
        suite,
        reference_panels(suite, given),
        args.out,
        settings,
        name=args.name,
        gen_kwargs=args.gen_kwargs,
        datasets=parse_pairs(args.dataset, "--dataset", "TASK=DIR"),
        progress=lambda m: print(f"[primebench] {m}", file=sys.stderr, flush=True),
    )
    print_adaptive(doc, Path(args.out))
    return 0


def cmd_pin_lmms(args: argparse.Namespace) -> int:
    """``primebench pin lmms-eval OUT``: the suite of an lmms-eval run with its design-only
    benchmarks pinned to the pools the run drew from (N_h and fingerprint, from the logs)."""
    from harness_adapters.harnesses.lmms_eval.ingest import logged_tasks, read_run
    from harness_adapters.suites.released import find_manifest
    from primebench_tasks.data.io import atomic_write_text
    from primebench_tasks.place.design_only import design_answers
    from primebench_tasks.suite.content_design import PinnedPool

    out = Path(args.output_dir)
    versions = {
        str(meta["primebench_suite"])
        for *_, meta, _s in logged_tasks(out, lambda m: "primebench_suite" in m)
    }
    if len(versions) != 1:
        raise PrimeBenchError(
            f"{out} holds tasks of {len(versions)} suite versions ({sorted(versions)}); pin "
            "from one run folder per suite"
        )
    version = versions.pop()
    manifest = find_manifest(version, args.suite)
    drawn = design_answers(read_run(out, suite_version=version), manifest)
    if not drawn:
        raise PrimeBenchError(
            f"the run drew no design-only benchmark of suite {manifest.name!r}: nothing to pin"
        )
    pools = {
        b: PinnedPool({h: N for h, (N, _) in a.strata.items()}, a.pool) for b, a in drawn.items()
    }
    pinned = manifest.with_pinned_pools(pools, args.name)
    atomic_write_text(Path(args.out), pinned.to_json())
    for b, pool in pools.items():
        print(f"{b}: {pool.N} items in {len(pool.strata)} strata, pool {pool.fingerprint}")
    left = [e.name for e in manifest.design_only if e.name not in pools]
    if left:
        print(f"not pinned (the run did not draw them): {', '.join(left)}")
    print(f"wrote {args.out}: suite {pinned.name} ({pinned.version})")
    return 0
