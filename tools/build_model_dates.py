"""Release dates of the embedded panels' models, from the OpenVLM leaderboard snapshot (run from
the repository root): ``python tools/build_model_dates.py``.

A panel model gets the leaderboard's date when its name, folded (lower case, letters and digits
only), equals exactly one leaderboard name folded the same way; nothing is guessed beyond that
(a model without such a match stays undated). Writes
``primebench_tasks/data/resources/model_release_dates.csv`` (model, release_date, evidence).
"""

from __future__ import annotations

from primebench_tasks.data.defaults import default_kind, default_names
from primebench_tasks.data.leaderboard import Leaderboard
from primebench_tasks.data.model_dates import DATES_FILE, folded_name
from primebench_tasks.data.panel import Panel


def main() -> None:
    lb = Leaderboard.load_default("openvlm")
    by_fold: dict[str, list[tuple[str, str]]] = {}
    for name, date in zip(lb.models["model"], lb.models["release_date"], strict=True):
        if isinstance(date, str) and date:
            by_fold.setdefault(folded_name(name), []).append((name, date))
    rows: dict[str, tuple[str, str]] = {}
    for pn in default_names():
        if default_kind(pn) != "panel":
            continue
        for m in Panel.load_default(pn).model_names:
            hits = by_fold.get(folded_name(m), [])
            if len(hits) == 1:
                name, date = hits[0]
                rows[m] = (date, f"OpenVLM leaderboard 2025-09-17: {name}")
    text = "model,release_date,evidence\n" + "".join(
        f'"{m}",{d},"{e}"\n' for m, (d, e) in sorted(rows.items())
    )
    DATES_FILE.write_text(text, encoding="utf-8")
    print(f"{len(rows)} models dated -> {DATES_FILE}")


if __name__ == "__main__":
    main()
