"""Fault injection: a rerun killed (SIGKILL) at seeded random instants of its final writes -- tables, summaries,
figures, report.json -- leaves every file whole: the old one or the new one, never truncated or empty (every write
goes through a temporary file and a rename: jackson.runfolder.write_atomic, jackson.figures.save)."""
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

N_KILLS = 50


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


@pytest.mark.slow
def test_killed_final_writes_never_leave_a_truncated_file(tmp_path):
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
    rng = random.Random(0)
    problems = []
    for k in range(N_KILLS):
        run = tmp_path / f"kill{k}"
        shutil.copytree(base, run)
        delay = rng.uniform(0, span)
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
    assert problems == []
