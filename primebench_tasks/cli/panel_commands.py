"""``primebench panel list|info|import``, ``simulate`` and ``embed``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from primebench_tasks.cli.leaderboard_commands import add_import_leaderboard
from primebench_tasks.cli.options import REPLACE_HELP, name_text, score_range
from primebench_tasks.cli.panel_files import (
    IMPORT_PARSER,
    MODELS_HELP,
    SCORES_HELP,
    add_panel_export,
)
from primebench_tasks.cli.plugin import load_panel, say
from primebench_tasks.data.defaults import default_kind, default_names, embedded_description
from primebench_tasks.errors import InputError

if TYPE_CHECKING:  # the numerical stack is imported by the commands, not by --help
    from primebench_tasks.data.panel import Panel


# ---------------------------------------------------------------- panel
def cmd_panel_list(args: argparse.Namespace) -> int:
    from primebench_tasks.data.model_dates import newest_release
    from primebench_tasks.data.panel import Panel

    for name in default_names():
        kind = default_kind(name)
        when = ""
        if kind == "panel":
            p = Panel.load_default(name)
            newest, dated = newest_release(p)
            when = (
                f"  [{len(p.model_names)} models; newest released {newest}, {dated} dated]"
                if newest
                else f"  [{len(p.model_names)} models; none dated]"
            )
        print(f"{name:20s} {kind:12s} {embedded_description(name)}{when}")
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
            score_range=args.score_range,
            existing=existing,
            name=args.name or (existing.name if existing else out.name),
        )
        panel.save(out)
    for line in report.lines():
        print(line)
    print(f"{'appended to' if existing else 'wrote'} {out}: {panel}")
    return 0


def cmd_panel_import_helm(args: argparse.Namespace) -> int:
    from primebench_tasks.data.cards import benchmark_cards
    from primebench_tasks.data.helm import helm_panel, reference_items
    from primebench_tasks.data.importers import save_imported_panel, saved_panel_text

    rule, key_panel = args.key_rule, args.key_panel
    card = next((c for c in benchmark_cards() if args.benchmark in c.names), None)
    if rule is None and card is not None and card.lmms_eval is not None:
        rule = card.lmms_eval.text_key
    if rule is not None and key_panel is None and card is not None and card.embedded is not None:
        key_panel = card.embedded.panel
    keyed_by = None
    if rule is not None:
        if key_panel is None:
            raise InputError(
                f"--key-rule {rule}: give --key-panel (a panel whose items of "
                f"{args.benchmark} carry their text)",
                field="--key-panel",
            )
        keyed_by = reference_items(key_panel, args.benchmark)
    panel, report = helm_panel(
        args.runs,
        args.scenario,
        args.benchmark,
        name=args.name or Path(args.out).name,
        metric=args.metric,
        rule=rule,
        keyed_by=keyed_by,
        category=args.category,
    )
    for line in report.lines():
        print(line)
    done = save_imported_panel(panel, args.out, replace=args.replace)
    how = f"items matched by text ({rule}, panel {key_panel})" if rule else "HELM instance ids"
    print(f"{saved_panel_text(done, args.out, panel)}; {how}")
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    from primebench_tasks.data.importers import save_imported_panel, saved_panel_text
    from primebench_tasks.data.simulate import simulate_panel

    t = time.time()
    panel = simulate_panel(
        scale=args.scale, n_models=args.models, seed=args.seed, missing=args.missing, progress=say
    )
    say(f"simulated in {time.time() - t:.1f}s; writing {args.out}")
    done = save_imported_panel(panel, args.out, replace=args.replace)
    print(saved_panel_text(done, args.out, panel))
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
    _, rep = embed_panel(panel, root, encoder, args.space, batch=args.batch, progress=say)
    print("\n".join(rep.lines()))
    return 0


def add_panel_commands(sub: argparse._SubParsersAction) -> None:
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
    add_import_leaderboard(panel)
    p = panel.add_parser("import", **IMPORT_PARSER)
    p.add_argument("--scores", required=True, help=SCORES_HELP)
    p.add_argument("--benchmark", required=True, type=name_text)
    p.add_argument("--category")
    p.add_argument("--orientation", choices=["items-x-models", "models-x-items"])
    p.add_argument("--items", help="item metadata JSON/JSONL joined by id")
    p.add_argument("--models", help=MODELS_HELP)
    p.add_argument("--image-dir", help="where to look up images by file name")
    p.add_argument(
        "--restrict-to-items",
        action="store_true",
        help="import only the items of --items (the others are counted)",
    )
    p.add_argument(
        "--score-range", type=score_range, help="LO,HI metric range (default: the catalogue's)"
    )
    p.add_argument("--name")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_panel_import)
    add_panel_export(panel)

    p = panel.add_parser(
        "import-helm",
        help="HELM/VHELM per-instance outputs (run folders) into a panel",
        description="Every HELM run of --scenario under RUNS (folders with run_spec.json, "
        "instances.json, per_instance_stats.json) as rows of --benchmark, models named as HELM "
        "names them; items matched to a reference panel's by their text where the benchmark "
        "has a text-key rule (RealWorldQA, OCRBench: its card), else keyed by HELM's instance id.",
    )
    p.add_argument("runs", help="HELM's benchmark_output/runs/<suite> (or any folder above runs)")
    p.add_argument("--scenario", required=True, help="HELM scenario name (run name before ':')")
    p.add_argument("--benchmark", required=True, type=name_text)
    p.add_argument("--category", help="for a benchmark the catalogue does not know")
    p.add_argument("--metric", default="exact_match", help="per-instance stat to import")
    p.add_argument(
        "--key-rule",
        choices=["ocrbench", "mcq_inline"],
        help="match instances to --key-panel's items by this text rule (default: the "
        "benchmark card's, if any)",
    )
    p.add_argument("--key-panel", help="panel folder or embedded name whose items carry the text")
    p.add_argument("--name")
    p.add_argument("--out", required=True)
    p.add_argument("--replace", action="store_true", help=REPLACE_HELP)
    p.set_defaults(func=cmd_panel_import_helm)

    p = sub.add_parser("simulate", help="write a paper-scale synthetic panel")
    p.add_argument("--scale", type=float, default=0.01, help="1.0 = 386,324 items")
    p.add_argument("--models", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--missing", type=float, default=0.02)
    p.add_argument("--out", required=True)
    p.add_argument("--replace", action="store_true", help=REPLACE_HELP)
    p.set_defaults(func=cmd_simulate)

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
