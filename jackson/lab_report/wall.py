"""The report's wall: what a run folder names (its figures, its summary, its records) must lie inside that
folder, every symbolic link followed, and a file is opened only when a stat says it is a regular file (a FIFO
would block the open, a device would never end).  entries.py, html_page.py and check.py ask here; the checks
themselves are jackson.runfolder's (`outside`, `regular`, `refused`), which the rules' reads (jackson.verdict.Run)
go through as well."""
from __future__ import annotations

from pathlib import Path

from ..runfolder import outside, refused, regular  # noqa: F401  (the checks live in core: rules read through them too)

MAX_EMBED_BYTES = 16 * 2 ** 20        # a figure larger than this is not embedded by --single-file (the largest
                                      # the lab draws is about 1.3 MB); the page says so in its place
MAX_EMBED_TOTAL = 256 * 2 ** 20       # the figures a --single-file page would embed, summed: more is refused
                                      # before the page is built (the committed runs' figures: about 27 MB)


def inside_file(folder: Path, name: str) -> Path | None:
    """folder/name when it is a regular file inside folder (links followed), else None."""
    p = folder / name
    return None if refused(folder, p) else p
