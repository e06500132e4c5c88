"""The node ids of the tests a pytest run skipped, from its JUnit XML report (one per line).

    python tools/skipped_tests.py REPORT.xml > skipped.txt
    python -m pytest @skipped.txt

``.ci/run`` uses it to run, with every extra installed, exactly the tests that the README's own
install skipped (a missing extra, no ``../shared``). A module skipped at collection is given as
its file, a parametrized test by its function. Run from the repository root: dotted names are
mapped back to files that exist there.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def node_id(classname: str, name: str) -> str:
    """``tests.a.test_b.TestC`` + ``test_d[x]`` → ``tests/a/test_b.py::TestC::test_d[x]``; a
    collection skip (empty classname, dotted module name) → ``tests/a/test_b.py``."""
    dotted, leaf = (classname, name) if classname else (name, "")
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = Path(*parts[:i]).with_suffix(".py")
        if path.is_file():
            rest = [*parts[i:], *([leaf] if leaf else [])]
            return "::".join([path.as_posix(), *rest])
    raise SystemExit(f"{dotted}: no such test file under {Path.cwd()}")


def skipped(report: Path) -> list[str]:
    out: list[str] = []
    for case in ET.parse(report).getroot().iter("testcase"):
        s = case.find("skipped")
        if s is None or s.get("type") == "pytest.xfail":
            continue
        # a parametrized test by its function: ids such as `[RAW:{"a": [1]}]` cannot be given
        # back to pytest (nested brackets); its other cases run again, which is harmless
        nid = node_id(case.get("classname", ""), case.get("name", "").split("[", 1)[0])
        if nid not in out:
            out.append(nid)
    return out


if __name__ == "__main__":
    print("\n".join(skipped(Path(sys.argv[1]))))
