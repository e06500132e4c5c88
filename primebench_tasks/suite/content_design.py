"""Design-only benchmarks (#72): a benchmark with no item-level reference runs joins a suite as a
probability design that resolves on the user's machine from the dataset itself.

**The draw.** Every row of the benchmark's pool gets a *content key*: the SHA-256 (first 16 hex
digits) of the design's salt, the row's stratum, its key fields (case and white space folded; a list field
item by item) and, where the design names an image field, a 16 × 16 grey mean-hash of the image.
The key is the row's permanent random number (survey sampling's PRN): within each stratum (the
rows sharing the value of ``strata_field``; one stratum without it) the rows are ordered by
their key and the first n_h are taken. Every user of a suite version therefore asks the same
items of the same data, whatever the row order of their copy. Rows whose keys coincide are the
same item by content; they are told apart by a suffix in the order of the hash of their whole
text (so identical rows are interchangeable and the draw still does not depend on row order).
A cross-harness design (``view``, #81: :mod:`primebench_tasks.data.design_views`) keys the text
alone and ranks the rows of one text by their image's mean levels, rank k keyed as ``text#k``
(:func:`resolve`), so that lmms-eval's and VLMEvalKit's copies of an image — PNG and JPEG — give
the same keys.

**The allocation.** n items over the strata in proportion to N_h (largest remainder, ties to the
stratum that sorts first), at least two from every stratum of two or more rows (so that its
variance can be estimated) and never more than N_h: :func:`allocate`.

**The pool.** The resolved draw records N_h of every stratum and a fingerprint of the whole pool
(the SHA-256 of its sorted ``stratum, key`` lines). A design may pin a pool (``pool``: N_h and
the fingerprint, written by a build on the data or by the first resolve on the user's machine):
a dataset whose pool differs is refused with a line naming the benchmark and what changed,
never silently placed.

**The estimate** (:func:`stratified_estimate`): the stratified mean Σ_h W_h ȳ_h, W_h = N_h / N,
π_i = n_h / N_h, with variance Σ_h W_h² (1 − n_h/N_h) s_h² / n_h and a normal interval. For a
score in [0, 1] a stratum's s_h² is floored at p̃(1 − p̃)·n_h/(n_h − 1), p̃ = (Σy + ½)/(n_h + 1): a
stratum of all-right (or all-wrong) answers would otherwise claim no variance at all. No item
panel assists it: its interval is the random floor (about ±0.07 at 100 items), said as such.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from primebench_tasks.data.design_views import check_view, design_view
from primebench_tasks.errors import InputError

SCHEME = "content_prn"
"""The one scheme a design-only entry records: strata by a field, PRN order by content key."""
KEY_DIGITS = 16
"""Hex digits of a content key and of a pool fingerprint."""
MIN_PER_STRATUM = 2
MIN_DESIGN_ITEMS = 10
"""The fewest items a design-only benchmark may be sized to (``tasks lmms-eval --design-items``):
below ten, the normal interval of a design estimate is not one to trust (its 90 % half-width at
one half is already ±0.26 at ten)."""
"""Items drawn from every stratum of at least this many rows (its variance needs two)."""
Z90 = 1.6448536269514722
"""The normal quantile of a two-sided 90 % interval."""


def _norm(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "\x1e".join(_norm(v) for v in value)
    if value is None:
        return ""
    return re.sub(r"\s+", " ", str(value)).strip().lower()


def image_hash(image: Any) -> str:
    """16 × 16 grey mean-hash of a PIL image (64 hex digits); '' for no image."""
    if image is None:
        return ""
    import numpy as np

    px = np.asarray(image.convert("L").resize((16, 16)), dtype=np.float64).ravel()
    bits = "".join("1" if p > px.mean() else "0" for p in px)
    return f"{int(bits, 2):064x}"


@dataclass(frozen=True)
class PinnedPool:
    """A pool a design was resolved on: N_h of every stratum (stratum value → rows) and the
    fingerprint of its sorted ``stratum, key`` lines."""

    strata: Mapping[str, int]
    fingerprint: str

    @property
    def N(self) -> int:
        return sum(self.strata.values())

    def as_document(self) -> dict[str, Any]:
        return {"strata": dict(sorted(self.strata.items())), "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class ContentDesign:
    """How a design-only benchmark is drawn (see the module docstring): ``n`` items (the build
    parameter), strata by ``strata_field`` (None: one stratum), keys from ``key_fields`` (and
    ``image_field``'s image where given), ordered under ``salt``; ``pool`` pins the data."""

    n: int
    key_fields: tuple[str, ...]
    strata_field: str | None = None
    image_field: str | None = None
    salt: str = "primebench/1"
    pool: PinnedPool | None = None
    view: str | None = None
    """A cross-harness view (:mod:`primebench_tasks.data.design_views`): the fields name its
    canonical rows, which lmms-eval's rows and VLMEvalKit's TSV rows both give; None: the
    fields are the lmms-eval rows' own (suites before #81)."""

    def as_document(self) -> dict[str, Any]:
        doc = {
            "scheme": SCHEME,
            "n": self.n,
            "key_fields": list(self.key_fields),
            "strata_field": self.strata_field,
            "image_field": self.image_field,
            "salt": self.salt,
            "pool": None if self.pool is None else self.pool.as_document(),
        }
        return doc if self.view is None else {**doc, "view": self.view}

    def lmms_eval_fields(self) -> list[str]:
        """The fields this design reads from an lmms-eval row, sorted."""
        if self.view is not None:
            return sorted(design_view(self.view).lmms_eval_fields)
        return sorted(
            {*self.key_fields, *(f for f in (self.strata_field, self.image_field) if f is not None)}
        )

    def lmms_eval_row(self, row: Mapping[str, Any]) -> Mapping[str, Any]:
        """The row this design keys for an lmms-eval row: its canonical row under the view (the
        row itself without one)."""
        if self.view is None:
            return row
        return design_view(self.view).lmms_eval_row(row)

    @classmethod
    def from_document(cls, d: Any, file: str, row: str) -> ContentDesign:
        """The checked design of a manifest's ``design_only`` entry; errors name the file, the
        ``category/benchmark`` row and the field."""

        def fail(msg: str, fld: str) -> InputError:
            return InputError(msg, file=file, row=row, field=f"design.{fld}")

        if not isinstance(d, dict) or d.get("scheme") != SCHEME:
            raise InputError(
                f"must be an object with scheme {SCHEME!r}", file=file, row=row, field="design"
            )
        n = d.get("n")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise fail(f"must be a whole number of items ≥ 1, not {n!r}", "n")
        keys = d.get("key_fields")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise fail("must be a non-empty list of field names", "key_fields")
        for name in ("strata_field", "image_field"):
            v = d.get(name)
            if v is not None and (not isinstance(v, str) or not v):
                raise fail("must be a field name or null", name)
        salt = d.get("salt", "primebench/1")
        if not isinstance(salt, str) or not salt:
            raise fail("must be a non-empty string", "salt")
        view = d.get("view")
        if view is not None:
            check_view(view, tuple(keys), d.get("strata_field"), d.get("image_field"), fail)
        pool = d.get("pool")
        pinned = None
        if pool is not None:
            strata = pool.get("strata") if isinstance(pool, dict) else None
            fp = pool.get("fingerprint") if isinstance(pool, dict) else None
            if (
                not isinstance(strata, dict)
                or not strata
                or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 1
                    for v in strata.values()
                )
            ):
                raise fail("must give every stratum's size N_h (a whole number ≥ 1)", "pool")
            if not isinstance(fp, str) or not re.fullmatch(f"[0-9a-f]{{{KEY_DIGITS}}}", fp):
                raise fail(f"must be {KEY_DIGITS} hex digits", "pool.fingerprint")
            pinned = PinnedPool(strata={str(k): int(v) for k, v in strata.items()}, fingerprint=fp)
        return cls(
            n=n,
            key_fields=tuple(keys),
            strata_field=d.get("strata_field"),
            image_field=d.get("image_field"),
            salt=salt,
            pool=pinned,
            view=view,
        )


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """n_h per stratum: first min(N_h, 2) from every stratum (its variance needs two), then the
    rest of ``n`` one item at a time to the stratum furthest below its proportional share
    n·N_h/N (equal gaps to the stratum that sorts first), never more than N_h. Hand case:
    N = {a: 6, b: 3, c: 1}, n = 7 → floors a 2, b 2, c 1; shares 4.2, 2.1, 0.7; the two left go
    to a (gap 2.2, then 1.2) → a 4, b 2, c 1."""
    names = sorted(sizes)
    total = sum(sizes.values())
    take = {h: min(sizes[h], MIN_PER_STRATUM) for h in names}
    need = sum(take.values())
    if n < need:
        raise InputError(
            f"{n} items cannot cover {len(names)} strata with {MIN_PER_STRATUM} from each "
            f"(at least {need} needed)",
            field="n",
        )
    for _ in range(min(n, total) - need):
        open_ = [h for h in names if take[h] < sizes[h]]
        h = max(open_, key=lambda g: (n * sizes[g] / total - take[g], -names.index(g)))
        take[h] += 1
    return take


@dataclass(frozen=True)
class DrawnPool:
    """A design resolved on one dataset: the strata (value → N_h, n_h), the drawn items in
    draw order (content key, stratum value, row position in the dataset as given) and the
    pool's fingerprint. π_i = n_h / N_h."""

    strata: Mapping[str, tuple[int, int]]
    items: tuple[tuple[str, str, int], ...]
    fingerprint: str

    @property
    def N(self) -> int:
        return sum(N for N, _ in self.strata.values())

    def inclusion(self, stratum: str) -> float:
        N, n = self.strata[stratum]
        return n / N

    def pinned(self) -> PinnedPool:
        return PinnedPool({h: N for h, (N, _) in self.strata.items()}, self.fingerprint)

    def as_document(self) -> dict[str, Any]:
        """The draw as the run keeps it: ``strata`` {value: [N_h, n_h]}, ``items`` {key:
        stratum}, ``fingerprint``."""
        return {
            "strata": {h: [N, n] for h, (N, n) in sorted(self.strata.items())},
            "items": {k: h for k, h, _ in self.items},
            "fingerprint": self.fingerprint,
        }


def stratum_of(row: Mapping[str, Any], design: ContentDesign) -> str:
    """The stratum of one row: its ``strata_field`` value, folded (``all`` without one)."""
    return "all" if design.strata_field is None else _norm(row[design.strata_field])


def row_key(row: Mapping[str, Any], design: ContentDesign) -> str:
    """The content key of one row (see the module docstring; its stratum is part of it: the
    same question in two strata — POPE's splits share some — is two items); KeyError for a
    missing field. A cross-harness design (``view``) keys the text alone: its image ranks the
    rows of the same text (:func:`resolve`)."""
    parts = [design.salt, stratum_of(row, design), *(_norm(row[f]) for f in design.key_fields)]
    if design.image_field is not None and design.view is None:
        parts.append(image_hash(row[design.image_field]))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:KEY_DIGITS]


def image_order(image: Any) -> tuple[float, float, float, float]:
    """An image's mean grey level, then its mean red, green and blue (0–255): what ranks the
    rows of one text in a cross-harness design — statistics a JPEG re-encoding moves by
    hundredths of a level, where a binary mean-hash flips a cell for one image in six
    (research/design_only/image_key.py). (0, 0, 0, 0) for no image."""
    if image is None:
        return (0.0, 0.0, 0.0, 0.0)
    import numpy as np

    grey = float(np.asarray(image.convert("L"), dtype=np.float64).mean())
    r, g, b = (float(v) for v in np.asarray(image.convert("RGB"), dtype=np.float64).mean((0, 1)))
    return (grey, r, g, b)


def _spread(
    first: list[tuple[str, str, int]],
    get: Callable[[int], Mapping[str, Any]],
    design: ContentDesign,
) -> list[tuple[str, str, int]]:
    """A cross-harness design's keys: the rows of a stratum that share a text key ``t`` are
    ranked by :func:`image_order` of their image (then their whole text's hash, then position:
    rows equal in all are interchangeable), and the row of rank k is keyed SHA-256(``t#k``) —
    so one text's rows spread over the key order like any items (a draw is never a run of one
    question's rows) and only a rank that a re-encoding swaps, in a group the draw splits,
    changes which rows are drawn. A text's single row is ``t#0`` and its image is not read."""
    groups: dict[tuple[str, str], list[int]] = {}
    for h, key, pos in first:
        groups.setdefault((h, key), []).append(pos)
    out = []
    for (h, key), members in groups.items():
        if len(members) > 1:
            order = []
            for pos in members:
                row = get(pos)
                image = row[design.image_field] if design.image_field is not None else None
                order.append((image_order(image), _whole_text(row, design.image_field), pos))
            members = [pos for _, _, pos in sorted(order)]
        for k, pos in enumerate(members):
            out.append((h, hashlib.sha256(f"{key}#{k}".encode()).hexdigest()[:KEY_DIGITS], pos))
    return out


def _whole_text(row: Mapping[str, Any], skip: str | None) -> str:
    return hashlib.sha256(
        "\x1f".join(f"{k}={_norm(v)}" for k, v in sorted(row.items()) if k != skip).encode()
    ).hexdigest()


def resolve(
    rows: Sequence[Mapping[str, Any]] | Callable[[int], Mapping[str, Any]],
    design: ContentDesign,
    where: str,
    n_rows: int | None = None,
) -> DrawnPool:
    """Resolve ``design`` on a dataset (``rows``: the rows, or a function of the row position
    with ``n_rows``). ``where``: the benchmark (and file) named by every error. Refuses a row
    lacking a key or strata field (naming the row and field), a stratum too small for the
    allocation and a pool that differs from the design's pinned one."""
    get = rows if callable(rows) else rows.__getitem__
    count = n_rows if n_rows is not None else len(rows)  # type: ignore[arg-type]
    first: list[tuple[str, str, int]] = []
    for pos in range(count):
        row = get(pos)
        try:
            first.append((stratum_of(row, design), row_key(row, design), pos))
        except KeyError as exc:
            raise InputError(
                f"{where}: the row has no field {exc.args[0]!r}, which the design reads",
                row=f"dataset row {pos}",
                field=str(exc.args[0]),
            ) from None
        except (ValueError, TypeError) as exc:  # a value the design's view cannot read
            raise InputError(f"{where}: {exc}", row=f"dataset row {pos}") from None
    if not first:
        raise InputError(f"{where}: the dataset has no rows", field="rows")
    if design.view is not None:
        first = _spread(first, get, design)
    # rows whose content keys collide are ordered by their whole text's hash (then position),
    # so the suffixes do not depend on row order; only they need it
    counts: dict[tuple[str, str], int] = {}
    for h, key, _ in first:
        counts[(h, key)] = counts.get((h, key), 0) + 1
    keyed = sorted(
        (h, key, _whole_text(get(pos), design.image_field) if counts[(h, key)] > 1 else "", pos)
        for h, key, pos in first
    )
    unique: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for h, key, _, pos in keyed:
        copies = seen.get((h, key), 0)
        seen[(h, key)] = copies + 1
        unique.append((h, key if copies == 0 else f"{key}#{copies + 1}", pos))
    sizes: dict[str, int] = {}
    for h, _, _ in unique:
        sizes[h] = sizes.get(h, 0) + 1
    fingerprint = hashlib.sha256(
        "\n".join(f"{h}\t{k}" for h, k, _ in unique).encode("utf-8")
    ).hexdigest()[:KEY_DIGITS]
    if design.pool is not None:
        _check_pool(design.pool, sizes, fingerprint, where)
    try:
        take = allocate(sizes, design.n)
    except InputError as exc:
        raise InputError(f"{where}: {exc.args[0]}", field="design.n") from None
    drawn: list[tuple[str, str, int]] = []
    by_h: dict[str, list[tuple[str, int]]] = {}
    for h, k, pos in unique:
        by_h.setdefault(h, []).append((k, pos))
    for h in sorted(by_h):
        for k, pos in sorted(by_h[h])[: take[h]]:
            drawn.append((k, h, pos))
    return DrawnPool(
        strata={h: (sizes[h], take[h]) for h in sorted(sizes)},
        items=tuple(drawn),
        fingerprint=fingerprint,
    )


def _check_pool(pool: PinnedPool, sizes: Mapping[str, int], fingerprint: str, where: str) -> None:
    if fingerprint == pool.fingerprint:
        return
    gone = sorted(set(pool.strata) - set(sizes))
    new = sorted(set(sizes) - set(pool.strata))
    moved = sorted(h for h in set(sizes) & set(pool.strata) if sizes[h] != pool.strata[h])
    what = (
        [f"strata gone: {gone}"] * bool(gone)
        + [f"new strata: {new}"] * bool(new)
        + [f"{h}: {pool.strata[h]} → {sizes[h]} rows" for h in moved[:3]]
    ) or ["the same strata and sizes, other items"]
    raise InputError(
        f"{where}: the dataset is not the pool this suite's design was drawn on "
        f"({sum(sizes.values())} rows, fingerprint {fingerprint}; the design's: {pool.N} rows, "
        f"{pool.fingerprint}; {'; '.join(what)}): its items would not be the suite's — use "
        "the dataset the suite names, or rebuild the suite on this one",
        field="design.pool",
    )


@dataclass(frozen=True)
class DesignEstimate:
    """A design-only benchmark's estimate of its full score: ``value`` (the stratified mean),
    ``se``, the 90 % and 95 % normal intervals (clipped to [0, 1]), items scored."""

    value: float
    se: float
    lo90: float
    hi90: float
    lo95: float
    hi95: float
    n_scored: int


def stratified_estimate(
    drawn: Mapping[str, tuple[int, int]],
    scores: Mapping[str, Sequence[float]],
    bounded: bool = True,
) -> DesignEstimate | None:
    """The stratified estimate from the scored items of each stratum (``drawn``: stratum →
    (N_h, n_h) of the design; ``scores``: stratum → the scores of its drawn items that were
    scored). An item without a score leaves its stratum's n_h at the scored ones (finite
    population correction on those). None when a stratum has no scored item: the benchmark is
    then not estimated (said by the caller). ``bounded``: scores in [0, 1] (the variance floor of
    the module docstring applies)."""
    N = sum(Nh for Nh, _ in drawn.values())
    value, var, n_scored = 0.0, 0.0, 0
    for h, (Nh, _) in drawn.items():
        y = [float(v) for v in scores.get(h, ())]
        if len(y) == 0:
            return None
        W = Nh / N
        mean = math.fsum(y) / len(y)
        value += W * mean
        n_scored += len(y)
        if len(y) >= 2 and Nh > len(y):
            s2 = math.fsum((v - mean) ** 2 for v in y) / (len(y) - 1)
            if bounded:
                p = (math.fsum(y) + 0.5) / (len(y) + 1)
                s2 = max(s2, p * (1 - p) * len(y) / (len(y) - 1))
            var += W * W * (1 - len(y) / Nh) * s2 / len(y)
        elif Nh > len(y):  # one scored item of a larger stratum: the widest bounded variance
            var += W * W * (1 - len(y) / Nh) * 0.25
    se = math.sqrt(var)
    z95 = 1.959963984540054
    return DesignEstimate(
        value=value,
        se=se,
        lo90=max(0.0, value - Z90 * se),
        hi90=min(1.0, value + Z90 * se),
        lo95=max(0.0, value - z95 * se),
        hi95=min(1.0, value + z95 * se),
        n_scored=n_scored,
    )


DESIGN_SALT = "primebench/2"
"""The salt of the cross-harness designs (#81; a view's keys are not the lmms-eval-only keys of
``primebench/1``, so the released draw is a new one)."""
DESIGN_ONLY_ITEMS = 100
"""Items per design-only benchmark in the released wide suite (a build parameter:
``primebench widen --items``); its 90 % interval is about ±0.07 at 100 items, ±0.10 at 50."""


def design_only_document(card: Any, n: int = DESIGN_ONLY_ITEMS) -> dict[str, Any]:
    """The manifest entry (``design_only`` list) of a benchmark card with a ``[design_only]``
    table (:class:`~primebench_tasks.data.cards.DesignOnlyCard`), drawing ``n`` items."""
    d = card.design_only
    if d is None:
        raise InputError(
            f"benchmark {card.name!r} has no [design_only] table",
            file=card.file,
            field="design_only",
        )
    cat = card.catalogue
    return {
        "name": card.name,
        "category": cat.category,
        "metric": cat.metric,
        "score_range": [cat.score_min, cat.score_max],
        "lmms_eval_task": d.task,
        "vlmeval_dataset": cat.vlmeval_dataset,
        "upstream": {"task": d.task, "scorer": d.scorer, "evidence": d.evidence},
        "design": ContentDesign(
            n=n,
            key_fields=tuple(d.key_fields),
            strata_field=d.strata_field,
            image_field=d.image_field,
            salt=DESIGN_SALT if d.view is not None else "primebench/1",
            view=d.view,
        ).as_document(),
    }


def interval_width(n: int, p: float = 0.5, z: float = Z90) -> float:
    """The width of the design's 90 % interval at ``n`` items for a score near ``p`` (simple
    random sampling, a large pool): 2·z·√(p(1 − p)/n) — the widest, at p = ½. Hand case:
    n = 100 → 2 · 1.645 · 0.05 = 0.164."""
    return 2 * z * math.sqrt(p * (1 - p) / n)
