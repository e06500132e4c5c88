"""The ``primebench`` command."""

from __future__ import annotations

import argparse
import errno
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primebench_tasks.data.defaults import EMBEDDED_DESCRIPTIONS, default_kind, default_names
from primebench_tasks.data.io import atomic_write_text
from primebench_tasks.errors import PrimeBenchError, shown
from primebench_tasks.evaluate.defaults import RETENTIONS

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    from primebench_tasks.data.panel import Panel


def _number(
    kind: type, lo: float | None = None, hi: float | None = None, lo_open: bool = False
) -> Callable[[str], Any]:
    """An argparse type: a finite ``kind`` within [lo, hi] (``lo_open``: (lo, hi])."""

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        below = lo is not None and (v <= lo if lo_open else v < lo)
        if below or (hi is not None and v > hi):
            low = "" if lo is None else f"{'>' if lo_open else '>='} {lo}"
            high = "" if hi is None else f"<= {hi}"
            raise argparse.ArgumentTypeError(
                f"{v} is out of range (must be {' and '.join(x for x in (low, high) if x)})"
            )
        return v

    return parse


POSITIVE_OPTIONS = frozenset(
    {
        "scale", "models", "splits", "n", "budget", "batch", "threads", "random_suites", "k",
        "audit_items", "n_boot", "waves", "replicas", "concurrency", "tp", "max_model_len",
        "max_lora_rank", "max_loras", "max_num_seqs", "batch_size", "max_new_tokens",
        "tensor_parallel_size", "min_blind_models", "judge_timeout", "timeout",
        "cpus_per_replica",
    }
)  # fmt: skip
"""Numeric options (by dest) that must be > 0; every other int/float option must be ≥ 0."""
UPPER_BOUNDS = {
    "max_unanswered": 1.0,
    "missing": 0.99,
    "gpu_memory_utilization": 1.0,
    "max_drop": 1.0,
    "min_gain": 1.0,
    "min_percentile": 100.0,
    "start": 1.0,
}
"""Numeric options (by dest) with an upper bound."""


def range_check_numeric_options(parser: argparse.ArgumentParser) -> None:
    """Give every plain ``int``/``float`` option of ``parser`` and its sub-commands (plugins'
    included) a range-checked type: finite, ≥ 0 (> 0 for :data:`POSITIVE_OPTIONS`), ≤ its
    :data:`UPPER_BOUNDS`. A new command's options are covered when it is added
    (``tests/hostile/test_options.py`` walks the parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                range_check_numeric_options(sub)
        elif action.type in (int, float):
            kind = action.type
            action.type = _number(
                kind,
                0,
                UPPER_BOUNDS.get(action.dest),
                lo_open=action.dest in POSITIVE_OPTIONS or action.dest == "start",
            )
            action.type.__name__ = kind.__name__


def _say(msg: str) -> None:
    print(f"[primebench] {msg}", file=sys.stderr, flush=True)


def load_panel(args: argparse.Namespace) -> Panel:
    """The panel named by ``--default`` or ``--panel`` (also for plugin commands)."""
    from primebench_tasks.data.panel import Panel

    if getattr(args, "default", None) and getattr(args, "panel", None):
        raise PrimeBenchError("give --panel DIR or --default NAME, not both")
    if getattr(args, "default", None):
        if default_kind(args.default) != "panel":
            raise PrimeBenchError(f"{args.default!r} is a leaderboard, not an item-level panel")
        return Panel.load_default(args.default)
    if not getattr(args, "panel", None):
        raise PrimeBenchError(
            f"give --panel DIR or --default NAME (embedded: {', '.join(default_names())})"
        )
    return Panel.load(args.panel)


def check_out_dir(args: argparse.Namespace) -> Path:
    """``--out`` of a build: a folder that does not exist or is empty, or with ``--overwrite``
    any folder (its outputs are replaced); never a file. Checked before any work."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise PrimeBenchError(f"--out {out}: a file is there, not a folder")
    if out.is_dir() and any(out.iterdir()) and not getattr(args, "overwrite", False):
        raise PrimeBenchError(
            f"--out {out} exists and is not empty; pass --overwrite to replace "
            "its outputs, or choose another folder"
        )
    return out


# ---------------------------------------------------------------- panel
def cmd_panel_list(args: argparse.Namespace) -> int:
    for name in default_names():
        print(f"{name:12s} {default_kind(name):12s} {EMBEDDED_DESCRIPTIONS.get(name, '')}")
    return 0


def panel_info_text(panel: Panel, tau: float = 2 / 3) -> str:
    """What ``primebench panel info`` prints."""
    import numpy as np
    import pandas as pd

    from primebench_tasks.pipeline.stage0_clean import MIN_BLIND_MODELS, blind_mean
    from primebench_tasks.report.tables import markdown_table

    lines = [
        f"panel {panel.name}  (hash {panel.content_hash})",
        f"models: {len(panel.model_names)}   benchmarks: {len(panel.benchmark_names)}   "
        f"categories: {len(panel.categories())}   items: {len(panel.items)}   "
        f"conditions: {', '.join(panel.conditions)}",
    ]
    dated = panel.model_table["release_date"].notna().sum()
    lines.append(
        f"model metadata: {dated} of {len(panel.model_names)} with a release date, "
        f"{panel.model_table['family'].notna().sum()} with a family"
    )
    rows = []
    for b in panel.benchmark_names:
        X = panel.matrix(b)
        beta, qualifies, n_blind = blind_mean(panel, b, MIN_BLIND_MODELS)
        with np.errstate(invalid="ignore"):
            frac = float(np.mean(beta >= tau)) if n_blind else float("nan")
        rows.append(
            {
                "benchmark": b,
                "category": panel.category_of(b),
                "items": X.shape[1],
                "models": int(np.isfinite(X).any(axis=1).sum()),
                "missing_pct": round(100 * float(np.mean(~np.isfinite(X))), 2),
                "mean_score": round(float(np.nanmean(X)), 3),
                "blind_models": n_blind,
                "blind_ge_tau_frac": round(frac, 3) if n_blind else None,
            }
        )
    lines.append("")
    lines.append(markdown_table(pd.DataFrame(rows)).rstrip())
    lines.append("")
    lines.append(
        "categories: " + "; ".join(f"{c} ({', '.join(bs)})" for c, bs in panel.categories().items())
    )
    if panel.embedding_spaces:
        lines.append(f"embedding spaces: {', '.join(panel.embedding_spaces)}")
    return "\n".join(lines)


def cmd_panel_info(args: argparse.Namespace) -> int:
    from primebench_tasks.data.leaderboard import Leaderboard

    if args.default and default_kind(args.default) == "leaderboard":
        lb = Leaderboard.load_default(args.default)
        print(f"leaderboard {lb.name}  (hash {lb.content_hash})")
        print(
            f"models: {len(lb.scores)}   benchmarks: {lb.scores.shape[1]}   categories: "
            f"{len(set(lb.categories.values()))}   release dates: "
            f"{lb.models['release_date'].min()} .. {lb.models['release_date'].max()}"
        )
        print("categories: " + "; ".join(f"{b} -> {c}" for b, c in lb.categories.items()))
        return 0
    if args.path and not args.panel:
        args.panel = args.path
    print(panel_info_text(load_panel(args)))
    return 0


def cmd_panel_import(args: argparse.Namespace) -> int:
    from primebench_tasks.data.importers import import_matrix
    from primebench_tasks.data.panel import Panel, panel_lock

    out = Path(args.out)
    rng = None
    if args.score_range:
        lo, hi = (float(x) for x in args.score_range.split(","))
        rng = (lo, hi)
    with panel_lock(out, create=True):  # read, append, save as one step: appends wait
        existing = Panel.load(out) if (out / "panel.json").exists() else None
        panel, report = import_matrix(
            args.scores,
            args.benchmark,
            category=args.category,
            orientation=args.orientation,
            items=args.items,
            models=args.models,
            image_dir=args.image_dir,
            restrict_to_items=args.restrict_to_items,
            score_range=rng,
            existing=existing,
            name=args.name or (existing.name if existing else out.name),
        )
        panel.save(out)
    for line in report.lines():
        print(line)
    print(f"{'appended to' if existing else 'wrote'} {out}: {panel}")
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    from primebench_tasks.data.simulate import simulate_panel

    t = time.time()
    panel = simulate_panel(
        scale=args.scale, n_models=args.models, seed=args.seed, missing=args.missing, progress=_say
    )
    _say(f"simulated in {time.time() - t:.1f}s; writing {args.out}")
    panel.save(args.out)
    print(f"wrote {args.out}: {panel}")
    return 0


# ---------------------------------------------------------------- build
def cmd_build_primebench(args: argparse.Namespace) -> int:
    from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline
    from primebench_tasks.report.build_report import write_primebench_report
    from primebench_tasks.report.tables import markdown_table

    check_out_dir(args)
    panel = load_panel(args)
    n_cat = len(panel.categories())
    if args.k is not None and args.until == "stage3" and args.k > n_cat:
        raise PrimeBenchError(
            f"--k {args.k}: panel {panel.name!r} has only {n_cat} categories "
            f"(give --k {n_cat} or fewer)"
        )
    k = PipelineParams().k if args.k is None else args.k
    params = PipelineParams(
        selector=args.selector,
        top_share=args.top_share,
        retention=args.retention,
        k=k,
        alpha=args.alpha,
        tau=args.tau,
        floor=args.floor,
        seed=args.seed,
        cells=args.cells,
        min_blind_models=args.min_blind_models,
        cell_space=args.cell_space,
        until=args.until,
    )
    t = time.time()
    res = run_pipeline(panel, params, progress=_say)
    _say(f"pipeline done in {time.time() - t:.1f}s")
    out = Path(args.out)
    calibration = None
    if not args.no_calibration:
        from primebench_tasks.evaluate.calibration import calibration_entry

        t = time.time()
        calibration = calibration_entry(panel, params, seed=args.seed)
        _say(
            f"placement calibration ({sum(map(len, calibration['regimes'].values()))} held-out "
            f"placements, {len(calibration['residuals'])} in random folds) in "
            f"{time.time() - t:.1f}s"
        )
    manifest = res.manifest(panel, args.name, calibration)
    write_primebench_report(out, panel, res, manifest)
    print(markdown_table(res.stage_table))
    print(
        f"suite: {manifest['n_items']} items in {len(manifest['categories'])} categories; "
        f"end-to-end fidelity rho = {res.fidelity:.3f} ({len(panel.model_names)} models)"
    )
    h = manifest["headroom"]
    print(
        f"headroom: for the {len(h['top_models'])} best models the suite is easier than the full "
        "benchmarks by "
        + ", ".join(f"{b} {v['easier_by']:+.3f}" for b, v in h["benchmarks"].items())
        + f"; {h['solved_by_all']:.0%} of its items are solved by all of them; top-decile rho "
        f"{h['top_decile_rho']:.3f} ({h['n_top_decile']} models)"
    )
    print(f"manifest: {out / 'manifest.json'} (version {manifest['version']})")
    return 0


def cmd_build_resampled(args: argparse.Namespace) -> int:
    import numpy as np

    from primebench_tasks.pipeline.manifest import build_manifest, write_manifest
    from primebench_tasks.pipeline.resampled import resampled_suite

    check_out_dir(args)
    panel = load_panel(args)
    res = resampled_suite(
        panel, n=args.n, space=args.space, per_benchmark=args.per_benchmark, seed=args.seed
    )
    selected: dict[str, dict[str, np.ndarray]] = {panel.category_of(b): {} for b in res.selected}
    for b, pos in res.selected.items():
        selected[panel.category_of(b)][b] = pos
    manifest = build_manifest(
        args.name,
        panel,
        selected,
        {
            "selector": "fps",
            "n": args.n,
            "space": args.space,
            "per_benchmark": args.per_benchmark,
            "seed": args.seed,
            "projection_dim": 64,
        },
        [],
        {
            "rho": res.rho,
            "protocol": "same-models: mean on selected items vs -AvgRank (Eq. 1)",
            "n_models": len(panel.model_names),
        },
        aggregate="item_mean",
    )
    out = Path(args.out)
    write_manifest(manifest, out / "manifest.json")
    print(f"ResampledBench: {res.n} items; rho with AvgRank = {res.rho:.3f}")
    print(f"manifest: {out / 'manifest.json'} (version {manifest['version']})")
    return 0


def cmd_build_frontier(args: argparse.Namespace) -> int:
    import numpy as np

    from primebench_tasks.pipeline.frontier import capability_frontier
    from primebench_tasks.pipeline.manifest import build_manifest, write_manifest
    from primebench_tasks.pipeline.stage0_clean import stage0_clean
    from primebench_tasks.report.tables import markdown_table

    check_out_dir(args)
    panel = load_panel(args)
    s0 = stage0_clean(panel)
    fr = capability_frontier(panel, s0.keep, budget=args.budget)
    n_kept = sum(len(pos) for pos in fr.selected.values())
    if n_kept == 0:
        raise PrimeBenchError(
            f"the Capability Frontier kept no item of panel {panel.name!r}: {fr.n_candidates} "
            f"candidate(s), {fr.n_in_band} in the 10-50 % accuracy band; it needs items that "
            "few models solve (App. I.2) — nothing was written"
        )
    selected: dict[str, dict[str, np.ndarray]] = {}
    for b, pos in fr.selected.items():
        selected.setdefault(panel.category_of(b), {})[b] = pos
    manifest = build_manifest(
        args.name,
        panel,
        selected,
        {
            "selector": "frontier",
            "budget": fr.budget,
            "family_max": 0.5,
            "band": [0.10, 0.50],
            "per_step_gain": fr.per_step_gain,
        },
        [
            {"stage": "candidates", "output": fr.n_candidates},
            {"stage": "in band", "output": fr.n_in_band},
        ],
        {"rho": None, "protocol": "descriptive stress set (App. I.2); no ranking target"},
        aggregate="item_mean",
    )
    out = Path(args.out)
    write_manifest(manifest, out / "manifest.json")
    atomic_write_text(
        out / "report.md",
        "# Capability Frontier\n\n"
        f"candidates {fr.n_candidates}, in band {fr.n_in_band}, budget {fr.budget}"
        "\n\n## Model axes\n\n" + markdown_table(fr.axes),
    )
    print(
        f"Frontier: {fr.n_candidates} candidates, {fr.n_in_band} in band, kept {n_kept} "
        f"(budget {fr.budget})"
    )
    print(markdown_table(fr.axes))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from primebench_tasks.data.importers import panel_with_benchmarks
    from primebench_tasks.evaluate.validate import validate

    panel = load_panel(args)
    if args.benchmarks:
        panel = panel_with_benchmarks(panel, args.benchmarks.split(","))
    ret_parse, item_parse = _number(float, 0, 1, lo_open=True), _number(int, 1)
    try:
        budgets = [item_parse(x) for x in (args.budgets or "").split(",") if x.strip()]
        # budgets given → only those budgets, unless retentions are asked for too
        spec = (
            args.retentions
            if args.retentions is not None
            else ("" if budgets else ",".join(map(str, RETENTIONS)))
        )
        rets = [ret_parse(x) for x in spec.split(",") if x.strip()]
    except argparse.ArgumentTypeError as exc:
        raise PrimeBenchError(f"--retentions/--budgets: {exc}") from None
    t = time.time()
    summary = validate(
        panel,
        Path(args.out),
        args.protocol,
        args.selectors,
        rets,
        args.splits,
        args.seed,
        args.estimators.split(","),
        progress=_say,
        floor=args.floor,
        budgets=budgets,
    )
    _say(f"validate done in {time.time() - t:.1f}s")
    mean = summary[summary["estimator"] == "mean"]
    order = list(dict.fromkeys(mean["budget"]))
    table = (
        mean.pivot_table(index="selector", columns="budget", values="mean_rho")
        .reindex(columns=order)
        .round(3)
    )
    items = mean.groupby("budget", sort=False)["n_items"].mean()
    table.columns = [f"{b} ({items[b]:.0f} items)" for b in order]
    print(table.to_string())
    print(f"wrote {args.out}/splits.csv, summary.csv, table.md, rho_vs_retention.png")
    return 0


def cmd_refresh(args: argparse.Namespace) -> int:
    from primebench_tasks.refresh.loop import refresh
    from primebench_tasks.refresh.policy import RefreshPolicy

    panel = load_panel(args)
    res = refresh(
        panel,
        args.records,
        args.suite,
        Path(args.out),
        RefreshPolicy.always()
        if args.force
        else RefreshPolicy(args.max_drop, args.min_percentile, args.min_gain),
        explore=args.explore,
        n_random=args.random_suites,
        progress=_say,
    )
    print(res.report)
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from primebench_tasks.refresh.loop import history
    from primebench_tasks.report.tables import markdown_table

    h = history(Path(args.dir))
    if h.empty:
        raise PrimeBenchError(f"no published suite versions in {args.dir}")
    print(markdown_table(h))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from primebench_tasks.data.leaderboard import Leaderboard
    from primebench_tasks.refresh.replay import replay_leaderboard, replay_panel
    from primebench_tasks.report.tables import markdown_table

    out = Path(args.out)
    if args.default and default_kind(args.default) == "leaderboard":
        table = replay_leaderboard(
            Leaderboard.load_default(args.default), k=args.k, start=args.start, waves=args.waves
        )
        head = f"frozen benchmarks: {', '.join(table.attrs['frozen'])}"
    else:
        table = replay_panel(load_panel(args), start=args.start, waves=args.waves, progress=_say)
        head = "frozen: the PRIMEBench suite built on the oldest models"
    atomic_write_text(out / "replay.csv", table.to_csv(index=False))
    md = f"# Replay on {args.default or args.panel}\n\n{head}\n\n" + markdown_table(table)
    atomic_write_text(out / "replay.md", md)
    print(md)
    return 0


def cmd_embed(args: argparse.Namespace) -> int:
    from primebench_tasks.data.panel import panel_lock

    with panel_lock(args.panel):
        return _embed(args)


def _embed(args: argparse.Namespace) -> int:
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.embed.cache import embed_panel, import_vectors

    root = Path(args.panel)
    panel = Panel.load(root)
    if args.encoder.startswith("file:"):
        ids, vecs = import_vectors(args.encoder[5:])
        panel.set_embeddings(args.space, ids, vecs)
        panel.save(root)
        print(f"imported {len(vecs)} {args.space} vectors of dimension {vecs.shape[1]}")
        return 0
    from primebench_tasks.embed.encoders import build_encoder

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    encoder = build_encoder(args.encoder)
    _, rep = embed_panel(panel, root, encoder, args.space, batch=args.batch, progress=_say)
    print("\n".join(rep.lines()))
    return 0


def cmd_prism_aggregate(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from primebench_tasks.errors import InputError
    from primebench_tasks.prism.axes import AXES
    from primebench_tasks.prism.pscore import (
        aggregate,
        dominant_axis,
        effective_weights,
        leave_one_axis_out,
    )
    from primebench_tasks.report.tables import markdown_table

    f = args.axis_means
    try:
        df = pd.read_csv(f)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"cannot read axis means: {exc}", file=f) from None
    missing = [c for c in ("model", *AXES) if c not in df.columns]
    if missing:
        raise InputError("required column is missing", file=f, row=1, field=missing[0])
    S = df.set_index("model")[list(AXES)]
    for ax in AXES:
        v = pd.to_numeric(S[ax], errors="coerce")
        bad = v.isna() | (v <= 0) | (v > 1)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"axis mean {shown(S[ax].iloc[i])} is not in (0, 1]", file=f, row=i + 2, field=ax
            )
        S[ax] = v
    weights = {}
    for part in args.weights.split(",") if args.weights else []:
        k, _, v = part.partition("=")
        if k not in AXES:
            raise InputError(f"unknown axis {k!r} in --weights", field="weights")
        weights[k] = float(v)
    out = Path(args.out)
    ps = aggregate(S, args.aggregator, weights or None)
    table = pd.DataFrame(
        {
            "model": S.index,
            "pscore": ps.round(4).to_numpy(),
            "dominant_axis": dominant_axis(S).to_numpy(),
        }
    )
    atomic_write_text(out / "pscore.csv", table.to_csv(index=False))
    atomic_write_text(
        out / "effective_weights.csv",
        effective_weights(S).round(4).reset_index().to_csv(index=False),
    )
    atomic_write_text(
        out / "loao.csv", leave_one_axis_out(S, args.aggregator).round(4).to_csv(index=False)
    )
    print(markdown_table(table.sort_values("pscore", ascending=False)))
    return 0


def parse_pairs(specs: list[str], option: str, form: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed one is an error naming the option."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name or not value:
            raise PrimeBenchError(f"{option} {spec!r}: expected {form}")
        out[name] = value
    return out


PLUGIN_GROUP = "primebench.commands"
"""Entry-point group of sub-command plugins: ``NAME = "module:add_commands"``, where
``add_commands(tree: CommandTree) -> None`` adds its sub-commands (the harness adapters contribute
``tasks``, ``ingest``, ``place``, ``keys``, ``vlmeval``, ``run``, ``rank-variants``, ``prism
build|run|...`` this way; a third party can add its own)."""


class CommandTree:
    """What a ``primebench.commands`` plugin receives: the top-level sub-parsers (``sub``) and
    shared command groups (``primebench ingest ...``), created once whoever asks first."""

    def __init__(self, sub: argparse._SubParsersAction) -> None:
        self.sub = sub
        self._groups: dict[str, argparse._SubParsersAction] = {}

    def group(self, name: str, help: str) -> argparse._SubParsersAction:  # noqa: A002
        if name not in self._groups:
            self._groups[name] = self.sub.add_parser(name, help=help).add_subparsers(
                dest=f"{name.replace('-', '_')}_command", required=True
            )
        return self._groups[name]


def add_plugin_commands(tree: CommandTree) -> None:
    """Let every installed ``primebench.commands`` plugin add its sub-commands (in name order;
    one that cannot be imported is reported on stderr and left out)."""
    from importlib.metadata import entry_points

    seen: set[str] = set()
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: (e.name, e.value)):
        if ep.name in seen:  # the same plugin seen twice (e.g. an editable and a wheel install)
            continue
        seen.add(ep.name)
        try:
            add = ep.load()
        except ImportError as exc:
            print(f"primebench: plugin {ep.name} ({ep.value}) not loaded: {exc}", file=sys.stderr)
            continue
        add(tree)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="primebench",
        description="PRIMEBench: compact VLM evaluation suites (PRIMEBench, ResampledBench, "
        "PRISM axes) built from per-item results, and the harness adapters that run them "
        "(lmms-eval, VLMEvalKit, vLLM) and place a model among known ones from a few percent "
        "of the items.",
        epilog="examples:\n"
        "  primebench build primebench --default autojudger --out out/autojudger\n"
        "  lmms-eval --model M --tasks primebench --log_samples --output_path out/ && "
        "primebench place out/\n"
        "  primebench run --model DIR --lora a=PATH --suite SUITE.json --out RUN\n"
        "  primebench <command> --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True)

    panel = sub.add_parser("panel", help="inspect and import panels").add_subparsers(
        dest="panel_command", required=True
    )
    p = panel.add_parser("list", help="list the embedded data sets")
    p.set_defaults(func=cmd_panel_list)
    p = panel.add_parser("info", help="summarise a panel or leaderboard")
    p.add_argument("path", nargs="?", help="panel directory")
    p.add_argument("--panel")
    p.add_argument("--default", choices=default_names())
    p.set_defaults(func=cmd_panel_info)
    p = panel.add_parser("import", help="import a wide response matrix into a panel directory")
    p.add_argument("--scores", required=True)
    p.add_argument("--benchmark", required=True)
    p.add_argument("--category")
    p.add_argument("--orientation", choices=["items-x-models", "models-x-items"])
    p.add_argument("--items", help="item metadata JSON/JSONL joined by id")
    p.add_argument("--models", help="model metadata CSV")
    p.add_argument("--image-dir", help="where to look up images by file name")
    p.add_argument(
        "--restrict-to-items",
        action="store_true",
        help="import only the items of --items (the others are counted)",
    )
    p.add_argument("--score-range", help="LO,HI metric range (default: the catalogue's)")
    p.add_argument("--name")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_panel_import)

    p = sub.add_parser("simulate", help="write a paper-scale synthetic panel")
    p.add_argument("--scale", type=float, default=0.01, help="1.0 = 386,324 items")
    p.add_argument("--models", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--missing", type=float, default=0.02)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_simulate)

    build = sub.add_parser("build", help="build a compact suite").add_subparsers(
        dest="build_command", required=True
    )

    def source(q: argparse.ArgumentParser) -> None:
        q.add_argument("--panel")
        q.add_argument(
            "--default", choices=[n for n in default_names() if default_kind(n) == "panel"]
        )
        q.add_argument("--seed", type=int, default=0)
        q.add_argument("--out", required=True, help="output folder (new or empty)")
        q.add_argument(
            "--overwrite",
            action="store_true",
            help="replace the outputs in an existing --out folder",
        )

    from primebench_tasks.pipeline.params import PipelineParams

    p = build.add_parser("primebench", help="the four-stage PRIMEBench pipeline")
    source(p)
    d = PipelineParams()
    p.add_argument(
        "--retention",
        type=_number(float, 0, 1, lo_open=True),
        default=d.retention,
        help=f"share of each category pool kept by Stage 2, in (0, 1] (default {d.retention})",
    )
    p.add_argument(
        "--k",
        type=_number(int, 1),
        default=None,
        help=f"categories kept by Stage 3, 1 .. the panel's categories (default "
        f"{d.k}, or all categories when the panel has fewer)",
    )
    p.add_argument(
        "--alpha",
        type=_number(float, 0, 1),
        default=d.alpha,
        help=f"VAW weight α in [0, 1] (default {d.alpha})",
    )
    p.add_argument(
        "--tau",
        type=_number(float, 0, 1),
        default=d.tau,
        help=f"Stage 0 blind-solvable threshold τ in [0, 1] (default {d.tau:.4f})",
    )
    p.add_argument(
        "--floor",
        type=_number(int, 0),
        default=d.floor,
        help=f"minimum items per category pool, >= 0 (default {d.floor})",
    )
    p.add_argument(
        "--min-blind-models",
        type=int,
        default=3,
        help="blind filter only where at least this many models ran without images",
    )
    p.add_argument(
        "--selector",
        default=d.selector,
        help=f"Stage 2 selector (default {d.selector}): vaw (the paper's; uses "
        "--alpha and --cells) or any name of `primebench validate --selectors`",
    )
    p.add_argument(
        "--top-share",
        type=_number(float, 0, 0.9),
        default=d.top_share,
        help=f"share of each benchmark's budget reserved for the items that separate the "
        f"strongest {round(100 * d.top_fraction)} %% of the models (headroom; 0 = the papers' selection; "
        f"default {d.top_share})",
    )
    p.add_argument(
        "--cells",
        choices=["embedding", "random", "none", "dpp", "responses"],
        default="embedding",
        help="cells of --selector vaw",
    )
    p.add_argument("--cell-space", default="auto", help="auto|vl|text|none")
    p.add_argument("--until", choices=["stage0", "stage1", "stage2", "stage3"], default="stage3")
    p.add_argument("--name", default="primebench")
    p.add_argument(
        "--no-calibration",
        action="store_true",
        help="skip the placement calibration (10 suites rebuilt without a tenth of "
        "the models, stored in the manifest for honest placement intervals)",
    )
    p.set_defaults(func=cmd_build_primebench)
    p = build.add_parser("resampled", help="ResampledBench (farthest point sampling)")
    source(p)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--space", default="text")
    p.add_argument("--per-benchmark", action="store_true")
    p.add_argument("--name", default="resampledbench")
    p.set_defaults(func=cmd_build_resampled)
    p = build.add_parser("frontier", help="the Capability Frontier stress set")
    source(p)
    p.add_argument("--budget", type=int)
    p.add_argument("--name", default="frontier")
    p.set_defaults(func=cmd_build_frontier)
    p = sub.add_parser("validate", help="selector fidelity on held-out models")
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])
    p.add_argument("--benchmarks", help="comma list: restrict the panel to these benchmarks")
    p.add_argument("--selectors", default="all")
    p.add_argument("--estimators", default="mean,pirt,gpirt,aipw")
    p.add_argument(
        "--protocol", choices=["heldout", "chrono", "frontier", "e2e", "same"], default="heldout"
    )
    p.add_argument(
        "--retentions",
        default=None,
        help="comma list of retentions in (0, 1] (each with the --floor; default "
        f"{','.join(map(str, RETENTIONS))}; "
        "none when --budgets is given)",
    )
    p.add_argument(
        "--budgets",
        default="",
        help="comma list of budgets in items per category pool, no floor (e.g. 10,25,50,100)",
    )
    p.add_argument(
        "--floor",
        type=_number(int, 0),
        default=100,
        help="minimum items per category pool for the retention budgets",
    )
    p.add_argument("--splits", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("embed", help="item embeddings for cells, δ^VL and FPS (cached, resumable)")
    p.add_argument("--panel", required=True, help="a writable panel directory")
    p.add_argument(
        "--encoder",
        default="minilm",
        help="minilm | hf:PATH | concat:TEXT+IMAGE | file:PATH (.npy + ids, parquet)",
    )
    p.add_argument("--space", choices=["text", "vl"], default="text")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, help="torch.set_num_threads")
    p.set_defaults(func=cmd_embed)

    p = sub.add_parser("refresh", help="append new records, check the frozen suite, refit")
    p.add_argument("--panel")
    p.add_argument("--default", choices=[n for n in default_names() if default_kind(n) == "panel"])
    p.add_argument("--records", nargs="*", default=[], help="CSV/JSONL/parquet records")
    p.add_argument("--suite", help="the published manifest (first refresh of --out)")
    p.add_argument("--out", required=True, help="the suite directory")
    p.add_argument("--max-drop", type=float, default=0.02)
    p.add_argument("--min-percentile", type=float, default=50.0)
    p.add_argument("--min-gain", type=float, default=0.005)
    p.add_argument(
        "--force",
        action="store_true",
        help="refit and publish whatever the drift and the gain (ignores --max-drop, "
        "--min-percentile, --min-gain)",
    )
    p.add_argument(
        "--explore",
        type=int,
        default=0,
        help="random unselected items per benchmark for new models' runs",
    )
    p.add_argument("--random-suites", type=int, default=200)
    p.set_defaults(func=cmd_refresh)

    suites = sub.add_parser("suites", help="published suite versions").add_subparsers(
        dest="suites_command", required=True
    )
    p = suites.add_parser("history", help="list the versions of a suite directory")
    p.add_argument("dir")
    p.set_defaults(func=cmd_history)

    tree = CommandTree(sub)
    prism = tree.group("prism", "PRISM-VLM axes")
    p = prism.add_parser("aggregate", help="re-aggregate a per-axis leaderboard into PScore")
    p.add_argument("--axis-means", required=True, help="CSV: model,q,if,h,mq,sc,c,vis")
    p.add_argument("--weights", help="e.g. sc=0.5,h=2")
    p.add_argument(
        "--aggregator", choices=["harmonic", "arithmetic", "geometric", "min"], default="harmonic"
    )
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_prism_aggregate)

    p = sub.add_parser("replay", help="replay release order on a dated panel or leaderboard")
    p.add_argument("--panel")
    p.add_argument("--default", choices=default_names())
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--start", type=float, default=0.5)
    p.add_argument("--waves", type=int, default=4)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_replay)
    add_plugin_commands(tree)
    range_check_numeric_options(ap)
    from primebench_tasks.cli_help import finish_help

    finish_help(ap)
    return ap


ENVIRONMENT_ERRNOS = frozenset(
    {
        errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOENT,
        errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG, errno.ELOOP,
    }
)  # fmt: skip
"""OSErrors that come from the user's environment (a path, a read-only or full disk), not from
a bug: one line and exit 2, like bad input."""
OUTPUT_OPTIONS = ("out",)


def check_outputs_writable(args: argparse.Namespace) -> None:
    """Before any work: every output folder option must be creatable and writable (the nearest
    existing ancestor a writable folder), so a read-only or missing location fails at once instead
    of after the whole computation."""
    for dest in OUTPUT_OPTIONS:
        value = getattr(args, dest, None)
        if not isinstance(value, str) or not value:
            continue
        path = Path(value).absolute()
        probe = path
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if probe.exists() and not probe.is_dir():  # an output file: its folder must be writable
            probe = probe.parent
        if not os.access(probe, os.W_OK | os.X_OK):
            why = "read-only file system" if _read_only(probe) else "permission denied"
            raise PrimeBenchError(f"--{dest} {value}: cannot write in {probe} ({why})")


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_outputs_writable(args)
        return int(args.func(args))
    except PrimeBenchError as exc:  # bad input: one line; anything else is a bug: a traceback
        print(f"primebench: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the environment (disk full, read-only, a bad path): one line
        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"primebench: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
