"""An adaptive test on one benchmark: its calibration (kept on disk), next items, interval and stopping rule."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from primebench_tasks.adaptive.defaults import (
    ADAPTIVE_FOLDS,
    ADAPTIVE_GUARD_K,
    ADAPTIVE_NEAREST_SHIFT,
    ADAPTIVE_UNIFORM_SHARE,
)
from primebench_tasks.adaptive.design import (
    Draw,
    StaticRound,
    answered_before,
    design_estimate,
    draw_probabilities,
    draw_round,
    guard,
)
from primebench_tasks.adaptive.policy import BATCH, LEVEL, AdaptivePolicy
from primebench_tasks.adaptive.procedure import (
    AdaptiveProcedure,
    calibration_runs,
    conformal,
    nearest_shift,
)
from primebench_tasks.data.io import (
    atomic_write_text,
    canonical_json,
    content_hash,
    json_scalar,
    read_json_document,
)
from primebench_tasks.errors import InputError
from primebench_tasks.place.benchmark import (
    REGIMES,
    placement_position,
    placement_regime,
    regime_residuals,
)
from primebench_tasks.place.calibration import FRONTIER_FOLDS, FRONTIER_SHARE
from primebench_tasks.select.irt import information

PREFERENCES = ("information", "policy")
"""What a guarded test's draws favour beside their uniform share
(:meth:`AdaptiveBenchmark.draw_items`): the 2PL's Fisher information at the ability so far, or the
items the policy would pick this round."""

RACE_UNIFORM_SHARE = 0.5
"""A race draws each item with probability (1 − ρ)/n + ρ·s_i/Σs (ρ = this share; s_i the
variants' answer spread): the uniform part bounds every draw's weight 1/(n·q_i) by 1/(1 − ρ)."""

CALIBRATION_SCHEMA = "primebench.adaptive_calibration/3"
"""The stored calibration's schema (:attr:`AdaptiveBenchmark.calibration_file`); its version is
raised when :func:`calibration_runs` changes what it computes, so no run reads an older one's
(the schema is part of :attr:`AdaptiveBenchmark.calibration_key`). Version 2: the errors are
rounded to :data:`CALIBRATION_DECIMALS`; version 3 adds each prediction's position among its
fitting models (``positions``, rounded alike)."""

CALIBRATION_DECIMALS = 7
"""The calibration's errors are rounded to this many decimals, in memory and in the kept file
alike: they come from a 2PL fit, MAP abilities and linear solves whose last bits depend on the
BLAS kernel, so unrounded the kept file had other bytes on another CPU. Measured on the five
replay panels' calibrations (22,680 errors; OpenBLAS's native kernel against Sandybridge): 16,949
differ, by up to 1.6e-11; an error crosses a rounding boundary with probability |δ|/10⁻⁷, so the
expected number of changed values in all five files is Σ|δ|/10⁻⁷ = 0.03 (at 8 decimals 0.3 — one
did change —, at 9 decimals 3.1). 1e-7 is far below the intervals' widths (≥ 0.05) and the
report's precision (6 decimals)."""


@dataclass(frozen=True)
class AdaptiveEstimate:
    """Where one model stands on one benchmark after ``count`` answers: its ability ``theta``,
    its mean ``score`` on the items asked, the predicted full-benchmark score with its ``level``
    interval (``lo``/``hi``; NaN before the first calibrated count), the placement regime, and
    the predicted rank among the ``n_reference`` reference models (1 = best) with the rank
    interval. With the test's draws (a guarded test), ``predicted`` is the policy's calibrated
    prediction ``model_predicted`` guarded by the ``design`` estimate
    (:func:`~primebench_tasks.adaptive.design.guard`); without, it is the policy's."""

    count: int
    theta: float
    score: float
    predicted: float
    lo: float
    hi: float
    regime: str
    rank: float
    rank_lo: float
    rank_hi: float
    n_reference: int
    model_predicted: float | None = None
    """The policy's calibrated prediction before the guard (None without draws: ``predicted``)."""
    design: float | None = None
    """The design-unbiased estimate of the draws (:func:`~.design.design_estimate`; None without
    draws, NaN before the first answered draw)."""
    design_se: float | None = None
    """Its standard error (None without draws, NaN with fewer than two answered draws)."""
    guard_moved: bool = False
    """Whether the guard moved the prediction: the two estimates disagree beyond the design's
    noise (a model unlike the reference panel)."""

    @property
    def width(self) -> float:
        return self.hi - self.lo if np.isfinite(self.lo) and np.isfinite(self.hi) else np.inf


class AdaptiveBenchmark:
    """One benchmark's adaptive test, shared by every model asked on it: the 2PL of the reference
    panel's answers ``Y_ref`` (M, n), the reference full scores, and the calibration of the
    interval at every count ``batch``, 2·``batch``, ... up to ``max_items``.

    The calibration replays the procedure on reference models held out of the 2PL fit
    (``folds`` random folds, :data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_FOLDS` by
    default, and 3 nested frontier folds, whose models stand above their whole fitting panel). The
    errors a model is given are those of the held-out models it resembles: predicted inside the
    panel, the random folds' (a model drawn like the reference ones); beyond the panel's best,
    the frontier folds' (a model above its panel, as a new one usually is); at the top, where
    both kinds land, every one. The interval is the hull of two conformal intervals at that
    count: one Mondrian by placement regime as the static placement's
    (:func:`~primebench_tasks.place.benchmark.placement_regime`: errors of those models'
    predictions that fell in the same regime — interior / top / beyond the fitting models —
    neighbours borrowed while fewer than 20), one from all of those models' errors (inside the
    panel) or every held-out error (at the top or beyond: a regime's errors alone were too few
    to hold once a test stops where they happen to be narrow); at the top (``frontier_at_top``)
    the hull also holds the frontier folds' own interval — so the stopping rule
    (:meth:`stop_reason`) depends on where the model stands (:meth:`interval`). The point moves
    by a median error: inside the panel, of the random folds' interior errors; at the top or
    beyond it, of the ``nearest_shift`` calibration rows (either kind) whose predictions stood
    nearest in position among their fitting models
    (:data:`~primebench_tasks.adaptive.defaults.ADAPTIVE_NEAREST_SHIFT`; None: of the regime's
    errors, as inside)."""

    procedure_class: type[AdaptiveProcedure] = AdaptiveProcedure
    """The procedure asked and calibrated: the library's; a comparison script's subclass may
    replace it (``research/adaptive/adaptive_slip_probe.py``), and it then enters
    :attr:`calibration_key`."""

    def __init__(
        self,
        Y_ref: np.ndarray,
        *,
        max_items: int,
        batch: int = BATCH,
        level: float = LEVEL,
        folds: int = ADAPTIVE_FOLDS,
        seed: int = 0,
        policy: AdaptivePolicy | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        frontier_at_top: bool = True,
        nearest_shift: int | None = ADAPTIVE_NEAREST_SHIFT,
        uniform_share: float = ADAPTIVE_UNIFORM_SHARE,
        guard_k: float = ADAPTIVE_GUARD_K,
        preference: str = "information",
    ) -> None:
        if preference not in PREFERENCES:
            raise ValueError(f"preference must be one of {PREFERENCES}, not {preference!r}")
        if not guard_k >= 0:
            raise ValueError(f"guard_k must be ≥ 0, not {guard_k!r}")
        self.uniform_share, self.guard_k = float(uniform_share), float(guard_k)
        self.preference = preference
        if nearest_shift is not None and not int(nearest_shift) >= 1:
            raise ValueError(f"nearest_shift must be ≥ 1 or None, not {nearest_shift!r}")
        self.frontier_at_top = bool(frontier_at_top)
        self.nearest_shift = None if nearest_shift is None else int(nearest_shift)
        self.policy = AdaptivePolicy() if policy is None else policy
        self.Y_ref = np.asarray(Y_ref, float)
        self.n = self.Y_ref.shape[1]
        self.batch, self.level = int(batch), float(level)
        self.max_items = int(min(max_items, self.n))
        self.procedure = self.procedure_class(self.Y_ref, self.policy)
        self.model = self.procedure.model
        self.reference_full = self.procedure.full_fit
        self.counts = tuple(range(self.batch, self.max_items + 1, self.batch)) or (self.max_items,)
        self._folds, self._seed = int(folds), int(seed)
        self.cache_dir = None if cache_dir is None else Path(cache_dir)

    @cached_property
    def calibration_key(self) -> str:
        """What the calibration depends on, hashed (32 hex digits): the reference answers (NaN
        included), the counts, the round size, the folds and their seed, the frontier folds, the
        policy, :data:`CALIBRATION_SCHEMA` and the library's version."""
        from primebench_tasks import __version__

        finite = np.isfinite(self.Y_ref)
        spec = {
            "schema": CALIBRATION_SCHEMA,
            "library": __version__,
            "shape": list(self.Y_ref.shape),
            "counts": list(self.counts),
            "batch": self.batch,
            "folds": self._folds,
            "seed": self._seed,
            "frontier_folds": FRONTIER_FOLDS,
            "frontier_share": FRONTIER_SHARE,
            "policy": asdict(self.policy),
        }
        if self.procedure_class is not AdaptiveProcedure:  # a comparison's variant
            cls = self.procedure_class
            spec["procedure"] = f"{cls.__module__}.{cls.__qualname__}"
        data = (
            json.dumps(spec, sort_keys=True).encode()
            + np.packbits(finite).tobytes()
            + np.where(finite, self.Y_ref, 0.0).astype("<f8").tobytes()
        )
        return content_hash(data, 32)

    @property
    def calibration_file(self) -> Path | None:
        """Where the calibration is kept (``cache_dir``/``adaptive-calibration-<key>.json``,
        canonical JSON of schema :data:`CALIBRATION_SCHEMA`), or None without a ``cache_dir``."""
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"adaptive-calibration-{self.calibration_key}.json"

    @cached_property
    def calibration(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The intervals' calibration: held-out errors (true − predicted) and placement regimes
        (R, len(counts)) of :func:`calibration_runs`, which rows (R,) come from a frontier
        fold, and the predictions' positions among their fitting models (R, len(counts)).
        Replayed when first needed (the first :meth:`estimate` after ``batch`` answers), not
        when the test is built: a race (:func:`race_variants`) needs only the 2PL. With a
        ``cache_dir`` it is read from :attr:`calibration_file` when there (a resumed run does not
        replay it), else replayed and written there atomically."""
        path = self.calibration_file
        if path is not None and path.exists():
            return self._read_calibration(path)
        errors, _, regimes, frontier, positions = calibration_runs(
            self.Y_ref,
            self.counts,
            self.batch,
            self._folds,
            self._seed,
            FRONTIER_FOLDS,
            self.policy,
            self.procedure_class,
        )
        errors = np.round(errors, CALIBRATION_DECIMALS)
        positions = np.round(positions, CALIBRATION_DECIMALS)
        if path is not None:
            doc = {
                "schema": CALIBRATION_SCHEMA,
                "key": self.calibration_key,
                "counts": list(self.counts),
                "errors": [[json_scalar(x) for x in row] for row in errors],
                "regimes": [[str(g) for g in row] for row in regimes],
                "frontier": [bool(f) for f in frontier],
                "positions": [[json_scalar(x) for x in row] for row in positions],
            }
            atomic_write_text(path, canonical_json(doc))
        return errors, regimes, frontier, positions

    def _read_calibration(
        self, path: Path
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        doc = read_json_document(path, "adaptive calibration", CALIBRATION_SCHEMA)
        C = len(self.counts)
        for field, want in (("key", self.calibration_key), ("counts", list(self.counts))):
            if doc.get(field) != want:
                raise InputError(
                    f"adaptive calibration of other inputs ({field} {doc.get(field)!r}, expected "
                    f"{want!r}); delete it to replay the calibration",
                    file=str(path),
                    field=field,
                )
        frontier = doc.get("frontier")
        if not isinstance(frontier, list) or not all(isinstance(f, bool) for f in frontier):
            raise InputError("not a list of true/false", file=str(path), field="frontier")
        rows: dict[str, Any] = {}
        for field, ok in (
            ("errors", lambda x: x is None or type(x) in (int, float)),
            ("regimes", lambda x: x in ("", *REGIMES)),  # "": no fitting model to place among
            ("positions", lambda x: x is None or type(x) in (int, float)),
        ):
            got = doc.get(field)
            if not isinstance(got, list) or len(got) != len(frontier):
                raise InputError(
                    f"expected {len(frontier)} rows (one per held-out model)",
                    file=str(path),
                    field=field,
                )
            for r, row in enumerate(got):
                if not isinstance(row, list) or len(row) != C or not all(map(ok, row)):
                    raise InputError(
                        f"expected {C} values of the right type",
                        file=str(path),
                        row=f"{field}[{r}]",
                        field=field,
                    )
            rows[field] = got
        errors, positions = (
            np.array(
                [[np.nan if x is None else float(x) for x in row] for row in rows[field]], float
            ).reshape(len(frontier), C)
            for field in ("errors", "positions")
        )
        regimes = np.array(rows["regimes"], dtype=object).reshape(len(frontier), C)
        return errors, regimes, np.array(frontier, bool), positions

    def next_items(
        self,
        answers: np.ndarray,
        asked: np.ndarray,
        k: int,
        exclude: np.ndarray | None = None,
    ) -> np.ndarray:
        """The ``k`` unasked items to ask next (answers (n,) with NaN where not asked): the
        policy's choice (:meth:`AdaptiveProcedure.pick`). ``exclude`` (n,) bool: items that cannot be asked
        (no content; no recorded answer in a replay)."""
        return self.procedure.pick(answers, asked, k, exclude)

    def draw_base(
        self,
        answers: np.ndarray,
        asked: np.ndarray,
        k: int,
        exclude: np.ndarray | None = None,
        theta: float | None = None,
    ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """What a round of ``k`` draws draws from: (θ, m (n,), q (n,), remaining (n,) bool) —
        the ability from the answers so far (or the given ``theta``), the 2PL's prediction of
        every answer at it, the base probabilities ε/R + (1 − ε)·s_i/Σs over the unasked items
        that can be asked (``exclude`` (n,) bool: not; :func:`~.design.draw_probabilities`, ε =
        ``uniform_share``; s the 2PL's Fisher information at θ, ``preference="information"``,
        or the policy's own ``k`` picks, ``"policy"``)."""
        answers, asked = np.asarray(answers, float), np.asarray(asked, bool)
        remaining = ~asked if exclude is None else ~asked & ~np.asarray(exclude, bool)
        if theta is None:
            theta = self.ability(answers, asked)
        m = self.model.prob(np.array([theta]))[0]
        if self.preference == "information":
            s = information(self.model, np.array([theta]))[0]
        else:
            s = np.zeros(self.n)
            s[self.procedure.pick(answers, asked, k, exclude)] = 1.0
        return float(theta), m, draw_probabilities(s, remaining, self.uniform_share), remaining

    def ability(self, answers: np.ndarray, asked: np.ndarray) -> float:
        """The MAP ability from the answers so far (the one a round draws at)."""
        return self.procedure.state(np.asarray(answers, float), np.asarray(asked, bool))[0]

    def draw_items(
        self,
        answers: np.ndarray,
        asked: np.ndarray,
        k: int,
        rng: np.random.Generator,
        exclude: np.ndarray | None = None,
    ) -> list[Draw]:
        """The next ``k`` items of a guarded test, drawn at random (:func:`~.design.draw_round`)
        from :meth:`draw_base`'s probabilities; each draw keeps its probability and the 2PL's
        prediction of its answer at the ability so far."""
        _, m, q, remaining = self.draw_base(answers, asked, k, exclude)
        return draw_round(q, m, remaining, k, rng)

    def check_draws(
        self,
        answers: np.ndarray,
        before: np.ndarray,
        rounds: Sequence[Sequence[Draw]],
        thetas: Sequence[float],
        exclude: np.ndarray | None = None,
        unsure: np.ndarray | None = None,
    ) -> str | None:
        """Whether a test's recorded draws follow from its answers: round r drawn at ability
        ``thetas[r]`` — the MAP ability from the answers of the items asked before it (``before``
        (n,) bool: asked before the first round; then every earlier round's items), checked
        unless one of those items is ``unsure`` (n,) bool: its answer was not known when the
        round was drawn (it failed, and was asked again later) — must carry, draw by draw, the
        probability, prediction and remaining sum :meth:`draw_base` gives at that ability.
        Returns the first discrepancy, said in a line, or None."""
        answers = np.asarray(answers, float)
        asked = np.asarray(before, bool).copy()
        unsure = np.zeros(self.n, bool) if unsure is None else np.asarray(unsure, bool)
        if len(thetas) != len(rounds):
            return f"{len(rounds)} rounds but {len(thetas)} abilities"
        for r, (draws, theta) in enumerate(zip(rounds, thetas, strict=True)):
            if not (unsure & asked).any():
                seen = np.where(asked, answers, np.nan)
                want = self.procedure.theta(seen, asked)
                if not np.isclose(theta, want, rtol=0, atol=1e-6):
                    return f"round {r}: drawn at ability {theta!r}, its answers give {want!r}"
            _, m, q, left = self.draw_base(answers, asked, len(draws), exclude, theta)
            left = left.copy()
            for j, d in enumerate(draws):
                if not (0 <= d.item < self.n) or not left[d.item]:
                    return f"round {r}, draw {j}: item {d.item} could not be drawn then"
                want_q = float(q[d.item] / q[left].sum())
                for name, got, exp in (
                    ("q", d.q, want_q),
                    ("m", d.m, float(m[d.item])),
                    ("rest", d.rest, float(m[left].sum())),
                ):
                    if not np.isclose(got, exp, rtol=1e-6, atol=1e-9):
                        return f"round {r}, draw {j}: {name} {got!r}, its design gives {exp!r}"
                left[d.item] = False
            asked[[d.item for d in draws]] = True
        return None

    def race_probabilities(
        self, answers: np.ndarray, asked: np.ndarray, exclude: np.ndarray | None = None
    ) -> np.ndarray:
        """The probabilities (n,) with which a race between variants draws its next items:
        (1 − ρ)/n' + ρ·s_i/Σs over the n' items that can be asked (``exclude`` (n,) bool: not),
        s_i = √(mean_v P_v,i·(1 − P_v,i)) the variants' answer spread under the 2PL at each
        one's ability from its ``answers`` (V, n) on the items ``asked`` (n,) by all
        (ρ = :data:`RACE_UNIFORM_SHARE`). Already asked items keep their probability: a draw
        of one costs no new answer."""
        ok = np.ones(self.n, bool) if exclude is None else ~np.asarray(exclude, bool)
        q = np.zeros(self.n)
        if not ok.any():
            return q
        thetas = np.array([self.procedure.theta(row, asked) for row in np.atleast_2d(answers)])
        p = self.model.prob(thetas)
        spread = np.sqrt((p * (1.0 - p)).mean(axis=0)) * ok
        rho = RACE_UNIFORM_SHARE if spread.sum() > 0 else 0.0
        q[ok] = (1.0 - rho) / ok.sum()
        if rho:
            q += rho * spread / spread.sum()
        return q / q.sum()

    def interval(self, pred: float, count: int) -> tuple[float, float, float, str]:
        """(point, lo, hi, regime) of an uncalibrated prediction ``pred`` after ``count``
        answers: the calibrated point and its ``level`` interval (NaN before the first
        calibrated count), and the placement regime of ``pred`` among the reference models."""
        ref = self.reference_full[np.isfinite(self.reference_full)]
        regime = str(placement_regime(np.array([pred]), ref)[0])
        lo = hi = float("nan")
        j = int(np.searchsorted(self.counts, count, side="right")) - 1
        if j < 0:
            return pred, lo, hi, regime
        errors, regimes, frontier, positions = self.calibration
        col = errors[:, j]
        ok = np.isfinite(col)
        # the held-out models a new model resembles (replay: pooling both kinds gave a
        # prediction beyond the panel the random folds' overshoots and the frontier folds'
        # shortfalls at once, and one inside it the frontier folds' wide errors)
        alike = {"interior": ~frontier, "top": np.ones(len(col), bool), "beyond": frontier}[regime]
        if not (ok & alike).any():  # a panel too small for frontier folds
            alike = np.ones(len(col), bool)
        by_regime = {
            g: list(col[(regimes[:, j] == g) & ok & alike]) for g in ("interior", "top", "beyond")
        }
        errs = regime_residuals(by_regime, regime)
        pooled = col[ok & alike] if regime == "interior" else col[ok]
        if not (len(errs) and len(pooled)):
            return pred, lo, hi, regime
        lo, hi = conformal(pred, errs, self.level)
        # the hull with the pooled interval: a regime's errors alone were too few to hold at
        # the frontier once the test stops where they happen to be narrow (replay: 58-72 %
        # coverage at stop, against 100 % with the hull)
        hulls = [pooled]
        if regime == "top" and self.frontier_at_top and (ok & frontier).any():
            # at the top both kinds land, and a new model may be either: the hull also holds
            # the frontier folds' own interval, which the random folds' many smaller errors
            # narrowed in the pooled one (replay: 80 % coverage at stop on AI2D's frontier
            # hold-out with 10 folds, 96 % with it; adaptive_interval_choice.py)
            hulls.append(col[ok & frontier])
        for other in hulls:
            plo, phi = conformal(pred, other, self.level)
            lo, hi = min(lo, plo), max(hi, phi)
        lo, hi = max(0.0, lo), min(1.0, hi)
        # the point moves by the regime's median error — the predictor's bias there —
        # everywhere, or (shift "outside") only at the top or beyond the panel
        if regime != "interior" and self.nearest_shift is not None:
            # at the top both kinds of held-out model land (random folds' errors centre near
            # 0, frontier folds' fall short), and one regime's median gave a random model at
            # the top the frontier's correction: the rows whose predictions stood nearest in
            # position (replay: mean log MAE ratio −0.566 → −0.585; adaptive_top_shift.py)
            z = float(placement_position(np.array([pred]), ref)[0])
            shift = nearest_shift(col, positions[:, j], z, self.nearest_shift)
        elif self.policy.shift == "all" or regime != "interior":
            shift = float(np.median(errs))
        else:
            shift = 0.0
        pred = float(np.clip(pred + shift, lo, hi))
        return pred, lo, hi, regime

    def estimate(
        self,
        answers: np.ndarray,
        asked: np.ndarray,
        draws: Sequence[Draw] | None = None,
        exclude: np.ndarray | None = None,
        static: StaticRound | None = None,
    ) -> AdaptiveEstimate:
        """:class:`AdaptiveEstimate` from the answers so far (answers (n,), NaN = not asked or
        failed; asked (n,) bool); with the test's ``draws`` (:meth:`draw_items`, in order) guarded
        by their design estimate over the pool (the items not ``exclude`` (n,) bool). Answered
        items that are not draws were asked before the first draw (a static run's items that the
        test continues): they count as known in every draw's term, and — ``static``, their
        stratified design — give the design estimate their own Horvitz–Thompson term."""
        answers = np.asarray(answers, float)
        scored = np.asarray(asked, bool) & np.isfinite(answers)
        count = int(scored.sum())
        theta, raw = self.procedure.point(answers, asked)
        pred, lo, hi, regime = self.interval(raw, count)
        model_pred: float | None = None
        design: float | None = None
        design_se: float | None = None
        moved = False
        if draws is not None:
            model_pred = pred
            pool = self.n if exclude is None else int((~np.asarray(exclude, bool)).sum())
            known = float(answers[answered_before(answers, asked, draws)].sum())
            design, design_se = design_estimate(draws, answers, max(pool, 1), known, static)
            g = guard(pred, lo, hi, design, design_se, _normal_quantile(self.level), self.guard_k)
            pred, lo, hi, moved = g.value, g.lo, g.hi, g.moved
            if np.isfinite(design_se):
                ref = self.reference_full[np.isfinite(self.reference_full)]
                regime = str(placement_regime(np.array([pred]), ref)[0])
        ref = self.reference_full[np.isfinite(self.reference_full)]
        rank = 1 + float((ref > pred).sum())
        rank_lo = 1 + float((ref > hi).sum()) if np.isfinite(hi) else 1.0
        rank_hi = 1 + float((ref > lo).sum()) if np.isfinite(lo) else float(len(ref) + 1)
        return AdaptiveEstimate(
            count,
            theta,
            float(answers[scored].mean()) if count else float("nan"),
            pred,
            lo,
            hi,
            regime,
            rank,
            rank_lo,
            rank_hi,
            len(ref),
            model_pred,
            design,
            design_se,
            moved,
        )

    def stop_reason(
        self,
        est: AdaptiveEstimate,
        asked: np.ndarray,
        target_width: float | None,
        spent: int | None = None,
    ) -> str | None:
        """Why the test of this model ends now, or None: the interval is narrower than
        ``target_width``; ``max_items`` were spent (``spent``: the items the test itself added —
        a continued static run's answers are not its budget —; default every item asked); no
        item is left to ask."""
        if target_width is not None and est.width <= target_width:
            return f"interval narrower than {target_width:g}"
        used = int(np.asarray(asked, bool).sum()) if spent is None else spent
        if used >= self.max_items:
            return f"item budget ({self.max_items}) spent" + (
                f" (items drawn by the test; {int(np.asarray(asked, bool).sum()) - used} "
                "continued from the static run besides)"
                if spent is not None and int(np.asarray(asked, bool).sum()) > used
                else ""
            )
        if bool(np.asarray(asked, bool).all()):
            return "every item asked"
        return None


def _normal_quantile(level: float) -> float:
    """The standard normal quantile of a two-sided ``level`` interval (1.645 at 0.90)."""
    from statistics import NormalDist

    return float(NormalDist().inv_cdf(0.5 + level / 2))
