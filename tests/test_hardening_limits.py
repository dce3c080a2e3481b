"""Every file a command reads whole has a size limit and must be a regular file (jackson.config.read_capped):
a config, a spectrum, a claims file and the JSON and CSV files of the run folders the report reads.  A larger
file, a device that never ends (/dev/zero) or a FIFO that would block is refused before anything is read."""
from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from conftest import one_line_exit
from jackson import config as C
from jackson.lab_report.page import main as report_main
from jackson.rate_sweep.cli import sweep_main

REPO = Path(__file__).resolve().parents[1]


def sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no disk (a hole): its st_size is what the limit checks."""
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


def special(kind: str, tmp_path: Path) -> str:
    if kind == "device":
        return "/dev/zero"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return str(fifo)


def test_read_capped_reads_a_small_file_and_refuses_a_large_one(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('{"a": 1}')
    assert C.read_capped(p, "--x") == '{"a": 1}'
    with pytest.raises(C.UsageError, match=r"--x: .*a.json is 8 bytes, more than the limit of 7 for it"):
        C.read_capped(p, "--x", limit=7)
    with pytest.raises(C.UsageError, match=r"--x: .* is not a regular file"):
        C.read_capped(tmp_path, "--x")


@pytest.mark.parametrize("option", ["--config", "--sigma-file"])
def test_sweep_refuses_a_file_over_the_limit_before_anything_is_written(option, tmp_path, capsys):
    big = sparse(tmp_path / "big.json", C.MAX_TEXT_BYTES + 1)
    line = one_line_exit(sweep_main, ["--quick", option, str(big), "--out", str(tmp_path / "o")], capsys)
    assert line.startswith("jackson-sweep: error: ") and f"{option}: {big} is {C.MAX_TEXT_BYTES + 1:,} bytes" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kind", ["device", "fifo"])
@pytest.mark.parametrize("option", ["--config", "--sigma-file"])
def test_sweep_refuses_a_device_or_fifo_without_reading_it(option, kind, tmp_path, capsys):
    path = special(kind, tmp_path)
    line = one_line_exit(sweep_main, ["--quick", option, path, "--out", str(tmp_path / "o")], capsys)
    assert f"{option}: {path} is not a regular file" in line, line
    assert not (tmp_path / "o").exists()


def test_a_claims_file_over_its_limit_is_one_line(tmp_path, capsys):
    from jackson.lab_report.claim_files import MAX_BYTES
    big = sparse(tmp_path / "claims.toml", MAX_BYTES + 1)
    line = one_line_exit(report_main, ["--claims", str(big), "--root", str(tmp_path)], capsys)
    assert f"--claims: {big} is {MAX_BYTES + 1:,} bytes, more than the limit of {MAX_BYTES:,}" in line


def _root_with_a_run(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    run = root / "jackson" / "a"
    shutil.copytree(REPO / "reports" / "jackson" / "fig1-given", run,
                    ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    return root, run


def test_the_report_refuses_a_report_json_over_the_limit_in_one_line(tmp_path, capsys):
    root, run = _root_with_a_run(tmp_path)
    sparse(run / "report.json", C.MAX_TEXT_BYTES + 1)
    line = one_line_exit(report_main, ["--root", str(root)], capsys)
    assert f"report.json is {C.MAX_TEXT_BYTES + 1:,} bytes, more than the limit" in line, line
    assert not (root / "index.html").exists()


def test_the_ledger_leaves_out_a_folder_whose_summary_is_over_the_limit(tmp_path):
    from jackson.verdict import find_runs
    root, run = _root_with_a_run(tmp_path)
    sparse(run / "summary.json", C.MAX_TEXT_BYTES + 1)
    (r,) = find_runs(root)
    assert r.summary is None and r.left_out == "unreadable summary.json"


def test_a_compressed_table_is_read_no_further_than_its_limit(tmp_path, monkeypatch):
    """A gzip that decompresses past the limit (a 'zip bomb' is tiny on disk) is a ValueError, which the ledger
    shows as the folder being unreadable for the rule; a table within the limit reads as its plain twin."""
    from jackson import verdict
    root, run = _root_with_a_run(tmp_path)
    text = "a,b\n" + "1,2\n" * 1000
    with gzip.open(run / "t.csv.gz", "wt") as fh:
        fh.write(text)
    (r,) = verdict.find_runs(root)
    assert r.table("t.csv") == [{"a": "1", "b": "2"}] * 1000
    monkeypatch.setattr(verdict, "MAX_TABLE_CHARS", 100)
    with pytest.raises(ValueError, match="t.csv.gz holds more than 100 characters"):
        r.table("t.csv")


def test_a_dataset_line_is_read_no_further_than_its_limit(tmp_path, monkeypatch):
    """cot-dp reads its split files line by line, each at most MAX_LINE_BYTES: a file of one endless line (no newline)
    is refused at the limit, naming the file and line, without reading the rest."""
    from cot_dp import data
    monkeypatch.setattr(data, "MAX_LINE_BYTES", 64)
    f = tmp_path / "train_data.txt"
    f.write_text("1 2 3 : 4\n" + "9" * 1000 + "\n")
    with pytest.raises(data.DataError, match=r"train_data.txt line 2: longer than 64 bytes"):
        list(data._split_lines(f))
    g = tmp_path / "ok.txt"
    g.write_text("1 2\n3\n")
    assert list(data._split_lines(g)) == [(1, ["1", "2"]), (2, ["3"])]


def test_a_meta_json_over_its_limit_is_refused_unread(tmp_path):
    from cot_dp import data
    sparse(tmp_path / "meta.json", data.MAX_META_BYTES + 1)
    with pytest.raises(data.DataError, match=r"meta.json: 1,048,577 bytes, more than a meta.json's limit of 1,048,576"):
        data.read_meta(tmp_path)


def test_a_checkpoint_over_its_limit_is_refused_unread(tmp_path, monkeypatch):
    from vit_probe import models
    monkeypatch.setattr(models, "MAX_CHECKPOINT_BYTES", 1000)
    big = sparse(tmp_path / "w.pth", 1001)
    with pytest.raises(C.UsageError, match=r"--checkpoint: .*w.pth is 1,001 bytes, more than the limit of 1,000"):
        models.read_checkpoint(big)


@pytest.mark.parametrize("kind", ["size", "fifo"])
def test_a_model_description_over_its_limit_or_not_a_file_is_refused_unread(tmp_path, kind):
    from vit_probe import model_source
    path = sparse(tmp_path / "m.json", model_source.MAX_DESCRIPTION_BYTES + 1) if kind == "size" else special("fifo", tmp_path)
    with pytest.raises(C.UsageError, match="--model-json: .*(more than the limit|not a regular file)"):
        model_source.read_description(path)


def test_a_run_folders_json_over_the_limit_is_one_line(tmp_path, capsys):
    """Every JSON a command reads from a run folder goes through jackson.config.read_json: a planted 16 MiB + 1 byte
    summary.json makes the redraw (here) refuse in one line naming it, before anything is drawn."""
    from jackson.lab_report.redraw import main as redraw_main
    _, run = _root_with_a_run(tmp_path)
    sparse(run / "summary.json", C.MAX_TEXT_BYTES + 1)
    line = one_line_exit(redraw_main, [str(run)], capsys)
    assert "summary.json" in line and "more than the limit" in line, line


FAULT_CASES = [
    {"id": "config-over-size-limit", "class": "bounded", "command": "jackson-sweep --config big.json   # 16 MiB + 1 byte",
     "expect": "exit 2, one line naming --config, the file, its size and the limit; nothing read or written",
     "test": "tests/test_hardening_limits.py::test_sweep_refuses_a_file_over_the_limit_before_anything_is_written"},
    {"id": "sigma-file-over-size-limit", "class": "bounded", "command": "jackson-sweep --sigma-file big.txt   # 16 MiB + 1 byte",
     "expect": "exit 2, one line naming --sigma-file, the file, its size and the limit",
     "test": "tests/test_hardening_limits.py::test_sweep_refuses_a_file_over_the_limit_before_anything_is_written"},
    {"id": "config-is-a-device-or-fifo", "class": "bounded", "command": "jackson-sweep --config /dev/zero   # or a FIFO; also --sigma-file",
     "expect": "exit 2, one line: not a regular file; never read (no hang)",
     "test": "tests/test_hardening_limits.py::test_sweep_refuses_a_device_or_fifo_without_reading_it"},
    {"id": "claims-file-over-size-limit", "class": "bounded", "command": "jackson-report --claims big.toml   # 1 MB + 1 byte",
     "expect": "exit 2, one line naming the file, its size and the limit",
     "test": "tests/test_hardening_limits.py::test_a_claims_file_over_its_limit_is_one_line"},
    {"id": "report-json-over-size-limit", "class": "bounded", "command": "jackson-report   # a folder's report.json is 16 MiB + 1 byte",
     "expect": "exit 2, one line naming the report.json, its size and the limit; no page written",
     "test": "tests/test_hardening_limits.py::test_the_report_refuses_a_report_json_over_the_limit_in_one_line"},
    {"id": "summary-json-over-size-limit", "class": "bounded", "command": "jackson-report   # a folder's summary.json is 16 MiB + 1 byte",
     "expect": "the folder is left out of the ledger as 'unreadable summary.json'; the rest is judged",
     "test": "tests/test_hardening_limits.py::test_the_ledger_leaves_out_a_folder_whose_summary_is_over_the_limit"},
    {"id": "table-gzip-bomb", "class": "bounded", "command": "jackson-report   # a folder's NAME.csv.gz decompresses past 256 MiB",
     "expect": "read no further than the limit; the folder is listed as unreadable for the rule",
     "test": "tests/test_hardening_limits.py::test_a_compressed_table_is_read_no_further_than_its_limit"},
    {"id": "dataset-line-over-limit", "class": "bounded", "command": "cot-dp train --data d   # d/chain/train_data.txt is one endless line",
     "expect": "one line naming the file and line: longer than the 1 MiB line limit; the rest is not read",
     "test": "tests/test_hardening_limits.py::test_a_dataset_line_is_read_no_further_than_its_limit"},
    {"id": "meta-json-over-size-limit", "class": "bounded", "command": "cot-dp train --data d   # d/meta.json is 1 MiB + 1 byte",
     "expect": "one line naming the file, its size and the limit; not read",
     "test": "tests/test_hardening_limits.py::test_a_meta_json_over_its_limit_is_refused_unread"},
    {"id": "checkpoint-over-size-limit", "class": "bounded", "command": "vit-probe spectra --checkpoint w.pth ...   # w.pth is over 8 GiB",
     "expect": "exit 2, one line naming the file, its size and the limit; not read",
     "test": "tests/test_hardening_limits.py::test_a_checkpoint_over_its_limit_is_refused_unread"},
    {"id": "model-json-over-size-limit", "class": "bounded", "command": "vit-probe spectra --model-json m.json ...   # 1 MiB + 1 byte, or a FIFO",
     "expect": "exit 2, one line naming --model-json and the file; never read",
     "test": "tests/test_hardening_limits.py::test_a_model_description_over_its_limit_or_not_a_file_is_refused_unread"},
    {"id": "run-folder-json-over-size-limit", "class": "bounded", "command": "python -m jackson.lab_report.redraw d   # d/summary.json is 16 MiB + 1 byte",
     "expect": "exit 2, one line naming the file and the limit (every run-folder JSON is read through read_json)",
     "test": "tests/test_hardening_limits.py::test_a_run_folders_json_over_the_limit_is_one_line"},
]
