"""Everything PrimeBench registers with an installed VLMEvalKit: a suite's exported datasets
(:mod:`harness_adapters.harnesses.vlmeval.registration`) and a PRISM build's axes
(:mod:`harness_adapters.harnesses.vlmeval.prism_tasks`). This module sits above both (neither imports it),
so the two never import each other."""

from __future__ import annotations

from pathlib import Path

from harness_adapters.harnesses.vlmeval.export import CONFIG_NAME, read_config
from harness_adapters.harnesses.vlmeval.prism_tasks import register_prism
from harness_adapters.harnesses.vlmeval.registration import (
    PrimeBenchMixin,
    import_vlmeval,
    upstream_class,
)


def register(lmudata: str | Path | None = None) -> dict[str, type]:
    """Register the exports in ``lmudata`` (default: VLMEvalKit's ``LMUData``) with the installed
    ``vlmeval`` — a suite's datasets and/or a PRISM build's axes
    (:func:`harness_adapters.harnesses.vlmeval.prism_tasks.register_prism`); returns dataset name → class.
    Idempotent."""
    D = import_vlmeval()
    from vlmeval.smp import LMUDataRoot

    root = Path(lmudata if lmudata is not None else LMUDataRoot())
    out: dict[str, type] = {}
    prism = register_prism(root)
    if not (root / CONFIG_NAME).exists() and prism:
        return prism
    cfg = read_config(root)
    suite = {"suite": cfg["suite"], "suite_name": cfg["suite_name"]}
    for name, spec in cfg["data"].items():
        base = upstream_class(D, spec["upstream"])
        cls = type(
            spec["class"],
            (PrimeBenchMixin, base),
            {
                "PRIMEBENCH": {name: {**spec, "upstream_class": base.__name__}},
                "SUITE": suite,
                "DATASET_URL": {name: f"{name}.tsv"},
                "DATASET_MD5": {},
                "__module__": "vlmeval.dataset",
                "__doc__": f"{name}: {spec['upstream']} ({base.__name__}) restricted to suite "
                f"{cfg['suite_name']} {cfg['suite']}.",
            },
        )
        D.DATASET_CLASSES[:] = [
            c for c in D.DATASET_CLASSES if name not in getattr(c, "PRIMEBENCH", {})
        ]
        D.DATASET_CLASSES.insert(0, cls)
        setattr(D, spec["class"], cls)
        if name not in D.SUPPORTED_DATASETS:
            D.SUPPORTED_DATASETS.append(name)
        out[name] = cls
    return {**out, **prism}
