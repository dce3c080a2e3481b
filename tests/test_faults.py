"""Fault injection for the shared core (jackson/runfolder.py, jackson/sweep.py, jackson/config.py):
folders the command did not make, two runs into one folder, a dead Dask scheduler, a worker that dies
mid-cell, relative paths on a cluster, Ctrl-C and SIGTERM, a full disk, corrupt report figures.

Every case is declared with `@case(id, command, expect)`; FAULT_CASES is what tests/reliability.py
turns into reports/RELIABILITY.md (with the cases of the experiment packages' test modules)."""
from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jackson.config import UsageError
from jackson.threads import apply_threads
from jackson.runfolder import RunLock, check_scheduler, open_run
from jackson.sweep import run_cells

FAULT_CASES: list[dict] = []
QUICK = ["--quick", "--m-h", "1,2", "--steps", "6"]     # the smallest sweep that writes every file


def case(id: str, command: str, expect: str):
    def deco(fn):
        FAULT_CASES.append({"id": id, "command": command, "expect": expect, "test": f"tests/test_faults.py::{fn.__name__}"})
        return fn
    return deco


def sweep(argv, capsys):
    """jackson-sweep in-process: (exit code, stdout, stderr)."""
    from jackson.rate_sweep.cli import sweep_main
    try:
        rc = sweep_main(argv)
    except SystemExit as e:
        rc = e.code
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def one_line(err: str, prog: str = "jackson-sweep") -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error:") and "Traceback" not in err, err
    return lines[0]


# ---- folders the command did not make --------------------------------------------------------

@case("foreign-folder", "jackson-sweep --quick --out DIR   # DIR holds the user's own files",
      "exit 2, one line naming --force; nothing in DIR written or removed")
def test_foreign_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me\n")
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
    assert rc == 2 and "--force" in one_line(se) and "not empty" in se
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and (out / "notes.txt").read_text() == "keep me\n"


@case("force-writes-beside", "jackson-sweep --quick --out DIR --force   # DIR holds the user's own files",
      "the run completes beside the user's files; none of them is removed or changed")
@pytest.mark.slow
def test_force_writes_beside_and_deletes_nothing(tmp_path, capsys):
    out = tmp_path / "mine"
    (out / "sub").mkdir(parents=True)
    (out / "notes.txt").write_text("keep me\n")
    (out / "sub" / "data.bin").write_bytes(b"\x00\x01")
    rc, so, se = sweep([*QUICK, "--out", str(out), "--force"], capsys)
    assert rc == 0, se
    assert (out / "notes.txt").read_text() == "keep me\n" and (out / "sub" / "data.bin").read_bytes() == b"\x00\x01"
    assert (out / "results.csv").is_file() and (out / "environment.json").is_file()
    env = json.loads((out / "environment.json").read_text())
    assert env["kind"] == "jackson-sweep" and env["command"].endswith("--force") and env["packages"]["torch"]
    import torch                     # the machine's floating-point kernels, which same-seed runs differ by
    assert env["cpu"]["torch_capability"] == torch.backends.cpu.get_cpu_capability() and env["cpu"]["model"]


@case("other-commands-folder", "jackson-sweep --out DIR   # DIR holds an rnn-compare run",
      "exit 2, one line naming the run DIR holds; nothing written")
def test_folder_of_another_command_is_refused(tmp_path, capsys):
    out = tmp_path / "rnn"
    out.mkdir()
    (out / "command.txt").write_text("rnn-compare --out x\n")
    (out / "results.csv").write_text("a\n1\n")
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
    assert rc == 2 and "`rnn-compare`" in one_line(se)
    assert sorted(p.name for p in out.iterdir()) == ["command.txt", "results.csv"]


@case("same-command-folder", "jackson-sweep --quick --out DIR   # DIR holds an earlier jackson-sweep run",
      "accepted: finished cells are reused (resume), the summary rebuilt")
@pytest.mark.slow
def test_folder_of_the_same_command_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    assert sweep([*QUICK, "--out", str(out)], capsys)[0] == 0
    cells = sorted(p.name for p in (out / "cells").iterdir())
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
    assert rc == 0 and "already finished" in so and sorted(p.name for p in (out / "cells").iterdir()) == cells


@case("out-unwritable", "jackson-sweep --out /proc/x", "exit 2, one line: cannot write under /proc")
def test_out_under_proc(capsys):
    rc, so, se = sweep([*QUICK, "--out", "/proc/jackson-lab-x"], capsys)
    assert rc == 2 and "--out" in one_line(se)


# ---- two runs into one folder ------------------------------------------------------------------

@case("concurrent-runs", "jackson-sweep --out DIR   # while another run writes into DIR",
      "the second run stops at once with one line (exit 2); the first run's in-flight cell is untouched")
@pytest.mark.slow
def test_second_run_into_a_locked_folder_stops(tmp_path, capsys):
    out = tmp_path / "run"
    with open_run(out, "jackson-sweep", "jackson-sweep --out run", {}):
        inflight = out / "cells" / ".tmp-somecell-123"
        inflight.mkdir(parents=True)
        (inflight / "rows.csv").write_text("partial\n")
        rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
        assert rc == 2 and "another run" in one_line(se)
        assert (inflight / "rows.csv").read_text() == "partial\n"
    # the lock dies with its holder: a later run goes ahead (and clears the dead run's debris)
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
    assert rc == 0, se
    assert not inflight.exists()


def test_a_resumed_run_keeps_the_earlier_environment_records(tmp_path):
    """Each invocation into a folder writes its own environment.json and keeps what the earlier ones
    recorded under `earlier`, oldest first, so a rebuild does not erase the commit that trained the cells."""
    out = tmp_path / "run"
    for i in range(3):
        with open_run(out, "jackson-sweep", f"jackson-sweep --out run  # {i}", {}):
            pass
    env = json.loads((out / "environment.json").read_text())
    assert env["command"].endswith("# 2")
    assert [e["command"][-3:] for e in env["earlier"]] == ["# 0", "# 1"]
    assert all("earlier" not in e and e["kind"] == "jackson-sweep" for e in env["earlier"])
    (out / "environment.json").write_text("{not json")         # an unreadable record starts afresh
    with open_run(out, "jackson-sweep", "jackson-sweep --out run", {}):
        pass
    assert json.loads((out / "environment.json").read_text())["earlier"] == []


@case("rerun-changes-nothing", "jackson-sweep ...   # again, into its own finished folder (README command 1 twice)",
      "the outputs rewritten as they were and environment.json left as it was: a committed folder stays committed")
def test_an_invocation_that_changes_nothing_leaves_the_folder_as_it_was(tmp_path, capsys):
    out = tmp_path / "run"
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
    assert rc == 0, se
    files = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)           # every cell finished: a re-summary
    assert rc == 0 and "already finished" in so + se, se
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == files
    # the control: an invocation that changes an output, or a file below, is recorded
    for change in (lambda o: (o / "summary.md").write_text("changed\n"),
                   lambda o: os.utime(next((o / "cells").rglob("cell.json")), ns=(1, 1))):
        held = json.loads((out / "environment.json").read_text())
        with open_run(out, "jackson-sweep", held["command"], json.loads((out / "config.json").read_text())) as o:
            change(o)
        assert json.loads((out / "environment.json").read_text())["earlier"][-1] == {
            k: v for k, v in held.items() if k != "earlier"}


def test_a_rebuild_of_a_folder_older_than_environment_json_keeps_its_git_provenance(tmp_path):
    """A folder written before runs recorded environment.json has a provenance.json derived from git history; a
    rebuild into it records that as its first earlier invocation (with the old command), so the report does not
    date the cells by the rebuild."""
    from jackson.lab_report.entries import provenance
    out = tmp_path / "run"
    out.mkdir()
    (out / "command.txt").write_text("jackson-sweep --seeds 0\n")
    (out / "config.json").write_text("{}")
    (out / "provenance.json").write_text(json.dumps({
        "results_added": {"commit": "915a11b205a19a790f6c763ab1f872a8259d704b", "date": "2026-11-22T16:13:48+00:00"},
        "device": {"value": "cpu", "from": "config.json device"}}))
    with open_run(out, "jackson-sweep", "jackson-sweep --seeds 0,1", {}):
        pass
    env = json.loads((out / "environment.json").read_text())
    assert env["command"] == "jackson-sweep --seeds 0,1" and len(env["earlier"]) == 1
    first = env["earlier"][0]
    assert (first["kind"], first["command"], first["started_utc"], first["commit"], first["device"]) == \
        ("jackson-sweep", "jackson-sweep --seeds 0", None, None, "cpu")
    assert "committed in 915a11b205a1 on 2026-11-22 (provenance.json, derived from git history)" in first["record"]
    assert "after 1 earlier invocation(s), the first started on a date not recorded at a commit not recorded" \
        in provenance(out)
    # its cells copied into a new folder (no provenance.json) with this record: the date travels in the record
    other = tmp_path / "merged"
    other.mkdir()
    (other / "environment.json").write_text(json.dumps({**env, "earlier": [first]}))
    assert ("the first started on a date not recorded at a commit not recorded (its results committed in "
            "915a11b205a1 on 2026-11-22: git history, environment.json)") in provenance(other)
    undated = {k: v for k, v in first.items() if k != "results_added"}   # a record written before it carried the date
    (other / "environment.json").write_text(json.dumps({**env, "earlier": [undated]}))
    assert "at a commit not recorded, quick run" in provenance(other)
    with open_run(out, "jackson-sweep", "jackson-sweep --seeds 0,1", {}):   # a second rebuild keeps it first
        pass
    assert json.loads((out / "environment.json").read_text())["earlier"][0] == first
    (out / "environment.json").unlink()                      # no environment.json, an unreadable provenance.json
    (out / "provenance.json").write_text("{not json")
    with open_run(out, "jackson-sweep", "jackson-sweep --seeds 0,1", {}):
        pass
    assert json.loads((out / "environment.json").read_text())["earlier"] == []


def test_the_environment_is_recorded_before_the_run_writes_into_its_folder(tmp_path, monkeypatch):
    """A rerun into a committed folder rewrites its config.json and command.txt; recorded after that, `git
    status` saw the run's own writes and every such record read '+dirty'.  The record is taken first."""
    import jackson.runfolder as rf
    out, seen = tmp_path / "run", []
    real = rf.environment
    cfg = out / "config.json"
    monkeypatch.setattr(rf, "environment", lambda *a: seen.append((sorted(p.name for p in out.iterdir()),
                                                                    cfg.read_text() if cfg.is_file() else None)) or real(*a))
    with open_run(out, "jackson-sweep", "jackson-sweep --out run", {"a": 1}):
        pass
    with open_run(out, "jackson-sweep", "jackson-sweep --out run  # again", {"a": 2}):
        pass
    assert seen[0] == ([".jackson-lab.lock"], None)                                     # nothing of the run's own yet
    assert seen[1] == ([".jackson-lab.lock", "command.txt", "config.json", "environment.json"], '{\n "a": 1\n}')  # the first run's
    assert cfg.read_text() == '{\n "a": 2\n}'


def test_lock_is_released_when_its_process_is_killed(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    code = ("import sys, time; sys.path.insert(0, %r); from jackson.runfolder import RunLock; "
            "from pathlib import Path; l = RunLock(Path(%r)); print('locked', flush=True); time.sleep(60)"
            % (str(Path(__file__).resolve().parent.parent), str(out)))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "locked"
        with pytest.raises(UsageError, match="another run"):
            RunLock(out)
        p.kill()
        p.wait(timeout=10)
        RunLock(out).close()                 # kill -9 released it
    finally:
        if p.poll() is None:
            p.kill()


# ---- Dask -------------------------------------------------------------------------------------

@case("scheduler-unreachable", "jackson-sweep --dask-scheduler tcp://127.0.0.1:1",
      "exit 2 within 10 s, one line; no folder written")
def test_unreachable_scheduler(tmp_path, capsys):
    out = tmp_path / "run"
    t0 = time.perf_counter()
    rc, so, se = sweep([*QUICK, "--dask-scheduler", "tcp://127.0.0.1:1", "--out", str(out)], capsys)
    assert rc == 2 and "no Dask scheduler answers" in one_line(se)
    assert time.perf_counter() - t0 < 10 and not out.exists()


@case("scheduler-not-an-address", "jackson-sweep --dask-scheduler notaurl", "exit 2, one line; no folder written")
def test_scheduler_that_is_not_an_address(tmp_path, capsys):
    for bad in ("notaurl", "http://host:1", "tcp://:8786", "tcp://host:port"):
        rc, so, se = sweep([*QUICK, "--dask-scheduler", bad, "--out", str(tmp_path / "run")], capsys)
        assert rc == 2 and "--dask-scheduler" in one_line(se), bad
    assert not (tmp_path / "run").exists()
    with pytest.raises(UsageError):
        check_scheduler("tcp://127.0.0.1:1", timeout=2)


class DiesOnce:
    """A cell whose first attempt kills its worker process (os._exit), as an OOM kill would."""

    def __init__(self, name: str, marker: str):
        self.name, self.marker = name, marker

    def key(self) -> str:
        return self.name

    def run(self, folder, progress=True):
        (Path(folder) / "started").write_text("x")
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
        (Path(folder) / "rows.csv").write_text(f"cell,pid\n{self.name},{os.getpid()}\n")


@case("worker-dies", "jackson-sweep --dask-scheduler ...   # a worker is killed mid-cell",
      "the cell reruns on a (restarted) worker; finished cells kept, no debris")
@case("relative-out-on-cluster", "jackson-sweep --out rel/dir --dask-scheduler ...   # workers started in another folder",
      "cells land under the client's rel/dir (paths made absolute before submission)")
@pytest.mark.slow
def test_worker_killed_mid_cell_is_rerun_and_paths_are_absolute(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_class=distributed.Nanny) as cluster:
        monkeypatch.chdir(client_dir)          # the worker's cwd is elsewhere
        cells = [DiesOnce("a", str(tmp_path / "died-a")), DiesOnce("b", str(tmp_path / "died-b"))]
        dirs = run_cells(cells, "rel/out", scheduler=cluster.scheduler_address, progress=False)
    assert [d for d in dirs] == [client_dir / "rel" / "out" / "cells" / k for k in ("a", "b")]
    for d in dirs:
        assert (d / "rows.csv").is_file() and (d / "started").is_file()
    assert (tmp_path / "died-a").exists() and (tmp_path / "died-b").exists()   # both first attempts died
    assert not list((client_dir / "rel" / "out" / "cells").glob(".tmp-*"))


# ---- signals ----------------------------------------------------------------------------------

def _start(cmd, env):
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def catches(pid: int, sig: int) -> bool:
    """Whether process pid has a handler for sig installed (Linux: the SigCgt mask of /proc/PID/status)."""
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    return bool(mask >> (sig - 1) & 1)


def _wait_for(pred, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if pred():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.3, 1.0])     # the cell's set-up, torch's lazy imports, training
@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signal_mid_cell(tmp_path, sweep_exe, sub_env, sig, code, word, delay):
    out = tmp_path / "run"
    cmd = [str(sweep_exe), "--quick", "--schedule", "cosine", "--steps", "200000", "--out", str(out)]   # killed long before the end
    p = _start(cmd, sub_env)
    try:
        assert _wait_for(lambda: (out / "cells").is_dir() and any((out / "cells").glob(".tmp-*")), p), \
            "no cell started"
        time.sleep(delay)
        p.send_signal(sig)
        try:
            so, se = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
            raise AssertionError(f"still running 60 s after the signal; stderr: {se[-3000:]}")
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == code, se[-2000:]
    assert "Traceback" not in se and se.strip().splitlines()[-1].startswith(f"jackson-sweep: {word}")
    assert not list((out / "cells").glob(".tmp-*"))        # the in-flight cell's temporary folder is gone


FAULT_CASES.append({"id": "sigint-mid-cell", "command": "jackson-sweep ...   # Ctrl-C while a cell trains",
                    "expect": "one line, exit 130; the in-flight cell's temporary folder removed; rerun resumes",
                    "test": "tests/test_faults.py::test_signal_mid_cell"})
FAULT_CASES.append({"id": "sigterm-mid-cell", "command": "kill -TERM <pid of jackson-sweep>",
                    "expect": "one line, exit 143; the in-flight cell's temporary folder removed; rerun resumes",
                    "test": "tests/test_faults.py::test_signal_mid_cell"})


def test_a_swallowed_signal_still_stops_the_next_training_step():
    """A library may catch the exception the handler raises (torch's lazy imports did); the stop is
    raised again at the next progress update of any training loop."""
    import torch
    from jackson import config
    from jackson.fit import fit
    from jackson.hparams import FitConfig
    from jackson.models import TransformerBank
    from jackson.hparams import ModelConfig
    bank = TransformerBank(ModelConfig(n=4, d_v=4, width=8), [1], [0])
    x, y = torch.rand(64, 8), torch.rand(64, 8)               # (N, T) scalars, as fit takes them
    config.STOP[:] = [signal.SIGTERM]
    try:
        with pytest.raises(config.Terminated):
            fit(bank, x, y, FitConfig(steps=50, batch_size=16, warmup=1, eval_every=10, eval_size=16), seed=0,
                progress=False)
        config.STOP[:] = [signal.SIGINT]
        with pytest.raises(KeyboardInterrupt):
            fit(bank, x, y, FitConfig(steps=50, batch_size=16, warmup=1, eval_every=10, eval_size=16), seed=0,
                progress=True)
    finally:
        config.STOP.clear()


@pytest.mark.slow
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_at_start_up(tmp_path, sweep_exe, sub_env, sig, code):
    out = tmp_path / "run"
    p = _start([str(sweep_exe), *QUICK, "--out", str(out)], sub_env)
    # the moment the command has its handlers (it installs them before importing torch and friends; SIGINT's, then
    # SIGTERM's, and Python has a SIGINT handler of its own from the start, so SIGTERM's bit tells): a fixed sleep
    # raced a loaded machine, where the interpreter itself can take longer than the sleep to start
    assert _wait_for(lambda: catches(p.pid, signal.SIGTERM), p, timeout=60), "no signal handler was installed"
    p.send_signal(sig)
    so, se = p.communicate(timeout=60)
    assert p.returncode == code, se[-2000:]
    assert "Traceback" not in se and len(se.strip().splitlines()) == 1


FAULT_CASES.append({"id": "signal-at-start-up", "command": "jackson-sweep ...   # Ctrl-C or SIGTERM in the first second",
                    "expect": "one line, exit 130 (SIGINT) or 143 (SIGTERM), no traceback",
                    "test": "tests/test_faults.py::test_signal_at_start_up"})


# ---- full disk, threads ------------------------------------------------------------------------

@case("disk-full", "jackson-sweep ...   # the disk fills while a cell writes (ENOSPC injected)",
      "exit 1, one line naming the file and 'No space left on device'; no half-written cell left")
@case("disk-full-no-file-name", "jackson-sweep ...   # the disk fills inside a write; the OSError names no file",
      "exit 1, one line naming the run folder being written and 'No space left on device'")
@pytest.mark.parametrize("named", [True, False], ids=["names-its-file", "names-no-file"])
def test_full_disk_mid_cell(tmp_path, capsys, monkeypatch, named):
    import jackson.rate_sweep.cell as rc_mod
    real = rc_mod.measure

    def measure(cell, folder, progress=True):
        real(cell, folder, progress)
        where = (str(Path(folder) / "learned_spectrum.csv"),) if named else ()   # a full disk fails inside write()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *where)

    monkeypatch.setattr(rc_mod, "measure", measure)
    out = tmp_path / "run"
    rc, so, se = sweep([*QUICK, "--out", str(out)], capsys)
    assert rc == 1
    line = one_line(se)
    assert "No space left on device" in line, se
    assert ("learned_spectrum.csv" in line) if named else (f"cannot write or read {out}: " in line), line
    assert list((out / "cells").iterdir()) == []               # neither a finished-looking cell nor debris


@case("disk-full-atomic-write", "jackson-sweep ...   # the disk fills while a table, figure or summary is written",
      "the error names the file being written (not its temporary twin); the temporary file is removed")
def test_a_write_that_fills_the_disk_names_its_file(tmp_path):
    from jackson.runfolder import replace_via_temp

    def write(tmp):
        tmp.write_text("half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(OSError) as e:
        replace_via_temp(tmp_path / "summary.md", write)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(tmp_path / "summary.md")
    assert list(tmp_path.iterdir()) == []


@case("threads-bad", "jackson-sweep --threads 0", "exit 2, one line")
def test_threads_option(capsys, tmp_path):
    import torch
    rc, so, se = sweep([*QUICK, "--threads", "0", "--out", str(tmp_path / "r")], capsys)
    assert rc == 2 and "--threads" in one_line(se)
    rc, so, se = sweep([*QUICK, "--threads", "x", "--out", str(tmp_path / "r")], capsys)
    assert rc == 2 and "--threads" in one_line(se)
    try:
        assert apply_threads(2) == 2 and torch.get_num_threads() == 2
        n = apply_threads(None)               # default: the usable cores, capped by $OMP_NUM_THREADS
        assert n == min(len(os.sched_getaffinity(0)), int(os.environ.get("OMP_NUM_THREADS", "10000")))
    finally:
        apply_threads(1)
        os.environ["OMP_NUM_THREADS"] = "1"


@case("config-unreadable", "jackson-sweep --config FILE   # FILE missing, not JSON, or a field of the wrong type",
      "exit 2, one line naming --config and the field; nothing written")
def test_bad_config_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    for text, word in (("{not json", "cannot read"), ('{"fit": 3}', "'fit'"), ('{"alpha": "x"}', "'alpha'"),
                       ('{"seeds": [0, "a"]}', "'seeds'"), ("[1, 2]", "no JSON object")):
        bad.write_text(text)
        rc, so, se = sweep(["--config", str(bad), "--out", str(tmp_path / "r")], capsys)
        assert rc == 2 and "--config" in one_line(se) and word in se, (text, se)
    rc, so, se = sweep(["--config", str(tmp_path / "missing.json")], capsys)
    assert rc == 2 and "--config" in one_line(se)
    assert not (tmp_path / "r").exists()


@case("non-finite-or-huge-number", "jackson-tasks nearest-point --lr inf; --seeds 123456789012345678901234; "
      "any float option nan/inf, any integer beyond 2**63-1", "exit 2, one line naming the option; nothing trained or written")
@pytest.mark.parametrize("argv,option", [(["--lr", "inf"], "--lr"), (["--lr", "nan"], "--lr"),
                                         (["--seeds", "123456789012345678901234"], "--seeds"),
                                         (["--steps", "99999999999999999999"], "--steps")])
def test_every_number_option_is_finite_and_in_range(tmp_path, capsys, argv, option):
    from jackson.app_b.cli import tasks_main
    try:
        rc = tasks_main(["nearest-point", "--quick", *argv, "--out", str(tmp_path / "o")])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and option in one_line(err, "jackson-tasks nearest-point") and not (tmp_path / "o").exists()


def test_help_lists_the_shared_options(capsys):
    rc, so, se = sweep(["--help"], capsys)
    assert rc == 0 and "--threads" in so and "--force" in so and "--config" in so


# ---- the lab report -------------------------------------------------------------------------------

@case("report-corrupt-figure", "jackson-report   # one run's PNG is truncated or not a PNG",
      "the report is built; the figure is shown as missing or unreadable and listed on stdout")
def test_report_with_a_corrupt_png(tmp_path, capsys):
    from jackson.lab_report.page import main
    run = tmp_path / "x"
    run.mkdir()
    (run / "report.json").write_text(json.dumps({"title": "t", "section": "other", "command": "c",
                                                 "figures": [{"file": "bad.png", "caption": "c"},
                                                             {"file": "cut.png", "caption": "c"}]}))
    (run / "bad.png").write_bytes(b"this is not a png at all")
    (run / "cut.png").write_bytes(b"\x89PNG\r\n\x1a\n")       # the signature and nothing after it
    try:
        rc = main(["--root", str(tmp_path)])
    except SystemExit as e:
        rc = e.code
    so = capsys.readouterr().out
    assert rc == 0 and "unreadable figure: x/bad.png" in so and "unreadable figure: x/cut.png" in so
    page = (tmp_path / "index.html").read_text()
    assert "figure missing or unreadable" in page and "<img" not in page


# ---- quick runs stay out of reports/ --------------------------------------------------------------

@case("quick-default-folder", "jackson-sweep --quick; jackson-tasks <task> --quick",
      "writes under runs/ (never into reports/, which holds committed results)")
def test_quick_runs_default_outside_reports():
    from jackson.rate_sweep.experiment import SweepConfig
    from jackson.app_b.config import resolved_out, RUNS
    assert SweepConfig(quick=True).resolved_out().parts[0] == "runs"
    for cls in RUNS.values():
        assert resolved_out(cls(quick=True)).parts[0] == "runs"


# ---- the reliability page ---------------------------------------------------------------------------

def test_reliability_page_is_current():
    """reports/RELIABILITY.md is generated from the FAULT_CASES of the test modules: adding a case
    means regenerating it (python tests/reliability.py)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_reliability", Path(__file__).with_name("reliability.py"))
    rel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rel)
    groups = rel.collect()
    assert "test_faults.py" in groups and {c["id"] for c in groups["test_faults.py"]} >= {"foreign-folder", "worker-dies"}
    assert rel.PAGE.read_text() == rel.render(groups), "run: python tests/reliability.py"
