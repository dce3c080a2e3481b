"""docs/shared.md quotes how many tests the README's command runs and how many full-size forms `-m full` runs;
the line is generated (`python tests/suite_count.py`) and checked here against what this very session collected."""
from __future__ import annotations

import pytest

from conftest import SESSION
from suite_count import DOC, line, quoted


def test_the_generated_line_reads_back():
    assert quoted(f"x\n{line(1234, ['a', 'b'])}\n") is None                          # no markers: nothing quoted
    from suite_count import BEGIN, END
    assert quoted(f"{BEGIN}\n{line(1234, ['test_a', 'test_b'])}\n{END}") == (1234, 2)


def test_docs_quote_the_count_this_suite_runs():
    """Run by `python -m pytest tests` (the README's command): the docs' numbers are this session's. A session
    that runs a part of the suite cannot tell, and says so."""
    if not SESSION:
        pytest.skip("this session runs part of the suite; `python -m pytest tests` checks the quoted counts")
    q = quoted(DOC.read_text())
    assert q is not None, f"{DOC}: no generated test-count line (python tests/suite_count.py writes it)"
    assert SESSION["full"] >= 1                    # `-m full` selects something: never pytest's exit 5
    assert q == (SESSION["suite"], SESSION["full"]), (
        f"{DOC} says {q[0]} tests and {q[1]} full-size; this run collected {SESSION['suite']} and {SESSION['full']}: "
        f"python tests/suite_count.py rewrites the line")
