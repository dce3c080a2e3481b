"""The card's printed result that the README quotes, generated: `python tests/readme_card.py` rebuilds what command 1
prints from the committed folder the README names (its summary.json, through the same function the command prints
with) and writes it into the README's card-output block.  tests/test_readme.py fails when the quoted line
and the folder disagree (a reference run re-measured, a rule reworded)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BEGIN, END = "<!-- card-output", "<!-- /card-output -->"


def block(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def folder(text: str) -> Path:
    """The committed run the block names: its first `reports/jackson/<name>/` link."""
    m = re.search(r"\]\((reports/jackson/[^/)]+)/summary\.md\)", block(text))
    if not m:
        raise SystemExit(f"readme_card: the card-output block of {README} links no reports/jackson/<folder>/summary.md")
    return REPO / m.group(1)


def quoted(text: str) -> str:
    """The printed result as the README quotes it: the indented lines of the block, each as printed."""
    return _fenced(block(text))[1]


def _fenced(body: str) -> tuple[str, str]:
    """(the fenced block with its fences, its text) of the card-output block: the printed result, as printed."""
    m = re.search(r"^```text\n(.*?)\n```$", body, re.M | re.S)
    if not m:
        raise SystemExit("readme_card: the card-output block holds no ```text block to fill")
    return m.group(0), m.group(1)


def printed(run: Path) -> str:
    """What command 1 prints for the folder, rebuilt from its summary.json through the function the command prints
    with (the folder named as the command names it: relative to the checkout)."""
    from jackson.rate_sweep.cli import result_block
    return "\n".join(result_block(json.loads((run / "summary.json").read_text()), run.relative_to(REPO)))


def main() -> int:
    text = README.read_text()
    fence, _ = _fenced(block(text))
    README.write_text(text.replace(fence, f"```text\n{printed(folder(text))}\n```", 1))
    print(f"README.md: the card's result from {folder(text).relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
