"""Help texts shared by many ``primebench`` options, and an example for every command: filled
into the parser after every part (and every plugin) has added its commands, so that each option
has a help line with its default and each command an example (``tests/test_cli.py`` checks)."""

from __future__ import annotations

import argparse

OPTION_HELP = {
    "--panel": "panel directory (from `primebench panel import`)",
    "--default": "an embedded data set instead of --panel (`primebench panel list`)",
    "--seed": "random seed (same inputs and seed give the same bytes)",
    "--out": "output directory",
    "--name": "name written into the outputs",
    "--scores": "wide CSV response matrix (items x models or models x items)",
    "--benchmark": "benchmark name (the catalogue's, or a new one with --category)",
    "--category": "category of a benchmark the catalogue does not know",
    "--orientation": "matrix orientation (default: detected from the header)",
    "--models": "number of simulated models",
    "--missing": "share of records left missing (NaN)",
    "--until": "last stage to run",
    "--n": "items to keep",
    "--space": "embedding space (text or vl)",
    "--per-benchmark": "spread the budget over benchmarks in proportion to their size",
    "--budget": "items of the stress set (default: the frontier's own size)",
    "--selectors": "comma list of selectors, or all (`primebench_tasks.select.registry`)",
    "--estimators": "comma list: mean, weighted, pirt, gpirt, aipw",
    "--protocol": "heldout: random halves; chrono: oldest models build; frontier: the "
    "strongest 15 percent held out (fidelity at the top); e2e: stages 1-3 refit per split; same: "
    "build and score on all models",
    "--splits": "number of seeded random build/held-out splits",
    "--batch": "items per encoder batch (one cache chunk each)",
    "--max-drop": "refit when the frozen suite's rho drops by more than this",
    "--min-percentile": "refit when the suite falls below this percentile of random suites",
    "--min-gain": "publish a refit only if it gains at least this rho",
    "--random-suites": "random suites of the same size for the percentile",
    "dir": "suite directory (from `primebench refresh`)",
    "--aggregator": "how the axes combine into PScore",
    "--seeds": "item-sampling seeds (the union of their samples is built)",
    "--axes": "PRISM axes to include",
    "--max-model-len": "context length (default: the model's own)",
    "--max-num-seqs": "sequences per engine step",
    "--enforce-eager": "no CUDA graphs (slower; less memory)",
    "--gpu-memory-utilization": "share of GPU memory for the engine",
    "--tensor-parallel-size": "GPUs per model copy",
    "--lora": "adapter NAME=PATH, or a glob of adapter folders (repeatable)",
    "--no-base": "do not evaluate the base model itself",
    "--backend": "vllm: an offline engine here; server: a running OpenAI-compatible endpoint",
    "--base-url": "the server's OpenAI-compatible URL (…/v1)",
    "--served-model": "the base model's name on the server",
    "--timeout": "seconds per request",
    "--batch-size": "requests per batch (records are written after each)",
    "--max-lora-rank": "largest adapter rank (default: from the adapters)",
    "--max-loras": "adapters resident at once",
    "--max-new-tokens": "generated tokens per answer",
    "--estimator": "score estimator for the predicted full score",
    "--n-boot": "bootstrap resamples for the intervals",
    "--audit-items": "items per axis re-graded by the audit judge",
    "--k": "benchmarks kept frozen (leaderboards) / categories (panels)",
    "--start": "share of the dated models the suite is frozen on",
    "--waves": "waves of newer models",
    "--manifest": "suite manifest JSON (a build's manifest.json)",
    "output_dir": "lmms-eval --output_path folder",
    "out": "output directory",
    "--adapters": "number of LoRA adapters",
    "--rank": "LoRA rank",
}

EXAMPLES = {
    "panel list": "primebench panel list",
    "panel info": "primebench panel info --default m3irt",
    "panel import": "primebench panel import --scores AI2D_TEST.csv --benchmark AI2D_TEST "
    "--models models.csv --out P",
    "simulate": "primebench simulate --scale 0.05 --out sim",
    "build primebench": "primebench build primebench --default autojudger --out out/autojudger",
    "build resampled": "primebench build resampled --panel P --n 1000 --space text --out R",
    "build frontier": "primebench build frontier --default autojudger --out F",
    "validate": "primebench validate --default m3irt --budgets 10,25,50,100 --splits 20 --out V",
    "embed": "primebench embed --panel P --encoder minilm --space text",
    "refresh": "primebench refresh --panel P --records new.csv --suite S/manifest.json --out SD",
    "suites history": "primebench suites history SD",
    "replay": "primebench replay --default openvlm --out RP",
    "prism aggregate": "primebench prism aggregate --axis-means axes.csv --out PA",
    "prism build": "primebench prism build --suite primebench_mathvision --default mathvision "
    "--out B --judge rules",
    "prism run": "primebench prism run --prism B --model DIR --lora a=PATH --out R",
    "prism tasks": "primebench prism tasks --prism B --out T",
    "prism ingest-lmms-eval": "primebench prism ingest-lmms-eval L --prism B --out R --model M",
    "prism vlmeval-export": "primebench prism vlmeval-export --prism B --lmudata DIR",
    "prism ingest-vlmeval": "primebench prism ingest-vlmeval W --prism B --out R --model M",
    "prism score": "primebench prism score --prism B --runs R --out S --judge rules",
    "tasks lmms-eval": "primebench tasks lmms-eval --manifest S/manifest.json --panel P --out T",
    "lmms-eval-path": "lmms-eval --include_path $(primebench lmms-eval-path) --tasks primebench",
    "ingest lmms-eval": "primebench ingest lmms-eval out/ --panel P",
    "adaptive lmms-eval": "primebench adaptive lmms-eval --model llava_hf --model_args "
    "pretrained=llava-hf/llava-1.5-7b-hf --suite primebench_mathvision --out RUN",
    "ingest vlmeval": "primebench ingest vlmeval outputs --panel P",
    "keys build": "primebench keys build --vlmeval-tsv AI2D_TEST.tsv --upstream DIR --task ai2d "
    "--out keys.json",
    "place": "primebench place out/",
    "run": "primebench run --model DIR --lora 'ckpts/*' --suite primebench_mathvision --out RUN",
    "rank-variants": "primebench rank-variants --base DIR --adapters 'ckpts/*' "
    "--suite primebench_mathvision --out RUN",
    "tiny-model": "primebench tiny-model tiny --adapters 3",
    "vlmeval export": "primebench vlmeval export --suite primebench --source-tsv $LMUData "
    "--lmudata $LMUData",
    "vlmeval run": "primebench vlmeval run -- --data PrimeBench_MMMU_DEV_VAL --model M",
}


def _walk(p: argparse.ArgumentParser, path: list[str]):
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _walk(sp, [*path, name])


def is_group(p: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in p._actions)


def finish_help(ap: argparse.ArgumentParser) -> None:
    """Fill missing option help from :data:`OPTION_HELP`, show every default, and give each
    command its example from :data:`EXAMPLES`."""
    for path, p in _walk(ap, []):
        if not path:
            continue
        for a in p._actions:
            if isinstance(a, argparse._HelpAction | argparse._SubParsersAction):
                continue
            key = a.option_strings[0] if a.option_strings else a.dest
            if not a.help:
                a.help = OPTION_HELP.get(key)
            if (
                a.help
                and a.default not in (None, False, "", argparse.SUPPRESS)
                and "%(default)" not in a.help
                and "default" not in a.help
            ):
                a.help += " (default: %(default)s)"
        example = EXAMPLES.get(" ".join(path))
        if example and not p.epilog:
            p.epilog = f"example:\n  {example}"
            p.formatter_class = argparse.RawDescriptionHelpFormatter


def missing_help(ap: argparse.ArgumentParser) -> list[str]:
    """Options without help and commands without an example (for the test)."""
    out = []
    for path, p in _walk(ap, []):
        if not path:
            continue
        name = " ".join(path)
        if not is_group(p) and not p.epilog:
            out.append(f"{name}: no example")
        for a in p._actions:
            if isinstance(a, argparse._HelpAction | argparse._SubParsersAction):
                continue
            if not a.help:
                out.append(f"{name} {a.option_strings[0] if a.option_strings else a.dest}")
    return out
