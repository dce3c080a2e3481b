"""A quick run says so wherever it is read: before its printed result (as its run folder opens), under the heading
of its summary.md, and in its figures' titles (jackson.figures.save, a redraw too), from the run's own resolved
config (`quick` true, a bool: a run that is not quick is never marked).  `marking` is what
jackson.runfolder.open_run wraps a run in."""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

NOTE = "quick run: a seconds-long smoke test of the pipeline on tiny data and models, not a measurement"
TAG = "[quick run]"


def is_quick(config) -> bool:
    return isinstance(config, dict) and config.get("quick") is True


def figure_of_quick_run(path: str | os.PathLike) -> bool:
    """Whether the figure `path` lies in a run folder whose config.json says quick."""
    cfg = Path(path).parent / "config.json"
    try:
        return cfg.is_file() and cfg.stat().st_size < 1 << 20 and is_quick(json.loads(cfg.read_text()))
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def marking(out: Path, config):
    """A run of `config` into `out` prints NOTE as its folder opens (its input checked: a refusal prints nothing on
    stdout); when it ends, its summary.md carries NOTE under its heading (once, however often the run rewrote it)."""
    if is_quick(config):
        print(NOTE, flush=True)
    yield
    summary = out / "summary.md"
    if not is_quick(config) or not summary.is_file():
        return
    text = summary.read_text()
    if f"> {NOTE}" in text:
        return
    head, sep, rest = text.partition("\n") if text.startswith("#") else ("", "", text)
    tmp = summary.with_name(f".{summary.name}.tmp-{os.getpid()}")   # runfolder.write_atomic's way: runfolder imports
    tmp.write_text(f"{head}{sep}\n> {NOTE}\n\n{rest}" if head else f"> {NOTE}\n\n{rest}")   # this module (no circle)
    os.replace(tmp, summary)
