"""What a request costs, priced before it is paid, and how long a wait may last.

Every command (and every public function that allocates by its inputs) estimates the memory its request needs
from the sizes it was given -- sequence length, set sizes, spectrum length K, model width and depth, the
longest data line -- before it reads data, builds a model or opens its run folder, and refuses, in one line
naming the estimate and the limit, what is past the limit:

    budget.check("jackson-sweep: one cell", {"the training sequences": 8 * n * tau, ...})

The limit (`limit`) is `--max-memory SIZE` (every command takes it; `jackson.command.cli_run` sets
`GIVEN`), else `$JACKSON_MAX_MEMORY`, else this machine's physical memory.  An estimate counts the arrays a
run holds at its peak (float64 data, float32 activations kept for the backward pass, weights with their
gradients and Adam's two moments); it is a floor, not a measurement of the allocator's peak: a request it
passes may still need more, one it refuses cannot fit.

Time: `check_time` prices the work of a training request (its steps x the FLOPs of a step, jackson.threads.step_flops)
at PEAK_FLOPS, the fastest rate measured on this machine, so its estimate is a floor; past `--max-hours H`, else
`$JACKSON_MAX_HOURS`, else DEFAULT_HOURS (48 h), it refuses in one line naming the estimate, the rate and the limit.

Waits: `scheduler_handshake` runs Dask's own handshake (distributed.comm.connect) within `SCHEDULER_TIMEOUT_S`
seconds (a server that accepts and says nothing, or says something else, is not a scheduler: one line naming the
seconds waited); `regular_file` refuses a FIFO, a device or a folder before it is opened (an open of a FIFO waits for
a writer forever); `deadline` bounds a block of code that waits on nothing it could give a timeout to (a plugin
rule's loop: jackson.verdict.call_rule).
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import socket
import stat
import threading
import time
from pathlib import Path

from .config import UsageError

ENV = "JACKSON_MAX_MEMORY"       # the environment setting that raises (or lowers) the limit
OPTION = "--max-memory"          # the option every command takes for it
GIVEN: int | None = None         # --max-memory of this command line, in bytes (set by jackson.command.cli_run)
FALLBACK = 16 * 2 ** 30          # the limit where the machine's memory cannot be read
F64, F32 = 8, 4                  # bytes of a float64 array element, of a float32 tensor element

UNITS = {"": 1, "b": 1, "k": 2 ** 10, "kb": 10 ** 3, "kib": 2 ** 10, "m": 2 ** 20, "mb": 10 ** 6, "mib": 2 ** 20,
         "g": 2 ** 30, "gb": 10 ** 9, "gib": 2 ** 30, "t": 2 ** 40, "tb": 10 ** 12, "tib": 2 ** 40}


class BudgetError(UsageError):
    """A request past the memory limit: one line, exit 2 (a UsageError), nothing computed or written."""


def parse_size(text: str, where: str = OPTION) -> int:
    """'64G', '1.5TiB', '500MB', '2048' (bytes) -> bytes; K, M, G, T are powers of 1024 (KB, MB, GB, TB of 1000)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    unit = m and UNITS.get(m.group(2).lower())
    if not m or unit is None:
        raise UsageError(f"{where}: cannot read '{text}' as a size (give bytes, or a number with K, M, G or T, "
                         "e.g. 64G)")
    n = float(m.group(1)) * unit
    if not (math.isfinite(n) and 1 <= n <= 2 ** 62):
        raise UsageError(f"{where}: a size must be between 1 byte and 4 EiB, got '{text}'")
    return int(n)


def fmt(n: float) -> str:
    """Bytes as people read them: 1.86 TiB, 36.6 GiB, 512 MiB, 800 bytes."""
    for unit, size in (("EiB", 2 ** 60), ("PiB", 2 ** 50), ("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20),
                       ("KiB", 2 ** 10)):
        if n >= size:
            v = n / size
            return f"{v:.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"
    return f"{int(n)} bytes"


def machine_memory() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        n = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return n if n > 0 else None


def limit() -> tuple[int, str]:
    """(the memory limit in bytes, where it comes from): --max-memory, else $JACKSON_MAX_MEMORY, else this
    machine's physical memory."""
    if GIVEN is not None:
        return GIVEN, OPTION
    env = os.environ.get(ENV, "").strip()
    if env:
        return parse_size(env, f"${ENV}"), f"${ENV}"
    m = machine_memory()
    return (m, "this machine's memory") if m else (FALLBACK, "the default where the machine's memory is unknown")


def total(parts: dict[str, float]) -> float:
    return float(sum(max(0.0, float(v)) for v in parts.values()))


def check(what: str, parts: dict[str, float], error: type[Exception] = BudgetError) -> float:
    """Refuse `what` (an `error`, one line) when the bytes of `parts` (what it holds at its peak, by name) add up
    past the limit; the line names the estimate, its largest part and the limit.  Returns the estimate."""
    need_b = total(parts)
    cap, source = limit()
    if need_b > cap:
        big = max(parts, key=lambda k: parts[k])
        raise error(f"{what} needs about {fmt(need_b)} of memory ({big}: {fmt(parts[big])}), more than the limit of "
                    f"{fmt(cap)} ({source}); ask for less, or raise the limit with {OPTION} SIZE or {ENV}=SIZE")
    return need_b


def transformer_bytes(batch: float, tokens: float, dim: float, depth: float, heads: float = 1, mlp: float = 0,
                      params: float = 0, train: bool = True, vocab: float = 0) -> dict[str, float]:
    """The float32 memory of one step of a Transformer (or a bank of them: fold the members into `batch`), by
    part: the attention matrices (scores and softmax, per head and block, kept for the backward pass), the other
    per-token activations (q, k, v, the output, the MLP's hidden units, the logits over `vocab`), and the weights
    (training: with their gradients and Adam's two moments).  A floor: it leaves out the allocator's slack."""
    kept = depth if train else 1               # without gradients only the block being computed is alive
    attn = batch * kept * heads * tokens * tokens * 2 * F32
    act = batch * tokens * (kept * (6 * dim + 2 * mlp) + vocab) * F32
    return {"the attention matrices": attn, "the activations": act,
            "the weights" + (" with their gradients and Adam's moments" if train else ""): params * F32 * (4 if train else 1)}


# ---- time ------------------------------------------------------------------------------------

HOURS_ENV = "JACKSON_MAX_HOURS"  # the environment setting that raises (or lowers) the time limit
HOURS_OPTION = "--max-hours"     # the option every command takes for it
HOURS_GIVEN: float | None = None  # --max-hours of this command line (set by jackson.command.cli_run)
DEFAULT_HOURS = 48.0             # the limit when neither is given: two days of compute
# The fastest rate measured on this lab's 2-core machine: a 2048 x 2048 float32 matmul at 180.4 GFLOP/s
# (reports/benchmarks.md, "hardware efficiency"; `python benchmarks/bench_jackson.py efficiency bank`).  A training
# step of the lab's models runs well below it (the card's bank: 4.3 GFLOP in 59 ms, 73 GFLOP/s), so the work of a
# request divided by it is a floor on its time: a request priced past the limit at this rate cannot finish within it.
PEAK_FLOPS = 180e9
PEAK_SOURCE = "the fastest rate measured on the lab's 2-core machine, a 2048^2 matmul (reports/benchmarks.md)"


def parse_hours(text: str, where: str = HOURS_OPTION) -> float:
    """'48', '0.5', '2h', '90m', '3d' -> hours (a bare number is hours)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(h|m|d|s)?\s*", str(text).lower())
    if not m:
        raise UsageError(f"{where}: cannot read '{text}' as a time (give hours, or a number with s, m, h or d, "
                         "e.g. 72)")
    h = float(m.group(1)) * {"s": 1 / 3600, "m": 1 / 60, "h": 1.0, "d": 24.0, None: 1.0}[m.group(2)]
    if not (math.isfinite(h) and 0 < h <= 1e6):
        raise UsageError(f"{where}: a time limit must be above 0 and at most 1,000,000 hours, got '{text}'")
    return h


def hours_limit() -> tuple[float, str]:
    """(the time limit in hours, where it comes from): --max-hours, else $JACKSON_MAX_HOURS, else DEFAULT_HOURS."""
    if HOURS_GIVEN is not None:
        return HOURS_GIVEN, HOURS_OPTION
    env = os.environ.get(HOURS_ENV, "").strip()
    if env:
        return parse_hours(env, f"${HOURS_ENV}"), f"${HOURS_ENV}"
    return DEFAULT_HOURS, "the default"


def fmt_time(seconds: float) -> str:
    """Seconds as people read them: 41 s, 12 min, 3.2 h, 9.5 days, 1.2e+04 years."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.3g} h"
    if seconds < 3 * 365 * 86400:
        return f"{seconds / 86400:.3g} days"
    return f"{seconds / (365 * 86400):.3g} years"


def over_time(flops: float) -> bool:
    """Whether `flops` at PEAK_FLOPS takes longer than the time limit (what `check_time` refuses)."""
    return max(0.0, float(flops)) / PEAK_FLOPS > hours_limit()[0] * 3600


def check_time(what: str, flops: float, how: str = "", error: type[Exception] = BudgetError) -> float:
    """Refuse `what` (an `error`, one line) when its work, `flops` (how: the count in words, e.g. "16 members x
    6,000 steps x 4.3 GFLOP a step"), at PEAK_FLOPS takes longer than the time limit; the line names the
    estimate, the rate it assumes and the limit.  Returns the estimate in seconds (a floor: see PEAK_FLOPS)."""
    need_s = max(0.0, float(flops)) / PEAK_FLOPS
    cap, source = hours_limit()
    if need_s > cap * 3600:
        tflop = flops / 1e12
        work = f"{tflop:,.0f}" if tflop >= 1000 else f"{tflop:.3g}"
        raise error(f"{what} needs at least {fmt_time(need_s)} of compute ({how + ': ' if how else ''}{work} TFLOP "
                    f"at {PEAK_FLOPS / 1e9:g} GFLOP/s, {PEAK_SOURCE}), more than the time limit of "
                    f"{fmt_time(cap * 3600)} ({source}); ask for less, or raise the limit with {HOURS_OPTION} H or "
                    f"{HOURS_ENV}=H")
    return need_s


def transformer_step_flops(members: float, batch: float, tau: float, width: float, depth: float, f_in: float,
                           n: float, d_v: float, attn_width: float) -> float:
    """A floor on one training step's FLOPs of a bank of `members` one-layer Transformers of Eq. (5) (jackson.models)
    on batch x tau tokens (jackson.threads.step_flops): the weights of f_hat (f_in -> width ... -> n) and F_hat
    (d_v -> width ... -> 1), depth layers each, on every token, and the attention's products over token pairs
    (`attn_width` wide: m_h + d_v).  Biases, W_Q, W_K and W_V are left out."""
    from .threads import step_flops
    mlp = 2 * (depth - 2) * width * width + width * (f_in + n + d_v + 1)
    return step_flops(members * mlp, batch * tau, attention=members * batch * tau * tau * attn_width)


# ---- waits ------------------------------------------------------------------------------------

SCHEDULER_TIMEOUT_S = 5.0        # a Dask scheduler's connect and opening message, each at most this long


def _first_bytes(host: str, port: int, wait: float, ask: bytes = b"") -> bytes | None:
    """What a server sends first on a fresh connection within `wait` seconds (after `ask`, if given): up to 16
    bytes, b"" when it closes or stays silent, None when the connection fails.  Used only to name what a
    server that failed Dask's handshake is."""
    deadline = time.monotonic() + wait
    try:
        with socket.create_connection((host, port), timeout=wait) as sock:
            if ask:
                sock.sendall(ask)
            buf = b""
            while len(buf) < 16:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                sock.settimeout(left)
                try:
                    chunk = sock.recv(16 - len(buf))
                except TimeoutError:
                    break
                if not chunk:
                    break
                buf += chunk
            return buf
    except OSError:
        return None


def _dask_connect(address: str, timeout: float) -> None:
    """Dask's own connect and handshake (distributed.comm.connect) to `address`, all of it within `timeout`
    seconds; raises what it raised, or TimeoutError.  Run on a thread of its own, so it works where an event
    loop is already running (a notebook).  distributed.Client is not used: against a server that accepts and
    stays silent, Client(address, timeout=0.5) had not returned after 40 s, and connect's own timeout covers
    the connection but not the handshake's read."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from distributed.comm import connect

    async def probe():
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
        await comm.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, probe()).result()


def scheduler_handshake(host: str, port: int, timeout: float = SCHEDULER_TIMEOUT_S) -> str:
    """'' when a Dask scheduler answers at host:port (TCP): it accepts within `timeout` seconds and then completes
    Dask's own handshake (distributed.comm.connect) within `timeout` seconds more; else why not, in words that
    name the seconds waited.  What a server that fails the handshake is (silent, an HTTP server, one that closes,
    one that opens with something else) is named from what it sends on a fresh connection."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except socket.timeout:
        return f"no answer to a connection within {timeout:g} s"
    except OSError as e:
        return f"no Dask scheduler answers there ({e.strerror or e})"
    try:
        _dask_connect(f"tcp://{host}:{port}", timeout)
        return ""
    except TimeoutError:
        if (_first_bytes(host, port, HTTP_PROBE_S, b"GET / HTTP/1.0\r\n\r\n") or b"").startswith(b"HTTP/"):
            return (f"the server there is an HTTP server, not a Dask scheduler: it sent no Dask opening message "
                    f"in {timeout:g} s and answered an HTTP request within {HTTP_PROBE_S:g} s more")
        return (f"the server there accepted the connection but sent no Dask scheduler's opening message in "
                f"{timeout:g} s (and nothing to an HTTP request in {HTTP_PROBE_S:g} s more): not a Dask scheduler")
    except Exception:  # noqa: BLE001 -- whatever Dask's reader raised on bytes that are not its handshake
        head = _first_bytes(host, port, min(timeout, HTTP_PROBE_S))
        if not head:
            return "the server there closed the connection without a Dask scheduler's opening message"
        return f"the server there is not a Dask scheduler: it opened with {_shown(head)}"


HTTP_PROBE_S = 1.0     # after a silent opening: how long an HTTP server is given to answer "GET /"


def _shown(data: bytes) -> str:
    """The first bytes a server sent, as a message may show them: printable ASCII only, at most 24 characters."""
    text = "".join(ch if 32 <= ord(ch) < 127 else "." for ch in data[:24].decode("latin-1"))
    return f"'{text}'"


class Deadline(BaseException):
    """Raised into a block by `deadline`'s alarm: a BaseException, so the block's own `except Exception` (foreign
    code's, say) does not swallow it."""


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise Deadline in the block once `seconds` have passed (SIGALRM, an interval timer), for code that does not
    wait on anything a timeout could be given to (a plugin's loop).  Only in the main thread of a system with
    setitimer (elsewhere the block runs unbounded).  The previous SIGALRM handler is restored after the block, and
    a timer already running goes on with what it had left (one due during the block rings just after it)."""
    if not (seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()):
        yield
        return

    def ring(signum, frame):
        raise Deadline

    old_handler = signal.signal(signal.SIGALRM, ring)
    old_left, old_every = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, old_left - (time.monotonic() - start)), old_every)


def regular_file(path: str | os.PathLike, option: str) -> Path:
    """`path` when it is a regular file (symlinks followed); else a UsageError naming `option` -- checked with
    stat before anything opens it, so a FIFO (whose open waits for a writer), a device or a folder is refused
    at once.  A missing file is left to the caller's open (its own message)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        return p
    except OSError as e:
        raise UsageError(f"{option}: cannot read {p} ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file")
        raise UsageError(f"{option}: {p} is {kind}, not a regular file; not read")
    return p


def inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether `path`, symlinks resolved, lies inside `root` (resolved): a file whose content an error line may quote."""
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
        return True
    except (ValueError, OSError, RuntimeError):
        return False
