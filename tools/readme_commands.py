"""Print the README's set-up commands (the first ``bash`` block under "## Set up and check") as a
shell script, so that ``.ci/run`` runs them verbatim and cannot drift from what users copy.

    python tools/readme_commands.py README.md > readme_commands.sh
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SECTION = "## Set up and check"


def setup_commands(readme: str) -> list[str]:
    """The non-empty lines of the first fenced ``bash`` block after the set-up heading."""
    start = readme.find(SECTION)
    if start < 0:
        raise SystemExit(f"README has no {SECTION!r} section")
    m = re.search(r"```bash\n(.*?)```", readme[start:], flags=re.S)
    if m is None:
        raise SystemExit(f"no ```bash block under {SECTION!r}")
    lines = [ln for ln in m.group(1).splitlines() if ln.strip()]
    if len(lines) != 2:
        raise SystemExit(f"expected the two set-up commands, found {len(lines)} lines")
    return lines


if __name__ == "__main__":
    print("\n".join(setup_commands(Path(sys.argv[1]).read_text("utf-8"))))
