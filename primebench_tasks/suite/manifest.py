"""The suite manifest, typed (schema ``primebench.suite/1``; docs/architecture.md, "Suite manifest"): what every builder writes
and every harness, runner and placement reads.

:class:`SuiteManifest` is the checked, immutable view of one manifest document: every field the
readers use is a typed attribute (the benchmarks in manifest order as :class:`BenchmarkEntry`,
their item ids, source panels and placement calibrations), checked once when the manifest is read
(:meth:`SuiteManifest.read`) or made (:meth:`SuiteManifest.from_document`), with errors naming the
file, the ``category/benchmark`` row and the field. The document itself is kept, unchanged, for
writing and hashing (``version`` is the content hash of the rest); fields a reader does not type
(``params``, ``stages``, ``fidelity``, ``headroom``, ...) are read from :attr:`SuiteManifest.document`
or through the read-only mapping interface, which also keeps older code that indexes a manifest
like a dict working.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from primebench_tasks.data.io import canonical_json, content_hash, read_json_document
from primebench_tasks.errors import InputError
from primebench_tasks.suite.content_design import ContentDesign, PinnedPool

SCHEMA = "primebench.suite/1"
AGGREGATES = ("mean_of_category_means", "item_mean")
"""``mean_of_category_means``: the suite score is the mean of its categories' item means (the
paper's); ``item_mean``: the mean over all suite items (ResampledBench)."""
DESIGN_SCHEME = "stratified"
"""The one probability design a manifest records (``select.stratified``): strata of sizes N_h,
n_h items drawn uniformly without replacement from each, π_i = n_h / N_h."""
RELEASED_SUITE_NAMES = (
    "primebench",
    "primebench_mathvision",
    "primebench_mathvision_testmini",
    "primebench_resampled",
    "primebench_vlmeval",
    "primebench_wide",
)
"""The released suites' names (``task_configs/suites``; a test holds them to it): a suite a user
builds never takes one, or its lmms-eval tasks would shadow the released suite under
``--include_path`` (lmms-eval ran a user's 100 items as ``primebench``)."""
INCLUSION_ROUNDING = 5e-7
"""How far a stored π_i may sit from n_h / N_h: manifest floats are written to 6 places."""
EFFECTIVE_SHARE = 0.5
"""The least effective size a design may have, as a share of its drawn items: Kish's
n_eff = (Σ_h N_h)² / Σ_h N_h² / n_h (n for a proportional design). Below it a few items carry
most of the estimate, and the residuals' spread over so few cannot say how far off it is (a
variance estimated from them collapses: one item alone in a stratum of 609 beside a census of
99 placed a model at 0.838 [0.706, 0.969], rank 1, where the released design gives 0.332)."""
MAX_POOL = 10_000_000
"""The largest stratum a design may claim (a benchmark of ten million items); the placement
holds every design to its reference panel's items besides (``place.benchmark``)."""


@dataclass(frozen=True)
class Stratum:
    """One stratum of a benchmark's design: its size ``N`` (items in the pool) and the number
    ``n`` of them drawn (1 ≤ n ≤ N); every drawn item has π = n / N."""

    N: int
    n: int


@dataclass(frozen=True)
class Design:
    """How a benchmark's suite items were drawn: the strata and each item's stratum. The
    inclusion probabilities follow from it (π_i = n_h / N_h) and the design weights 1/π_i of
    a stratum's drawn items add up to its N_h; ``pool`` = Σ_h N_h, the items the design
    estimates over."""

    strata: tuple[Stratum, ...]
    stratum: Mapping[str, int]

    @property
    def pool(self) -> int:
        return sum(h.N for h in self.strata)

    def inclusion(self, item_id: str) -> float:
        h = self.strata[self.stratum[item_id]]
        return h.n / h.N

    @property
    def effective_size(self) -> float:
        """Kish's effective number of drawn items, (Σ_h N_h)² / Σ_h N_h² / n_h: Σ_h n_h for a
        proportional design (every weight N_h / n_h equal), near 1 where one weight carries
        the estimate."""
        return self.pool**2 / sum(h.N * h.N / h.n for h in self.strata)


def versioned(document: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` with its ``version`` (re)computed: the content hash of the canonical JSON of
    everything else (what :meth:`SuiteManifest.read` checks)."""
    body = {k: v for k, v in document.items() if k != "version"}
    return {**body, "version": content_hash(canonical_json(body))}


@dataclass(frozen=True)
class SourcePanel:
    """The panel a suite (``built_from``) or one benchmark (``source``) was built on: its name,
    content hash and reference models."""

    panel: str
    panel_hash: str
    models: tuple[str, ...]


@dataclass(frozen=True)
class BenchmarkEntry:
    """One benchmark of a suite: its category, the suite's item ids (panel item ids, in the
    panel's order), its names in lmms-eval and VLMEvalKit, the metric and one item's score range,
    and, for multi-source suites, its own source panel and placement calibration. ``upstream``
    (the verified lmms-eval task and row key), ``vlmeval`` (the VLMEvalKit dataset and key) and
    ``local_task`` are the release notes of the harnesses, kept as written."""

    name: str
    category: str
    item_ids: tuple[str, ...]
    lmms_eval_task: str | None
    vlmeval_dataset: str | None
    metric: str | None
    score_range: tuple[float, float]
    source: SourcePanel | None = None
    placement_calibration: Mapping[str, Any] | None = None
    upstream: Mapping[str, Any] | None = None
    vlmeval: Mapping[str, Any] | None = None
    local_task: str | None = None
    no_lmms_eval_task: str | None = None
    """Why the suite's lmms-eval folder does not run this benchmark (placed from the other
    harnesses; an lmms-eval run is placed without it and says so)."""
    inclusion: Mapping[str, float] | None = None
    """The probability design of a suite drawn with known inclusion probabilities
    (``select.stratified``): item id → π_i in (0, 1] for every suite item of the benchmark; the
    model-assisted estimator weighs item i by 1/π_i. None: the items were chosen, not drawn."""
    design: Design | None = None
    """What the draw was (strata, N_h, n_h): every π_i in ``inclusion`` must follow from it;
    present exactly when ``inclusion`` is."""

    def design_weights(self) -> tuple[float, ...] | None:
        """1/π_i of the suite items in ``item_ids`` order, normalised to sum to 1, or None."""
        if self.inclusion is None:
            return None
        d = [1.0 / self.inclusion[i] for i in self.item_ids]
        total = sum(d)
        return tuple(x / total for x in d)


@dataclass(frozen=True)
class DesignOnlyEntry:
    """A benchmark of the suite with no item-level reference runs (#72): its items are not
    listed but drawn on the user's machine from the dataset itself by ``design``
    (:mod:`~primebench_tasks.suite.content_design`), and its full score is the design's
    estimate (no item model assists it; its rank comes from a leaderboard only). ``upstream``:
    the lmms-eval task that runs it and its item scorer (``{"task", "scorer"}``);
    ``vlmeval_dataset``: its name in VLMEvalKit and on the leaderboard."""

    name: str
    category: str
    metric: str
    score_range: tuple[float, float]
    design: ContentDesign
    lmms_eval_task: str | None
    upstream: Mapping[str, Any] | None
    vlmeval_dataset: str | None


def _design_only(raw: Any, taken: set[str], file: str) -> tuple[DesignOnlyEntry, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail("must be a list of design-only benchmarks", file, fld="design_only")
    out = []
    for k, e in enumerate(raw):
        if not isinstance(e, dict):
            raise _fail("must be an object", file, f"design_only/{k}")
        name = str(_str(e.get("name"), file, f"design_only/{k}", "name"))
        row = f"{e.get('category')}/{name}"
        if name in taken:
            raise _fail("is in the suite twice", file, row, "name")
        taken.add(name)
        rng = _score_range(e.get("score_range"), file, row)
        up = _table(e.get("upstream"), file, row, "upstream")
        if up is not None and not (isinstance(up.get("task"), str) and up.get("scorer")):
            raise _fail("must name the lmms-eval task and its item scorer", file, row, "upstream")
        out.append(
            DesignOnlyEntry(
                name=name,
                category=str(_str(e.get("category"), file, row, "category")),
                metric=str(_str(e.get("metric"), file, row, "metric")),
                score_range=rng,
                design=ContentDesign.from_document(e.get("design"), file, row),
                lmms_eval_task=_str(e.get("lmms_eval_task"), file, row, "lmms_eval_task", True),
                upstream=up,
                vlmeval_dataset=_str(e.get("vlmeval_dataset"), file, row, "vlmeval_dataset", True),
            )
        )
    return tuple(out)


def _score_range(rng: Any, file: str, row: str) -> tuple[float, float]:
    """A benchmark's ``score_range``: [min, max] numbers with min < max."""
    if (
        not isinstance(rng, list)
        or len(rng) != 2
        or not all(isinstance(x, int | float) for x in rng)
        or not rng[0] < rng[1]
    ):
        raise _fail("must be [min, max] with min < max", file, row, "score_range")
    return float(rng[0]), float(rng[1])


def _fail(msg: str, file: str, row: str | None = None, fld: str | None = None) -> InputError:
    return InputError(msg, file=file, row=row, field=fld)


def _str(v: Any, file: str, row: str | None, fld: str, optional: bool = False) -> str | None:
    if v is None and optional:
        return None
    if not isinstance(v, str) or not v:
        raise _fail("must be a non-empty string", file, row, fld)
    return v


def _table(v: Any, file: str, row: str | None, fld: str) -> Mapping[str, Any] | None:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _fail("must be an object", file, row, fld)
    return v


def _source(v: Any, file: str, row: str | None, fld: str) -> SourcePanel:
    if not isinstance(v, dict):
        raise _fail("must be an object with panel, panel_hash and models", file, row, fld)
    models = v.get("models")
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise _fail("must be a list of model names", file, row, f"{fld}.models")
    return SourcePanel(
        panel=str(_str(v.get("panel"), file, row, f"{fld}.panel")),
        panel_hash=str(_str(v.get("panel_hash"), file, row, f"{fld}.panel_hash")),
        models=tuple(models),
    )


def _entry(cat: str, b: str, e: Any, file: str) -> BenchmarkEntry:
    row = f"{cat}/{b}"
    if not isinstance(e, dict):
        raise _fail("must be an object", file, row)
    ids = e.get("item_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise _fail("must be a non-empty list of item ids (strings)", file, row, "item_ids")
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise _fail(f"repeats item ids {dup}", file, row, "item_ids")
    rng = _score_range(e.get("score_range"), file, row)
    local = e.get("local_task")
    inclusion = e.get("inclusion")
    design = None
    if inclusion is not None or e.get("design") is not None:
        design = _design(e.get("design"), inclusion, ids, file, row)
    return BenchmarkEntry(
        name=b,
        category=cat,
        item_ids=tuple(ids),
        lmms_eval_task=_str(e.get("lmms_eval_task"), file, row, "lmms_eval_task", True),
        vlmeval_dataset=_str(e.get("vlmeval_dataset"), file, row, "vlmeval_dataset", True),
        metric=_str(e.get("metric"), file, row, "metric", True),
        score_range=rng,
        source=None if e.get("source") is None else _source(e["source"], file, row, "source"),
        placement_calibration=_table(
            e.get("placement_calibration"), file, row, "placement_calibration"
        ),
        upstream=_table(e.get("upstream"), file, row, "upstream"),
        vlmeval=_table(e.get("vlmeval"), file, row, "vlmeval"),
        local_task=None if local is None else str(local),
        no_lmms_eval_task=_str(e.get("no_lmms_eval_task"), file, row, "no_lmms_eval_task", True),
        inclusion=None if inclusion is None else {str(i): float(p) for i, p in inclusion.items()},
        design=design,
    )


def _count(v: Any, least: int) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= least else None


def _implied_design(inclusion: Mapping[str, float], file: str, row: str) -> dict[str, Any]:
    """The design a manifest released before designs were recorded implies: the items of one
    inclusion probability p form one stratum of n = their count and N = round(n / p) — the
    draw that gives every one of them exactly p. The checks of :func:`_design` then hold it to
    that (a lone edited weight leaves its old stratum's N fractional and is refused) and the
    placement to its pool (Σ N_h within the reference panel's items)."""
    groups: dict[float, list[str]] = {}
    for i, p in inclusion.items():
        groups.setdefault(float(p), []).append(i)
    strata, stratum = [], {}
    for h, (p, members) in enumerate(sorted(groups.items())):
        implied = len(members) / p if p >= len(members) / MAX_POOL else math.inf
        if not math.isfinite(implied) or implied > MAX_POOL:
            raise _fail(
                f"item {members[0]}'s inclusion probability {p!r} implies a pool of "
                f"{implied:.3g} items (at most {MAX_POOL} are read)",
                file,
                row,
                "inclusion",
            )
        strata.append({"N": max(len(members), round(implied)), "n": len(members)})
        stratum.update(dict.fromkeys(members, h))
    return {"scheme": DESIGN_SCHEME, "strata": strata, "stratum": stratum}


def _design(d: Any, inclusion: Any, ids: list[str], file: str, row: str) -> Design:
    """The checked design of one benchmark: ``design`` and ``inclusion`` both present, every
    suite item in one stratum, each stratum's N_h and n_h whole numbers with 1 ≤ n_h ≤ N_h, no
    more of its items in the suite than were drawn, and every π_i = n_h / N_h (to the 6 places
    floats are written with). A probability that does not follow from the design — an edited
    weight that would carry the whole estimate — is refused."""
    if inclusion is None:
        raise _fail("a design without inclusion probabilities", file, row, "inclusion")
    if not isinstance(inclusion, dict) or set(inclusion) != set(ids):
        raise _fail(
            "must be an object giving every suite item's inclusion probability",
            file,
            row,
            "inclusion",
        )
    bad = [
        i
        for i, p in inclusion.items()
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < p <= 1.0
    ]
    if bad:
        raise _fail(
            f"item {bad[0]}'s inclusion probability {inclusion[bad[0]]!r} is not in (0, 1]",
            file,
            row,
            "inclusion",
        )
    if d is None:
        d = _implied_design(inclusion, file, row)
    if not isinstance(d, dict) or d.get("scheme") != DESIGN_SCHEME:
        raise _fail(f"must be an object with scheme {DESIGN_SCHEME!r}", file, row, "design")
    raw = d.get("strata")
    if not isinstance(raw, list) or not raw:
        raise _fail("must be a non-empty list of strata", file, row, "design.strata")
    strata = []
    for h, st in enumerate(raw):
        N = _count(st.get("N"), 1) if isinstance(st, dict) else None
        n = _count(st.get("n"), 1) if isinstance(st, dict) else None
        if N is None or n is None or n > N or N > MAX_POOL:
            raise _fail(
                f"stratum {h} must be {{N, n}}: whole numbers with 1 ≤ n ≤ N ≤ {MAX_POOL}, "
                f"not {st!r}",
                file,
                row,
                "design.strata",
            )
        strata.append(Stratum(N=N, n=n))
    stratum = d.get("stratum")
    if not isinstance(stratum, dict) or set(stratum) != set(ids):
        raise _fail(
            "must be an object giving every suite item's stratum", file, row, "design.stratum"
        )
    used = [0] * len(strata)
    for i in ids:
        h = stratum[i]
        if _count(h, 0) is None or h >= len(strata):
            raise _fail(
                f"item {i}'s stratum {h!r} is not one of the design's", file, row, "design.stratum"
            )
        used[h] += 1
    over = [h for h, k in enumerate(used) if k > strata[h].n]
    if over:
        raise _fail(
            f"stratum {over[0]} holds {used[over[0]]} suite items but only "
            f"{strata[over[0]].n} were drawn from it",
            file,
            row,
            "design.stratum",
        )
    out = Design(strata=tuple(strata), stratum={str(i): int(stratum[i]) for i in ids})
    drawn = sum(h.n for h in out.strata)
    if out.effective_size < EFFECTIVE_SHARE * drawn:
        heavy = max(range(len(strata)), key=lambda h: strata[h].N / strata[h].n)
        raise _fail(
            f"a design whose {drawn} drawn items weigh as {out.effective_size:.1f} (Kish's "
            f"effective size, below {EFFECTIVE_SHARE:.0%} of them): stratum {heavy} "
            f"(n = {strata[heavy].n} drawn of N = {strata[heavy].N}) carries most of the "
            "estimate, and no interval from so few items can be trusted; draw the strata in "
            "proportion to their sizes (primebench build) or restore the released manifest",
            file,
            row,
            "design.strata",
        )
    for i in ids:
        want = out.inclusion(i)
        if abs(float(inclusion[i]) - want) > INCLUSION_ROUNDING:
            h = stratum[i]
            raise _fail(
                f"item {i}'s inclusion probability {inclusion[i]!r} does not follow from its "
                f"stratum's design (n = {strata[h].n} drawn of N = {strata[h].N}: "
                f"π = {want:.6f}): a design weight edited by hand is refused",
                file,
                row,
                "inclusion",
            )
    return out


@dataclass(frozen=True)
class SuiteManifest(Mapping[str, Any]):
    """A checked suite manifest (see the module docstring). Make one with :meth:`read` or
    :meth:`from_document`; the attributes are typed views of :attr:`document`."""

    name: str
    version: str
    aggregate: str
    n_items: int
    built_from: SourcePanel
    benchmarks: tuple[BenchmarkEntry, ...]
    placement_calibration: Mapping[str, Any] | None
    document: Mapping[str, Any] = field(repr=False)
    design_only: tuple[DesignOnlyEntry, ...] = ()
    """The suite's design-only benchmarks (#72), placed by their design alone; not in
    :attr:`benchmarks`, whose items are listed and whose panels rank them."""

    # ---------------------------------------------------------------- making one
    @classmethod
    def from_document(
        cls, doc: Mapping[str, Any], file: str = "manifest", check_version: bool = True
    ) -> SuiteManifest:
        """Check ``doc`` and view it typed; ``check_version``: the version must be the content
        hash of the rest (a manifest edited by hand is refused)."""
        if isinstance(doc, SuiteManifest):
            return doc
        if not isinstance(doc, Mapping) or doc.get("schema") != SCHEMA:
            found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
            raise _fail(f"unsupported schema {found!r}, expected {SCHEMA}", file, fld="schema")
        doc = dict(doc)
        version = doc.get("version")
        if check_version and version != versioned(doc)["version"]:
            raise _fail(
                "version does not match the manifest's content (edited by hand?)",
                file,
                fld="version",
            )
        aggregate = doc.get("aggregate", AGGREGATES[0])
        if aggregate not in AGGREGATES:
            raise _fail(f"must be one of {AGGREGATES}", file, fld="aggregate")
        cats = doc.get("categories")
        if not isinstance(cats, dict) or not cats:
            raise _fail("must be a non-empty object of categories", file, fld="categories")
        entries: list[BenchmarkEntry] = []
        for cat, c in cats.items():
            if not isinstance(c, dict) or not isinstance(c.get("benchmarks"), dict):
                raise _fail("must be an object with benchmarks", file, cat, "benchmarks")
            if not c["benchmarks"]:
                raise _fail("has no benchmarks", file, cat, "benchmarks")
            for b, e in c["benchmarks"].items():
                if any(x.name == b for x in entries):
                    raise _fail("is in two categories", file, f"{cat}/{b}")
                entries.append(_entry(cat, b, e, file))
        n_items = sum(len(e.item_ids) for e in entries)
        if doc.get("n_items", n_items) != n_items:
            raise _fail(
                f"says {doc.get('n_items')} but the categories hold {n_items} items",
                file,
                fld="n_items",
            )
        return cls(
            name=str(_str(doc.get("name"), file, None, "name")),
            version=str(version),
            aggregate=aggregate,
            n_items=n_items,
            built_from=_source(doc.get("built_from"), file, None, "built_from"),
            benchmarks=tuple(entries),
            placement_calibration=_table(
                doc.get("placement_calibration"), file, None, "placement_calibration"
            ),
            document=doc,
            design_only=_design_only(doc.get("design_only"), {e.name for e in entries}, file),
        )

    @classmethod
    def read(cls, path: str | Path) -> SuiteManifest:
        """Read and check the manifest at ``path`` (JSON, schema, version hash, every entry)."""
        p = Path(path)
        return cls.from_document(read_json_document(p, "manifest", SCHEMA), str(p))

    # ---------------------------------------------------------------- typed views
    @property
    def categories(self) -> dict[str, tuple[BenchmarkEntry, ...]]:
        """category → its benchmarks, in manifest order."""
        out: dict[str, list[BenchmarkEntry]] = {}
        for e in self.benchmarks:
            out.setdefault(e.category, []).append(e)
        return {c: tuple(v) for c, v in out.items()}

    def item_ids(self) -> dict[str, dict[str, list[str]]]:
        """category → benchmark → item ids."""
        out: dict[str, dict[str, list[str]]] = {}
        for e in self.benchmarks:
            out.setdefault(e.category, {})[e.name] = list(e.item_ids)
        return out

    def entry(self, benchmark: str) -> BenchmarkEntry:
        """The entry of ``benchmark``; an unknown one is an error naming the suite's."""
        for e in self.benchmarks:
            if e.name == benchmark:
                return e
        raise InputError(
            f"suite {self.name!r} has no benchmark {benchmark!r} "
            f"(it has {[e.name for e in self.benchmarks]})",
            field="benchmark",
        )

    def design_only_entry(self, benchmark: str) -> DesignOnlyEntry:
        """The design-only entry of ``benchmark``; an unknown one is an error naming them."""
        for e in self.design_only:
            if e.name == benchmark:
                return e
        raise InputError(
            f"suite {self.name!r} has no design-only benchmark {benchmark!r} "
            f"(it has {[e.name for e in self.design_only]})",
            field="benchmark",
        )

    def calibration(self, benchmark: str | None = None) -> Mapping[str, Any] | None:
        """The placement calibration of ``benchmark`` (its own, in a multi-source suite) or of
        the suite."""
        if benchmark is not None:
            own = self.entry(benchmark).placement_calibration
            if own is not None:
                return own
        return self.placement_calibration

    def restricted(
        self, item_ids: Mapping[str, Sequence[str]], name: str | None = None
    ) -> SuiteManifest:
        """The suite with only ``item_ids`` (benchmark → ids, each a subset of the benchmark's)
        as its items, in their given order, under ``name`` (default: its own); benchmarks and
        categories left without items are dropped; version rehashed. Used for one benchmark of a
        multi-source suite."""
        for b, ids in item_ids.items():
            extra = set(map(str, ids)) - set(self.entry(b).item_ids)
            if extra:
                raise InputError(
                    f"items {sorted(extra)[:3]} are not in {b!r} of suite {self.name!r}",
                    field="item_ids",
                )
        return self.asking(item_ids, name)

    def asking(
        self, item_ids: Mapping[str, Sequence[str]], name: str | None = None
    ) -> SuiteManifest:
        """The suite with ``item_ids`` (benchmark → ids: any items of the benchmark, the static
        suite's or not) as its items, in their given order, under ``name`` (default: its own);
        benchmarks and categories left without items are dropped; version rehashed. The rounds
        of an adaptive run ask items of the benchmark's whole pool (its reference panel's
        items), mostly outside the static suite; :meth:`restricted` is the subset-checked
        form."""
        unknown = set(item_ids) - {e.name for e in self.benchmarks}
        if unknown:
            raise InputError(
                f"benchmarks {sorted(unknown)} are not in suite {self.name!r}", field="categories"
            )
        body = dict(self.document)
        cats: dict[str, Any] = {}
        for cat, c in self.document["categories"].items():
            entries = {
                b: _asking_entry(e, [str(i) for i in item_ids[b]])
                for b, e in c["benchmarks"].items()
                if item_ids.get(b)
            }
            if entries:
                n = sum(len(e["item_ids"]) for e in entries.values())
                cats[cat] = {**c, "benchmarks": entries, "n_items": n}
        if not cats:
            raise InputError(f"no items of suite {self.name!r} left", field="item_ids")
        body["categories"] = cats
        body["n_items"] = sum(c["n_items"] for c in cats.values())
        if name is not None:
            body["name"] = name
        return SuiteManifest.from_document(versioned(body))

    def of_benchmark(self, benchmark: str) -> SuiteManifest:
        """The suite restricted to one benchmark, with that benchmark's placement calibration
        as the suite's (how a multi-source suite is placed benchmark by benchmark)."""
        body = dict(self.restricted({benchmark: self.entry(benchmark).item_ids}).document)
        cal = self.calibration(benchmark)
        if cal is None:
            body.pop("placement_calibration", None)
        else:
            body["placement_calibration"] = cal
        return SuiteManifest.from_document(versioned(body))

    def with_design_only(self, entries: Sequence[Mapping[str, Any]], name: str) -> SuiteManifest:
        """The suite plus ``entries`` (``design_only`` documents:
        :func:`~primebench_tasks.suite.content_design.design_only_document`) under ``name`` (a
        new version); its listed benchmarks and their items unchanged."""
        body = {**self.document, "name": name}
        body["design_only"] = [*self.document.get("design_only", []), *map(dict, entries)]
        return SuiteManifest.from_document(versioned(body))

    def with_design_items(self, n: int, name: str | None = None) -> SuiteManifest:
        """The suite with every design-only benchmark drawing ``n`` items (the build parameter
        of #72), under ``name`` (default ``<name>_n<n>``: its lmms-eval tasks must not take the
        released suite's names); a suite without design-only benchmarks is refused."""
        if not self.design_only:
            raise InputError(
                f"suite {self.name!r} has no design-only benchmark to size", field="design_items"
            )
        from primebench_tasks.suite.content_design import MIN_DESIGN_ITEMS, MIN_PER_STRATUM

        for e in self.design_only:
            pinned = e.design.pool
            least = max(MIN_DESIGN_ITEMS, MIN_PER_STRATUM * (len(pinned.strata) if pinned else 1))
            if n < least:
                raise InputError(
                    f"{n} items per design-only benchmark are too few for {e.name}: each "
                    f"stratum needs {MIN_PER_STRATUM} drawn items for its variance"
                    + (f" ({len(pinned.strata)} strata pinned)" if pinned else "")
                    + f" and a design interval needs at least {MIN_DESIGN_ITEMS} items; "
                    f"give --design-items {least} or more",
                    field="design_items",
                )
        body = {**self.document, "name": name or f"{self.name}_n{n}"}
        body["design_only"] = [
            {**e, "design": {**e["design"], "n": n}} for e in self.document["design_only"]
        ]
        return SuiteManifest.from_document(versioned(body))

    def with_pinned_pools(
        self, pools: Mapping[str, PinnedPool], name: str | None = None
    ) -> SuiteManifest:
        """The suite with the design-only benchmarks of ``pools`` (benchmark → the pool a run
        drew from: N_h and fingerprint) pinned to it, under ``name`` (default
        ``<name>_pinned``): a dataset whose pool differs is then refused before anything is
        asked. A benchmark that is not design-only is an error naming the suite's."""
        known = {e.name for e in self.design_only}
        unknown = sorted(set(pools) - known)
        if unknown:
            raise InputError(
                f"{unknown} are not design-only benchmarks of suite {self.name!r} "
                f"(it has {sorted(known)})",
                field="design_only",
            )
        body = {**self.document, "name": name or f"{self.name}_pinned"}
        body["design_only"] = [
            {**e, "design": {**e["design"], "pool": pools[e["name"]].as_document()}}
            if e["name"] in pools
            else e
            for e in self.document["design_only"]
        ]
        return SuiteManifest.from_document(versioned(body))

    def renamed(self, name: str) -> SuiteManifest:
        """The same suite under another name (a new version)."""
        return SuiteManifest.from_document(versioned({**self.document, "name": name}))

    def to_json(self) -> str:
        """The canonical JSON text of the document (what :func:`write_manifest` writes)."""
        return canonical_json(dict(self.document))

    # ---------------------------------------------------------------- mapping interface
    def __getitem__(self, key: str) -> Any:
        return self.document[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.document)

    def __len__(self) -> int:
        return len(self.document)


def _asking_entry(entry: Mapping[str, Any], ids: list[str]) -> dict[str, Any]:
    """A benchmark entry asking ``ids``: its inclusion probabilities and their design kept for
    those ids when every one was drawn by the design, dropped otherwise (items outside the
    draw, as an adaptive round asks, have no inclusion probability)."""
    out = {**entry, "item_ids": ids}
    inclusion = entry.get("inclusion")
    if inclusion is not None:
        if all(i in inclusion for i in ids):
            out["inclusion"] = {i: inclusion[i] for i in ids}
            design = entry.get("design")
            if design is not None:
                out["design"] = {**design, "stratum": {i: design["stratum"][i] for i in ids}}
        else:
            out.pop("inclusion")
            out.pop("design", None)
    return out


def as_suite(manifest: Mapping[str, Any], file: str = "manifest") -> SuiteManifest:
    """``manifest`` as a :class:`SuiteManifest` (checked; a document just built in memory, whose
    version may be recomputed later, is not held to its hash)."""
    if isinstance(manifest, SuiteManifest):
        return manifest
    return SuiteManifest.from_document(manifest, file, check_version=False)
