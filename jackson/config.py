"""Command lines built from frozen dataclass configs.

Every field of the experiment's config (nested dataclasses flattened) becomes one option:
`m_h` -> `--m-h` (a name two nested configs share gets its parent's prefix, the key config.json
holds it under: `--rnn-d-in`, `--fit-lr`), with the field's trailing source comment as its help text
(a prefixed option's help starts with its parent field's comment).  Tuples take comma lists
(`--alpha 0.55,1.0`, `--m-h 1-16`, `--rank 2,6,inf`).  Errors are one line and exit code 2: unknown
options, ill-typed values, and values outside their range (`UsageError`).

Where the derived name is not the lab's word for the quantity (ARCHITECTURE.md, "CLI vocabulary"), the
option is renamed, never the field: field names are config.json keys and feed the cell keys
(jackson.sweep.non_default), so committed runs resume and `--config` files still read.  A config
class declares the spelling in a class attribute `CLI`, keyed by the dotted path of the field below
that class, so an outer config may rename a nested config's field ("train.lr"); a nested class may
declare its own, and the outer declaration wins:

    CLI = {"mh": Option("--m-h", old=("--mh",))}        # vit_probe.configs.SweepMhConfig

`COMMON` gives one spelling to a field name in every config (`scheduler` -> `--dask-scheduler`).  An
old spelling still parses, as `--mh 4` or `--mh=4`, and prints one line to stderr,
`<prog>: note: --mh is deprecated; use --m-h`; --help lists only the new one.

Why argparse and not a dataclass-to-CLI library (measured 2026-11-23, jsonargparse 4.53.0 in a scratch
venv, on a two-level frozen dataclass like SweepConfig): jsonargparse names every option by its dotted
path (`--cfg.fit.lr`, `--cfg.m_h`), reads tuples as JSON lists (`--cfg.alpha "[1.0, 2.0]"`, no `1-16`
ranges or `inf` ranks), and reports a bad value in five lines (a two-line usage, a tip, a two-line error); the lab's
vocabulary (`--lr`, `--m-h 1-16`, `--rank 2,6,inf`), its deprecated spellings and its one-line exit-2
contract would each need overriding.  Its config-file support is what `--config` adds here in two small functions
(`read_config` / `from_dict`).  tyro (1.0.17) also names options by dotted path; it was not tried further.
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import os
import re
import signal
import stat
import sys
import types
import typing
from pathlib import Path


class UsageError(ValueError):
    """Bad user input; the message names the option and the valid range."""


def need(ok: bool, message: str) -> None:
    if not ok:                      # a validation step: raise UsageError(message) unless ok
        raise UsageError(message)


def check_out_dir(out, option: str = "--out") -> None:
    """The output folder is a folder (or can be made) and is writable; touches nothing."""
    out = Path(out).resolve()
    need(not out.exists() or out.is_dir(), f"{option}: {out} exists and is not a folder")
    probe = out
    while not probe.exists():
        probe = probe.parent
    need(probe.is_dir() and os.access(probe, os.W_OK | os.X_OK), f"{option}: cannot write under {probe}")


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage + message; we print one line
        self.exit(2, f"{self.prog}: error: {message}\n")


def fail(prog: str, message: str) -> typing.NoReturn:
    """Bad input: each line of message (one per fault) as "prog: error: line", then exit 2."""
    sys.stderr.write("".join(f"{prog}: error: {line}\n" for line in str(message).splitlines() or [""]))
    raise SystemExit(2)


def _comments(cls) -> dict[str, str]:
    try:
        src = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\s+(\w+):[^\n#]*#\s*([^\n]*)$", src, re.M)}


INT_MAX = 2 ** 63 - 1      # every integer option fits a signed 64-bit integer (seeds go to numpy and torch)


def parse_int(s: str) -> int:
    v = int(s)
    if not -INT_MAX <= v <= INT_MAX:
        raise ValueError(f"{s} is outside -2**63+1..2**63-1")
    return v


def parse_float(s: str) -> float:
    """A finite float: nan and inf are refused here, for every float option (ranks have their own parser)."""
    v = float(s)
    if not math.isfinite(v):
        raise ValueError(f"{s} is not a finite number")
    return v


def parse_int_list(s: str) -> tuple[int, ...]:
    out = []
    for part in s.split(","):
        part = part.strip()
        if re.fullmatch(r"-?\d+-\d+", part):
            a, b = part.rsplit("-", 1)
            out.extend(range(parse_int(a), parse_int(b) + 1))
        else:
            out.append(parse_int(part))
    return tuple(out)


def parse_float_list(s: str) -> tuple[float, ...]:
    return tuple(parse_float(p) for p in s.split(","))


def parse_rank_list(s: str) -> tuple[float, ...]:
    return tuple(math.inf if p.strip().lower() in ("inf", "infinity") else float(int(p)) for p in s.split(","))


PARSERS = {"rank": parse_rank_list}  # per-field overrides of the type-based parser


def _parser_for(name, tp):
    if name in PARSERS:
        return PARSERS[name]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        return parse_int_list if args[0] is int else parse_float_list
    if tp is bool:
        return None
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]    # `float | None` (unset: derived) parses as a float
        return _parser_for(name, kinds[0]) if len(kinds) == 1 else str
    return {float: parse_float, int: parse_int}.get(tp, tp)


@dataclasses.dataclass(frozen=True)
class Option:
    """A field's option where the derived name is not the lab's word: `name` is what --help shows;
    each spelling in `old` still parses for a release, with a one-line deprecation note."""
    name: str                     # e.g. "--m-h"
    old: tuple[str, ...] = ()     # e.g. ("--mh",)


# field names spelled the same way in every config that has them (the core runner owns Dask)
COMMON = {"scheduler": Option("--dask-scheduler", old=("--scheduler",))}


def _flat_fields(cls, prefix=(), group=""):
    """(path, type, help comment, field, comment of the parent field) of every leaf field."""
    hints = typing.get_type_hints(cls)
    notes = _comments(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            yield from _flat_fields(tp, prefix + (f.name,), notes.get(f.name, ""))
        else:
            yield prefix + (f.name,), tp, notes.get(f.name, ""), f, group


def _declared(cls, prefix=()) -> dict[str, Option]:
    """The `CLI` declarations of cls and of its nested configs, by dotted path from cls (outer first)."""
    out: dict[str, Option] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            for k, v in _declared(hints[f.name], prefix + (f.name,)).items():
                out.setdefault(k, v)
    for k, v in getattr(cls, "CLI", {}).items():
        out[".".join(prefix + (k,))] = v
    return out


def options(cls) -> list[tuple[str, str, tuple[str, ...]]]:
    """(dotted field path, option, deprecated spellings) for every leaf field of cls, in field order:
    the one place option names come from (the parser, and messages that name an option)."""
    fields = list(_flat_fields(cls))
    names = [path[-1] for path, *_ in fields]
    declared = _declared(cls)
    out = []
    for path, *_ in fields:
        # a name used by two nested configs is qualified by its parent: --rnn-d-in, --transformer-d-in
        name = path[-1] if names.count(path[-1]) == 1 else "_".join(path[-2:])
        derived = "--" + name.replace("_", "-")
        o = declared.get(".".join(path)) or COMMON.get(path[-1])
        out.append((".".join(path), o.name, o.old) if o else (".".join(path), derived, ()))
    return out


class ConfigParser(OneLineParser):
    """A parser that still reads the deprecated spellings: each one used prints one note line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.deprecated: dict[str, str] = {}    # old spelling -> option

    def parse_known_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        out, noted = [], set()
        for i, a in enumerate(args):
            if a == "--":            # what follows is not an option
                out += args[i:]
                break
            opt, eq, value = a.partition("=")
            if opt in self.deprecated:
                if opt not in noted:
                    sys.stderr.write(f"{self.prog}: note: {opt} is deprecated; use {self.deprecated[opt]}\n")
                    noted.add(opt)
                a = self.deprecated[opt] + eq + value
            out.append(a)
        return super().parse_known_args(out, namespace)


def _default_text(note: str, dflt, shown) -> str:
    if re.search(r"\(default\b", note):           # the comment says it: "(default: from meta.json)"
        return ""
    if dflt in ("", ()):                            # an empty default means what the comment says
        return "" if "empty" in note else " (default: none)"
    return f" (default: {shown})"


def build_parser(cls, prog: str, description: str) -> ConfigParser:
    p = ConfigParser(prog=prog, description=description)
    defaults, groups = cls(), {}              # a nested config's options under its own heading in --help
    fields = list(_flat_fields(cls))
    names = [path[-1] for path, *_ in fields]
    for (path, tp, note, f, group), (dotted, opt, old) in zip(fields, options(cls)):
        if group and names.count(path[-1]) > 1:      # --fit-lr beside --rnn-fit-lr: say whose it is
            note = f"{group}: {note}" if note else group
        dflt = defaults
        for k in path:
            dflt = getattr(dflt, k)
        shown = ",".join("inf" if (isinstance(v, float) and math.isinf(v)) else f"{v:g}" if isinstance(v, float) else str(v)
                         for v in dflt) if isinstance(dflt, tuple) else dflt
        conv = _parser_for(path[-1], tp)
        at = p if len(path) == 1 else groups.get(path[0]) or groups.setdefault(path[0], p.add_argument_group(
            f"{path[0]} options" + (f" ({re.sub(r' [(][^()]*[)]$', '', re.split('[;:]', group)[0])})" if group else "")))
        for o in old:
            p.deprecated[o] = opt
            if conv is None:
                p.deprecated["--no-" + o[2:]] = "--no-" + opt[2:]
        if conv is None:
            # --flag / --no-flag, so a switch that defaults to on can be turned off
            at.add_argument(opt, dest=dotted, action=argparse.BooleanOptionalAction,
                           default=argparse.SUPPRESS, help=f"{note} (default: {'on' if dflt else 'off'})")
        else:
            at.add_argument(opt, dest=dotted, type=_named(conv, opt), default=argparse.SUPPRESS,
                           metavar=opt[2:].replace("-", "_").upper(), help=note + _default_text(note, dflt, shown))
    return p


def _named(conv, opt):
    def parse(s):
        try:
            return conv(s)
        except (ValueError, TypeError) as e:
            why = str(e) if conv in (parse_int, parse_float) and ("finite" in str(e) or "outside" in str(e)) else ""
            raise argparse.ArgumentTypeError(f"cannot read '{s}'" + (f" ({why})" if why else "")) from None
    parse.__name__ = opt
    return parse


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so the in-flight cell's temporary folder is removed."""


STOP: list[int] = []      # the signals received; `check_stop` raises again for them


def _on_signal(signum, frame):
    STOP.append(signum)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def check_stop() -> None:
    """Raise again for a SIGINT / SIGTERM already received.  The handler raises where the program is, but
    a library may swallow that exception (measured: torch imports torch._dynamo lazily inside the first
    optimiser step, and a signal landing in that import was lost, the run trained on); every training
    loop's progress update calls this, so the stop is seen at the next step at the latest."""
    if STOP:
        raise Terminated() if STOP[-1] == signal.SIGTERM else KeyboardInterrupt()


def install_signals() -> None:
    """SIGINT -> KeyboardInterrupt (exit 130), SIGTERM -> Terminated (exit 143); both end in one line."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


class RunFailed(Exception):
    """A run that cannot produce its result from what it computed (every fit of a target diverged): one line,
    exit 1; what it finished stays on disk and no summary claims more."""


def guarded(prog: str, body):
    """Run body() with the lab's exit contract: UsageError -> one line, exit 2; RunFailed -> one line, exit 1;
    Ctrl-C -> one line, exit 130; SIGTERM -> one line, exit 143; an OS error (full disk, permissions) -> one
    line, exit 1."""
    install_signals()
    try:
        return body()
    except UsageError as e:
        fail(prog, str(e))
    except RunFailed as e:
        sys.stderr.write(f"{prog}: failed: {e}\n")
        raise SystemExit(1)
    except Terminated:
        sys.stderr.write(f"\n{prog}: terminated (SIGTERM); finished cells are kept, rerun the same command to resume\n")
        raise SystemExit(143)
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{prog}: interrupted; finished cells are kept, rerun the same command to resume\n")
        raise SystemExit(130)
    except OSError as e:
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        sys.stderr.write(f"{prog}: error: cannot write or read{where}: {e.strerror or e}\n")
        raise SystemExit(1)


MAX_TEXT_BYTES = 16 * 2 ** 20   # a config, spectrum, model description or run-folder JSON larger than this is refused
                                # unread (the largest the lab writes, a sweep's summary.json, is under 1 MB)


def read_capped(path, option: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The text of a file a command reads whole (a config, a spectrum, a run folder's JSON), read only when it is a
    regular file of at most `limit` bytes: a larger one, a FIFO, a device (/dev/zero never ends) or a folder is a
    UsageError naming `option` and the file, before anything is read.  OSError and UnicodeDecodeError pass on."""
    p = Path(path)
    st = p.stat()
    need(stat.S_ISREG(st.st_mode), f"{option}: {p} is not a regular file")
    need(st.st_size <= limit, f"{option}: {p} is {st.st_size:,} bytes, more than the limit of {limit:,} for it")
    with open(p, encoding="utf-8") as fh:
        text = fh.read(limit + 1)        # a file that grew since the stat is still read no further than the limit
    need(len(text) <= limit, f"{option}: {p} is more than the limit of {limit:,} bytes for it")
    return text


MAX_JSON_DEPTH = 64    # a JSON file nested deeper than this is refused (the lab's deepest, a summary.json, has 8 levels)


def loads_json(text: str, option: str, path=""):
    """json.loads with a nesting limit: a document nested past MAX_JSON_DEPTH levels (or so deep that Python's
    own reader gives up) is a UsageError naming `option` and the file, never a RecursionError."""
    too_deep = f"{option}: {path} is nested more than {MAX_JSON_DEPTH} levels deep, past the limit for a JSON file"
    try:
        doc = json.loads(text)
    except RecursionError:
        raise UsageError(too_deep) from None
    stack = [(doc, 1)]
    while stack:                    # depth measured without recursion
        node, d = stack.pop()
        need(d <= MAX_JSON_DEPTH, too_deep)
        if isinstance(node, dict):
            stack += [(v, d + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, d + 1) for v in node]
    return doc


def read_json(path, option: str = "the run folder", limit: int = MAX_TEXT_BYTES):
    """A JSON file a command reads whole (a run folder's config.json, summary.json, cell.json, report.json), through
    `read_capped`: at most `limit` bytes of a regular file, nested at most MAX_JSON_DEPTH levels.  OSError,
    UnicodeDecodeError and JSONDecodeError pass on."""
    return loads_json(read_capped(path, option, limit), option, path)


def read_config(cls, path: str):
    """A config from a config.json a run wrote (jackson.runfolder), for `--config FILE`."""
    p = Path(path)
    try:
        d = loads_json(read_capped(p, "--config"), "--config", p)
    except UsageError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UsageError(f"--config: cannot read {p} as JSON ({getattr(e, 'strerror', None) or e})") from None
    need(isinstance(d, dict), f"--config: {p} holds no JSON object")
    return from_dict(cls, d, where=f"--config {p}")


def _coerce(v, tp, where: str):
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2:
        return None if v is None else _coerce(v, next(a for a in args if a is not type(None)), where)
    if origin is tuple:
        need(isinstance(v, (list, tuple)), f"{where}: expected a list, got {v!r}")
        return tuple(_coerce(x, args[0], where) for x in v)
    if tp is float:
        need(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)),
             f"{where}: expected a finite number (as the command line), got {v!r}")
        return float(v)
    if tp is int:
        need(isinstance(v, int) and not isinstance(v, bool), f"{where}: expected an integer, got {v!r}")
        need(-INT_MAX <= v <= INT_MAX, f"{where}: {v} is outside -2**63+1..2**63-1 (the command line's limit)")
        return v
    if tp is bool:
        need(isinstance(v, bool), f"{where}: expected true or false, got {v!r}")
        return v
    if tp is str:
        need(isinstance(v, str), f"{where}: expected a string, got {v!r}")
        return v
    return v


def _rank(x) -> float | None:
    """A rank as config.json holds it (2, "2", "inf") as a float; None when it is not one."""
    if isinstance(x, str):
        t = x.strip().lower()
        if t in ("inf", "infinity"):
            return math.inf
        return float(int(t)) if t.isdigit() else None
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and float(x) == int(x):
        return float(x)
    return None


def _known_keys(cls) -> set[str]:
    """What a config.json may hold for `cls`: its fields, and the values a run derives and writes beside them (the
    class's properties and constants, e.g. a task's d_in and name, and its DERIVED_KEYS, e.g. a sweep's sigma_source)."""
    props = {k for k in dir(cls) if not k.startswith("_") and (isinstance(getattr(cls, k, None), property)
                                                               or not callable(getattr(cls, k, None)))}
    return {f.name for f in dataclasses.fields(cls)} | props | set(getattr(cls, "DERIVED_KEYS", ()))


def from_dict(cls, d: dict, base=None, where: str = "config"):
    """The dataclass `cls` from a nested dict such as config.json holds (lists -> tuples, "inf" -> inf); an unknown key
    (`_known_keys`), a wrong type or a value past the command line's limits is one line.  Not cattrs or dacite: tried,
    cattrs 26.2 read true as 1, 1e30 as int, "12" as seeds (1, 2); dacite 1.9's hook errors lost the field's name."""
    import difflib
    base = cls() if base is None else base
    hints = typing.get_type_hints(cls)
    known = _known_keys(cls)
    for k in d:
        if k not in known:
            close = difflib.get_close_matches(str(k), sorted(known), n=1)
            raise UsageError(f"{where}: unknown key {k!r}" + (f" (did you mean {close[0]!r}?)" if close else
                                                              " (not an option of this command)"))
    kw = {}
    for f in dataclasses.fields(cls):
        if f.name not in d or not f.init:
            continue
        tp, v = hints[f.name], d[f.name]
        if dataclasses.is_dataclass(tp):
            need(isinstance(v, dict), f"{where}: '{f.name}' should be an object, got {v!r}")
            nested = getattr(cls, "FILE_BASES", {}).get(f.name, getattr(base, f.name))   # a class may say what an
            kw[f.name] = from_dict(tp, v, nested, f"{where}: {f.name}")                   # absent nested key meant
        elif f.name == "rank":   # ranks are written as "inf" or integers (config.json: strings, "2", "inf")
            ranks = [_rank(x) for x in v] if isinstance(v, (list, tuple)) else [None]
            need(None not in ranks and len(ranks) > 0,
                 f"{where}: 'rank' expects a list of integers or \"inf\", e.g. [2, 6, \"inf\"], got {v!r}")
            kw[f.name] = tuple(ranks)
        else:
            kw[f.name] = _coerce(v, tp, f"{where}: '{f.name}'")
    return dataclasses.replace(base, **kw)


def from_args(cls, given: dict, base=None):
    """The config `base` (default cls()) with the dotted-path options in `given` replaced."""
    base = cls() if base is None else base
    nested: dict[str, dict] = {}
    top = {}
    for k, v in given.items():
        head, _, rest = k.partition(".")
        if rest:
            nested.setdefault(head, {})[rest] = v
        else:
            top[head] = v
    for head, sub in nested.items():
        inner = getattr(base, head)
        top[head] = from_args(type(inner), sub, inner)
    return dataclasses.replace(base, **top)


def _leaves(d, prefix=""):
    """{"a.b": value} for every leaf of a nested dict."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_change(old_text: str, new: dict) -> str:
    """What a rerun says of the config.json it replaces: a config written before this version recorded some settings
    (every setting it holds the same, new ones added) is said to be that, not 'another config'."""
    try:
        old = json.loads(old_text)
    except ValueError:
        old = None
    if isinstance(old, dict):
        a, b = _leaves(old), _leaves(new)
        if set(a) < set(b) and all(a[k] == b[k] for k in a):
            added = sorted(set(b) - set(a))
            return (f"held this run's config as an older version wrote it; config.json now also records "
                    f"{', '.join(added[:6])}{', ...' if len(added) > 6 else ''}")
    return "held a run with another config; its finished cells are kept and the summary is rebuilt for this one"
