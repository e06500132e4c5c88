"""check_selector (the selector contract, as scikit-learn's check_estimator) over every
registered selector, and a selector that breaks each rule is caught naming it."""

from __future__ import annotations

import numpy as np
import pytest

from primebench_tasks.select.arms import SelectorContext
from primebench_tasks.select.base import Selector
from primebench_tasks.select.conformance import CHECK_ITEMS, check_panel, check_selector
from primebench_tasks.select.registry import SELECTORS


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_every_registered_selector_keeps_the_contract(name):
    X, _ = check_panel()
    ctx = SelectorContext(thresholds=np.full(CHECK_ITEMS, 0.5))
    check_selector(lambda k, rs: SELECTORS[name](k, rs, ctx), name)
    del X


class _Broken(Selector):
    def __init__(self, k: int, *, random_state: int = 0, flaw: str = "") -> None:
        self.k, self.random_state, self.flaw = k, random_state, flaw
        if flaw == "learns in init":
            self.indices_ = np.arange(k)

    def fit(self, X, items=None):
        X = X if self.flaw == "takes any scores" else self._check(X)
        if self.flaw == "unseeded":
            idx = np.random.default_rng().permutation(X.shape[1])[: self.k]
        elif self.flaw == "twice":
            idx = np.zeros(self.k, dtype=np.int64)
        else:
            idx = np.arange(self.k)
        self._set(idx)
        return None if self.flaw == "returns none" else self


@pytest.mark.parametrize(
    "flaw, message",
    [
        ("learns in init", "__init__ sets learned attributes"),
        ("returns none", "fit must return the selector"),
        ("twice", "an item is selected twice"),
        ("unseeded", "same data and seed"),
        ("takes any scores", "scores outside \\[0, 1\\] were not refused"),
    ],
)
def test_a_selector_that_breaks_a_rule_is_named(flaw, message):
    check_selector(lambda k, rs: _Broken(k, random_state=rs), "fine")  # the unbroken one passes
    with pytest.raises(AssertionError, match=f"broken: {message}"):
        check_selector(lambda k, rs: _Broken(k, random_state=rs, flaw=flaw), "broken")
