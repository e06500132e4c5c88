"""Skip markers for tests that need an optional extra: the reason names the extra and the install
command, so a user who ran only the README's install (``.[dev,embed]``) sees what to add."""

from __future__ import annotations

import importlib.util

import pytest


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def reason(extra: str, module: str) -> str:
    return f"needs the '{extra}' extra ({module} is not installed): pip install -e '.[{extra}]'"


def requires(extra: str, module: str) -> pytest.MarkDecorator:
    """``@requires("vllm", "openai")``: skip unless ``module`` is importable."""
    return pytest.mark.skipif(not installed(module), reason=reason(extra, module))


def skip_module_unless(extra: str, module: str) -> None:
    """At module level: skip the whole module unless ``module`` is importable."""
    if not installed(module):
        pytest.skip(reason(extra, module), allow_module_level=True)
