"""The report's wall: what a run folder names (its figures, its summary, its records) must lie inside that
folder, every symbolic link followed, and a file is opened only when a stat says it is a regular file (a FIFO
would block the open, a device would never end).  entries.py, html_page.py and check.py ask here."""
from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_EMBED_BYTES = 16 * 2 ** 20        # a figure larger than this is not embedded by --single-file (the largest
                                      # the lab draws is about 1.3 MB); the page says so in its place
MAX_EMBED_TOTAL = 256 * 2 ** 20       # the figures a --single-file page would embed, summed: more is refused
                                      # before the page is built (the committed runs' figures: about 27 MB)


def outside(wall: Path, path: Path, what: str = "its run folder") -> str:
    """'' when `path`, every symbolic link on it followed, lies inside `wall` (itself resolved); else why not,
    in a few words ("outside its run folder", "a symbolic link loop").  It need not exist."""
    try:
        w, p = Path(wall).resolve(), Path(path).resolve()
    except (RuntimeError, OSError):      # Python 3.11 raises RuntimeError for a loop, later ones OSError
        return "a symbolic link loop"
    except ValueError:                   # an embedded NUL byte
        return "not a usable path"
    return "" if p == w or w in p.parents else f"outside {what}"


def regular(path: Path) -> str:
    """'' when `path` (links followed) is a regular file; else why not ("missing", "not a regular file").
    Checked with a stat before any open: a FIFO would block the open, a device would never end."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return "missing"
    return "" if stat.S_ISREG(st.st_mode) else "not a regular file"


def inside_file(folder: Path, name: str) -> Path | None:
    """folder/name when it is a regular file inside folder (links followed), else None."""
    p = folder / name
    return p if not outside(folder, p) and not regular(p) else None
