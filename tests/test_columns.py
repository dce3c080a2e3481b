"""The column dictionary (jackson/lab_report/columns.py): every column of every committed CSV under reports/
(cells/ folders left out) has a line, and reports/COLUMNS.md is a fresh rendering of it."""
from __future__ import annotations

import csv
import gzip

from jackson.lab_report import columns


def _header(path) -> list[str]:
    with (gzip.open(path, "rt", newline="") if path.name.endswith(".gz") else open(path, newline="")) as fh:
        return next(csv.reader(fh), [])


def test_every_committed_csv_column_is_described():
    paths = columns.committed_csvs()
    assert paths, "no CSV found under reports/"
    missing = []
    for p in paths:
        rel = p.relative_to(columns.REPORTS).as_posix()
        kind = columns.kind_of(p)
        if kind is None or kind not in columns.COLUMNS:
            missing.append(f"reports/{rel}: output kind {kind!r} is not in jackson/lab_report/columns.py COLUMNS")
            continue
        missing += [f"reports/{rel}: column {c!r} of {kind!r} has no line in jackson/lab_report/columns.py COLUMNS"
                    for c in _header(p) if columns.meaning(kind, c) is None]
    assert not missing, "\n".join(missing)


def test_every_line_is_one_nonempty_line_and_every_kind_says_who_writes_it():
    for kind, cols in columns.COLUMNS.items():
        assert kind in columns.WRITTEN_BY, kind
        for c, text in cols.items():
            assert text.strip() and "\n" not in text, (kind, c)


def test_pattern_columns_match_numbered_families_only():
    k = "jackson-sweep learned_spectrum.csv.gz"
    assert columns.meaning(k, "s1") == columns.meaning(k, "s24") == columns.COLUMNS[k]["s<k>"]
    assert columns.meaning(k, "sx") is None and columns.meaning(k, "s") is None
    assert columns.meaning(k, "no_such_column") is None


def test_kind_of_reads_the_run_folders_command(tmp_path):
    run = tmp_path / "x" / "run"
    run.mkdir(parents=True)
    (run / "command.txt").write_text("vit-probe sweep-mh --m-h 4\n")
    (run / "results.csv").write_text("m_h\n")
    assert columns.kind_of(run / "results.csv", tmp_path) == "vit-probe results.csv"
    (tmp_path / "claims.csv").write_text("id\n")
    assert columns.kind_of(tmp_path / "claims.csv", tmp_path) == "jackson-report claims.csv"
    (tmp_path / "tables.csv").write_text("folder\n")
    assert columns.kind_of(tmp_path / "tables.csv", tmp_path) == "jackson-report tables.csv"
    (tmp_path / "stray.csv").write_text("a\n")
    assert columns.kind_of(tmp_path / "stray.csv", tmp_path) is None
    sweep = tmp_path / "sweep"                     # a table runs write gzipped, and an older folder's plain one
    sweep.mkdir()
    (sweep / "command.txt").write_text("jackson-sweep --quick\n")
    for name in ("loss_curves.csv.gz", "loss_curves.csv", "blocks.csv", "results.csv"):
        (sweep / name).write_text("")
    assert columns.kind_of(sweep / "loss_curves.csv.gz", tmp_path) == "jackson-sweep loss_curves.csv.gz"
    assert columns.kind_of(sweep / "loss_curves.csv", tmp_path) == "jackson-sweep loss_curves.csv.gz"
    assert columns.kind_of(sweep / "blocks.csv", tmp_path) == "jackson-sweep blocks.csv.gz"
    assert columns.kind_of(sweep / "results.csv", tmp_path) == "jackson-sweep results.csv"
    assert sorted(p.name for p in columns.committed_csvs(sweep)) == ["blocks.csv", "loss_curves.csv",
                                                                      "loss_curves.csv.gz", "results.csv"]


def test_the_page_is_a_fresh_rendering():
    assert columns.PAGE.read_text() == columns.render(), \
        "reports/COLUMNS.md is stale or edited by hand: run `python -m jackson.lab_report.columns`"
    assert "python -m jackson.lab_report.columns" in columns.render().splitlines()[2]
