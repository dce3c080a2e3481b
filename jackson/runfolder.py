"""One run folder: what every command writes besides its results, and the rules for writing it.

Every experiment opens its output folder through `open_run` before it computes anything:

    with open_run(out, "jackson-sweep", command, cfg.as_dict(), scheduler=cfg.scheduler) as out:
        dirs = run_cells(cells, out, ...)      # out is absolute: safe to send to Dask workers
        ...                                    # tables, summary, figures

`open_run`
  * resolves `out` to an absolute path (Dask workers started elsewhere write where the client means);
  * refuses, in one line, a folder that holds something other than a run of the same command (say
    `--force` to write into it anyway; even then nothing already there is deleted);
  * checks a Dask scheduler address before anything is written (an unreachable one is one line);
  * takes an exclusive lock (`<out>/.lock`, fcntl), so a second run into the same folder stops at once
    instead of removing the first one's in-flight cell; the lock dies with its process (kill -9 included);
  * writes config.json (the resolved config), command.txt and environment.json (commit, package
    versions, threads, device, start time), each atomically.

Resume checkpoints of the training loops (vit-probe, cot-dp, jackson.fit): jackson/checkpoint.py.

A folder counts as a run of the same command when its environment.json names the same `kind`, or, for
folders written before environment.json existed, when its command.txt starts with that command.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import gzip
import io
import os
import platform
import socket
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from . import quick
from .config import COMMON, UsageError, check_out_dir, config_change, need, read_json

FORCE = False            # set by the command line's --force (jackson.command.cli_run); open_run(force=...) wins
LOCK = ".jackson-lab.lock"   # the run's own lock file (a user's `.lock` in a folder is the user's, never touched)
OWN = ("config.json", "command.txt", "environment.json")
# names a lab command writes at the top of its run folder: in a folder it does not own (--force beside another
# run or a user's files) any of these that exists already would be overwritten, so the run is refused up front
WRITES = OWN + ("results.csv", "summary.md", "summary.json", "report.json", "cells", "checkpoints", "blocks.csv", "blocks.csv.gz",
                "loss_curves.csv", "learned_spectrum.csv", "restarts.csv", "diagnostics.csv", "error_vs_mh.png",
                "error_vs_mh.pdf", "learned_spectrum.png", "learned_spectrum.pdf", "loss_curves.png", "loss_curves.pdf",
                "error_mh_x_mff.png", "error_mh_x_mff.pdf", "curve.csv", "heads.csv", "spectra.csv", "rows.csv",
                "loss_curves.csv.gz", "learned_spectrum.csv.gz", "spectra.csv.gz", "init_spectra.csv.gz",
                "violin_samples.csv.gz")
MAX_FOREIGN = 10_000          # entries of a folder a run does not own that are recorded (and protected) at most
PROTECTED: set[str] = set()   # absolute paths that were in a folder this process's run does not own: never written


def protect(path: str | os.PathLike) -> None:
    """Refuse to write over a file that was there before this run, in a folder the run does not own (one line)."""
    p = os.path.abspath(path)
    if p in PROTECTED:
        raise UsageError(f"--out: {p} was there before this run and is not its own; it is not overwritten "
                         "(pick another --out)")


def replace_via_temp(path: str | os.PathLike, write) -> None:
    """`write(tmp)` to a temporary file beside `path`, then a rename onto it: the file is the old one or the new
    one, whenever the process is stopped (the temporary file is removed when `write` raises).  A file that was
    there before this run, in a folder the run does not own, is never replaced (`protect`)."""
    path = Path(path)
    protect(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:      # a full disk fails inside write(), with no file name: name the file it was writing
        if not e.filename or str(e.filename) == str(tmp):
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        raise
    finally:
        if tmp.exists():
            tmp.unlink()


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename: the file is complete or absent."""
    replace_via_temp(path, lambda tmp: tmp.write_text(text))


def write_atomic_gz(path: str | os.PathLike, text: str) -> None:
    """write_atomic for a large table: gzip-compressed (pandas reads it directly), its header fixed (mtime 0, no
    file name, OS "unknown"; Python's own writer on every version), so the same text gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(text.encode())
    data = buf.getvalue()
    replace_via_temp(path, lambda tmp: tmp.write_bytes(data))


GZ = ".gz"   # what a large table's name gets (`write_table`): NAME.csv.gz, which pandas.read_csv reads as it is


def table_path(folder: str | os.PathLike, name: str) -> Path:
    """Where a run folder's table `name` (its plain name, "curve.csv") is: `name.gz`, as runs write their large
    tables (`write_table`), when the folder has it, else `name` (a folder written before those tables were
    compressed, or a table that stays plain).  The one place readers look a table up; the path need not exist:
    `table_path(folder, name).is_file()` says whether the folder holds the table in either form."""
    folder = Path(folder)
    gz = folder / (name + GZ)
    return gz if gz.is_file() else folder / name


def outside(wall: str | os.PathLike, path: str | os.PathLike, what: str = "its run folder") -> str:
    """'' when `path`, every symbolic link on it followed, lies inside `wall` (itself resolved); else why not,
    in a few words ("outside its run folder", "a symbolic link loop").  It need not exist."""
    try:
        w, p = Path(wall).resolve(), Path(path).resolve()
    except (RuntimeError, OSError):      # Python 3.11 raises RuntimeError for a loop, later ones OSError
        return "a symbolic link loop"
    except ValueError:                   # an embedded NUL byte
        return "not a usable path"
    return "" if p == w or w in p.parents else f"outside {what}"


def regular(path: str | os.PathLike) -> str:
    """'' when `path` (links followed) is a regular file; else why not ("missing", "not a regular file").
    Checked with a stat before any open: a FIFO would block the open, a device would never end."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return "missing"
    return "" if stat.S_ISREG(st.st_mode) else "not a regular file"


def refused(folder: str | os.PathLike, path: str | os.PathLike) -> str:
    """'' when a reader may open `path` as one of `folder`'s files: inside it, links followed, and a regular file
    (`outside`, `regular`); else why not.  The wall every reader of a run folder's files asks (the report's
    figures, the rules' summary, config and tables)."""
    return outside(folder, path) or regular(path)


def write_table(folder: str | os.PathLike, name: str, frame, **to_csv) -> Path:
    """A large, regenerable table of a run folder (`frame`, a pandas DataFrame; `to_csv` as pandas takes it,
    index=False always) written as `name.gz` (`write_atomic_gz`: atomic, gzip, the same frame gives the same
    bytes); readers find it with `table_path`.  A plain `name` the run wrote before its tables were compressed
    (a resumed older folder) is removed once `name.gz` is in place, so no stale copy is left beside it; one that
    was there before this run in a folder it does not own (`protect`) is left alone.  Returns the path written."""
    path = Path(folder) / (name + GZ)
    write_atomic_gz(path, frame.to_csv(index=False, **to_csv))
    plain = Path(folder) / name
    if plain.is_file() and os.path.abspath(plain) not in PROTECTED:
        plain.unlink()
    return path


def write_report(folder: str | os.PathLike, entry: dict, indent: int = 1) -> Path:
    """report.json, the one interface jackson-report reads, written atomically beside a run's summary."""
    write_atomic(path := Path(folder) / "report.json", json.dumps(entry, indent=indent, default=str) + "\n")
    return path


# The lab's shared data files, where the README tells a user to put them (relative to the repository):
# a command that read one of them from a machine-local copy is rerun with this path (see rerunnable).
SHARED_FILES = {
    "cifar10-jpeg-q75.tar.gz": "../shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz",
    "vit_p4_d128_l4_h4_cifar10_timm.pth": "../shared/data/vit-cifar10-small/vit_p4_d128_l4_h4_cifar10_timm.pth",
}
SCRATCH_OPTIONS = ("--cache",)   # options that only speed a run up: a machine-local value is dropped
# options whose value only says where the cells run (a Dask scheduler; every spelling): the cells, and so the
# results, are the same wherever they run, and another machine has no such scheduler, so a rerun leaves them out
PLACEMENT_OPTIONS = (COMMON["scheduler"].name, *COMMON["scheduler"].old)


SCRATCH = "<scratch>"   # a committed record's word for a folder outside the checkout of the machine that ran it


def portable_path(value: str, cwd: str | os.PathLike | None = None) -> str:
    """A path as a record keeps it: absolute inside the working directory becomes relative to it
    (`/home/me/lab/data.tgz` run in /home/me/lab is `data.tgz`); any other value is kept as typed."""
    cwd = os.path.abspath(cwd or os.getcwd())
    if os.path.isabs(value) and (value == cwd or value.startswith(cwd.rstrip(os.sep) + os.sep)):
        return os.path.relpath(value, cwd)
    return value


def portable_argv(argv: list[str], cwd: str | os.PathLike | None = None) -> list[str]:
    """argv as command.txt records it: each token through portable_path, so the command reruns from any clone."""
    out = []
    for a in argv:
        if a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            out.append(f"{k}={portable_path(v, cwd)}")
        else:
            out.append(portable_path(a, cwd))
    return out


def command_line(prog: str, argv: list[str]) -> str:
    """What command.txt records: the program and its arguments, shell-quoted, paths made portable."""
    import shlex
    return " ".join([prog] + [shlex.quote(a) for a in portable_argv(argv)])


def rerunnable(command: str, out: str) -> str:
    """The command that remakes a run folder where it now sits: `--out` is the folder's place in the
    repository (`out`), a machine-local copy of a shared data file (SHARED_FILES) is read from where the
    README puts it, a machine-local cache (SCRATCH_OPTIONS: an absolute or SCRATCH path) is left to its default, where the cells ran
    (PLACEMENT_OPTIONS: a Dask scheduler's address) is left out, so the rerun runs them in-process.  Any
    other absolute path is kept: it names something only its user has."""
    import shlex
    try:
        toks = shlex.split(command)
    except ValueError:
        return command
    res, i = [], 0
    while i < len(toks):
        t = toks[i]
        i += 1
        if not t.startswith("--"):
            res.append(t)
            continue
        k, eq, v = t.partition("=")
        if not eq and i < len(toks) and not toks[i].startswith("--"):
            v, eq, i = toks[i], "=", i + 1
        if not eq:                                        # a flag
            res.append(k)
            continue
        if k in SCRATCH_OPTIONS and (os.path.isabs(v) or v.startswith(SCRATCH)) or k in PLACEMENT_OPTIONS:
            continue
        if k == "--out":
            v = out
        elif os.path.basename(v) in SHARED_FILES and v != SHARED_FILES[os.path.basename(v)]:
            v = SHARED_FILES[os.path.basename(v)]
        res += [k, v]
    return " ".join(shlex.quote(a) for a in res)


def kind_of(command: str) -> str:
    """The command words of a command line, without options: 'vit-probe spectra --quick' -> 'vit-probe spectra'."""
    words = []
    for w in command.split():
        if w.startswith("-"):
            break
        words.append(w)
    return " ".join(words[:2])


def same_kind(a: str, b: str) -> bool:
    if a == b:
        return True
    # `jackson-tasks all` writes one folder per task: those are runs of `jackson-tasks <task>`
    pa, pb = a.split(), b.split()
    return bool(pa and pb) and pa[0] == pb[0] == "jackson-tasks" and "all" in (pa[1:2] + pb[1:2])


def folder_kind(out: Path) -> str | None:
    """The kind of run `out` holds: from environment.json, else from command.txt; None if it holds none."""
    env = out / "environment.json"
    if env.is_file():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            k = read_json(env).get("kind")
            if isinstance(k, str) and k:
                return k
    cmd = out / "command.txt"
    if cmd.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            return kind_of(cmd.read_text())
    return None


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """A Dask scheduler address that parses and answers within `timeout` seconds (default
    `jackson.budget.SCHEDULER_TIMEOUT_S`): at tcp:// the server must send a Dask scheduler's opening message
    (`jackson.budget.scheduler_handshake`: an HTTP server, or a port that accepts and never answers, is refused
    in one line naming the seconds waited); tls://, ws:// and wss:// must accept a TCP connection.  Checked
    before a run folder is opened, so a refused address leaves nothing behind."""
    from .budget import SCHEDULER_TIMEOUT_S, scheduler_handshake
    timeout = SCHEDULER_TIMEOUT_S if timeout is None else timeout
    if not address or address.startswith("inproc://"):   # inproc: a LocalCluster(processes=False) in this process
        return
    url = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = url.hostname, url.port
    except ValueError:
        host, port = None, None
    need(url.scheme in ("tcp", "tls", "ws", "wss") and bool(host) and port is not None,
         f"--dask-scheduler: give a Dask scheduler address such as tcp://host:8786, got '{address}'")
    hint = "start one with `dask scheduler` or leave --dask-scheduler out to run in-process"
    if url.scheme == "tcp":
        why = scheduler_handshake(host, port, timeout)
        need(not why, f"--dask-scheduler {address}: {why}; {hint}")
        return
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.timeout:
        raise UsageError(f"--dask-scheduler {address}: no answer to a connection within {timeout:g} s; {hint}") from None
    except OSError as e:
        raise UsageError(f"--dask-scheduler {address}: no Dask scheduler answers there ({e.strerror or e}); {hint}") from None


def environment(kind: str, command: str, device: str | None) -> dict:
    """Where and with what a run was made: the lab's version (jackson.__version__, of the code that ran, not of
    the installed metadata), commit, package versions, threads, device, start time.  Folders written before
    lab_version was recorded read as before (readers use .get)."""
    from importlib import metadata
    versions = {}
    for pkg in ("jackson-lab", "torch", "numpy", "scipy", "pandas", "scikit-learn", "timm", "dask", "distributed"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[pkg] = metadata.version(pkg)
    here = Path(__file__).resolve().parent.parent
    commit = None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        r = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if r.returncode == 0:
            commit = r.stdout.strip()
            d = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)
            if d.returncode == 0 and d.stdout.strip():
                commit += "+dirty"
    threads = capability = None
    if "torch" in sys.modules:
        threads = sys.modules["torch"].get_num_threads()
        capability = sys.modules["torch"].backends.cpu.get_cpu_capability()
    from . import __version__
    return {"kind": kind, "command": command, "lab_version": __version__, "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit, "python": sys.version.split()[0], "packages": versions,
            "torch_threads": threads, "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "device": device, "cpu": {"model": cpu_model(), "torch_capability": capability}}


def cpu_model() -> str | None:
    """The CPU's model name (/proc/cpuinfo, else platform.processor()).  Recorded with torch's CPU capability
    (the vector ISA its kernels dispatch to, e.g. AVX2 or AVX512) because the kernels differ in rounding: runs
    of the same code and seed on two machines agreed only to 5-6 digits, and RNN fits at the edge of divergence
    then diverged in different seeds (reports/rnn_compare/TRAINING.md, the audit)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or None


def earlier_environments(path: Path, kind: str | None = None) -> list[dict]:
    """The records of the earlier invocations that wrote into a folder (resumed or rebuilt runs), oldest
    first: what environment.json held before, with its own `earlier` list unfolded in front of it.  A
    rerun thus keeps the commit and start time of the run that trained the first cells.  A folder written
    before runs recorded environment.json: one record built from its provenance.json (derived from git
    history, jackson/lab_report/provenance.py) and command.txt, read before this run rewrites them, with
    what was not recorded left null.  Unreadable or absent: []."""
    if not path.exists():
        return _derived_record(path.parent, kind)
    try:
        old = read_json(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    if not isinstance(old, dict):
        return []
    before = [e for e in old.pop("earlier", []) if isinstance(e, dict)]
    return before + [old]


def _derived_record(folder: Path, kind: str | None) -> list[dict]:
    try:
        p = read_json(folder / "provenance.json")
        added = p["results_added"]
        when = f"{str(added['commit'])[:12]} on {str(added['date'])[:10]}"
        device = (p.get("device") or {}).get("value")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
        return []
    command = None
    with contextlib.suppress(OSError, UnicodeDecodeError, IndexError):
        command = (folder / "command.txt").read_text().splitlines()[0].strip() or None
    return [{"kind": kind, "command": command, "started_utc": None, "commit": None, "device": device,
             "results_added": {"commit": str(added["commit"]), "date": str(added["date"])},   # read where it travels
             "record": f"this run recorded no environment.json; its results were committed in {when} "
                       "(provenance.json, derived from git history)"}]


def check_run_folder(out: str | os.PathLike, kind: str, force: bool | None = None, option: str = "--out") -> Path:
    """The checks of `open_run` that touch nothing: writable, and empty or a run of `kind` (or --force)."""
    force = FORCE if force is None else force
    out = Path(out).expanduser().resolve()
    check_out_dir(out, option)
    if out.is_dir():
        try:
            entries = [p.name for p in out.iterdir() if p.name != LOCK]   # dotfiles count: they are the user's
        except OSError as e:
            raise UsageError(f"{option}: cannot read {out} ({e.strerror})") from None
        held = folder_kind(out) if entries else None
        if entries and force and not (held is not None and same_kind(held, kind)):
            clash = sorted(set(entries) & set(WRITES))
            need(not clash, f"{option}: {out} is not this command's run folder and holds {', '.join(clash[:3])}"
                            f"{', ...' if len(clash) > 3 else ''}, which the run would write; --force writes only "
                            "beside what is there, never over it: pick another --out")
        if entries and not force:
            need(held is not None, f"{option}: {out} is not empty and holds no run of this lab "
                                   f"({', '.join(sorted(entries)[:3])}{', ...' if len(entries) > 3 else ''}); "
                                   "pick another --out, or give --force to write beside what is there (nothing is deleted)")
            need(same_kind(held, kind), f"{option}: {out} holds a `{held}` run, not `{kind}`; pick another --out, "
                                        "or give --force to write beside it (nothing is deleted)")
    return out


class RunLock:
    """An exclusive, non-blocking fcntl lock on `<out>/.lock`; released on close or when the process dies."""

    def __init__(self, out: Path):
        import fcntl
        self.path = out / LOCK
        self.fh = open(self.path, "a+")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read().strip() or "another process"
            self.fh.close()
            raise UsageError(f"--out: another run ({holder}) is writing into {out}; wait for it to finish "
                             "or give another --out") from None
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(f"pid {os.getpid()} since {datetime.datetime.now().isoformat(timespec='seconds')}\n")
        self.fh.flush()

    def close(self) -> None:
        import fcntl
        if not self.fh.closed:
            self.fh.seek(0)
            self.fh.truncate()
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()


def _state(out: Path) -> dict:
    """What a run folder holds: top-level files by content (a summary rewritten as it was is unchanged), files below
    by size and modification time (a cell trained again is changed); its environment record and lock left out."""
    import hashlib
    state = {}
    for p in sorted(out.rglob("*")):
        if p.name in ("environment.json", LOCK) and p.parent == out or not p.is_file():
            continue
        st = p.stat()
        state[str(p.relative_to(out))] = (hashlib.sha256(p.read_bytes()).hexdigest() if p.parent == out
                                          else (st.st_size, st.st_mtime_ns))
    return state


@contextlib.contextmanager
def open_run(out: str | os.PathLike, kind: str, command: str, config: dict | None, *, scheduler: str = "",
             device: str | None = None, force: bool | None = None, record: bool = True):
    """Check, lock and stamp a run folder; yields its absolute path.  `record=False` takes the lock but
    leaves config.json / command.txt / environment.json as they are (e.g. a timing estimate)."""
    check_scheduler(scheduler)
    out = check_run_folder(out, kind, force)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out: cannot create {out} ({e.strerror})") from None
    held = folder_kind(out)
    if not (held is not None and same_kind(held, kind)):   # a folder this run does not own: what is there stays
        foreign = []
        for i, p in enumerate(out.rglob("*")):
            if i >= MAX_FOREIGN:
                raise UsageError(f"--out: {out} holds more than {MAX_FOREIGN} entries and no run of this command; "
                                 "pick another --out")
            if p.name != LOCK:
                foreign.append(os.path.abspath(p))
        PROTECTED.update(foreign)
    lock = RunLock(out)
    try:
        before = held_env = None
        if record:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                held_env = (out / "environment.json").read_text() if (out / "environment.json").is_file() else None
            before = _state(out) if held_env is not None else None   # a folder without a record has none to keep
            # before this run writes into its folder: a rerun into a committed folder must not call the code "dirty"
            env = environment(kind, command, device)
            earlier = earlier_environments(out / "environment.json", kind)   # before command.txt is rewritten
            if config is not None:
                old = out / "config.json"
                text = json.dumps(config, indent=1, default=str)
                if old.is_file():
                    with contextlib.suppress(OSError, UnicodeDecodeError):
                        held = old.read_text()
                        if held != text:
                            print(f"note: {out} " + config_change(held, json.loads(text)), file=sys.stderr)
                write_atomic(old, text)
            write_atomic(out / "command.txt", command + "\n")
            env["earlier"] = earlier
            write_atomic(out / "environment.json", json.dumps(env, indent=1) + "\n")
        with quick.marking(out, config):          # a quick run's figures and summary say so
            yield out
        if held_env is not None and _state(out) == before:   # it trained nothing and rewrote every output as it
            write_atomic(out / "environment.json", held_env)  # was: no record of it (a committed folder stays as is)
    except OSError as e:      # one that names no file (a full disk fails inside a write): name the run folder
        if not e.filename:
            raise OSError(e.errno, e.strerror or str(e), str(out)) from None
        raise
    finally:
        lock.close()
