"""The wall for what rules read: jackson.verdict.Run opens a run folder's summary.json, config.json, command.txt and
tables (`Run.table`) only when they lie inside the folder, every symbolic link followed, and are regular files by a
stat before the open (jackson.runfolder.refused, the check the report's wall uses for figures).  A refused file
reads as absent and the Run names it (`Run.refused`): a rule sees no evidence, never the content of a file outside
the folder, and a FIFO never blocks the report.  Each hostile layout is generated against a folder whose rule
verdict is known, so the test also shows the refused file would have decided it."""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from jackson import verdict
from jackson.lab_report import claims as ledger_mod
from jackson.lab_report.provenance import from_files
from jackson.runfolder import refused
from jackson.verdict import UNTESTED, find_runs, rules

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "reports" / "cot_dp" / "cpu-arithmetic"    # a finished folder whose rule reads its results.csv
CLAIM = "Y-tab2-flops"

# how each hostile layout replaces a file of the folder; outside: a copy of the real file beside the root
LAYOUTS = {
    "link-out": "a symbolic link to a copy of the file outside the run folder",
    "link-climbs": "a symbolic link ../../outside/<file> (relative, climbing out of the folder)",
    "fifo": "a FIFO (an open would wait for a writer forever)",
    "folder": "a folder of that name",
    "dangling-link": "a symbolic link to nothing",
}
FILES = ("summary.json", "config.json", "command.txt", "min_gflops.csv")   # the last: the rule's evidence

SAYS = {"summary.json": "the folder is left out of every verdict, the ledger saying why",
        "config.json": "the folder's settings read as none", "command.txt": "the summary's command stands in",
        "min_gflops.csv": "the claim it decides is untested, its row naming the file and why"}
T = "tests/test_rule_wall.py::"
FAULT_CASES = [
    {"id": f"rule-reads-{f.split('.')[0]}-{layout}", "class": "wait" if layout == "fifo" else "input",
     "command": f"jackson-report   # a run folder's {f} is {what}",
     "expect": f"not opened: read as absent and named in Run.refused; {SAYS[f]}; nothing from outside the folder "
               "reaches a rule, and the report does not block",
     "test": T + "test_a_file_behind_the_wall_reads_as_absent_and_named"}
    for f in FILES for layout, what in LAYOUTS.items()] + [
    {"id": "rule-table-name-climbs", "class": "input",
     "command": "jackson-report --claims my.toml   # a plugin rule asks run.table('../../outside/results.csv')",
     "expect": "[] (absent) and the name in Run.refused; the file outside is never opened",
     "test": T + "test_a_table_name_that_climbs_out_is_refused"},
    {"id": "provenance-command-fifo", "class": "wait",
     "command": "python -m jackson.lab_report.provenance F   # F/command.txt is a FIFO or a link out of F",
     "expect": "not opened (a stat first): the derived record says not recorded; nothing blocks",
     "test": T + "test_provenance_reads_only_regular_files_inside_the_folder"},
]


def layout(root: Path, name: str, how: str) -> Path:
    """A copy of SOURCE at root/cot_dp/a whose file `name` is replaced as `how` says; the real file's copy lies in
    root/../outside/<name>, outside the report root."""
    folder = root / "cot_dp" / "a"
    shutil.copytree(SOURCE, folder, ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    target = folder / name
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    shutil.copy(target, outside / name)
    target.unlink()
    if how == "link-out":
        target.symlink_to(outside / name)
    elif how == "link-climbs":
        target.symlink_to(Path("..") / ".." / ".." / "outside" / name)
    elif how == "fifo":
        os.mkfifo(target)
    elif how == "folder":
        target.mkdir()
    elif how == "dangling-link":
        target.symlink_to(outside / "nothing-here")
    return folder


def judged(root: Path):
    (row,) = [r for r in ledger_mod.ledger(root) if r.claim.id == CLAIM]
    return row


def no_block(fn, seconds: float = 20.0):
    """fn() in a thread; fails (rather than hangs) when it does not return in `seconds`."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "blocked: a file that should have been refused was opened"
    return box["v"]


def test_the_untouched_folder_is_judged(tmp_path):
    """The control: with every file in place the claim is judged from this folder (so what the layouts below
    refuse is what decided it)."""
    root = tmp_path / "root"
    shutil.copytree(SOURCE, root / "cot_dp" / "a", ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    row = judged(root)
    assert row.folder == "cot_dp/a" and row.verdict != UNTESTED
    (run,) = find_runs(root)
    assert run.refused == {} and run.summary is not None and run.config and run.table("min_gflops.csv")


@pytest.mark.parametrize("how", sorted(LAYOUTS))
@pytest.mark.parametrize("name", FILES)
def test_a_file_behind_the_wall_reads_as_absent_and_named(tmp_path, name, how):
    root = tmp_path / "root"
    folder = layout(root, name, how)
    (run,) = no_block(lambda: find_runs(root))
    shown = name
    if name == "summary.json":
        assert run.summary is None and run.left_out
        assert run.left_out.startswith("summary.json not read (") and shown in run.refused
    elif name == "config.json":
        assert run.config == {} and shown in run.refused
    elif name == "command.txt":
        assert shown in run.refused
        assert run.command == str(run.summary.get("command", ""))          # the summary's, never the file's
    else:
        assert no_block(lambda: run.table(name)) == []
        assert name in run.refused
    why = next(iter(run.refused.values()))
    assert why in ("outside its run folder", "not a regular file", "a dangling or unreadable link"), why
    row = no_block(lambda: judged(root))
    if name == "summary.json":     # the folder is left out, saying why
        assert row.verdict == UNTESTED and any("summary.json not read (" in o for o in row.others)
    elif name == "min_gflops.csv":     # the evidence that decided the control: none now, and the row says why
        assert row.verdict == UNTESTED and "no run folder" not in row.measured
        assert f"cot_dp/a: not read for this rule ({name}: {why})" in row.measured


def test_a_table_name_that_climbs_out_is_refused(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(SOURCE, root / "cot_dp" / "a", ignore=shutil.ignore_patterns("cells", "*.png", "*.pdf"))
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "results.csv").write_text("secret,value\nhunter2,1\n")
    (run,) = find_runs(root)
    assert run.table("../../../outside/results.csv") == []
    assert run.refused == {"../../../outside/results.csv": "outside its run folder"}
    assert refused(run.path, run.path / "../../../outside/results.csv") == "outside its run folder"
    assert refused(run.path, run.path / "config.json") == ""


def test_provenance_reads_only_regular_files_inside_the_folder(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (tmp_path / "elsewhere.txt").write_text("jackson-sweep --threads 7\n")
    (folder / "command.txt").symlink_to(tmp_path / "elsewhere.txt")
    assert from_files(folder)["torch_threads"]["value"] is None            # the link out is not read
    (folder / "command.txt").unlink()
    os.mkfifo(folder / "command.txt")
    assert no_block(lambda: from_files(folder))["torch_threads"]["value"] is None
    (folder / "command.txt").unlink()
    (folder / "command.txt").write_text("jackson-sweep --threads 3\n")
    assert from_files(folder)["torch_threads"] == {"value": "3", "from": "--threads in command.txt"}
