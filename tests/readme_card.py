"""The card's printed line that the README quotes, generated: `python tests/readme_card.py` rebuilds the line command 1
prints from the committed folder the README names (its summary.json, through the same function the command prints
with) and writes it, wrapped, into the README's card-output block.  tests/test_readme.py fails when the quoted line
and the folder disagree (a reference run re-measured, a rule reworded)."""
from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BEGIN, END = "<!-- card-output", "<!-- /card-output -->"
WIDTH = 112          # the text of a wrapped line; with its 4-space indent at most 116 characters


def block(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def folder(text: str) -> Path:
    """The committed run the block names: its first `reports/jackson/<name>/` link."""
    m = re.search(r"\]\((reports/jackson/[^/)]+)/summary\.md\)", block(text))
    if not m:
        raise SystemExit(f"readme_card: the card-output block of {README} links no reports/jackson/<folder>/summary.md")
    return REPO / m.group(1)


def quoted(text: str) -> str:
    """The printed line as the README quotes it: the indented lines of the block, unwrapped."""
    lines = [ln[4:] for ln in block(text).splitlines() if ln.startswith("    ")]
    return " ".join(lines)


def printed(run: Path) -> str:
    """The line command 1 printed for the folder's (first) target, rebuilt from its summary.json."""
    from jackson.rate_sweep.cli import exponent_lines
    return exponent_lines(json.loads((run / "summary.json").read_text()))[0]


def main() -> int:
    text = README.read_text()
    line = printed(folder(text))
    wrapped = "\n".join("    " + ln for ln in textwrap.wrap(line, WIDTH, break_on_hyphens=False, break_long_words=False))
    body = block(text)
    old = "\n".join(ln for ln in body.splitlines() if ln.startswith("    "))
    if not old:
        raise SystemExit("readme_card: the card-output block holds no indented line to replace")
    README.write_text(text.replace(old, wrapped, 1))
    print(f"README.md: the card's line from {folder(text).relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
