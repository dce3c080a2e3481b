"""`--status`: where a grid run stands in its --out, read without writing anything (jackson.sweep.grid_status).

Checked against the run folder itself: the finished cells are the folders under cells/, the in-progress step is
what torch.load reads from the checkpoint, the rest of the grid's keys are the config's own cells."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from cot_dp.cli import main as cot_main

FAULT_CASES = [
    {"id": "status-after-a-stop-reads-only",
     "command": "cot-dp sweep --quick --task arithmetic --model linear,standard --size 2 --ckpt-every-s 0 --out s "
                "--status   # after Ctrl-C at step 10 of the second cell's 30",
     "expect": "exit 0; one line per cell: the first 'finished', the second 'in progress ... training: step 9 of 30 "
               "(30%)' (the checkpoint's own step), then '2 cells: 1 finished, 1 in progress, 0 not started'; "
               "no file under s is written, touched or removed",
     "test": "tests/test_status.py::test_status_of_a_stopped_sweep_names_each_cell_and_writes_nothing"},
    {"id": "status-folder-of-another-command",
     "command": "cot-dp sweep ... --out o --status   # o holds an rnn-compare run",
     "expect": "exit 2, one line: o holds a `rnn-compare` run, not `cot-dp sweep`",
     "test": "tests/test_status.py::test_status_refuses_a_folder_of_another_command_and_a_command_without_cells"},
    {"id": "status-of-a-command-without-cells",
     "command": "jackson-report --status",
     "expect": "exit 2, one line: --status: this command runs no grid of cells",
     "test": "tests/test_status.py::test_status_refuses_a_folder_of_another_command_and_a_command_without_cells"},
]

QUICK = ["sweep", "--quick", "--task", "arithmetic", "--model", "linear,standard", "--size", "2",
         "--ckpt-every-s", "0", "--out", "s"]


def _snapshot(folder: Path) -> dict:
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _exit_code(fn, argv) -> int:
    try:
        return fn(argv)
    except SystemExit as e:
        return e.code


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A quick two-cell cot-dp sweep stopped (Ctrl-C) at optimiser step 10 of its second cell's 30."""
    import cot_dp.train as T
    root = tmp_path_factory.mktemp("status")
    real, seen = T.lr_at, []

    def lr_at(step, *a, **kw):
        if step == 10:
            seen.append(step)
            if len(seen) == 2:
                raise KeyboardInterrupt
        return real(step, *a, **kw)
    mp = pytest.MonkeyPatch()
    mp.chdir(root)
    mp.setattr(T, "lr_at", lr_at)
    try:
        code = _exit_code(cot_main, QUICK)
    finally:
        mp.undo()
    assert code == 130
    return root


def test_status_of_a_stopped_sweep_names_each_cell_and_writes_nothing(stopped, monkeypatch, capsys):
    monkeypatch.chdir(stopped)
    out = stopped / "s"
    done = [d.name for d in (out / "cells").iterdir() if not d.name.startswith(".")]
    cks = list((out / "checkpoints").glob("*.pt"))
    assert len(done) == 1 and len(cks) == 1
    step = int(torch.load(cks[0], weights_only=True)["step"])
    assert step == 9                                         # the checkpoint before step 10's update
    before = _snapshot(out)
    capsys.readouterr()
    assert _exit_code(cot_main, QUICK + ["--status"]) == 0
    text = capsys.readouterr().out
    assert _snapshot(out) == before                          # nothing written, touched or removed
    lines = text.splitlines()
    assert lines[0] == f"cot-dp sweep: {out.resolve()}"
    assert lines[1] == "  no run is writing into it now"
    fin = next(ln for ln in lines if ln.lstrip().startswith("finished"))
    assert done[0] in fin and "s in the run that finished it" in fin
    meta = json.loads((out / "cells" / done[0] / "cell.json").read_text())
    assert f"{meta['fit_wall_s']:,.0f} s of training over all runs" in fin   # the cell's own record of its training
    prog = next(ln for ln in lines if "in progress" in ln)
    assert cks[0].stem in prog and f"training: step {step} of 30 ({step / 30:.0%})" in prog
    assert "2 cells: 1 finished, 1 in progress, 0 not started" in text
    assert lines[-1] == "rerun the same command without --status to run or resume the rest"
    assert all(ln == ln.rstrip() for ln in lines)


def test_status_of_a_larger_grid_lists_the_cells_not_started_without_making_their_data(stopped, monkeypatch, capsys):
    from cot_dp.grid import SweepConfig
    monkeypatch.chdir(stopped)
    argv = [a if a != "2" else "2,3" for a in QUICK] + ["--status"]
    data_before = sorted(p.name for p in (stopped / "s" / "data").iterdir())
    capsys.readouterr()
    assert _exit_code(cot_main, argv) == 0
    text = capsys.readouterr().out
    assert "4 cells: 1 finished, 1 in progress, 2 not started" in text
    assert sorted(p.name for p in (stopped / "s" / "data").iterdir()) == data_before
    import dataclasses
    import re
    from cot_dp.grid import PRESETS
    cfg = dataclasses.replace(SweepConfig(), **PRESETS["quick"], quick=True, task="arithmetic",
                              models="linear,standard", sizes=(2, 3), out="s")
    keys = [c.key() for c in cfg.cells()]
    listed = re.findall(r"^  (?:finished|in progress|not started) +(\S+)", text, re.M)
    assert listed == keys                                    # every cell of the grid, in the grid's order


def test_status_says_when_a_run_is_writing_into_the_folder(tmp_path, capsys):
    from jackson.sweep import format_status, live_run
    (tmp_path / ".jackson-lab.lock").write_text(f"pid {os.getpid()} since 2026-11-26T09:00:00\n")
    assert live_run(tmp_path) == f"pid {os.getpid()} since 2026-11-26T09:00:00"
    assert f"a run is writing into it now (pid {os.getpid()} since" in format_status("x", tmp_path, [])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / ".jackson-lab.lock").write_text(f"pid {dead.pid} since 2026-11-26T09:00:00\n")   # killed without closing it
    assert live_run(tmp_path) is None
    (tmp_path / ".jackson-lab.lock").write_text("")                      # closed by its run
    assert live_run(tmp_path) is None


def test_status_projects_the_time_left_per_fit_summed_and_longest(tmp_path):
    """Each in-progress fit's time left is (of - step) x trained_s / step; with several, the counts line gives
    their sum (one worker) and the longest (side-by-side workers), not the sum alone, which reads as wall time."""
    from jackson.sweep import format_status
    fit = lambda step, of, s: {"fit": "bank", "step": step, "of": of, "trained_s": s}
    one = [{"key": "a", "state": "in progress", "fits": [fit(1000, 4000, 500.0)]},       # 3000 x 0.5 = 1,500 s
           {"key": "b", "state": "not started"}]
    text = format_status("x", tmp_path, one)
    assert "about 1,500 s left at its pace" in text
    assert text.splitlines()[-2].endswith("; the fit in progress needs about 0.4 h more at its pace")
    two = one + [{"key": "c", "state": "in progress", "fits": [fit(2000, 48000, 300.0)]}]   # 46000 x 0.15 = 6,900 s
    last = format_status("x", tmp_path, two).splitlines()[-2]
    assert last == ("3 cells: 0 finished, 2 in progress, 1 not started; the 2 fits in progress need about 2.3 h more "
                    "at their pace, one after another (the longest 1.9 h, the least wall time if they train side by "
                    "side)")
    assert "h more" not in format_status("x", tmp_path, [{"key": "b", "state": "not started"}])


def test_status_of_a_folder_not_yet_made_creates_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _exit_code(cot_main, QUICK[:-1] + ["new", "--status"]) == 0
    assert "2 cells: 0 finished, 0 in progress, 2 not started" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_status_refuses_a_folder_of_another_command_and_a_command_without_cells(tmp_path, capsys):
    from jackson.lab_report.page import main as report_main
    other = tmp_path / "o"
    other.mkdir()
    (other / "command.txt").write_text("rnn-compare --quick --out o\n")
    assert _exit_code(cot_main, QUICK[:-1] + [str(other), "--status"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cot-dp sweep: error: ")     # the sweep's own folder check or --status's
    assert f"{other.resolve()} holds a `rnn-compare` run, not `cot-dp sweep`" in err[0]
    assert _exit_code(report_main, ["--status"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--status: this command runs no grid of cells" in err[0]


def test_status_is_offered_where_a_command_runs_cells(tmp_path, capsys):
    """--help lists --status for the grid commands and not for the others; each grid command answers it."""
    from jackson.app_b.cli import main as tasks_main
    from jackson.rate_sweep.cli import sweep_main
    from rnn_compare.cli import compare_main
    from vit_probe.cli import main as vit_main
    for fn, argv, n in [(sweep_main, ["--quick"], 1), (tasks_main, ["nearest-point", "--quick"], 1),
                        (vit_main, ["sweep-mh", "--quick"], 2), (compare_main, ["--quick", "--table", "ordering"], 4)]:
        out = tmp_path / f"o{n}{len(argv)}"
        assert _exit_code(fn, argv + ["--out", str(out), "--status"]) == 0, argv
        assert f"{n} cells: 0 finished, 0 in progress, {n} not started" in capsys.readouterr().out, argv
        assert not out.exists()
        assert _exit_code(fn, argv[:1] + ["--help"] if fn is tasks_main or fn is vit_main else ["--help"]) == 0
        assert "--status" in capsys.readouterr().out, argv
    assert _exit_code(vit_main, ["spectra", "--help"]) == 0
    assert "--status" not in capsys.readouterr().out


def test_the_runner_resumes_part_trained_cells_before_fresh_ones(tmp_path, capsys):
    from dataclasses import dataclass
    from jackson.sweep import run_cells
    order = []

    @dataclass(frozen=True)
    class Cell:
        name: str
        part: bool = False

        def key(self):
            return self.name

        def in_progress(self):
            return [{"fit": "training", "step": 3, "of": 9, "trained_s": 1.0}] if self.part else []

        def run(self, folder, progress=True):
            order.append(self.name)
            (folder / "rows.csv").write_text("x\n1\n")

    cells = [Cell("a"), Cell("b", part=True), Cell("c"), Cell("d", part=True)]
    (tmp_path / "cells" / "a").mkdir(parents=True)            # finished: skipped
    dirs = run_cells(cells, tmp_path, progress=True)
    assert order == ["b", "d", "c"]
    assert dirs == [(tmp_path / "cells" / k).resolve() for k in "abcd"]   # results in the grid's order
    out = capsys.readouterr().out
    assert "resuming: 1 of 4 cells already finished" in out and "resuming first: 2 cells stopped part-way" in out
