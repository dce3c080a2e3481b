"""Verdicts: what a claim's rule reads, what it returns, and where the rules are found.

A claim of a paper (`Claim`, read from a claims file by jackson.lab_report.claim_files) is judged by a
*rule*: one small function `judge(claim, run) -> Outcome | None`, registered with its text, the reports/
section whose folders it reads and the parameters it takes by the `rule` decorator just above it.  It
reads one run folder's own files (`Run`: summary.json, results.csv, heads.csv, ...) and returns None
when the folder does not hold the claim's quantities.

Each experiment owns its rules, beside its code (jackson/rate_sweep/rules.py, jackson/app_b/rules.py,
rnn_compare/rules.py, vit_probe/rules.py, cot_dp/rules.py), and declares the module under the entry-point
group `jackson_lab.rules` in pyproject.toml.  `rules()` imports every module of that group, so the report
finds the rules without importing any experiment, and a researcher's own package adds rules the same way
(docs/claims.md).  Rule modules use the standard library, numpy and this module only: the report never
loads torch.

Each outcome carries its headline number (`value`, what it is: `quantity`) with an interval (`lo`, `hi`) and
says in `interval` what kind it is (a range over seeds, a bootstrap over seeds, +- 1.96 s.e., ...) or, when there
is none, "none: why" (1 seed, no per-seed values), so a reader of claims.csv never has to guess; `bracket` is the
same in two or three words for the page and claims.tex (BRACKETS: a confidence interval, a range over seeds, a
range over pairs of seeds or over heads), set by `seed_range` and `seed_bootstrap` or read from the interval's text.

A rule is code the lab did not necessarily write (a researcher's package adds its own), so the ledger calls it
through `call_rule`: a rule that raises, exits, recurses without end, does not return within RULE_DEADLINE_S
seconds, or returns anything but an `Outcome` (or None) with one of the lab's verdict words, is a `RuleFailed`
naming the rule and what happened; the ledger marks
the claim FAILED (a status beside the verdicts, counted with them: STATUSES) and jackson-report exits non-zero.

    >>> sorted(VERDICTS)
    ['inconclusive', 'not applicable', 'not reproduced', 'partly', 'reproduced', 'untested']
"""
from __future__ import annotations

import csv
import gzip
import io
import itertools
import math
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable

from . import budget
from .config import UsageError, loads_json, read_capped
from .runfolder import refused, table_path

REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
INCONCLUSIVE = "inconclusive"     # the folder holds the quantities, but its own reference says they could not show the effect
UNTESTED, NOT_APPLICABLE = "untested", "not applicable"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, UNTESTED, NOT_APPLICABLE)
FAILED = "failed"                  # not a verdict: the claim's rule did not do its job (call_rule); no rule returns it
STATUSES = VERDICTS + (FAILED,)    # what a ledger row may say; the counts of a ledger are over these and sum to its rows
PAPER, LAB = "paper", "lab"        # whose claim: the paper's own, or a variant this lab added (a claims file's `origin`)
MAX_TABLE_CHARS = 256 * 2 ** 20    # a run folder's CSV read by a rule: at most this much text (the largest written: ~10 MB)
ENTRY_POINTS = "jackson_lab.rules"   # the entry-point group that names the modules holding rules


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str              # "Jiang & Li" | "Yang et al." | a researcher's own
    where: str              # where in the paper
    text: str               # the claim in words
    paper_value: str        # as the paper states it
    kind: str               # the rule that judges it (a key of KINDS)
    command: str            # the command that would test it ("" : none in this lab)
    params: tuple = ()      # (name, value) pairs the rule reads: alpha, rank, table, task, ...
    not_testable: str = ""  # why no command of this lab can test it ("": one can); the verdict is then not applicable
    folders: tuple = ()     # glob patterns of run folders under the root that may test it (): the rule's section
    origin: str = PAPER     # PAPER: a claim the paper makes; LAB: a variant this lab added (counted apart)

    def __post_init__(self):
        if self.not_testable and self.command:
            raise ValueError(f"{self.id}: names a command, so it cannot declare that no command tests it")

    @property
    def p(self) -> dict:
        return dict(self.params)


# ---- the checks of a rule's parameters: each returns the value as the rule reads it, or raises ValueError
# ---- with what was expected ----------------------------------------------------------------------------

def positive_number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ValueError("a positive number")
    return float(v)


def finite_rank(v):
    s = str(v).strip() if isinstance(v, (int, str)) and not isinstance(v, bool) else ""
    if s.isdigit() and int(s) >= 1:
        return str(int(s))
    raise ValueError("a finite rank: a whole number >= 1 (the rate rule takes rank inf)")


def one_of(*choices: str) -> Callable:
    def check(v):
        if v not in choices:
            raise ValueError("one of " + ", ".join(choices))
        return v
    return check


# ---- run folders ----------------------------------------------------------------------------------------

class UnreadableEvidence(ValueError):
    """A run folder's file that a rule cannot read (too large): the ledger lists the folder as unreadable for the
    claim, and a claim no other folder tests is untested, naming it."""


def _read_json(p: Path):
    """A run folder's JSON, None when unreadable: not JSON, not UTF-8, past read_capped's size limit or nested past
    jackson.config.MAX_JSON_DEPTH (a UsageError, which is a ValueError)."""
    try:
        return loads_json(read_capped(p, "--root"), "--root", p)
    except (OSError, ValueError):
        return None


def _walled(folder: Path, name: str, seen: dict) -> Path | None:
    """folder/name when a rule may read it (jackson.runfolder.refused: inside the folder, links followed, a regular
    file); else None, and why is noted in `seen` (the Run's `refused`) when the name is there at all."""
    p = folder / name
    why = refused(folder, p)
    if why and why != "missing":
        seen[name] = why
    elif why and os.path.lexists(p):
        seen[name] = "a dangling or unreadable link"
    return None if why else p


@dataclass
class Run:
    """One run folder under the report root, as the ledger reads it."""
    folder: str                 # relative to the root, with /
    path: Path
    config: dict
    summary: dict | None        # summary.json (None: missing or unreadable)
    command: str                # command.txt, else the summary's command
    left_out: str               # why it never feeds a verdict ("" when it may)
    refused: dict = field(default_factory=dict)   # name -> why a file of the folder was not read (outside the
                                                  # folder, a link out of it, a FIFO, ...): read as absent

    @property
    def section(self) -> str:
        return self.folder.split("/")[0]

    def table(self, name: str) -> list[dict]:
        """Rows of a CSV in the folder (values as strings), `name` or its compressed `name.gz`
        (jackson.runfolder.table_path); [] when it is not there or unreadable.  A table that decompresses to more
        than MAX_TABLE_CHARS is an UnreadableEvidence (the ledger lists the folder as unreadable for the rule).
        A table outside the folder (a link out of it, a name that climbs) or not a regular file (a FIFO) is not
        opened: [] (absent), and `refused` names it."""
        path = table_path(self.path, name)
        if _walled(self.path, os.path.relpath(path, self.path), self.refused) is None:
            return []
        try:
            with (gzip.open(path, "rt", newline="") if path.name.endswith(".gz") else open(path, newline="")) as fh:
                text = fh.read(MAX_TABLE_CHARS + 1)
        except (OSError, EOFError, UnicodeDecodeError):
            return []
        if len(text) > MAX_TABLE_CHARS:
            raise UnreadableEvidence(f"{path.name} holds more than {MAX_TABLE_CHARS:,} characters")
        return list(csv.DictReader(io.StringIO(text)))

    def seeds(self) -> int | None:
        s = self.config.get("seeds", self.config.get("train", {}).get("seeds"))
        if isinstance(s, list):
            return len(s)
        return s if isinstance(s, int) and not isinstance(s, bool) and s >= 0 else None


def _left_out(path: Path, config: dict, summary, command: str, seen: dict | None = None) -> str:
    commands = command.split() + str((summary or {}).get("command", "")).split()
    if (seen or {}).get("summary.json"):
        return f"summary.json not read ({seen['summary.json']})"
    if config.get("quick") is True or "--quick" in commands:
        return "quick run"
    if (path / "SUPERSEDED.md").exists():
        return "superseded"
    if summary is None:
        if (path / "summary.json").exists():
            return "unreadable summary.json"
        # a grid that runs over several sessions commits its finished cells as it goes: say how far it is
        n = sum(1 for d in (path / "cells").glob("*") if d.is_dir() and not d.name.startswith(".")) \
            if (path / "cells").is_dir() else 0
        return "unfinished: no summary.json" + (f"; {n} cell{'s' if n != 1 else ''} finished so far" if n else "")
    made_by = str(summary.get("command", "")).strip()
    if made_by and command and made_by != command:
        # a later command runs into the folder (a grid run in pieces, then whole): its summary is not written
        # until that command ends, and the one there is of the earlier command's cells alone
        return "unfinished: its summary is of an earlier command, not of command.txt's"
    return ""


def find_runs(root: Path) -> list[Run]:
    """Every run folder under root (a folder with config.json or summary.json), sorted by folder."""
    runs = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("cells", "checkpoints") and not d.startswith("."))
        if "config.json" not in filenames and "summary.json" not in filenames:
            continue
        path = Path(dirpath)
        if path == Path(root):
            continue
        seen: dict = {}     # what the wall refused: read as absent (jackson.runfolder.refused)
        p = _walled(path, "config.json", seen)
        config = _read_json(p) if p else {}
        config = config if isinstance(config, dict) else {}
        p = _walled(path, "summary.json", seen)
        summary = _read_json(p) if p else None
        summary = summary if isinstance(summary, dict) else None
        p = _walled(path, "command.txt", seen)
        try:
            lines = read_capped(p, "--root").strip().splitlines() if p else []
        except (OSError, ValueError):
            lines = []
        command = lines[0].strip() if lines else str((summary or {}).get("command", ""))
        runs.append(Run(Path(os.path.relpath(path, root)).as_posix(), path, config, summary, command,
                        _left_out(path, config, summary, command, seen), seen))
    return sorted(runs, key=lambda r: r.folder)


# ---- claims, kinds, outcomes ----------------------------------------------------------------------------

@dataclass
class Outcome:
    verdict: str
    measured: str                   # words and numbers, as read or computed from the folder's files
    n_seeds: int | None = None
    value: float | None = None      # the headline number (what it is: `quantity`), with its interval
    lo: float | None = None
    hi: float | None = None
    quantity: str = ""
    tiebreak: tuple = ()            # the kind's own order between folders with as many seeds (smaller first)
    interval: str = ""              # what lo, hi are (e.g. "range over 3 seeds: ..."), or "none: why" when blank
    bracket: str = ""               # lo, hi in a few words (BRACKETS); "" : from `interval` (bracket_of)

    def __post_init__(self):
        if not self.bracket and isinstance(self.interval, str):
            self.bracket = bracket_of(self.interval, self.lo, self.hi)


# what a verdict read from fits that no run with twice the steps has checked carries (jackson/rate_sweep/doubling.py's
# rule; the ledger counts such verdicts per paper)
NOT_CHECKED_NOTE = "fits not checked by training on"
ONE_SEED = "none: 1 seed"
CI95, SEED_RANGE, PAIR_RANGE, HEAD_RANGE = "95% CI", "seed range", "seed-pair range", "head range"
UNLABELLED = "range, kind not stated"
BRACKETS = {CI95: "a 95% confidence interval (a bootstrap over seeds, or a normal interval from standard errors)",
            SEED_RANGE: "the smallest and largest value over the seeds",
            PAIR_RANGE: "the smallest and largest ratio over every pair of one arm's seed and the other's",
            HEAD_RANGE: "the smallest and largest value over the heads of one model (one seed)",
            UNLABELLED: "the rule's interval text does not say which kind (claims.csv gives the text)"}


class Interval(str):
    """An interval's text (Outcome.interval) that knows its bracket (BRACKETS): what seed_range and seed_bootstrap
    return, so an outcome built from them is labelled without a rule saying so."""
    bracket: str = ""

    def __new__(cls, text: str, bracket: str):
        self = super().__new__(cls, text)
        self.bracket = bracket
        return self


def bracket_of(interval: str, lo, hi) -> str:
    """The bracket kind of an outcome's (lo, hi) (BRACKETS), "" when it has none: the Interval's own where
    seed_range or seed_bootstrap made it, else read from the words of a text a rule wrote by hand."""
    if lo is None or hi is None:
        return ""
    if isinstance(interval, Interval) and interval.bracket:
        return interval.bracket
    t = interval.lower()
    if any(w in t for w in ("bootstrap", "normal interval", "standard error", "confidence")):
        return CI95 if "95%" in t or "1.96" in t else UNLABELLED
    if "pair" in t and "range" in t:
        return PAIR_RANGE
    if "range over" in t and "heads" in t:
        return HEAD_RANGE
    if "range over" in t and "seeds" in t:
        return SEED_RANGE
    return UNLABELLED


def seed_range(per_seed: list[float], what: str) -> tuple[float | None, float | None, str]:
    """(lo, hi, interval) of a headline value from its per-seed values: their min and max when there are
    >= 2 seeds; blank with "none: 1 seed" otherwise.  `what` names the per-seed value."""
    if len(per_seed) >= 2:
        return min(per_seed), max(per_seed), Interval(f"range over {len(per_seed)} seeds (min, max) of {what}",
                                                      SEED_RANGE)
    return None, None, ONE_SEED if per_seed else "none: no per-seed values in the folder"


BOOT_EXHAUSTIVE_MAX = 20000   # resamples of the seeds enumerated when there are at most this many (8 seeds: 6435)
BOOT_DRAWS = 2000             # random resamples (random.Random(0)) beyond that


def seed_bootstrap(seeds: list[str], stat: Callable[[list[str]], float | None], what: str,
                    level: float = 0.95) -> tuple[float | None, float | None, str]:
    """(lo, hi, interval): the percentile bootstrap over seeds of a value computed from the seeds' mean
    (stat(resample) on a list of seed labels, repeats allowed; the value itself is stat(seeds)).  With few
    seeds every distinct resample is enumerated with its multinomial probability, so the interval is exact
    and needs no random numbers; with 2 or 3 seeds each resample weighs >= 1/27 and the 2.5% and 97.5%
    points are the smallest and largest value over the resamples."""
    n = len(seeds)
    if n < 2:
        return None, None, ONE_SEED if n else "none: no per-seed values in the folder"
    draws: list[tuple[float, float]] = []
    if math.comb(2 * n - 1, n) <= BOOT_EXHAUSTIVE_MAX:
        for idx in itertools.combinations_with_replacement(range(n), n):
            w = math.factorial(n) / math.prod(math.factorial(c) for c in Counter(idx).values()) / n ** n
            draws.append((stat([seeds[i] for i in idx]), w))
        how = f"exhaustive: all {len(draws)} distinct resamples of the {n} seeds with replacement, multinomial weights"
    else:
        rng = random.Random(0)
        draws = [(stat([seeds[rng.randrange(n)] for _ in range(n)]), 1.0) for _ in range(BOOT_DRAWS)]
        how = f"{BOOT_DRAWS} resamples of the {n} seeds with replacement, random.Random(0)"
    draws = sorted((x, w) for x, w in draws if x is not None and math.isfinite(x))
    if not draws:
        return None, None, "none: no resample of the seeds gives a value"
    total, q = sum(w for _, w in draws), (1 - level) / 2
    cum, points = 0.0, []
    for x, w in draws:
        cum += w
        points.append((cum, x))
    lo = next(x for c, x in points if c >= q * total * (1 - 1e-12))
    hi = next(x for c, x in points if c >= (1 - q) * total * (1 - 1e-12))
    return lo, hi, Interval(f"{level:.0%} bootstrap over seeds ({how}; {q:.1%} and {1 - q:.1%} points) of {what}",
                            CI95 if math.isclose(level, 0.95) else f"{level:.0%} CI")


@dataclass(frozen=True)
class Kind:
    name: str
    section: str                    # the reports/ folder whose runs it reads ("" : none writes one)
    rule: str                       # the rule's text, shown in the ledger
    judge: Callable[[Claim, Run], Outcome | None]
    params: dict = field(default_factory=dict)   # name -> (required, check): what a claim may give it
    module: str = ""                # where the rule is defined


KINDS: dict[str, Kind] = {}


def rule(name: str, section: str, text: str, params: dict | None = None):
    """Register a rule function under `name`, with the text the ledger shows for it, the reports/ section
    whose folders it reads and its parameters (name -> (required, check); a check from this module, or any
    function that returns the value or raises ValueError saying what it expected)."""
    def register(fn):
        old = KINDS.get(name)
        if old is not None and old.module != fn.__module__:
            raise UsageError(f"rule {name!r} is defined twice: in {old.module} and in {fn.__module__}")
        KINDS[name] = Kind(name, section, " ".join(text.split()), fn, dict(params or {}), fn.__module__)
        return fn
    return register


def fmt_g(x, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def fmt_f(x, digits: int = 2, sign: bool = False) -> str:
    return "n/a" if x is None else (f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}")


def verdict_of(parts: list[bool]) -> str:
    """All parts hold: reproduced; none: not reproduced; some: partly."""
    return REPRODUCED if all(parts) else NOT_REPRODUCED if not any(parts) else PARTLY



def same(a, b) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9)
    except (TypeError, ValueError):
        return False



def rules() -> dict[str, Kind]:
    """Every registered rule, by name: the modules of the `jackson_lab.rules` entry-point group imported (once;
    a module registers its rules as it is imported).  A module that fails to import is a UsageError naming it."""
    for ep in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        if ep.value in _LOADED:
            continue
        try:
            ep.load()
        except (Exception, SystemExit) as e:      # a third-party rules module: say which one, whatever it raised
            if isinstance(e, SystemExit):
                raise UsageError(f"rules module {ep.value!r} (entry point {ep.name!r} of {ENTRY_POINTS}) called "
                                 f"sys.exit({_shown(e.code)}) as it was imported") from None
            raise UsageError(f"rules module {ep.value!r} (entry point {ep.name!r} of {ENTRY_POINTS}) does not "
                             f"import: {type(e).__name__}: {_shown(str(e), 200)[1:-1]}") from None
        _LOADED.add(ep.value)
    return KINDS


_LOADED: set[str] = set()


# ---- a rule called in a box -----------------------------------------------------------------------------

class RuleFailed(Exception):
    """A rule that did not do its job on a folder (call_rule): the message names the rule, its module, what
    happened and the folder, in one line."""


RULE_DEADLINE_S = 10.0     # one rule on one folder returns within this many seconds (the lab's take milliseconds)


def _shown(v, n: int = 80) -> str:
    """A value a rule raised or returned, as one short printable line (reprlib: bounded for deep or long values)."""
    import reprlib
    r = reprlib.Repr()
    r.maxstring = r.maxother = r.maxlong = n
    r.maxlevel = 3
    return r.repr(v)


def printable(text: str) -> bool:
    """No control, format or line-separator character (NUL, ESC, a bidi override, U+2028, ...) in text."""
    import unicodedata
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") for ch in text)


def _bad_outcome(out) -> str:
    """What is wrong with what a rule returned ("" : nothing, an Outcome the ledger can write)."""
    if not isinstance(out, Outcome):
        return f"returned {type(out).__name__} {_shown(out, 40)}, not an Outcome (or None)"
    if not isinstance(out.verdict, str) or out.verdict not in VERDICTS:
        return f"returned the verdict {_shown(out.verdict, 40)}, not one of the lab's: {', '.join(VERDICTS)}"
    for name in ("measured", "quantity", "interval", "bracket"):
        v = getattr(out, name)
        if not isinstance(v, str):
            return f"returned an Outcome whose {name} is {type(v).__name__} {_shown(v, 40)}, not text"
        if not printable(v):
            return f"returned an Outcome whose {name} holds a control character: {_shown(v, 40)}"
    for name in ("value", "lo", "hi"):
        v = getattr(out, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            return f"returned an Outcome whose {name} is {type(v).__name__} {_shown(v, 40)}, not a number or None"
    if out.n_seeds is not None and (isinstance(out.n_seeds, bool) or not isinstance(out.n_seeds, int)
                                    or out.n_seeds < 0):
        return f"returned an Outcome whose n_seeds is {_shown(out.n_seeds, 40)}, not a count or None"
    if not isinstance(out.tiebreak, tuple):
        return f"returned an Outcome whose tiebreak is {type(out.tiebreak).__name__}, not a tuple"
    return ""


def call_rule(kind: Kind, claim: Claim, run: Run) -> Outcome | None:
    """kind's rule on one folder, contained: its Outcome, or None when the folder does not hold the claim's
    quantities.  An UnreadableEvidence passes on (the folder's file, not the rule, is at fault).  Anything else
    the rule does instead -- raise, call sys.exit, recurse without end, return what is not an Outcome or None, a
    verdict word outside VERDICTS, fields of the wrong type, or not return within RULE_DEADLINE_S seconds -- is a
    RuleFailed of one line: "rule 'name' (module) <what happened> on <folder>/".  Ctrl-C and SIGTERM pass on."""
    who = f"rule {kind.name!r} ({kind.module or getattr(kind.judge, '__module__', '?')})"
    deadline = RULE_DEADLINE_S
    try:
        with budget.deadline(deadline):
            out = kind.judge(claim, run)
    except budget.Deadline:
        what = f"did not return within {deadline:g} s"
    except UnreadableEvidence:
        raise
    except RecursionError:
        what = "recursed without end (RecursionError)"
    except SystemExit as e:
        what = f"called sys.exit({_shown(e.code, 40)})"
    except Exception as e:
        what = f"raised {type(e).__name__}: {_shown(str(e), 120)[1:-1]}" if str(e) else f"raised {type(e).__name__}"
    else:
        if out is None:
            return None
        what = _bad_outcome(out)
        if not what:
            return out
    raise RuleFailed(f"{who} {what} on {run.folder}/")


# ---- claims no command writes a folder for yet ---------------------------------------------------------

@rule("no_run", "", """The claim's entry declares why no command of this lab can test it (for example, none trains
a translation model): not applicable, and the row says why. Were a command added, the entry would name it
and the claim would be untested until a folder of that command tests it.""")
def no_run(claim: Claim, run: Run) -> Outcome | None:
    return None

