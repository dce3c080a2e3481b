"""Provenance of run folders written before environment.json existed, derived once from git history.

    python -m jackson.lab_report.provenance reports/jackson/default reports/tasks/nearest-point ...

A run folder made since jackson/runfolder.py writes environment.json carries its own record: the commit of
the code that ran, the start time, the package versions, torch threads, the device.  Older folders carry
none, and what was not recorded cannot be recovered.  This writes `provenance.json` into such a folder with
what can be known, each value with where it comes from:

- `results_added`: the commit that first added files of the folder and its date (`git log
  --diff-filter=A`); `tables_changed`: the last commit that added or changed one of its tables (*.csv, cells
  included; a table deleted, or re-encoded as a .csv.gz that pandas reads as is, changed no number).  Both say when the results entered the repository, not which code made them: a run is
  committed after it ends, often with code that was not committed yet (`code_commit`: not recorded).
  Renames are not followed: a folder moved into place counts as added by the move.  The commit's subject
  line is left out: it speaks to the lab's developers (`git show COMMIT` prints it), and the record is read
  by the report's users.
- `torch_threads` and `device` where the folder's own files state them (cells/*/cell.json `torch_threads`
  and `device`, config.json `device`, `--threads` in command.txt), else not recorded; `packages`: not
  recorded (no such folder states a version); `quick`: config.json `quick`, `--quick` in command.txt.

Git is read here, once, and the values are committed with the folder: the lab report (page.py) reads
provenance.json and never git, so it rebuilds byte for byte from a shallow clone.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..config import OneLineParser, UsageError, guarded, need, read_capped
from ..runfolder import refused, write_atomic

PROG = "python -m jackson.lab_report.provenance"
FILE = "provenance.json"
NOT_RECORDED = "not recorded"
RECORD = ("Derived from git history by `python -m jackson.lab_report.provenance`: this folder was written before "
          "runs recorded environment.json, so what the run did not record is marked not recorded. The commits say "
          "when the results entered the repository, not which code made them.")


def _git(root: Path, *args: str) -> str:
    try:
        r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise UsageError(f"cannot run git ({e})") from None
    need(r.returncode == 0, f"git {' '.join(args[:2])} failed in {root}: {r.stderr.strip()[:200]}")
    return r.stdout


def _commit(line: str) -> dict:
    sha, date = line.split("\x00", 1)
    return {"commit": sha, "date": date}


def from_git(folder: Path) -> dict:
    """results_added and tables_changed of a folder, from the history of the repository that holds it."""
    root = Path(_git(folder, "rev-parse", "--show-toplevel").strip())
    need(_git(root, "rev-parse", "--is-shallow-repository").strip() == "false",
         f"{root} is a shallow clone: its history may not reach the commit that added {folder}")
    rel = folder.resolve().relative_to(root.resolve()).as_posix()
    fmt = "--format=%H%x00%cI"
    added = _git(root, "log", "--diff-filter=A", fmt, "--", rel).splitlines()
    need(added, f"{folder}: no commit adds a file of it (is it committed?)")
    tables = _git(root, "log", "-1", "--diff-filter=ACMRT", fmt, "--", f":(glob){rel}/**/*.csv").splitlines()
    return {"results_added": _commit(added[-1]), "tables_changed": _commit(tables[0]) if tables else None}


def _text(folder: Path, path: Path) -> str:
    """A file of the folder, "" unless it lies inside it (links followed) and is a regular file, checked by stat
    before the open (jackson.runfolder.refused: a FIFO would wait forever), and within read_capped's size limit."""
    if refused(folder, path):
        return ""
    try:
        return read_capped(path, "provenance")
    except (OSError, ValueError):
        return ""


def _read(folder: Path, path: Path) -> dict:
    try:
        d = json.loads(_text(folder, path) or "{}")
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def _stated(values: list, source: str) -> dict:
    got = sorted({str(v) for v in values if v not in (None, "")})
    return {"value": ", ".join(got), "from": source} if got else {}


def from_files(folder: Path) -> dict:
    """torch threads, device and the quick flag as the folder's own files state them."""
    cfg = _read(folder, folder / "config.json")
    cmd = _text(folder, folder / "command.txt").split()
    cells = [_read(folder, p) for p in sorted(folder.glob("cells/*/cell.json"))]
    threads = (_stated([c.get("torch_threads") for c in cells], "cells/*/cell.json torch_threads")
               or _stated([cmd[i + 1] for i, w in enumerate(cmd[:-1]) if w == "--threads"], "--threads in command.txt"))
    device = (_stated([c.get("device") for c in cells], "cells/*/cell.json device")
              or _stated([cfg.get("device")], "config.json device"))
    none = {"value": None, "from": NOT_RECORDED}
    return {"code_commit": NOT_RECORDED, "packages": NOT_RECORDED, "torch_threads": threads or none,
            "device": device or none, "quick": bool(cfg.get("quick")) or "--quick" in cmd,
            "quick_from": "config.json quick, --quick in command.txt"}


def derive(folder: str | Path) -> dict:
    """The provenance.json of a folder written before environment.json (see the module docstring)."""
    folder = Path(folder)
    need(folder.is_dir(), f"{folder}: no such folder")
    need(not (folder / "environment.json").exists(), f"{folder}: has environment.json, its own record; nothing to derive")
    need((folder / "report.json").is_file() or (folder / "command.txt").is_file(),
         f"{folder}: neither report.json nor command.txt: not a run folder")
    return {"record": RECORD, **from_git(folder), **from_files(folder)}


def write(folders: list[str | Path]) -> list[Path]:
    """provenance.json into each folder; every folder is derived before the first file is written."""
    records = [(Path(f) / FILE, derive(f)) for f in folders]
    for path, d in records:
        write_atomic(path, json.dumps(d, indent=1) + "\n")
    return [path for path, _ in records]


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description="Write provenance.json into run folders written before "
                           "environment.json existed: when their results were committed (git history) and what "
                           "their own files state; the rest is marked not recorded.")
    parser.add_argument("folders", nargs="+", metavar="FOLDER", help="a committed run folder without environment.json")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for path in guarded(PROG, lambda: write(args.folders)):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
