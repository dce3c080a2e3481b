"""Fault injection: a rerun killed (SIGKILL) at seeded random instants of its final writes -- tables, summaries,
figures, report.json -- leaves every file whole: the old one or the new one, never truncated or empty (every write
goes through a temporary file and a rename: jackson.runfolder.write_atomic, jackson.figures.save).

The suite kills the rerun SMALL_KILLS (5) times, one instant drawn in each equal share of the rerun's span (every part
of the writes is hit); `python -m pytest tests -m full` kills it N_KILLS times at instants drawn over the whole span."""
from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

from jackson.rate_sweep.config import sweep_config
from jackson.rate_sweep.experiment import run_sweep

N_KILLS = 50            # the full check (-m full)
SMALL_KILLS = 5         # the suite's: one kill in each fifth of the span


def whole(path: Path) -> str:
    """'' when the file is complete for its kind, else why not."""
    data = path.read_bytes()
    if not data:
        return "empty"
    if path.suffix == ".csv" or path.name.endswith(".csv.gz"):     # NAME.csv.gz: a cut gzip stream does not read
        try:
            pd.read_csv(path)
        except Exception as e:          # noqa: BLE001 -- any parse failure is a truncated table
            return f"unreadable CSV ({type(e).__name__})"
    elif path.suffix == ".json":
        try:
            json.loads(data)
        except ValueError:
            return "unreadable JSON"
    elif path.suffix == ".png" and not data.endswith(b"IEND\xaeB`\x82"):
        return "PNG without its end chunk"
    elif path.suffix == ".pdf" and b"%%EOF" not in data[-64:]:
        return "PDF without %%EOF"
    return ""


def _rerun(cfg, out: Path) -> None:
    run_sweep(dataclasses.replace(cfg, out=str(out)), "jackson-sweep --quick", progress=False)


def _kill_reruns(tmp_path: Path, instants) -> list[str]:
    """Train the quick cell once, time a rerun (cells reused: only the final writes), then for each `instants`
    entry u in [0, 1) kill a fresh rerun u x span seconds after it started; the files left that are not whole."""
    cfg = sweep_config(quick=True, m_h=(1, 2), fit={"steps": 8, "eval_every": 4})
    base = tmp_path / "base"
    _rerun(cfg, base)                       # trains the cell once; every rerun below only rewrites the outputs
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:                            # pragma: no cover -- the child
        try:
            _rerun(cfg, tmp_path / "timing")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    span = time.perf_counter() - t0         # how long a rerun's writes take (cells reused)
    problems = []
    for k, u in enumerate(instants):
        run = tmp_path / f"kill{k}"
        shutil.copytree(base, run)
        delay = u * span
        pid = os.fork()
        if pid == 0:                        # pragma: no cover -- the child
            try:
                _rerun(cfg, run)
            finally:
                os._exit(0)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for f in sorted(run.iterdir()):
            if f.is_file() and not f.name.startswith("."):
                why = whole(f)
                if why:
                    problems.append(f"kill {k} at {delay:.2f} s: {f.name}: {why}")
        shutil.rmtree(run)
    return problems


@pytest.mark.slow
def test_killed_final_writes_never_leave_a_truncated_file(tmp_path):
    rng = random.Random(0)
    assert _kill_reruns(tmp_path, [(k + rng.random()) / SMALL_KILLS for k in range(SMALL_KILLS)]) == []


@pytest.mark.full
def test_killed_final_writes_never_leave_a_truncated_file_at_fifty_instants(tmp_path):
    rng = random.Random(0)
    assert _kill_reruns(tmp_path, [rng.random() for _ in range(N_KILLS)]) == []
