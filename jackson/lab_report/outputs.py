"""The report's files as one unit: what one `jackson-report` run writes (index.md, index.html, claims.csv,
claims.tex, claims-full.tex, tables.tex, tables-appendix.tex, tables.csv) is replaced whole, and only over files the lab wrote.

How the set is replaced (`OutputSet`), under `<root>/.jackson-report/` (the lab's own working folder, hidden
so no reader of the run folders sees it):

 1. every file of the new set is written into `stage-<pid>/` and flushed to disk, then its `manifest.json`
    (the build id and each file's SHA-256), through a temporary file and a rename, last;
 2. the commit point: one rename of `stage-<pid>/` to `swap/` (a folder rename is atomic).  Before it, the
    files at the root are the old set, untouched; after it, `swap/` is a journal that says "the new set wins";
 3. each file of `swap/` is renamed over its name at the root, then the manifest over `manifest.json`, then
    `swap/` is removed.

A kill before the commit point leaves the old set whole (its stage folder is removed by the next run).  A
kill after it leaves `swap/`, and the next `jackson-report` run completes the swap before anything else
(`settle`), so what anyone reads through the lab is the whole old set or the whole new one.  Between such a
kill and the next run the files at the root can be a mix, which `swap/` (and the build ids: each file
names its build) says; POSIX renames one name at a time, and the files stay plain files at the paths users
open (no link to follow), so no layout can avoid that window for a reader that reads the root directly.

A file of the set is replaced only when the lab wrote it (`foreign`): it is absent, or the manifest lists it
with its present SHA-256, or it carries the lab's mark (index.md: an HTML comment on its first line;
index.html: a `<meta name="generator">`; the .tex files: a comment on the first line; each naming
"jackson-report build <id>"), or it opens as every file the lab wrote before the marks did (index.md:
"# jackson-lab report" then "Built by `jackson-report`"; index.html: that title; the .tex files: the
"% Needs \\usepackage{booktabs" line; the CSVs: their header).  Anything else, a link or a folder in its
place included, is refused in one line before anything is written.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from pathlib import Path

from ..config import UsageError, need

SET = ("index.md", "index.html", "claims.csv", "claims.tex", "claims-full.tex", "tables.tex", "tables-appendix.tex",
       "tables.csv")
WORK = ".jackson-report"      # the lab's working folder under the root
MANIFEST = "manifest.json"
SWAP = "swap"
STAGE = "stage-"
LOCK = "lock"
KIND = "jackson-report"       # what a manifest says it is
HEAD_BYTES = 4096             # how much of a file is read to recognise it

MARK = re.compile(r"jackson-report build ([0-9a-f]{16})")
LEGACY = {   # how each file of the set opened before the lab marked them (the committed reports/ hold these)
    "index.md": ("# jackson-lab report\n\nBuilt by `jackson-report`",),
    "index.html": ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">",),
    "claims.tex": ("% Needs \\usepackage{booktabs",),
    "claims-full.tex": ("% Needs \\usepackage{booktabs",),
    "tables.tex": ("% Needs \\usepackage{booktabs",),
    "tables-appendix.tex": ("% Needs \\usepackage{booktabs",),
    "claims.csv": ("id,paper,where,claim,", "id,paper,origin,where,claim,"),   # before and after the origin column
    "tables.csv": ("folder,title,row,column,value,",),
}
TITLE = "<title>jackson-lab report</title>"     # a legacy index.html holds it in its head, too

_STEP = None   # a callable(str) run before every file operation of a swap (tests kill the writer there)


def _step(what: str) -> None:
    if _STEP is not None:
        _STEP(what)


# ---- marks and the build id --------------------------------------------------------------------------

def build_id(files: dict[str, str]) -> str:
    """The build of a set: the first 16 hex digits of a SHA-256 over its files' names and unmarked texts
    (the same inputs give the same id, so a rebuild of unchanged folders changes no byte)."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()[:16]


def mark(files: dict[str, str]) -> tuple[str, dict[str, str]]:
    """(build id, the files with the lab's mark naming it): index.md a first-line HTML comment, index.html a
    generator <meta> after its charset, each .tex a first-line comment; CSVs carry none (a comment line would
    break their readers: they are recognised by the manifest and their header)."""
    build = build_id(files)
    note = f"jackson-report build {build}"
    out = {}
    for name, text in files.items():
        if name.endswith(".md"):
            text = f"<!-- {note}: generated from the result folders under this folder; do not edit, rerun " \
                   f"jackson-report -->\n{text}"
        elif name.endswith(".html"):
            meta = '<meta charset="utf-8">'
            need(meta in text, f"{name}: no charset <meta> to put the generator mark after")
            text = text.replace(meta, f'{meta}\n<meta name="generator" content="{note}">', 1)
        elif name.endswith(".tex"):
            text = f"% {note}: generated; do not edit, rerun jackson-report\n{text}"
        out[name] = text
    return build, out


def build_of(text: str) -> str | None:
    """The build id a file's mark names (in its first HEAD_BYTES characters), or None."""
    m = MARK.search(text[:HEAD_BYTES])
    return m.group(1) if m else None


# ---- whose file is it --------------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        need(stat.S_ISREG(os.fstat(fh.fileno()).st_mode), f"{path} is not a regular file")
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest(folder: Path) -> dict:
    """The manifest in `folder` ({"kind", "build", "files": {name: sha256}}), or {} when there is none or it
    is not the lab's."""
    p = folder / MANIFEST
    try:
        st = p.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > 1 << 20:
            return {}
        m = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    ok = isinstance(m, dict) and m.get("kind") == KIND and isinstance(m.get("files"), dict)
    return m if ok else {}


def foreign(path: Path, name: str, known: dict | None = None) -> str:
    """'' when `path` (the set's file `name`) may be replaced: it is absent, or `known` (a manifest's
    {name: sha256}) gives its hash, or it carries the lab's mark or opens as the lab's files always have;
    else why not, in a few words (never quoting the file)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return ""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    first = head.split("\n", 1)[0]
    if MARK.search(head) and (first.startswith("<!-- jackson-report build ") if name.endswith(".md") else
                              first.startswith("% jackson-report build ") if name.endswith(".tex") else
                              '<meta name="generator" content="jackson-report build ' in head
                              if name.endswith(".html") else False):
        return ""
    if any(head.startswith(p) for p in LEGACY.get(name, ())) and (not name.endswith(".html") or TITLE in head):
        return ""
    if known and name in known:
        hashes = {known[name]} if isinstance(known[name], str) else set(known[name])
        try:
            if _sha256(path) in hashes:
                return ""
        except (OSError, UsageError):
            pass
    return "was not written by jackson-report (it carries no jackson-report mark)"


def _known(*manifests: dict) -> dict[str, set[str]]:
    """{name: every hash the given manifests record for it}: a file the lab wrote matches one of its builds."""
    out: dict[str, set[str]] = {}
    for m in manifests:
        for name, h in (m.get("files") or {}).items():
            out.setdefault(name, set()).add(h)
    return out


def check_own(root: Path) -> None:
    """Refuse, in one line (UsageError), a root where any file of the set, or the lab's working folder, is
    not the lab's: nothing is written before this passes."""
    work = root / WORK
    if work.is_symlink() or (work.exists() and not work.is_dir()):
        raise UsageError(f"--root: {work} is not jackson-report's working folder; it is not replaced "
                         "(move it away or pick another --root)")
    known = _known(manifest(work / SWAP), manifest(work))
    for name in SET:
        why = foreign(root / name, name, known)
        need(not why, f"--root: {root / name} {why}; jackson-report replaces only files it wrote "
                      "(move it away or pick another --root)")


# ---- writing the set ---------------------------------------------------------------------------------

def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write(path: Path, data: bytes) -> None:
    """A new file, written in blocks (a kill can fall between any two), flushed to disk."""
    _step(f"create {path.name}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for i in range(0, max(len(data), 1), 1 << 16):
            _step(f"write {path.name}")
            os.write(fd, data[i:i + (1 << 16)])
        _step(f"fsync {path.name}")
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stage(folder: Path) -> None:
    """A stage or swap folder that will not be used: its own files removed (the set's names, the manifest and
    its temporary file); anything else in it is left, and so is the folder then."""
    for name in (*SET, MANIFEST, MANIFEST + ".tmp"):
        with contextlib.suppress(FileNotFoundError):
            _step(f"unlink {folder.name}/{name}")
            (folder / name).unlink()
    with contextlib.suppress(OSError):
        _step(f"rmdir {folder.name}")
        folder.rmdir()


def settle(root: Path) -> str:
    """Finish what a killed run left: a committed swap is completed (roll forward), an uncommitted stage is
    removed (roll back).  Call with the lock held.  Returns a line saying what was done, or ''."""
    work = root / WORK
    if not work.is_dir():
        return ""
    done = ""
    for stage in sorted(work.glob(STAGE + "*")):
        if stage.is_dir() and not stage.is_symlink():
            _remove_stage(stage)
            done = "an unfinished build's staged files removed; the report's files are the previous build's"
    swap = work / SWAP
    if swap.is_dir() and not swap.is_symlink():
        new = manifest(swap)
        if not new:                                   # cannot happen by the protocol: a swap holds its manifest
            _remove_stage(swap)
            return "an unreadable swap folder removed; the report's files are the previous build's"
        known = _known(manifest(work), new)      # a file may hold the old build's hash or (swapped already) the new one
        for name in new["files"]:
            src = swap / name
            if name not in SET or not src.exists():
                continue
            why = foreign(root / name, name, known)
            need(not why, f"--root: {root / name} {why}; an interrupted jackson-report left its new files in "
                          f"{swap}: move that file away and rerun")
            _step(f"replace {name}")
            os.replace(src, root / name)
        _fsync_dir(root)
        _step("replace manifest")
        os.replace(swap / MANIFEST, work / MANIFEST)
        _step("rmdir swap")
        swap.rmdir()
        _fsync_dir(work)
        done = f"an interrupted replacement of the report's files completed (build {new.get('build')})"
    return done


class OutputSet:
    """The set of a root, held for one build: `with OutputSet(root) as out: ...; out.replace(files)`.  On
    entry: refuse a root whose files are not the lab's (before writing anything), take the lock (one build at
    a time per root, refused at once when another holds it), and settle what a killed run left."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.work = self.root / WORK
        self.fh = None
        self.settled = ""

    def __enter__(self) -> "OutputSet":
        import fcntl
        check_own(self.root)
        self.work.mkdir(exist_ok=True)
        self.fh = open(self.work / LOCK, "a")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.close()
            raise UsageError(f"--root: another jackson-report is writing into {self.root} now; "
                             "wait for it to finish") from None
        self.settled = settle(self.root)
        return self

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            self.fh.close()

    def replace(self, files: dict[str, str]) -> str:
        """Mark the files, stage them, commit, swap them in (see the module's docstring).  Returns the build."""
        need(set(files) == set(SET), f"the report's set is {SET}, got {sorted(files)}")
        build, marked = mark(files)
        data = {k: v.encode("utf-8") for k, v in marked.items()}
        stage = self.work / f"{STAGE}{os.getpid()}"
        if stage.exists():
            _remove_stage(stage)
        _step("mkdir stage")
        stage.mkdir()
        for name in SET:
            _write(stage / name, data[name])
        m = {"kind": KIND, "build": build, "files": {k: hashlib.sha256(v).hexdigest() for k, v in data.items()}}
        _write(stage / (MANIFEST + ".tmp"), json.dumps(m, indent=1, sort_keys=True).encode())
        _step("rename manifest")
        os.replace(stage / (MANIFEST + ".tmp"), stage / MANIFEST)
        _fsync_dir(stage)
        check_own(self.root)                 # again, just before the commit: nothing of a user's appeared since
        _step("commit")
        os.rename(stage, self.work / SWAP)   # the commit point
        _fsync_dir(self.work)
        settle(self.root)
        return build


def state(root: Path) -> dict:
    """What the root holds now, read only: {"pending": a swap is committed but not finished, "build": the
    manifest's build, "marks": {name: the build its mark names, or None}, "matches": {name: its SHA-256 is the
    manifest's}} (tests and readers use it)."""
    work = Path(root) / WORK
    m = manifest(work)
    out = {"pending": (work / SWAP).is_dir(), "build": m.get("build"), "marks": {}, "matches": {}}
    for name in SET:
        p = Path(root) / name
        try:
            with open(p, "rb") as fh:
                out["marks"][name] = build_of(fh.read(HEAD_BYTES).decode("utf-8", errors="replace"))
            out["matches"][name] = _sha256(p) == m.get("files", {}).get(name)
        except (OSError, UsageError):
            out["marks"][name], out["matches"][name] = None, False
    return out
