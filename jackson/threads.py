"""How many threads torch uses: the command's budget (`--threads`), and the rule for a training step.

**The rule.**  A training step whose estimated work (`step_flops`) is below `SMALL_STEP_FLOPS` runs on one thread
unless told otherwise; a larger step runs on the budget.  *Told otherwise* means `--threads N` on the command line,
`apply_threads(N)` from Python, or `$OMP_NUM_THREADS` set when the process started: then every step runs on that
many threads.  `training_threads` applies the rule around a training loop and restores the count after it.

Why (benchmarks/bench_threads.py, reports/benchmarks.md "Threads for a training step"): on a small step the
threads' hand-offs cost what the second core gives, and beside any other busy process a two-thread step waits for
the slower thread every time -- 3-5x slower than one thread.  A larger step gains 1.4-1.9x from a second core on an
otherwise idle machine, and still loses (1.1-2x) beside a busy core: there, give `--threads 1`.

The count does not change a result beyond the last bits of floats (the reductions' order); environment.json and
each cell's cell.json record the threads that ran.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

# Below this many FLOPs a step (forward and backward, `step_flops`'s estimate) a second thread gains nothing on an
# idle 2-core machine and costs 3-5x beside a busy core; from 0.5 GFLOP up it gains 1.4-1.9x when idle (measured
# 2026-11-27, benchmarks/bench_threads.py: 0.27 GFLOP 6.3 ms on one thread, 6.5 on two, 22 beside a busy core;
# 0.53 GFLOP 12.3 ms, 8.0, 25; reports/benchmarks.md "Threads for a training step").
SMALL_STEP_FLOPS = 4.0e8

_START_ENV = os.environ.get("OMP_NUM_THREADS", "")     # the user's setting, before apply_threads writes its own
_ASKED: list[int] = []                                 # threads the user asked for (--threads, apply_threads)


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _env_threads() -> int | None:
    return int(_START_ENV) if _START_ENV.isdigit() and int(_START_ENV) >= 1 else None


def apply_threads(threads: int | None) -> int:
    """The thread budget: `threads` (--threads), else the cores this process may use (capped by $OMP_NUM_THREADS).
    Set before torch is imported (OMP_NUM_THREADS) and on torch itself if it already is.  A count given here is
    *told otherwise* for the training rule: every step then runs on it."""
    n = threads
    if n is None:
        n = usable_cores()
        env = os.environ.get("OMP_NUM_THREADS", "")
        if env.isdigit() and int(env) >= 1:
            n = min(n, int(env))
    else:
        _ASKED[:] = [n]
    os.environ["OMP_NUM_THREADS"] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    return n


def step_flops(n_params: int, tokens: int, attention: int = 0) -> float:
    """The work of one training step, estimated: a multiply-add of the forward pass costs 2 FLOPs there and 4 in the
    backward pass, so 6 per parameter per token (the dense layers) and 6 per multiply-add of the attention's
    products (`attention`: scores and weighted sums over token pairs, members or layers x batch x T^2 x the widths).
    benchmarks/bench_threads.py --flops prints it beside torch's own count."""
    return 6.0 * n_params * tokens + 6.0 * attention


def rule_threads(flops: float) -> int:
    """The threads a training step of `flops` runs on: what the user asked for, else 1 below SMALL_STEP_FLOPS,
    else the budget (the usable cores, capped by $OMP_NUM_THREADS)."""
    if _ASKED:
        return _ASKED[0]
    if _env_threads() is not None:
        return min(_env_threads(), usable_cores())
    return 1 if flops < SMALL_STEP_FLOPS else usable_cores()


@contextmanager
def training_threads(flops: float):
    """Run the block (a training loop) on `rule_threads(flops)` threads and restore torch's count after it;
    yields the count."""
    import torch
    n, before = rule_threads(flops), torch.get_num_threads()
    if n != before:
        torch.set_num_threads(n)
    try:
        yield n
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
