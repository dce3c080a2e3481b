"""Numbers written once: a figure the user-facing docs quote is either generated from its source or quoted with
its date and command, and a test fails when it is not.

- Ledger counts ("15 reproduced", "38 claims") must be the committed ledger's (reports/claims.csv): the total of
  that verdict, or one paper's.
- Test counts ("1,485 tests", "1,550 passed") must stand in a paragraph that names the date they were measured
  (YYYY-MM-DD) and the pytest command that measured them (in backticks).
- Durations ("485 s", "about two minutes") must stand in a paragraph that names a date or points to
  reports/benchmarks.md (whose every row has its date and command); a setting ("every 120 s", "60 s per
  connection") is not a measurement and is left alone.
- A screenshot in the docs (docs/img/*screen*) is captioned (in its paragraph or the one above) with the date it
  was taken.
reports/benchmarks.md, reports/*/*.md and the other records of what was measured are the sources themselves (each
entry dated), so they are not scanned; docs/claims.md is generated."""
from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ("not reproduced", "not applicable", "reproduced", "partly", "inconclusive", "untested")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
COUNT = re.compile(r"(?<![\w.,-])(\d[\d,]*) (" + "|".join(VERDICTS) + r"|claims)\b")
TESTS = re.compile(r"(?<![\w.,-])(\d[\d,]*) (?:tests|passed|collected)\b")
DURATION = re.compile(r"(?<![\w.,-])\d[\d,]*(?:\.\d+)?\s?(?:ms|s|sec|seconds?|min|minutes?|h|hours?)\b(?![-/])"
                      r"|\b(?:a|one|two|three|four|five|ten|few|several) (?:seconds|minutes|hours)\b")
SETTING_BEFORE = re.compile(r"(?:every|each|at most|up to|timeout|limit)\s+$")
SETTING_AFTER = re.compile(r"^\s*(?:per\b|timeout|by default)")


def docs() -> list[Path]:
    """The user-facing docs: README.md, docs/*.md (less the generated claims.md), the examples' READMEs and
    scripts (their docstrings say how long they take)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").rglob("README.md")),
             *sorted((ROOT / "examples").glob("*.py"))]
    return [f for f in files if f.name != "claims.md" or f.parent.name != "docs"]


def ledger_counts(path: Path = ROOT / "reports" / "claims.csv") -> dict[str, set[int]]:
    """verdict (and "claims") -> the counts a doc may quote: the ledger's total and each paper's."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    allowed: dict[str, set[int]] = {v: set() for v in (*VERDICTS, "claims")}
    for group in [rows, *([r for r in rows if r["paper"] == p] for p in sorted({r["paper"] for r in rows}))]:
        n = Counter(r["verdict"] for r in group)
        for v in VERDICTS:
            allowed[v].add(n[v])
        allowed["claims"].add(len(group))
    return allowed


def problems(text: str, allowed: dict[str, set[int]]) -> list[str]:
    """Each quoted number of `text` that is neither its source's nor dated, as 'what: context'."""
    out, before = [], ""
    for para in re.split(r"\n\s*\n", text):
        flat = " ".join(para.split())
        dated = bool(DATE.search(flat))
        for m in COUNT.finditer(flat):
            n = int(m[1].replace(",", ""))
            if n not in allowed[m[2]]:
                out.append(f"'{m[0]}' is not the ledger's (reports/claims.csv: {sorted(allowed[m[2]])}): {flat[:120]}")
        for m in TESTS.finditer(flat):
            if not (dated and re.search(r"`[^`]*pytest[^`]*`", flat)):
                out.append(f"'{m[0]}' has no date and pytest command beside it: {flat[max(0, m.start() - 60):m.end() + 40]}")
        for m in DURATION.finditer(flat):
            if SETTING_BEFORE.search(flat[:m.start()]) or SETTING_AFTER.search(flat[m.end():]):
                continue
            if not (dated or "benchmarks.md" in flat):
                out.append(f"'{m[0]}' has no date (nor reports/benchmarks.md) beside it: "
                           f"{flat[max(0, m.start() - 60):m.end() + 40]}")
        for m in re.finditer(r"!\[[^\]]*\]\(([^)]*screen[^)]*)\)", flat):
            if not (dated or DATE.search(before)):        # its caption: this paragraph or the one above it
                out.append(f"screenshot {m[1]} is not captioned with the date it was taken")
        before = flat
    return out


def test_the_checker_catches_each_kind_of_stale_number():
    """The rules on made-up paragraphs: each stale or undated quote is caught, its dated or generated form passes."""
    allowed = {**{v: {0} for v in VERDICTS}, "reproduced": {15, 12}, "inconclusive": {8}, "untested": {1}, "claims": {38}}
    bad = ("The ledger says 12 reproduced / 7 inconclusive / 5 untested of 40 claims.\n\n"
           "The not-slow suite is 1,038 tests.\n\nThe sweep took 485 s.\n\nIt takes about two minutes.\n\n"
           "![first screen](img/report-first-screen.png)")
    found = problems(bad, allowed)
    assert [p.split("'")[1] if p.startswith("'") else p.split()[0] for p in found] == [
        "7 inconclusive", "5 untested", "40 claims", "1,038 tests", "485 s", "two minutes", "screenshot"]
    good = ("The ledger: 15 reproduced, 8 inconclusive, 1 untested of 38 claims.\n\n"
            "1,485 tests on 2026-11-28 (`python -m pytest tests --collect-only -q`).\n\n"
            "The sweep took 485 s (2026-11-20).\n\nTimes: reports/benchmarks.md says 375 s.\n\n"
            "A checkpoint every 120 s, 60 s per connection.\n\n"
            "Taken 2026-11-27: ![first screen](img/report-first-screen.png)")
    assert problems(good, allowed) == []


def test_every_number_the_docs_quote_is_its_sources_or_dated():
    allowed = ledger_counts()
    found = [f"{p.relative_to(ROOT)}: {x}" for p in docs() for x in problems(p.read_text(), allowed)]
    assert not found, "\n".join(found)
