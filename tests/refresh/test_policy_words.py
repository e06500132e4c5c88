"""The refresh's decision line reads as a verdict, then its reasons (battery 7: "keep: percentile
12.0 < 50.0" read as the reason to keep)."""

from __future__ import annotations

from primebench_tasks.refresh.loop import decision_text
from primebench_tasks.refresh.policy import RefreshPolicy


def test_the_decision_says_the_verdict_then_the_drift():
    need, reasons = RefreshPolicy().needs_refit(0.95, 0.92, 12.0)
    assert need and reasons == [
        "drift: fidelity dropped 0.030, more than 0.02",
        "drift: the frozen suite sits at percentile 12.0 of random suites, below 50",
    ]
    assert decision_text(True, reasons).startswith("refit: drift: fidelity dropped 0.030")
    assert decision_text(False, reasons[1:]) == (
        "keep despite drift: the frozen suite sits at percentile 12.0 of random suites, below 50"
    )
    assert decision_text(False, []) == "keep: no drift"
