"""Write only what you own (jackson/runfolder.py): a folder a run does not own keeps every entry it held, dotfiles
included, --force included; the run's lock never touches a user's `.lock`; a killed run's debris is removed, a user's
look-alike is not."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from jackson import runfolder as rf
from jackson.config import UsageError
from jackson.runfolder import check_run_folder, open_run, write_atomic
from jackson.sweep import _debris


@pytest.fixture(autouse=True)
def fresh_protection():
    rf.PROTECTED.clear()
    yield
    rf.PROTECTED.clear()


def test_dotfiles_count_as_content(tmp_path):
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".lock").write_text("the user's")
    with pytest.raises(UsageError, match="not empty and holds no run of this lab"):
        check_run_folder(tmp_path, "jackson-sweep")
    assert (tmp_path / ".lock").read_text() == "the user's"


@pytest.mark.parametrize("name", ["results.csv", "summary.md", "config.json", "cells"])
def test_force_never_writes_over_what_is_there(tmp_path, name):
    (tmp_path / name).write_text("mine") if "." in name else (tmp_path / name).mkdir()
    with pytest.raises(UsageError, match="--force writes only beside what is there"):
        check_run_folder(tmp_path, "jackson-sweep", force=True)


def test_force_beside_a_users_files_protects_each_of_them(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / ".lock").write_text("mine too")
    with open_run(tmp_path, "jackson-sweep", "jackson-sweep --force --out x", {"a": 1}, force=True) as out:
        write_atomic(out / "summary.md", "ours")                 # a new file: fine
        for name in ("notes.txt", ".lock"):
            with pytest.raises(UsageError, match="was there before this run"):
                write_atomic(out / name, "overwritten")
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / ".lock").read_text() == "mine too"


def test_a_figure_is_never_saved_over_a_protected_file(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from jackson.figures import save
    target = tmp_path / "plot.png"
    target.write_bytes(b"mine")
    rf.PROTECTED.add(os.path.abspath(target))
    with pytest.raises(UsageError):
        save(plt.figure(), target)
    assert target.read_bytes() == b"mine"


def test_debris_is_only_this_grids_temporary_cell_folders(tmp_path):
    class Cell:
        def __init__(self, k):
            self.k = k

        def key(self):
            return self.k
    for name in (".tmp-a1_s0-123", ".tmp-mine", ".tmp-other_key-5", ".tmp-a1_s0-x"):
        (tmp_path / name).mkdir()
    (tmp_path / ".tmp-file-7").write_text("a user's file")
    assert sorted(p.name for p in _debris(tmp_path, [Cell("a1_s0")])) == [".tmp-a1_s0-123", ".tmp-other_key-5"]


def test_the_lock_is_the_labs_own_file(tmp_path):
    (tmp_path / "run").mkdir()
    with open_run(tmp_path / "run", "jackson-sweep", "jackson-sweep --out run", {"a": 1}):
        assert (tmp_path / "run" / rf.LOCK).is_file() and not (tmp_path / "run" / ".lock").exists()


def test_a_rerun_says_whether_the_config_it_replaces_is_another_run_or_an_older_record_of_this_one(tmp_path, capsys):
    """A config.json an older version wrote (the same settings, fewer recorded) is named as that; a changed or a
    removed setting, or an unreadable file, is another config."""
    cfg = {"fit": {"steps": 6000, "cycles": 1}, "seeds": [0]}
    cases = [({"fit": {"steps": 6000}, "seeds": [0]}, "as an older version wrote it; config.json now also records fit.cycles"),
             ({"fit": {"steps": 3000}, "seeds": [0]}, "another config"),
             ({"fit": {"steps": 6000, "cycles": 1}, "seeds": [0], "gone": 1}, "another config"),
             ("{not json", "another config")]
    for i, (old, said) in enumerate(cases):
        run = tmp_path / f"run{i}"
        with open_run(run, "jackson-sweep", "jackson-sweep --out run", {"a": 1}):
            pass
        (run / "config.json").write_text(old if isinstance(old, str) else json.dumps(old))
        capsys.readouterr()
        with open_run(run, "jackson-sweep", "jackson-sweep --out run", cfg):
            pass
        assert said in capsys.readouterr().err
        assert json.loads((run / "config.json").read_text()) == cfg
    with open_run(tmp_path / "run0", "jackson-sweep", "jackson-sweep --out run", cfg):
        pass
    assert "note:" not in capsys.readouterr().err          # the same config: nothing to say


def test_a_users_own_folder_under_reports_is_left_out_of_the_committed_report_copy():
    """The README's main command writes reports/jackson/sweep-a1.5-rinf/; the tests that rebuild the committed report
    copy only committed paths, so the two README commands pass in either order."""
    import shutil
    import tempfile
    from conftest import REPO, committed_paths, reports_copy_ignore
    tracked = committed_paths()
    if tracked is None:
        pytest.skip("not a git checkout: every file under reports/ is the committed one")
    mine = REPO / "reports" / "jackson" / "zz-a-users-own-run"
    assert not mine.exists()
    try:
        mine.mkdir()
        (mine / "summary.json").write_text("{}")
        with tempfile.TemporaryDirectory() as tmp:
            dst = Path(tmp) / "reports"
            shutil.copytree(REPO / "reports", dst, ignore=reports_copy_ignore("index.*"))
            assert not (dst / "jackson" / "zz-a-users-own-run").exists()
            assert (dst / "jackson" / "fig1-full" / "summary.json").is_file()
    finally:
        shutil.rmtree(mine, ignore_errors=True)


# reports/RELIABILITY.md is generated from this list (tests/reliability.py); each case's test is named.
FAULT_CASES = [
    {"id": "dotfiles-only-folder", "class": "own", "command": "jackson-sweep --out ~   # HOME holds only .ssh/ and .lock",
     "expect": "exit 2, one line: not empty and holds no run of this lab; the user's .lock keeps its bytes",
     "test": "tests/test_ownership.py::test_dotfiles_count_as_content"},
    {"id": "force-over-a-users-results", "class": "own", "command": "jackson-sweep --force --out d   # d holds the user's results.csv, summary.md, config.json or cells/",
     "expect": "exit 2, one line: --force writes only beside what is there; nothing overwritten",
     "test": "tests/test_ownership.py::test_force_never_writes_over_what_is_there"},
    {"id": "force-beside-a-users-files", "class": "own", "command": "jackson-sweep --force --out d   # d holds notes.txt and .lock",
     "expect": "the run writes its own files beside them; a write over either is refused in one line; both keep their bytes",
     "test": "tests/test_ownership.py::test_force_beside_a_users_files_protects_each_of_them"},
    {"id": "figure-over-a-users-file", "class": "own", "command": "a figure whose name a user's file in a foreign folder holds",
     "expect": "refused in one line; the user's file keeps its bytes",
     "test": "tests/test_ownership.py::test_a_figure_is_never_saved_over_a_protected_file"},
    {"id": "users-tmp-look-alike", "class": "own", "command": "jackson-sweep ... --out d   # d/cells holds the user's .tmp-mine and .tmp-file-7",
     "expect": "only this grid's own temporary cell folders are removed as debris; the user's look-alikes stay",
     "test": "tests/test_ownership.py::test_debris_is_only_this_grids_temporary_cell_folders"},
    {"id": "users-lock-file", "class": "own", "command": "jackson-sweep --out d   # d holds the user's .lock",
     "expect": "the run's lock is the lab's own file name; the user's .lock is never opened for writing",
     "test": "tests/test_ownership.py::test_the_lock_is_the_labs_own_file"},
    {"id": "users-folder-under-reports", "class": "own", "command": "jackson-sweep --alpha 1.5 --rank inf   # writes reports/jackson/sweep-a1.5-rinf, then the tests",
     "expect": "the tests that rebuild the committed report copy only committed folders: the README's two commands pass in either order",
     "test": "tests/test_ownership.py::test_a_users_own_folder_under_reports_is_left_out_of_the_committed_report_copy"},
]
