"""The column dictionary: every column of every CSV the lab writes, with its meaning and units.

Each experiment keeps the columns of the tables it writes beside its code (its `columns.py`, named under the
`jackson_lab.columns` entry points of pyproject.toml); `gather` joins them with the report's own.  `COLUMNS` maps an output kind -- "<command> <file name>", since the same file name means different
things for different commands (results.csv of jackson-sweep, jackson-tasks, rnn-compare, vit-probe,
cot-dp) -- to {column: one-line meaning}.  Each line was written from the code that writes the
column (named in `WRITTEN_BY`).  A column written as a numbered family (`s1`, `s2`, ...) has one
line under a pattern name with `<k>` (`s<k>`).  `kind_of` tells the kind of a committed CSV under
reports/ (from its run folder's command.txt); `render` writes reports/COLUMNS.md;
`python -m jackson.lab_report.columns` (the command the page names) rewrites that page.  tests/test_columns.py checks that every column of
every committed CSV under reports/ (cells/ left out) has a line, and that the page is a fresh
rendering.

Units: the synthetic targets (jackson-sweep, jackson-tasks, rnn-compare) are unitless, so their MSEs
are in squared target units; cross-entropies are in nats (natural log); times are in seconds unless
the name says ms.
"""
from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
PAGE = REPORTS / "COLUMNS.md"

OWN_COLUMNS: dict[str, dict[str, str]] = {   # the report's own tables
    "jackson-report claims.csv": {
        "id": "the claim's identifier",
        "paper": "the paper making the claim: Jiang & Li, or Yang et al.",
        "origin": "whose claim it is: paper (the paper states it) or lab (a variant this lab added, counted apart)",
        "where": "where in the paper",
        "claim": "the claim in words",
        "paper_value": "the value as the paper states it",
        "verdict": "reproduced, partly, not reproduced, inconclusive (the folder's own reference could not show the effect), untested or not applicable (computed by the rule); failed when the rule itself failed (raised, exited, returned no Outcome: `measured` says how)",
        "measured": "words and numbers read or computed from the folder's files",
        "quantity": "what `value` is",
        "value": "the headline number (see `quantity`); empty when none",
        "lo": "lower end of value's interval (what kind: `interval`); empty when none",
        "hi": "upper end of value's interval (what kind: `interval`); empty when none",
        "bracket": "what `lo` and `hi` are, in a few words: 95% CI, seed range, seed-pair range, head range; empty "
                   "when none",
        "interval": "what `lo` and `hi` are, in words: e.g. a range over seeds, a bootstrap over seeds (and held-out "
                    "blocks), +- 1.96 standard errors; or `none: <why>` when they are empty (1 seed, no per-seed "
                    "values); empty for rows no folder judges",
        "n_seeds": "seeds behind the verdict; empty when unknown",
        "folder": "the run folder giving the row, relative to reports/; empty when no folder tests it",
        "other_folders": "the other folders that test the claim, joined by ' | ': each with its verdict and seeds, "
                         "or left out and why",
        "rule": "the kind of the claim: the name of the rule that judges it (defined in its experiment's rules.py; docs/claims.md lists them)",
        "rule_text": "the rule's text, thresholds included",
        "command": "the command that would test the claim; empty when none in this lab",
    },
    "jackson-report tables.csv": {
        "folder": "the run folder whose headline table the cell is in, relative to reports/ (tables.tex's table "
                  "tab:<folder>)",
        "title": "the table's title: the run's title in the report, with [superseded] or [quick run] where it is one",
        "row": "the cell's row in its table, from 1 (one row per quantity the paper gives a value for)",
        "column": "the cell's column: quantity (what is compared), paper (the paper's value), measured (this run's), "
                  "measured vs paper (their difference for exponents, accuracies and rows whose report.json declares "
                  "compare: difference, such as App. B attention weights; else their ratio)",
        "value": "the cell as the report and tables.tex show it (numbers to 3 significant digits; — where there is "
                 "none or no ratio can be formed)",
        "number": "the number behind a paper or measured cell at full precision; empty for text and other columns",
        "lo": "for a measured cell with an interval (in brackets in its value; its kind is in the row's quantity, e.g. "
              "a 95% bootstrap interval of an exponent): the lower end at full precision; else empty",
        "hi": "the upper end of that interval; else empty",
    },
}

OWN_WRITTEN_BY: dict[str, str] = {
    "jackson-report claims.csv": "one row per claim: `jackson/lab_report/claims.py` `csv_text`",
    "jackson-report tables.csv": "one row per cell of every run's headline table (those of tables.tex): "
                                 "`jackson/lab_report/page.py` `tables_csv`, the cells from `headline_rows`",
}




GROUP = "jackson_lab.columns"   # the entry-point group that names each experiment's columns module


def gather() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(COLUMNS, WRITTEN_BY) of every experiment (the modules of the `jackson_lab.columns` entry points, in the
    order of their names; each holds data only), then the report's own."""
    cols: dict[str, dict[str, str]] = {}
    written: dict[str, str] = {}
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        mod = ep.load()
        cols.update(mod.COLUMNS)
        written.update(mod.WRITTEN_BY)
    return {**cols, **OWN_COLUMNS}, {**written, **OWN_WRITTEN_BY}


COLUMNS, WRITTEN_BY = gather()


# ---- lookups ----------------------------------------------------------------------------------------

def meaning(kind: str, column: str) -> str | None:
    """The line for `column` of output kind `kind` (a `<k>` pattern matches digits); None if it has none."""
    cols = COLUMNS.get(kind, {})
    if column in cols:
        return cols[column]
    for name, text in cols.items():
        if "<k>" in name and re.fullmatch(re.escape(name).replace(re.escape("<k>"), r"\d+"), column):
            return text
    return None


def kind_of(path: Path, reports: Path = REPORTS) -> str | None:
    """The output kind of a CSV under `reports`: "<program> <file name>", the program from the first word of
    its run folder's command.txt; reports/claims.csv and reports/tables.csv are jackson-report's,
    reports/cot_dp/estimates/*.csv are cot-dp estimate.csv tables kept under another name.  A large table runs
    write gzip-compressed (NAME.csv.gz, `jackson.runfolder.write_table`) has its kind under that name, and the
    same table in a folder written before it was compressed (NAME.csv) the same kind.  None when it cannot
    tell."""
    path = Path(path)
    rel = path.resolve().relative_to(Path(reports).resolve()).as_posix()
    cmd = path.parent / "command.txt"
    if cmd.is_file():
        words = cmd.read_text().split()
        if not words:
            return None
        kind = f"{words[0]} {path.name}"
        other = kind[:-len(".gz")] if kind.endswith(".gz") else kind + ".gz"
        return other if kind not in COLUMNS and other in COLUMNS else kind
    if rel in ("claims.csv", "tables.csv"):
        return f"jackson-report {rel}"
    if rel.startswith("cot_dp/estimates/"):
        return "cot-dp estimate.csv"
    return None


def committed_csvs(reports: Path = REPORTS) -> list[Path]:
    """Every CSV under reports/, plain (*.csv) or gzip-compressed (*.csv.gz), cells/ folders left out."""
    return sorted(p for pattern in ("*.csv", "*.csv.gz") for p in Path(reports).rglob(pattern)
                  if "cells" not in p.relative_to(reports).parts)


# ---- the page ---------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """reports/COLUMNS.md: a section per output kind, a table column | meaning."""
    n_cols = sum(len(c) for c in COLUMNS.values())
    out = ["# Column dictionary", "",
           "Generated by `python -m jackson.lab_report.columns` from each experiment's `columns.py` (`COLUMNS`, found through "
           "the `jackson_lab.columns` entry points) and the report's own; do not edit by hand: change the dictionary and rerun. `tests/test_columns.py` checks that every column of every CSV under "
           "`reports/` (cells/ folders left out) has a line here, and that this page is a fresh rendering.", "",
           f"{len(COLUMNS)} output kinds, {n_cols} column lines. An output kind is a command and a file name "
           "(results.csv means something different for each command). A name with `<k>` stands for a numbered "
           "family of columns (k = 1, 2, ...). MSEs of the synthetic targets are in squared target units (the "
           "targets are unitless); cross-entropies in nats; times in seconds unless the name says ms.", "",
           "## Contents", ""]
    out += [f"- [{k}](#{_anchor(k)})" for k in COLUMNS]
    for kind, cols in COLUMNS.items():
        out += ["", f"## {kind}", ""]
        if kind in WRITTEN_BY:
            out += [_cell(WRITTEN_BY[kind][0].upper() + WRITTEN_BY[kind][1:]) + ".", ""]
        out += ["| column | meaning |", "|---|---|"]
        out += [f"| `{c}` | {_cell(m)} |" for c, m in cols.items()]
    return "\n".join(out) + "\n"


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def write(path: Path = PAGE) -> Path:
    Path(path).write_text(render())
    return Path(path)


def main(argv: list[str] | None = None) -> int:
    p = write()
    print(f"columns: {p} ({len(COLUMNS)} output kinds, {sum(len(c) for c in COLUMNS.values())} columns)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
