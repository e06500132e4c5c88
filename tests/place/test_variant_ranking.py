"""The typed variant ranking (#73): both races' document, read back as written, the earlier
schemas still read, bad documents refused by name."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.errors import InputError
from primebench_tasks.place.variant_ranking import (
    SCHEMA,
    VariantRanking,
    Verdict,
    pairwise_table,
    ranking_rows,
)
from primebench_tasks.place.variants import rank_variants, variant_verdict


def _ranking(race: str = "static") -> VariantRanking:
    rng = np.random.default_rng(0)
    cols = pd.Index([f"i{k}" for k in range(40)])
    scores = pd.DataFrame(
        (rng.random((3, 40)) < np.array([[0.8], [0.5], [0.45]])).astype(float),
        index=["m+good", "m", "m+bad"],
        columns=cols,
    )
    scores.iloc[2, :5] = np.nan
    table, pairwise, ceiling = rank_variants(scores, pd.Series("c", index=cols), 200, 0)
    extra = (
        {"ceiling": ceiling, "supports_conclusion": True, "misfit": {"m+bad": ["MMMU"]}}
        if race == "static"
        else {"settings": {"max_items": 60}, "stopped_because": "budget", "items": {"B": 40}}
    )
    return VariantRanking(
        race=race,
        suite="v1",
        suite_name="s",
        n_boot=200,
        seed=0,
        verdict=Verdict.from_json(variant_verdict(table, pairwise)),
        ranking=ranking_rows(table),
        pairwise=pairwise_table(pairwise),
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("race", ["static", "adaptive"])
def test_a_ranking_reads_back_as_written(tmp_path, race):
    doc = _ranking(race)
    assert doc.order[0] == "m+good" and [r.rank for r in doc.ranking] == [1, 2, 3]
    assert doc.ranking[-1].n_scored in (35, 40)
    path = doc.write(tmp_path / "variants.json")
    back = VariantRanking.read(path)
    assert back == doc
    raw = json.loads(path.read_text())
    assert raw["schema"] == SCHEMA and raw["race"] == race
    # P(a beats b) + P(b beats a) = 1 over the same resamples
    p = back.pairwise
    assert p["m+good"]["m"] + p["m"]["m+good"] == pytest.approx(1.0)


def test_the_earlier_schemas_still_read():
    doc = _ranking("static").to_json()
    old = {k: v for k, v in doc.items() if k not in ("race", "suite_name")}
    old["schema"] = "primebench.variants/2"
    read = VariantRanking.from_json(old)
    assert read.race == "static" and read.suite_name is None and read.ceiling == doc["ceiling"]
    race = _ranking("adaptive").to_json()
    race = {k: v for k, v in race.items() if k not in ("race", "seed", "misfit")}
    race["schema"] = "primebench.adaptive_variants/1"
    read = VariantRanking.from_json(race)
    assert read.race == "adaptive" and read.seed is None and read.items == {"B": 40}


def test_a_bad_ranking_is_refused_by_name(tmp_path):
    with pytest.raises(InputError, match="schema 'primebench.placement/1' is not"):
        VariantRanking.from_json({"schema": "primebench.placement/1"}, "x.json")
    doc = _ranking().to_json()
    del doc["verdict"]
    with pytest.raises(InputError, match="not a variant ranking"):
        VariantRanking.from_json(doc, "x.json")
    with pytest.raises(InputError, match="race 'other'"):
        VariantRanking(**{**_ranking().__dict__, "race": "other"})
    (tmp_path / "v.json").write_text("[1]")
    with pytest.raises(InputError, match="a JSON object is expected"):
        VariantRanking.read(tmp_path / "v.json")
