"""cot-dp writes nothing through a symbolic link out of the folder it was given, names the file and line of a
number too long to read, and (like rnn-mixing-spectrum) never replaces an existing --png file without --force."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cot_dp import data
from cot_dp.cli import main as cot_main
from cot_dp_helpers import PNG, task
from conftest import one_line_exit as _exit2

DATA = ["data", "--task", "arithmetic", "--size", "2", "--n-train", "32", "--n-test", "8", "--threads", "1"]




# ---- no write through a link out of the named folder

@pytest.mark.parametrize("link", ["chain", "decoder", "chain/train_data.txt", "meta.json"])
def test_data_force_never_writes_through_a_link_inside_out(link, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "train_data.txt").write_text("precious\n")
    (outside / "meta.json").write_text("precious\n")
    d = tmp_path / "d"
    (d / "chain").mkdir(parents=True)
    target = outside if "/" not in link and link != "meta.json" else outside / Path(link).name
    if (d / link).exists():
        (d / link).rmdir()
    os.symlink(target, d / link)
    line = _exit2(cot_main, [*DATA, "--force", "--out", "d"], capsys)
    assert line.startswith(f"cot-dp data: error: --out: d/{link} is a symbolic link (to {target}); a dataset is "
                           "written only inside d, never through a link"), line
    assert sorted(p.name for p in outside.iterdir()) == ["meta.json", "train_data.txt"]
    assert (outside / "train_data.txt").read_text() == "precious\n" == (outside / "meta.json").read_text()
    assert (d / link).is_symlink()


def test_write_dataset_refuses_a_link_between_root_and_the_folder(tmp_path):
    """cot-dp sweep's datasets sit in <out>/data/<task>-<size>: a link at <out>/data is not followed either."""
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    os.symlink(outside, out / "data")
    t = task("arithmetic", 2)
    with pytest.raises(data.DataError, match=rf"{out / 'data'} is a symbolic link"):
        data.write_dataset(out / "data" / "arithmetic-2", t, *data.generate(t, 32, 8, 2023), 2023, root=out)
    assert list(outside.iterdir()) == []


def test_the_named_folder_itself_may_be_a_link(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "d")
    assert cot_main([*DATA, "--out", "d"]) == 0
    assert (tmp_path / "real" / "chain" / "train_data.txt").is_file()


# ---- a number too long to read

def _lis_folder(folder: Path, token: str, meta: bool) -> Path:
    t = task("lis", 4, value_range=250)
    lines = [t.solve(f"{a} {b} {c} {d} <sep>".split()) for a, b, c, d in [(1, 2, 3, 4), (5, 6, 1, 2), (9, 8, 7, 6)]]
    (folder / "chain").mkdir(parents=True)
    (folder / "chain/train_data.txt").write_text("".join(" ".join(x) + " \n" for x in lines))
    lines[1][0] = token
    (folder / "chain/test_data.txt").write_text("".join(" ".join(x) + " \n" for x in lines))
    if meta:
        (folder / "meta.json").write_text('{"task": {"name": "lis", "size": 4, "params": {"value_range": 250}}}')
    return folder


@pytest.mark.parametrize("meta", [False, True], ids=["benchmark-folder", "our-folder"])
def test_a_5000_digit_token_names_the_file_and_line(meta, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _lis_folder(tmp_path / "lis", "9" * 5000, meta)
    argv = ["train", "--data", "lis", "--steps", "2", "--d-model", "8", "--n-heads", "1", "--n-layers", "1",
            "--threads", "1"] + ([] if meta else ["--task", "lis", "--size", "4"])
    line = _exit2(cot_main, argv, capsys)
    assert "lis/chain/test_data.txt line 2: " in line and "'99999999999999999999...' (5000 characters)" in line, line
    assert "Exceeds the limit" not in line and len(line) < 300
    assert not (tmp_path / "lis" / "runs").exists()


def test_a_number_above_the_lis_range_names_the_file_and_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _lis_folder(tmp_path / "lis", "12345", meta=False)
    line = _exit2(cot_main, ["train", "--data", "lis", "--task", "lis", "--size", "4", "--threads", "1"], capsys)
    assert line == "cot-dp train: error: lis/chain/test_data.txt line 2: number 12345; LIS values must be below 2048"


# ---- --png never replaces a file without --force

def test_mask_png_refuses_an_existing_file_without_force(tmp_path, capsys):
    png = tmp_path / "m.png"
    png.write_bytes(b"mine")
    line = _exit2(cot_main, ["mask", "--length", "16", "--png", str(png)], capsys)
    assert line == f"cot-dp mask: error: --png: {png} exists; give --force to replace it, or another file name"
    assert png.read_bytes() == b"mine" and not (tmp_path / "m.pdf").exists()
    assert cot_main(["mask", "--length", "16", "--png", str(png), "--force"]) == 0
    assert png.read_bytes().startswith(PNG) and (tmp_path / "m.pdf").is_file()


def test_mask_png_refuses_an_existing_pdf_copy_without_force(tmp_path, capsys):
    (tmp_path / "m.pdf").write_bytes(b"mine")
    line = _exit2(cot_main, ["mask", "--length", "16", "--png", str(tmp_path / "m.png")], capsys)
    assert f"--png: {tmp_path / 'm.pdf'} (the figure's .pdf copy, written beside m.png) exists; give --force" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pdf"] and (tmp_path / "m.pdf").read_bytes() == b"mine"


def test_mask_png_force_replaces_a_link_and_leaves_its_target(tmp_path, capsys):
    outside = tmp_path / "outside.pdf"
    outside.write_bytes(b"mine")
    os.symlink(outside, tmp_path / "m.pdf")
    assert cot_main(["mask", "--length", "16", "--png", str(tmp_path / "m.pdf"), "--force"]) == 0
    assert outside.read_bytes() == b"mine" and not (tmp_path / "m.pdf").is_symlink()


def test_mixing_spectrum_png_refuses_an_existing_file_without_force(tmp_path, capsys):
    from rnn_compare.cli import spectrum_main
    png = tmp_path / "d3.png"
    png.write_bytes(b"mine")
    line = _exit2(spectrum_main, ["--k", "2", "--png", str(png)], capsys)
    assert line == f"rnn-mixing-spectrum: error: --png: {png} exists; give --force to replace it, or another file name"
    assert png.read_bytes() == b"mine" and sorted(p.name for p in tmp_path.iterdir()) == ["d3.png"]
    (tmp_path / "d3.svg").write_bytes(b"mine too")
    line = _exit2(spectrum_main, ["--k", "2", "--png", str(tmp_path / "d3.svg")], capsys)
    assert "--png: " in line and "d3.svg exists; give --force" in line
    assert spectrum_main(["--k", "2", "--png", str(png), "--force"]) == 0
    assert png.read_bytes().startswith(PNG) and (tmp_path / "d3.pdf").is_file()
    assert (tmp_path / "d3.svg").read_bytes() == b"mine too"

# reports/RELIABILITY.md is generated from this list (tests/reliability.py); each case's test is named.
FAULT_CASES = [
    {"id": 'data-force-through-symlink', "class": 'own', "command": 'cot-dp data --force --out d   # d/chain is a link out of d', "expect": 'exit 2, one line: d/chain is a symbolic link; nothing outside d is written',
     "test": "tests/test_hardening_cot_dp.py::test_data_force_never_writes_through_a_link_inside_out"},
    {"id": 'dataset-link-between-root-and-folder', "class": 'own', "command": 'cot-dp sweep --out d   # a link between d and a dataset folder', "expect": 'refused in one line; nothing written through it',
     "test": "tests/test_hardening_cot_dp.py::test_write_dataset_refuses_a_link_between_root_and_the_folder"},
    {"id": 'lis-5000-digit-token', "class": 'input', "command": 'cot-dp train --data lis/   # a 5000-digit number in test_data.txt', "expect": 'exit 2, one line naming the file and line (the token cut short)',
     "test": "tests/test_hardening_cot_dp.py::test_a_5000_digit_token_names_the_file_and_line"},
    {"id": 'lis-number-out-of-range', "class": 'input', "command": 'cot-dp train --data lis/   # a number above the LIS range', "expect": 'exit 2, one line naming the file and line',
     "test": "tests/test_hardening_cot_dp.py::test_a_number_above_the_lis_range_names_the_file_and_line"},
    {"id": 'mask-png-exists', "class": 'own', "command": "cot-dp mask --png m.png   # m.png (or m.pdf) is the user's", "expect": 'exit 2, one line: exists; give --force; the file is untouched',
     "test": "tests/test_hardening_cot_dp.py::test_mask_png_refuses_an_existing_file_without_force"},
    {"id": 'mask-png-force-link', "class": 'own', "command": 'cot-dp mask --png m.png --force   # m.png is a link', "expect": 'the link is replaced, its target untouched',
     "test": "tests/test_hardening_cot_dp.py::test_mask_png_force_replaces_a_link_and_leaves_its_target"},
    {"id": 'mixing-spectrum-png-exists', "class": 'own', "command": "rnn-mixing-spectrum --png d3.png   # d3.png is the user's", "expect": 'exit 2, one line: exists; give --force',
     "test": "tests/test_hardening_cot_dp.py::test_mixing_spectrum_png_refuses_an_existing_file_without_force"},
]
