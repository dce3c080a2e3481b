"""The programs some tests need that only .ci/run installs (Chromium for the headless-browser checks, pdfLaTeX for
the LaTeX compile): where one is missing those tests skip, with one line saying how to get it, unless
$JACKSON_REQUIRE_TOOLS names it (.ci/run does, where it installed it): there a missing program fails the test.

    @needs("chromium")
    def test_...(): exe = tool("chromium")
"""
from __future__ import annotations

import os
import shutil

import pytest

REQUIRE_ENV = "JACKSON_REQUIRE_TOOLS"
HOW = {"chromium": "as root, `apt-get install -y chromium`",
       "pdflatex": "as root, `apt-get install -y texlive-latex-base texlive-latex-recommended`"}


def found(name: str) -> str | None:
    """The program's path on PATH, or None (Chromium under any of the names the report's browser check knows)."""
    if name == "chromium":
        from jackson.lab_report.check import chromium
        return chromium()
    return shutil.which(name)


def required(name: str) -> bool:
    return name in os.environ.get(REQUIRE_ENV, "").replace(",", " ").split()


def needs(name: str):
    """Skip unless the program is here or required (then a missing one fails in `tool`)."""
    return pytest.mark.skipif(found(name) is None and not required(name),
                              reason=f"no {name} on PATH: {HOW[name]} (.ci/run does, and sets {REQUIRE_ENV})")


def tool(name: str) -> str:
    exe = found(name)
    assert exe, f"{REQUIRE_ENV} requires {name} and it is not on PATH: {HOW[name]}"
    return exe
