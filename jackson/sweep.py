"""The generic runner: cells (frozen configs) -> in-process | Dask -> atomic per-cell folders.

A cell is any object with `key()` (a folder name derived from its resolved config) and
`run(folder, progress)` (writes everything the cell measured into `folder`).  `run_cell` lets it
write into a temporary folder and renames that into `<out>/cells/<key>/` when it is done, so a
folder that exists is complete and a run killed at any moment loses only the cells in flight (a cell
that checkpoints its training, only the steps since its last checkpoint: it keeps the checkpoint until
its folder is in place, then `run_cell` calls its `cleanup()`).
`run_cells` skips finished cells, in-process by default or on a Dask cluster.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import shutil
from pathlib import Path
from typing import Protocol

from tqdm.auto import tqdm

from .config import UsageError
from .runfolder import LOCK
from .config import read_json


def non_default(cfg) -> dict:
    """A dataclass config as a dict of the fields that differ from their defaults (recursively).

    Cell keys hash this, so adding a config field with a default later leaves every existing key,
    and so every finished cell folder, valid.  A class whose defaults moved says what they were in
    `RECORD_DEFAULTS` (hparams.ModelConfig): its fields are compared with those."""
    out = {}
    recorded = getattr(type(cfg), "RECORD_DEFAULTS", {})
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        if dataclasses.is_dataclass(v):
            sub = non_default(v)
            if sub:
                out[f.name] = sub
            continue
        if f.name in recorded:
            d = recorded[f.name]
        elif f.default is not dataclasses.MISSING:
            d = f.default
        elif f.default_factory is not dataclasses.MISSING:
            d = f.default_factory()
        else:
            d = dataclasses.MISSING
        if d is dataclasses.MISSING or v != d:
            out[f.name] = ("inf" if isinstance(v, float) and math.isinf(v) else
                           function_id(v) if callable(v) else v)
    return out


def function_id(fn) -> str:
    """How a Python callable in a config (F, f, a kernel, a basis phi/psi) is named in cell keys and config.json:
    'python:module:qualname', plus '#' and a hash of its source, closure values and defaults where Python has
    them (so an edited function or a lambda over other constants gets a new key, never a stale cell), and of
    the attributes set on it (a basis's `sup`); numpy's ufuncs and builtins by name alone; a callable object
    (an instance of a class with __call__, a functools.partial) by its class's name, with its class's source
    and its attributes (or the partial's function and arguments) in the hash, so two instances with other
    parameters never share a key.  The same in every process, unlike str(fn), which holds an address (an
    attribute whose repr holds one changes the key per process: its cells rerun, never go stale).

        >>> import numpy as np
        >>> function_id(np.sin)
        'python:numpy:sin'
    """
    import inspect
    mod = getattr(fn, "__module__", None) or ("numpy" if type(fn).__name__ == "ufunc" else "?")
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    parts = []
    if not (inspect.isroutine(fn) or inspect.isclass(fn) or type(fn).__name__ == "ufunc"):
        parts.append(_object_text(fn))      # a callable object: its parameters are part of what it computes
    elif inspect.isfunction(fn) and vars(fn):
        parts.append(_value_text(vars(fn)))  # attributes set on a function (a basis's `sup`)
    try:
        parts.append(inspect.getsource(fn))
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        if code is not None:           # defined where no source is kept (a REPL): its code instead
            parts.append(repr((code.co_code, code.co_consts, code.co_names)))
    cells = getattr(fn, "__closure__", None) or ()
    parts += [repr(c.cell_contents) for c in cells] + [repr(getattr(fn, "__defaults__", None) or ())]
    tag = hashlib.sha1("\n".join(parts).encode()).hexdigest()[:8] if parts[:-1] or cells else ""
    return f"python:{mod}:{name}" + (f"#{tag}" if tag else "")


def _object_text(obj, depth: int = 0) -> str:
    """A callable object's code and state as text, for function_id: a functools.partial's function and arguments,
    or an instance's class source and attributes (cached_property values left out: computing one is no change)."""
    import functools
    import inspect
    if isinstance(obj, functools.partial):
        return "partial " + _value_text((obj.func, obj.args, obj.keywords), depth + 1)
    cls = type(obj)
    try:
        src = inspect.getsource(cls)
    except (OSError, TypeError):
        src = f"{cls.__module__}.{cls.__qualname__}"
    state = getattr(obj, "__dict__", None)
    if state is None:
        return src + "\n" + repr(obj)
    state = {k: v for k, v in state.items() if not isinstance(getattr(cls, k, None), functools.cached_property)}
    return src + "\n" + _value_text(state, depth + 1)


def _value_text(v, depth: int = 0) -> str:
    """A value as deterministic text: arrays by shape, dtype and a hash of their bytes (repr elides the middle),
    containers item by item, functions by function_id, anything else by repr."""
    import inspect
    if depth > 8:
        return type(v).__name__
    if type(v).__name__ == "ndarray":
        return f"ndarray{v.shape}{v.dtype}:{hashlib.sha1(v.tobytes()).hexdigest()}"
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: repr(kv[0]))
        return "{" + ", ".join(f"{k!r}: {_value_text(x, depth + 1)}" for k, x in items) + "}"
    if isinstance(v, (list, tuple)):
        return type(v).__name__ + "(" + ", ".join(_value_text(x, depth + 1) for x in v) + ")"
    if inspect.isroutine(v) or type(v).__name__ == "ufunc":
        return function_id(v)
    if callable(v) and not inspect.isclass(v):     # a callable object inside a callable object: its own text
        return f"{type(v).__module__}.{type(v).__qualname__} " + _object_text(v, depth + 1)
    return repr(v)


def config_hash(cfg) -> str:
    return hashlib.sha1(json.dumps(non_default(cfg), sort_keys=True, default=str).encode()).hexdigest()[:10]


class CellLike(Protocol):
    """A cell may also have `cleanup()`: `run_cell` calls it once the cell's folder is in place, to remove
    what the cell kept only so that a stopped run could resume (cot-dp: its training checkpoint)."""
    def key(self) -> str: ...
    def run(self, folder: Path, progress: bool = True) -> None: ...


# glibc's malloc, as set by keep_freed_memory: blocks up to 32 MiB (the largest threshold glibc takes on 64-bit)
# come from the heap, and up to 512 MiB of freed memory stays with the process instead of going back to the OS.
MMAP_THRESHOLD, TRIM_THRESHOLD = 32 << 20, 512 << 20


def keep_freed_memory() -> bool:
    """Stop glibc handing the training loop's large temporaries back to the OS after every step.

    Measured on the lab machine (2 cores, torch 2.14.1, 2026-11-25): a given-features cell of the Fig. 1 grid run
    by a Dask worker (its tasks run on a worker thread, whose malloc arena returns freed blocks to the OS) took
    about 290,000 minor page faults a second, two thirds of its CPU time in the kernel, and 217 s; with these two
    settings (the same as MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ in the worker's environment) 15,000 a
    second and 100 s. Numbers are unchanged: only where memory comes from.  Process-wide, idempotent; a no-op
    (False) where the C library has no mallopt (not glibc)."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3          # glibc's malloc.h
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def run_cell(cell: CellLike, cells_dir: str | os.PathLike, progress: bool = True) -> Path:
    """Run one cell into its result folder (skips it if the folder already exists)."""
    final = Path(cells_dir) / cell.key()
    if final.exists():
        return final
    keep_freed_memory()                # in this process, which may be a Dask worker: see its docstring
    tmp = Path(cells_dir) / f".tmp-{cell.key()}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        cell.run(tmp, progress)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)   # nothing half-written is left behind
        raise
    try:
        os.rename(tmp, final)          # atomic: the folder appears complete or not at all
    except OSError:                    # another worker finished the same cell first
        shutil.rmtree(tmp, ignore_errors=True)
    cleanup = getattr(cell, "cleanup", None)
    if cleanup is not None and final.is_dir():   # only once the results are safely in place
        cleanup()
    return final


def _debris(cells_dir: Path, cells) -> list[Path]:
    """The temporary folders `run_cell` makes, `.tmp-<cell key>-<pid>` (this grid's or an earlier config's in the same
    folder): nothing else under cells/ (a user's own `.tmp-mine`) is ever removed."""
    import re
    return [p for p in cells_dir.glob(".tmp-*") if re.fullmatch(r"\.tmp-[\w.+-]+-\d+", p.name) and p.is_dir()]


def unfinished(cells: list[CellLike], out_dir: str | os.PathLike) -> list[CellLike]:
    """The cells not yet finished in `out_dir`: a finished cell is its folder cells/<key>, which `run_cells` skips.  A
    resumed run is priced by these (each runner's time check): the work it has left, not the work it has done."""
    cells_dir = Path(out_dir) / "cells"
    return [c for c in cells if not (cells_dir / c.key()).exists()]


def check_time_left(what: str, out_dir: str | os.PathLike, price, cells) -> None:
    """The time check of a resumable grid (each runner's, jackson.budget.check_time): `price(None)` prices the whole
    grid from its config alone; only where that is over the limit and `out_dir`/cells exists (a resumed run) are the
    cells built and keyed -- `cells()`, seconds for a grid of 10^4 cells -- and `price(left)` prices what is left.
    price(left) -> (FLOPs, the count in words)."""
    from . import budget
    flops, how = price(None)
    if budget.over_time(flops) and (Path(out_dir) / "cells").is_dir():
        flops, how = price(unfinished(cells(), out_dir))
    budget.check_time(what, flops, how)


def left_text(left: int, total: int) -> str:
    """'N cells' for a fresh run, 'N of M cells left' for a resumed one (a time check's count in words)."""
    return f"{left:,} cell{'s' if left != 1 else ''}" + (f" of {total:,} left" if left < total else "")


def run_cells(cells: list[CellLike], out_dir: str | os.PathLike, scheduler: str | None = None,
              progress: bool = True) -> list[Path]:
    """Run every unfinished cell, in-process or on the Dask scheduler at `scheduler`.

    Paths are made absolute before any cell is sent to a worker.  A worker that dies mid-cell loses
    only that cell's temporary folder; Dask's scheduler reruns the cell on another worker (up to its
    `distributed.scheduler.allowed-failures`), and cells that raise are retried once more (`retries=1`).
    Progress: a bar on a terminal, otherwise one line per finished cell with the elapsed time and an ETA."""
    import sys
    import time
    cells_dir = Path(out_dir).resolve() / "cells"
    cells_dir.mkdir(parents=True, exist_ok=True)
    for stale in _debris(cells_dir, cells):
        shutil.rmtree(stale, ignore_errors=True)  # debris of a killed run (the run folder's lock says none is live)
    todo = unfinished(cells, cells_dir.parent)
    if progress and len(todo) < len(cells):
        print(f"resuming: {len(cells) - len(todo)} of {len(cells)} cells already finished")
    # cells a stopped run left part-trained (a resume checkpoint) go first, so their steps are not held back
    # behind fresh cells; otherwise the grid's order
    started = {c.key() for c in todo if hasattr(c, "in_progress") and c.in_progress()}
    todo.sort(key=lambda c: c.key() not in started)
    if progress and started:
        print(f"resuming first: {len(started)} cell{'s' if len(started) != 1 else ''} stopped part-way", flush=True)
    tty = progress and sys.stderr.isatty()
    bar = tqdm(total=len(cells), initial=len(cells) - len(todo), desc="cells", disable=not tty, dynamic_ncols=True)
    t0, done = time.perf_counter(), 0

    def finished(key: str) -> None:
        nonlocal done
        done += 1
        bar.update(1)
        if progress and not tty:
            el = time.perf_counter() - t0
            eta = el / done * (len(todo) - done)
            print(f"cell {len(cells) - len(todo) + done}/{len(cells)} done ({key}); "
                  f"elapsed {el:.0f} s, ETA {eta:.0f} s", flush=True)

    if scheduler is None:
        for c in todo:
            run_cell(c, cells_dir, progress=progress)   # the cell's own bar (tqdm) shows its steps and ETA
            finished(c.key())
    else:
        from dask.distributed import Client, as_completed
        try:
            client = Client(scheduler, timeout=10)
        except (OSError, TimeoutError, ValueError) as e:
            raise UsageError(f"--dask-scheduler {scheduler}: cannot connect ({e})") from None
        with client:
            futs = {client.submit(run_cell, c, str(cells_dir), False, pure=False, retries=1,
                                  priority=int(c.key() in started)): c.key() for c in todo}
            for fut in as_completed(futs):
                fut.result()
                finished(futs[fut])
        for stale in _debris(cells_dir, cells):
            shutil.rmtree(stale, ignore_errors=True)  # left by workers that died mid-cell (their cells reran)
    bar.close()
    return [cells_dir / c.key() for c in cells]


# ---- where a grid stands (`--status`) ------------------------------------------------------------

def peek_checkpoint(path: str | os.PathLike) -> dict | None:
    """A resume checkpoint's contents (loaded on the CPU, tensors allowed only), or None if it cannot be read
    (being replaced right now, truncated, not a checkpoint).  Reads only: for `grid_status`."""
    from .checkpoint import load_weights_only
    try:
        st = load_weights_only(path)
    except Exception:
        return None
    return st if isinstance(st, dict) else None


def checkpoint_progress(fit: str, path: str | os.PathLike, total=None) -> dict:
    """One in-progress fit for `grid_status`: {fit, step, of, trained_s} read from its resume checkpoint (every
    training loop of the lab saves "step" and "wall_s"); total(state) gives the steps the fit runs to (None: not
    known).  step None: the file cannot be read now."""
    st = peek_checkpoint(path)
    try:
        return {"fit": fit, "step": int(st["step"]), "of": int(total(st)) if total else None,
                "trained_s": float(st["wall_s"])}
    except (TypeError, KeyError, ValueError, IndexError):
        return {"fit": fit, "step": None}


def grid_status(cells: list[CellLike], out_dir: str | os.PathLike) -> list[dict]:
    """One row per cell of a grid run into `out_dir`: state "finished" (its folder is in place; wall_s and, where
    the cell records it, fit_wall_s from its cell.json), "in progress" (it has resume checkpoints: the cell's optional `in_progress()` lists them as
    {fit, step, of, trained_s}, `of` None where the file does not say) or "not started".  Writes nothing, takes
    no lock: safe beside a run that is writing into the folder."""
    cells_dir = Path(out_dir) / "cells"
    rows = []
    for c in cells:
        key = c.key()
        row = {"key": key, "state": "not started", "wall_s": None, "fit_wall_s": None, "fits": []}
        done = cells_dir / key
        if done.is_dir():
            row["state"] = "finished"
            with contextlib.suppress(OSError, ValueError, AttributeError):
                meta = read_json(done / "cell.json")
                wall = meta.get("cell_wall_s", meta.get("wall_s"))
                row["wall_s"] = float(wall) if isinstance(wall, (int, float)) else None
                fit = meta.get("fit_wall_s")          # training time over every process that trained the cell
                row["fit_wall_s"] = float(fit) if isinstance(fit, (int, float)) else None
        else:
            fits = c.in_progress() if hasattr(c, "in_progress") else []
            if fits:
                row["state"], row["fits"] = "in progress", fits
        rows.append(row)
    return rows


def live_run(out_dir: str | os.PathLike) -> str | None:
    """'pid N since T' of the run writing into `out_dir` now (its lock file names a live process), else None."""
    try:
        text = (Path(out_dir) / LOCK).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    parts = text.split()
    if len(parts) < 2 or parts[0] != "pid" or not parts[1].isdigit():
        return None
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return None               # it died without closing its lock (SIGKILL): nobody is writing
    except PermissionError:
        pass                      # alive, another user's
    return text


def _time_left(rests: list[float]) -> str:
    """The counts line's projection: one fit's time left, or, for several, their sum (one worker trains them one
    after another) and the longest (what side-by-side workers, e.g. a Dask cluster, wait for at least)."""
    if not any(rests):
        return ""
    if len(rests) == 1:
        return f"; the fit in progress needs about {rests[0] / 3600:.1f} h more at its pace"
    return (f"; the {len(rests)} fits in progress need about {sum(rests) / 3600:.1f} h more at their pace, one after "
            f"another (the longest {max(rests) / 3600:.1f} h, the least wall time if they train side by side)")


def format_status(prog: str, out_dir: str | os.PathLike, rows: list[dict]) -> str:
    """What `--status` prints: a line per cell, then the counts; an in-progress fit's time left is projected
    from its own pace so far (trained seconds per step); a finished cell shows its training time over every
    process that trained it where its cell.json records one (fit_wall_s), and the wall time of the process that
    finished it."""
    out_dir = Path(out_dir)
    lines = [f"{prog}: {out_dir}"]
    run = live_run(out_dir)
    lines.append(f"  a run is writing into it now ({run})" if run else "  no run is writing into it now")
    width = max((len(r["key"]) for r in rows), default=0)
    rests = []                    # each in-progress fit's projected seconds left
    for r in rows:
        head = f"  {r['state']:<12s} {r['key']:<{width}s}"
        if r["state"] == "finished":
            # cell.json's wall time is of the process that finished the cell (a resumed cell's last stretch)
            parts = []
            if r.get("fit_wall_s") is not None:
                parts.append(f"{r['fit_wall_s']:,.0f} s of training over all runs")
            if r["wall_s"] is not None:
                parts.append(f"{r['wall_s']:,.0f} s in the run that finished it")
            lines.append(head + ("  " + "; ".join(parts) if parts else ""))
        elif r["state"] == "not started":
            lines.append(head.rstrip())
        else:
            for i, f in enumerate(r["fits"]):
                lead = head if i == 0 else " " * len(head)
                if f.get("step") is None:
                    lines.append(f"{lead}  {f['fit']}: checkpoint unreadable (being written, or damaged)")
                    continue
                text = f"{lead}  {f['fit']}: step {f['step']:,}"
                if f.get("of"):
                    text += f" of {f['of']:,} ({f['step'] / f['of']:.0%})"
                text += f", {f['trained_s']:,.0f} s trained"
                if f.get("of") and f["step"] > 0:
                    rest = (f["of"] - f["step"]) * f["trained_s"] / f["step"]
                    rests.append(rest)
                    text += f"; about {rest:,.0f} s left at its pace"
                lines.append(text)
    n = {s: sum(r["state"] == s for r in rows) for s in ("finished", "in progress", "not started")}
    lines.append(f"{len(rows)} cells: {n['finished']} finished, {n['in progress']} in progress, "
                 f"{n['not started']} not started"
                 + _time_left(rests))
    if n["finished"] < len(rows):
        lines.append("rerun the same command without --status to run or resume the rest")
    return "\n".join(lines)
