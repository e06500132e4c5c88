"""Runtime registration of a PrimeBench dataset class in an installed VLMEvalKit (it has no entry
points): ``import harness_adapters.vlmeval as a; a.register()`` then
``vlmeval.dataset.build_dataset("PrimeBench_<benchmark>")`` loads the exported TSV from LMUData with
the upstream dataset's own class (prompts, answer extraction, metrics)."""

from __future__ import annotations

from typing import Any

from harness_adapters.vlmeval.export import PREFIX


def register(upstream: dict[str, str] | None = None) -> Any:
    """Add ``PrimeBenchDataset`` to ``vlmeval.dataset``. ``upstream`` maps PrimeBench dataset
    names to the VLMEvalKit class whose evaluation they reuse (default: ImageMCQDataset)."""
    import vlmeval.dataset as D

    mapping = dict(upstream or {})

    base = D.ImageMCQDataset

    class PrimeBenchDataset(base):  # type: ignore[misc, valid-type]
        """A suite benchmark exported by ``primebench vlmeval export`` (no MD5: used as-is)."""

        TYPE = getattr(base, "TYPE", "MCQ")
        DATASET_URL: dict[str, str] = {}
        DATASET_MD5: dict[str, str] = {}

        @classmethod
        def supported_datasets(cls) -> list[str]:
            return sorted(mapping) if mapping else []

        def __init__(self, dataset: str = "", **kwargs: Any) -> None:
            if not dataset.startswith(PREFIX):
                raise ValueError(f"{dataset!r} is not a PrimeBench dataset ({PREFIX}<benchmark>)")
            super().__init__(dataset=dataset, **kwargs)

    if not hasattr(D, "PrimeBenchDataset"):
        D.PrimeBenchDataset = PrimeBenchDataset
        D.DATASET_CLASSES.append(PrimeBenchDataset)
        D.SUPPORTED_DATASETS += PrimeBenchDataset.supported_datasets()
    return D.PrimeBenchDataset
