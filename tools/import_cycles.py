"""File-level import cycles among this project's modules, function-level imports included
(import-linter's contracts see packages; an import inside a function can still close a circle
between two files). ``TYPE_CHECKING`` blocks are ignored: they never run.

    python tools/import_cycles.py        # prints every cycle; exit 1 if there is one

``tests/test_layers.py`` runs it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("primebench_tasks", "harness_adapters")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules ``path`` imports anywhere (top level or inside functions)."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()

    def resolve(name: str) -> None:
        # the longest project module that is a prefix of the imported name
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != me:
            found.add(name)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    resolve(a.name)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")
                    up = up[: len(up) - (child.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for a in child.names:
                    resolve(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return found


def graph() -> dict[str, set[str]]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    files = [p for p in files if "task_configs" not in p.parts]
    modules = {module_name(p) for p in files}
    # a package's __init__ importing its own modules is not a circle with them
    g = {module_name(p): imports_of(p, modules) for p in files}
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in g.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(g):
        if v not in index:
            strong(v)
    return sorted(out)


if __name__ == "__main__":
    found = cycles(graph())
    for c in found:
        print("cycle: " + " <-> ".join(c))
    sys.exit(1 if found else 0)
