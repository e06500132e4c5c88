"""What the misfit check adds to a placement (#56's goal: < 5 % of placement time, no item
added): the released VLMEvalKit suite (5 benchmarks, 554 items, 86–188 reference models), one
placed model (a reference model's own answers), the placement every harness runs
(``place_on_suite``, 1,000 resamples) timed with and without the check's share — the check is
timed alone on the same inputs (``person_fit`` per benchmark).

    python benchmarks/misfit_cost.py    # prints the seconds and the ratio (best of 3)
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from harness_adapters.run.report import reference_panels
from harness_adapters.suites.released import resolve_suite
from primebench_tasks.place.misfit import ItemFacts, person_fit
from primebench_tasks.place.suite import place_on_suite
from primebench_tasks.select.irt import _FIT_CACHE
from primebench_tasks.suite.manifest import as_suite


def main() -> None:
    suite = resolve_suite("primebench_vlmeval")
    panels = reference_panels(suite)
    sm = as_suite(suite)
    model = panels["AI2D_TEST"].model_names[0]
    cols, row, checks = [], [], []
    for e in sm.benchmarks:
        p = panels[e.name]
        pos = {str(i): k for k, i in enumerate(p.item_ids(e.name))}
        at = [pos[str(i)] for i in e.item_ids]
        X = p.matrix(e.name).astype(float)
        y = X[p.model_names.index(model)] if model in p.model_names else np.full(X.shape[1], 0.5)
        cols += [(e.name, str(i)) for i in e.item_ids]
        row += [float(y[k]) for k in at]
        facts = ItemFacts.of_items(p.items_of(e.name)).take(at)
        checks.append((X[:, at], np.asarray([[float(y[k]) for k in at]]), facts))
    new = pd.DataFrame([row], index=[model], columns=pd.MultiIndex.from_tuples(cols))

    def best(f) -> float:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return min(times)

    def checked() -> None:
        _FIT_CACHE.clear()  # every 2PL fitted anew, as a first placement fits them
        for ref, y, facts in checks:
            person_fit(ref, y, facts=facts)

    def placed() -> None:
        _FIT_CACHE.clear()
        place_on_suite(suite, panels, new)

    place = best(placed)
    check = best(checked)
    print(f"placement (check included): {place:.2f} s; the check alone: {check:.3f} s")
    print(f"the check's share of the placement: {100 * check / place:.1f} %")


if __name__ == "__main__":
    main()
