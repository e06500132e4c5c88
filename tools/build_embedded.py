"""Rebuild the embedded default data from ../shared/data (run from the repository root).

    python tools/build_embedded.py [--shared ../shared/data] [--only NAME ...]

Each output directory gets the upstream LICENSE and a SOURCE.md. MathVista's item text
(CC BY-SA 4.0) is not vendored: the m3irt panel carries MathVista item ids only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from primebench_tasks.data.cards import BenchmarkCard, benchmark_cards
from primebench_tasks.data.importers import import_matrix
from primebench_tasks.data.leaderboard import Leaderboard
from primebench_tasks.data.panel import Panel

OUT = Path("primebench_tasks/data/embedded")

SOURCES = {
    "autojudger": (
        "autojudger",
        "github.com/IMNearth/AutoJudger at commit adbae655eb90, "
        "`model_performance/` (AI2D_TEST.csv, MMMU_DEV_VAL.csv, "
        "model_information_new.csv). Licence: Apache-2.0 (LICENSE).",
    ),
    "m3irt": (
        "m3irt",
        "github.com/CyberAgentAILab/M3IRT at commit 962f57ed48df, `responses/` "
        "(normal_mathvista.csv, normal_mmmu.csv). `<no_image>` columns are the blind "
        "condition; `<no_question>`/`<no_info>` are kept as extra conditions. MathVista item "
        "text is CC BY-SA 4.0 and is not included. Licence: MIT (LICENSE).",
    ),
    "mathvision": (
        "mathvision",
        "github.com/mathllm/MATH-V at commit a1f5cc3add20: testmini.jsonl, "
        "images_testmini/ and the per-item correctness of 16 model set-ups derived from "
        "the upstream outputs/ (restricted to the 304 testmini items). "
        "Licence: MIT (LICENSE).",
    ),
    "blink": (
        "blink",
        "github.com/zeyofu/BLINK_Benchmark at commit 2d6a779be4aa, "
        "`eval/saved_val_predictions/` and `eval/val_answers.json`: the authors' own "
        "predictions of 19 VLMs on the 1,901 BLINK validation items, scored as the authors "
        'score them (exact option equality; an unparsed "(Z)" is wrong). Item ids are '
        "the dataset's `idx` (e.g. `val_Art_Style_1`). Licence: Apache-2.0 (LICENSE).",
    ),
    "openvlm_records": (
        "openvlm_records",
        "github.com/OfirArviv/adaptive-eval at commit 2c44ed23, "
        "`data/raw/open_vlm_leaderboard/local_2025_03_05/EvalRecords/`: the OpenVLM leaderboard's "
        "published VLMEvalKit evaluation records of BLINK, OCRBench and RealWorldQA in one panel "
        "(the three `openvlm_*` panels' scores: 202 VLMs, 76 of them with all three; VLMEvalKit "
        "model ids and `index` item ids), with a `text` embedding space: the items' text "
        "(question and options) encoded by all-MiniLM-L6-v2 (`primebench embed --encoder "
        "minilm`) and stored as its fixed 64-d random projection "
        "(`primebench_tasks.embed.projection.random_projection`, the projection ResampledBench "
        "applies), so the ResampledBench suite rebuilds bit for bit without the encoder. "
        "Licence: Apache-2.0 (LICENSE; the records are published upstream under Apache-2.0).",
    ),
    "openvlm": (
        "openvlm",
        "github.com/finn1901/VLM-Chart at commit c9d89a53180f, flattened from "
        "src/data/models.json (OpenVLM leaderboard snapshot of 2025-09-17); scores are "
        "percentages scaled to [0, 1]. Licence: MIT (LICENSE).",
    ),
}


def records_source(card: BenchmarkCard, panel: Panel) -> tuple[str, str]:
    """The SOURCE.md entry of a card's records panel (``[embedded]``), counted on the panel."""
    assert card.embedded is not None
    ds = card.catalogue.vlmeval_dataset
    n_items = len(panel.items)
    return (
        "openvlm_records",
        "github.com/OfirArviv/adaptive-eval at commit 2c44ed23, "
        f"`data/raw/open_vlm_leaderboard/local_2025_03_05/EvalRecords/*/*_{ds}.xlsx`: the "
        f"OpenVLM leaderboard's published VLMEvalKit evaluation records of {ds} (March 2025 "
        f"snapshot), imported by `primebench ingest vlmeval-records --datasets {ds} --rule "
        f"builtin` ({card.embedded.rule}; one run per model: the top-level file, else the newest "
        "dated run; models with more than half of their predictions empty or unparseable left "
        f"out): {len(panel.model_names)} VLMs x {n_items:,} items (VLMEvalKit model ids; "
        "`Random-Chance` is the leaderboard's chance baseline), item text, options and answers "
        f"(no images). Item ids: {card.embedded.item_ids}. Licence: Apache-2.0 (LICENSE; the "
        "records are published upstream under Apache-2.0).",
    )


def finish(name: str, shared: Path, source: tuple[str, str] | None = None) -> None:
    folder, text = source or SOURCES[name]
    lic = shared / folder / "LICENSE"
    if folder == "openvlm_records":  # Apache-2.0, as the blink panel's
        shutil.copy(OUT / "blink" / "LICENSE", OUT / name / "LICENSE")
    elif lic.exists():
        shutil.copy(lic, OUT / name / "LICENSE")
    else:  # the shared copy carries no licence file; SOURCES.md names the upstream licence
        (OUT / name / "LICENSE").write_text(
            "MIT License. The upstream repository named in SOURCE.md holds the full licence text "
            "and copyright notice; it was not part of the copy this data was vendored from.\n",
            encoding="utf-8",
        )
    (OUT / name / "SOURCE.md").write_text(f"# {name}\n\nSource: {text}\n", encoding="utf-8")


def build_profiles(shared: Path) -> None:
    """Only the reference runs' response profiles (``response_profiles.csv``) of every embedded
    panel built from VLMEvalKit's published records, read from the records as an import reads
    them; the panels' data are not rewritten."""
    from harness_adapters.harnesses.vlmeval.records import read_records, records_profiles
    from primebench_tasks.data.panel import PROFILES_FILE

    datasets = ["BLINK", "OCRBench", "RealWorldQA"]
    _, items, report = read_records(
        shared / "openvlm_records" / "EvalRecords", datasets, rule="builtin"
    )
    profiles = records_profiles(items, report, datasets)
    for folder in sorted(OUT.iterdir()):
        if not (folder / "panel.json").exists():
            continue
        panel = Panel.load(folder)
        if not str(panel.name).startswith("openvlm_") or panel.name == "openvlm":
            continue
        mine = profiles[profiles["benchmark"].isin(panel.benchmark_names)]
        text = mine.to_csv(index=False, lineterminator="\n", float_format="%.6g")
        (folder / PROFILES_FILE).write_text(text, encoding="utf-8")
        print(f"{panel.name}: {len(mine)} response profiles")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default="../shared/data")
    ap.add_argument("--only", nargs="+", choices=sorted(BUILDERS), help="rebuild only these")
    ap.add_argument(
        "--profiles", action="store_true", help="write only the records panels' response profiles"
    )
    args = ap.parse_args()
    shared = Path(args.shared)
    if args.profiles:
        build_profiles(shared)
        return
    if args.only:
        for name in args.only:
            shutil.rmtree(OUT / name, ignore_errors=True)
            BUILDERS[name](shared)
        return
    if OUT.exists():
        shutil.rmtree(OUT)
    for build in BUILDERS.values():
        build(shared)


def build_autojudger(shared: Path) -> None:
    aj = shared / "autojudger"
    p, _ = import_matrix(
        aj / "AI2D_TEST.csv",
        "AI2D_TEST",
        models=aj / "model_information_new.csv",
        name="autojudger",
    )
    p, _ = import_matrix(
        aj / "MMMU_DEV_VAL.csv", "MMMU_DEV_VAL", models=aj / "model_information_new.csv", existing=p
    )
    p.save(OUT / "autojudger")
    finish("autojudger", shared)


def build_m3irt(shared: Path) -> None:
    m3 = shared / "m3irt"
    # the two upstream files spell the 24 model names differently; join them on canonical names
    names = pd.read_csv(Path(__file__).with_name("m3irt_models.csv"))
    families = names[["model", "family"]]
    with tempfile.TemporaryDirectory() as tmp:
        fam_csv = Path(tmp) / "families.csv"
        families.to_csv(fam_csv, index=False)
        p, _ = import_matrix(
            m3 / "normal_mathvista.csv",
            "MathVista_MINI",
            name="m3irt",
            models=fam_csv,
            model_aliases=dict(zip(names["raw_mathvista"], names["model"], strict=True)),
        )
        p, _ = import_matrix(
            m3 / "normal_mmmu.csv",
            "MMMU_DEV_VAL",
            existing=p,
            models=fam_csv,
            model_aliases=dict(zip(names["raw_mmmu"], names["model"], strict=True)),
        )
    p.save(OUT / "m3irt")
    finish("m3irt", shared)


def build_mathvision(shared: Path) -> None:
    mv = shared / "mathvision"
    images = OUT / "mathvision" / "images"
    images.mkdir(parents=True)
    p, _ = import_matrix(
        mv / "mathvision_test_responses.csv",
        "MATH-Vision_MINI",
        orientation="models-x-items",
        items=mv / "testmini.jsonl",
        image_dir=mv / "images_testmini",
        restrict_to_items=True,
        name="mathvision",
    )
    for ref in p.items["image_ref"].dropna():
        shutil.copy(ref, images / Path(ref).name)
    p.items["image_ref"] = p.items["image_ref"].map(
        lambda r: None if r is None else f"images/{Path(r).name}"
    )
    p._hash = None
    p.save(OUT / "mathvision")
    finish("mathvision", shared)


def build_blink(shared: Path) -> None:
    bl = shared / "blink"
    answers = json.loads((bl / "val_answers.json").read_text("utf-8"))
    cols = {}
    for f in sorted((bl / "saved_val_predictions").glob("*.json")):
        pred = json.loads(f.read_text("utf-8"))
        if set(pred) != set(answers):
            raise SystemExit(f"{f}: its items differ from val_answers.json")
        cols[f.stem] = {i: int(pred[i] == a) for i, a in answers.items()}
    with tempfile.TemporaryDirectory() as tmp:
        wide = Path(tmp) / "blink_val.csv"
        frame = pd.DataFrame(cols).rename_axis("item_id")
        frame.to_csv(wide)
        p, _ = import_matrix(wide, "BLINK", orientation="items-x-models", name="blink")
    p.save(OUT / "blink")
    finish("blink", shared)


def build_records(card: BenchmarkCard) -> Callable[[Path], None]:
    """A builder of a card's ``[embedded]`` panel from VLMEvalKit's published records."""
    assert card.embedded is not None
    name = card.embedded.panel

    def build(shared: Path) -> None:
        from harness_adapters.harnesses.vlmeval.records import records_panel

        p, _ = records_panel(
            shared / "openvlm_records" / "EvalRecords",
            [card.catalogue.vlmeval_dataset],
            name=name,
            rule="builtin",
        )
        p.save(OUT / name)
        finish(name, shared, records_source(card, p))
        print(f"{name}: {p}")

    return build


def build_openvlm_records(shared: Path) -> None:
    """The joint records panel with projected MiniLM text embeddings (needs the embed extra)."""
    from harness_adapters.harnesses.vlmeval.records import records_panel
    from primebench_tasks.embed.cache import embed_panel
    from primebench_tasks.embed.encoders import build_encoder
    from primebench_tasks.embed.projection import random_projection

    name = "openvlm_records"
    p, _ = records_panel(
        shared / "openvlm_records" / "EvalRecords",
        ["BLINK", "OCRBench", "RealWorldQA"],
        name=name,
        rule="builtin",
    )
    with tempfile.TemporaryDirectory() as tmp:
        p.save(Path(tmp) / "p")
        p, _ = embed_panel(p, Path(tmp) / "p", build_encoder("minilm"), "text")
    ids, vecs = p._embeddings.pop("text")
    p.set_embeddings("text", ids, random_projection(vecs))
    p._hash = None
    p.save(OUT / name)
    finish(name, shared)
    print(f"{name}: {p}")


def build_openvlm(shared: Path) -> None:
    lb = Leaderboard.from_csv(shared / "openvlm" / "openvlm_284x8.csv", name="openvlm")
    lb.save(OUT / "openvlm")
    finish("openvlm", shared)


def mmmu_item_map(index_ids: list[int], subjects: list[str]) -> list[tuple[str, str]]:
    """AutoJudger's MMMU_DEV_VAL ``index`` → MMMU ``id`` of the validation rows.

    The indexes are row positions (from 1) in VLMEvalKit's MMMU table of all 11,550 rows, ordered
    by subject, then split (dev, test, validation), then item number: each subject's 30
    validation rows are consecutive and directly followed by the next subject's 5 dev rows. The
    rule is checked, not trusted: ``tests/data/test_item_maps.py`` measures that the mapped items'
    difficulty agrees with the M3IRT panel's (which carries MMMU's own ids) far above any
    permutation within subjects. Dev rows are not mapped: no second source holds them."""
    ids = sorted(index_ids)
    runs: list[list[int]] = [[ids[0]]]
    for x in ids[1:]:
        if x == runs[-1][-1] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    if len(runs) != len(subjects) + 1 or len(runs[0]) != 5:
        raise SystemExit(f"unexpected AutoJudger MMMU layout: {len(runs)} runs")
    out = []
    for subject, run in zip(subjects, runs[1:], strict=True):
        if len(run) not in (30, 35):
            raise SystemExit(f"unexpected run of {len(run)} rows for {subject}")
        out += [(str(i), f"validation_{subject}_{k}") for k, i in enumerate(run[:30], start=1)]
    return out


ITEM_MAPS = Path("primebench_tasks/data/resources/item_maps")


def build_mmmu_merged(shared: Path) -> None:
    """MMMU validation among AutoJudger's and M3IRT's models in one panel keyed by MMMU ``id``
    (AutoJudger's rows mapped through the checked item map; models joined through the alias
    table; AutoJudger's score counts where both answered)."""
    from primebench_tasks.data.merge import merge_panels, read_aliases, read_item_map, relabel_items

    aj = Panel.load(OUT / "autojudger")
    m3 = Panel.load(OUT / "m3irt")
    subjects = sorted(
        {i.rsplit("_", 1)[0].removeprefix("validation_") for i in m3.item_ids("MMMU_DEV_VAL")}
    )
    rows = mmmu_item_map([int(i) for i in aj.item_ids("MMMU_DEV_VAL")], subjects)
    ITEM_MAPS.mkdir(parents=True, exist_ok=True)
    path = ITEM_MAPS / "autojudger_MMMU_DEV_VAL.csv"
    path.write_text(
        "source_id,upstream_id\n" + "".join(f"{s},{u}\n" for s, u in rows), encoding="utf-8"
    )
    relabelled = relabel_items(aj, "MMMU_DEV_VAL", read_item_map(path))
    m3_mmmu = relabel_items(
        m3, "MMMU_DEV_VAL", {i: i for i in m3.item_ids("MMMU_DEV_VAL").astype(str)}
    )
    merged, report = merge_panels(
        "mmmu_merged", [relabelled, m3_mmmu], "MMMU_DEV_VAL", read_aliases()
    )
    merged.save(OUT / "mmmu_merged")
    finish(
        "mmmu_merged",
        shared,
        (
            "autojudger",
            "MMMU validation (900 items, MMMU's own `id`), merged from the embedded `autojudger` "
            "panel (VLMEvalKit records; its `index` mapped to MMMU ids through "
            "`primebench_tasks/data/resources/item_maps/autojudger_MMMU_DEV_VAL.csv`, checked "
            "against M3IRT) and the embedded `m3irt` panel (847 of the 900 items), models joined "
            "through `primebench_tasks/data/resources/model_aliases.csv`. Licences: Apache-2.0 "
            "(AutoJudger, LICENSE) and MIT (M3IRT).\n\n" + report.markdown(),
        ),
    )
    print(f"mmmu_merged: {merged}")


TEXT_KEYED = {
    "openvlm_ocrbench_text": ("openvlm_ocrbench", "OCRBench", "ocrbench"),
    "openvlm_realworldqa_text": ("openvlm_realworldqa", "RealWorldQA", "mcq_inline"),
}
"""Records panels restricted to the items their text tells apart (the flagship's source panels
of the benchmarks lmms-eval keys by content): name → (records panel, benchmark, text-key rule)."""


def build_text_keyed(name: str) -> Callable[[Path], None]:
    def build(shared: Path) -> None:
        from primebench_tasks.data.merge import relabel_items
        from primebench_tasks.data.text_keys import panel_text_keys

        source, bench, rule = TEXT_KEYED[name]
        full = Panel.load(OUT / source)
        keys, ambiguous = panel_text_keys(full.items_of(bench), rule)
        p = relabel_items(full, bench, {i: i for i in keys}, name=name)
        p.response_profiles = full.response_profiles  # the same runs' answers
        p.save(OUT / name)
        finish(
            name,
            shared,
            (
                "openvlm_records",
                f"the embedded `{source}` panel (VLMEvalKit's published records of {bench}) "
                f"restricted to the {len(keys)} items whose text key (rule `{rule}`, "
                "`primebench_tasks/data/text_keys.py`) no other item shares: the "
                f"{len(ambiguous)} others ({', '.join(ambiguous[:8])}, ...) cannot be told apart "
                "by text in a harness whose rows carry no VLMEvalKit index. Licence: Apache-2.0 "
                "(LICENSE).",
            ),
        )
        print(f"{name}: {p}")

    return build


BUILDERS = {
    "autojudger": build_autojudger,
    "m3irt": build_m3irt,
    "mmmu_merged": build_mmmu_merged,
    "mathvision": build_mathvision,
    "blink": build_blink,
    **{c.embedded.panel: build_records(c) for c in benchmark_cards() if c.embedded is not None},
    **{n: build_text_keyed(n) for n in TEXT_KEYED},
    "openvlm_records": build_openvlm_records,
    "openvlm": build_openvlm,
}


if __name__ == "__main__":
    main()
