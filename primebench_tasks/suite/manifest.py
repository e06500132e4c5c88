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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from primebench_tasks.data.io import canonical_json, content_hash, read_json_document
from primebench_tasks.errors import InputError

SCHEMA = "primebench.suite/1"
AGGREGATES = ("mean_of_category_means", "item_mean")
"""``mean_of_category_means``: the suite score is the mean of its categories' item means (the
paper's); ``item_mean``: the mean over all suite items (ResampledBench)."""


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

    def design_weights(self) -> tuple[float, ...] | None:
        """1/π_i of the suite items in ``item_ids`` order, normalised to sum to 1, or None."""
        if self.inclusion is None:
            return None
        d = [1.0 / self.inclusion[i] for i in self.item_ids]
        total = sum(d)
        return tuple(x / total for x in d)


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
    rng = e.get("score_range")
    if (
        not isinstance(rng, list)
        or len(rng) != 2
        or not all(isinstance(x, int | float) for x in rng)
        or not rng[0] < rng[1]
    ):
        raise _fail("must be [min, max] with min < max", file, row, "score_range")
    local = e.get("local_task")
    inclusion = e.get("inclusion")
    if inclusion is not None:
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
    return BenchmarkEntry(
        name=b,
        category=cat,
        item_ids=tuple(ids),
        lmms_eval_task=_str(e.get("lmms_eval_task"), file, row, "lmms_eval_task", True),
        vlmeval_dataset=_str(e.get("vlmeval_dataset"), file, row, "vlmeval_dataset", True),
        metric=_str(e.get("metric"), file, row, "metric", True),
        score_range=(float(rng[0]), float(rng[1])),
        source=None if e.get("source") is None else _source(e["source"], file, row, "source"),
        placement_calibration=_table(
            e.get("placement_calibration"), file, row, "placement_calibration"
        ),
        upstream=_table(e.get("upstream"), file, row, "upstream"),
        vlmeval=_table(e.get("vlmeval"), file, row, "vlmeval"),
        local_task=None if local is None else str(local),
        no_lmms_eval_task=_str(e.get("no_lmms_eval_task"), file, row, "no_lmms_eval_task", True),
        inclusion=None if inclusion is None else {str(i): float(p) for i, p in inclusion.items()},
    )


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
    """A benchmark entry asking ``ids``: its inclusion probabilities kept for those ids when
    every one was drawn by the design, dropped otherwise (items outside the draw, as an adaptive
    round asks, have no inclusion probability)."""
    out = {**entry, "item_ids": ids}
    inclusion = entry.get("inclusion")
    if inclusion is not None:
        if all(i in inclusion for i in ids):
            out["inclusion"] = {i: inclusion[i] for i in ids}
        else:
            out.pop("inclusion")
    return out


def as_suite(manifest: Mapping[str, Any], file: str = "manifest") -> SuiteManifest:
    """``manifest`` as a :class:`SuiteManifest` (checked; a document just built in memory, whose
    version may be recomputed later, is not held to its hash)."""
    if isinstance(manifest, SuiteManifest):
        return manifest
    return SuiteManifest.from_document(manifest, file, check_version=False)
