"""Print the README's set-up commands (the first ``bash`` block under "## Set up and check") as a
shell script, so that ``.ci/run`` runs them verbatim and cannot drift from what users copy.

    python tools/readme_commands.py README.md > readme_commands.sh
    python tools/readme_commands.py --vllm README.md > readme_vllm.sh

``--vllm``: the vLLM path (the first ``bash`` block under "## Evaluate checkpoints ... vLLM"): its
install line and ``tiny-model`` line verbatim, then its first ``primebench run`` line verbatim
but for the placeholders, which name the tiny model it built (``BASE_DIR`` → ``tiny/base``,
``ckpts/*`` → ``tiny/lora*``).

``--ray``: that block's ``--ray`` line, the same placeholders replaced — what ``.ci/run`` expects
a 2-core CPU box to refuse in one line before any engine starts, leaving ``RUN`` as it was.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SECTION = "## Set up and check"


def bash_block(readme: str, section: str) -> list[str]:
    """The non-empty lines of the first fenced ``bash`` block after the heading ``section``."""
    start = readme.find(section)
    if start < 0:
        raise SystemExit(f"README has no {section!r} section")
    m = re.search(r"```bash\n(.*?)```", readme[start:], flags=re.S)
    if m is None:
        raise SystemExit(f"no ```bash block under {section!r}")
    return [ln for ln in m.group(1).splitlines() if ln.strip()]


def setup_commands(readme: str) -> list[str]:
    """The non-empty lines of the first fenced ``bash`` block after the set-up heading."""
    lines = bash_block(readme, SECTION)
    if len(lines) != 2:
        raise SystemExit(f"expected the two set-up commands, found {len(lines)} lines")
    return lines


VLLM_SECTION = "## Evaluate checkpoints and rank LoRA variants with vLLM"
PLACEHOLDERS = {"BASE_DIR": "tiny/base", "ckpts/*": "tiny/lora*"}


def vllm_commands(readme: str) -> list[str]:
    """The vLLM path as a new user walks it on the tiny model (see the module docstring)."""
    lines = bash_block(readme, VLLM_SECTION)
    install = [ln for ln in lines if "pip install" in ln]
    tiny = [ln for ln in lines if ln.startswith("primebench tiny-model")]
    run = [ln for ln in lines if ln.startswith("primebench run ") and "--ray" not in ln]
    if len(install) != 1 or len(tiny) != 1 or not run:
        raise SystemExit("the vLLM block needs one install line, one tiny-model line and a run")
    walked = run[0]
    for old, new in PLACEHOLDERS.items():
        if old not in walked:
            raise SystemExit(f"the run line has no {old!r} to point at the tiny model")
        walked = walked.replace(old, new)
    return [install[0], tiny[0], walked]


def ray_command(readme: str) -> str:
    """The vLLM block's ``primebench run ... --ray`` line, its placeholders naming the tiny
    model."""
    lines = [
        ln
        for ln in bash_block(readme, VLLM_SECTION)
        if ln.startswith("primebench run ") and "--ray" in ln
    ]
    if len(lines) != 1:
        raise SystemExit("the vLLM block needs one primebench run --ray line")
    walked = lines[0]
    for old, new in PLACEHOLDERS.items():
        walked = walked.replace(old, new)
    return walked


if __name__ == "__main__":
    text = Path(sys.argv[-1]).read_text("utf-8")
    if sys.argv[1] == "--vllm":
        print("\n".join(vllm_commands(text)))
    elif sys.argv[1] == "--ray":
        print(ray_command(text))
    else:
        print("\n".join(setup_commands(text)))
