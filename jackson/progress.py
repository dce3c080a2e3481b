"""Progress for long work: a tqdm bar on a terminal; elsewhere (logs, pipes, Dask) a plain line at most
once a minute with the step, the rate and an ETA -- so a log shows progress without carriage-return
debris, and a short run prints nothing extra."""
from __future__ import annotations

import sys
import time

from tqdm.auto import tqdm

from .config import check_stop


class Bar(tqdm):
    """tqdm whose every update also checks for a stop signal (jackson.config.check_stop)."""

    def update(self, n=1):
        check_stop()
        return super().update(n)


class LineProgress:
    """The subset of tqdm's interface the lab uses (update, set_postfix, close), printed as lines."""

    def __init__(self, total: int, desc: str = "", initial: int = 0, every_s: float = 60.0, file=None):
        self.total, self.desc, self.n, self.every_s = total, desc, initial, every_s
        self.file = file or sys.stderr
        self.t0 = self.last = time.perf_counter()
        self.start_n = initial
        self.postfix = ""

    def update(self, k: int = 1) -> None:
        check_stop()
        self.n += k
        now = time.perf_counter()
        if now - self.last >= self.every_s:
            self.last = now
            done = self.n - self.start_n
            rate = done / max(now - self.t0, 1e-9)
            eta = (self.total - self.n) / rate if rate > 0 else float("inf")
            print(f"{self.desc}: {self.n}/{self.total} ({rate:.3g}/s, ETA {eta:.0f} s){self.postfix}",
                  file=self.file, flush=True)

    def set_postfix(self, ordered_dict=None, refresh=True, **kw) -> None:
        items = dict(ordered_dict or {}, **kw)
        self.postfix = " " + ", ".join(f"{k}={v}" for k, v in items.items()) if items else ""

    def close(self) -> None:
        pass


def bar(total: int, desc: str = "", progress: bool = True, **kw):
    """tqdm on a terminal, LineProgress elsewhere, nothing (a disabled tqdm) when progress is off."""
    if progress and sys.stderr.isatty():
        return Bar(total=total, desc=desc, dynamic_ncols=True, **kw)
    if progress:
        return LineProgress(total, desc, initial=kw.get("initial", 0))
    return Bar(total=total, disable=True)
