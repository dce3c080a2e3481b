"""What a claim's rule reads from a run folder, as one of three: present and valid, absent, or unreadable.

A rule never lets an absent or unreadable input decide a verdict: it names what is missing and says
"untested" (or "inconclusive" where its own power condition cannot be read).  `number` reads one value out of
a summary.json (nested keys) or a CSV cell, `per_seed` a list of per-seed values, and `missing` joins the
problems of several readings into the line the ledger prints.  Where the rest of the evidence would still
decide -- a seed, head, size or arm of several absent or unreadable, fewer seeds than the run states
(`seed_gaps`), a control read for some items only -- `withheld` turns the decisive verdict into "inconclusive",
its line saying what the readable evidence would read and naming each gap.  `text_of` shows a raw value beside
a verdict (never judged) as one printable line.

    >>> number({"after": 0.75}, "after", name="the permuted arm's accuracy", lo=0, hi=1).value
    0.75
    >>> str(number({"after": float("nan")}, "after", name="the permuted arm's accuracy"))
    "the permuted arm's accuracy is unreadable (NaN)"
    >>> str(number({}, "metrics", "fof_rel", name="the relative MSE"))
    'the relative MSE is absent'
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

from .verdict import INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED

ABSENT = "absent"
DECISIVE = (REPRODUCED, PARTLY, NOT_REPRODUCED)


@dataclass(frozen=True)
class Reading:
    name: str               # what the value is, in the words the ledger prints
    value: float | None     # the value when present and valid, else None
    problem: str = ""       # "" when present and valid; "absent"; or "unreadable (why)"

    @property
    def ok(self) -> bool:
        return not self.problem

    @property
    def absent(self) -> bool:
        return self.problem == ABSENT

    def __str__(self) -> str:
        return f"{self.name} is {self.problem}" if self.problem else f"{self.name} = {self.value:g}"


def _walk(source, keys: tuple):
    """source[k1][k2]...: (value, "") or (None, ABSENT) or (None, "unreadable (...)") when a level is no table."""
    v = source
    for k in keys:
        if v is None:
            return None, ABSENT
        if not isinstance(v, dict):
            return None, f"unreadable (not a table: {type(v).__name__})"
        if k not in v or v[k] is None:
            return None, ABSENT
        v = v[k]
    return v, ""


def value(raw, name: str, lo: float = -math.inf, hi: float = math.inf, whole: bool = False) -> Reading:
    """One number as written (a JSON value or a CSV cell): None or "" is absent; a bool, a word, NaN, +-inf, a
    value outside [lo, hi] or (whole=True) not a whole number is unreadable."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return Reading(name, None, ABSENT)
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return Reading(name, None, f"unreadable (a {type(raw).__name__}, not a number)")
    try:
        x = float(raw)
    except ValueError:
        return Reading(name, None, f"unreadable (not a number: {str(raw)[:20]!r})")
    if math.isnan(x):
        return Reading(name, None, "unreadable (NaN)")
    if math.isinf(x):
        return Reading(name, None, f"unreadable ({'+' if x > 0 else '-'}infinite)")
    if not lo <= x <= hi:
        return Reading(name, None, f"unreadable ({x:g} is outside [{lo:g}, {hi:g}])")
    if whole and x != int(x):
        return Reading(name, None, f"unreadable ({x:g} is not a whole number)")
    return Reading(name, int(x) if whole else x)


def number(source, *keys, name: str, lo: float = -math.inf, hi: float = math.inf, whole: bool = False) -> Reading:
    """source[keys...] read by `value`; a missing key anywhere on the way is absent."""
    raw, problem = _walk(source, keys)
    return Reading(name, None, problem) if problem else value(raw, name, lo, hi, whole)


def per_seed(source, *keys, name: str, labels: list | None = None, lo: float = -math.inf,
             hi: float = math.inf) -> tuple[list[Reading], str]:
    """A per-seed list at source[keys...]: (one Reading per seed, named 'NAME, seed LABEL'; the list's problem).
    The problem is "" when the list is there and has one entry per label (labels: the folder's own seeds, None:
    as many as the list holds); else absent or unreadable, with no readings."""
    raw, problem = _walk(source, keys)
    if problem:
        return [], f"{name} (per seed) is {problem}"
    if not isinstance(raw, list):
        return [], f"{name} (per seed) is unreadable (a {type(raw).__name__}, not a list)"
    if not raw:
        return [], f"{name} (per seed) is {ABSENT}"
    if labels is not None and len(labels) != len(raw):
        return [], f"{name} (per seed) is unreadable ({len(raw)} values for the folder's {len(labels)} seeds)"
    labels = list(range(len(raw))) if labels is None else labels
    return [value(x, f"{name}, seed {s}", lo, hi) for s, x in zip(labels, raw)], ""


def missing(readings) -> str:
    """'A is absent; B is unreadable (NaN)' for the readings that are not present and valid; "" when all are."""
    return "; ".join(str(r) for r in readings if not r.ok)


def withheld(verdict: str, text: str, gaps) -> tuple[str, str]:
    """(verdict, text) of a rule once the gaps in its evidence are named (each a line: 'seed 2: x is unreadable
    (NaN)', 'results.csv has no row for seed 1', ...).  No gap: unchanged.  A decisive verdict read from the rest
    becomes inconclusive: "would read partly (TEXT), but GAPS"; an inconclusive or untested one keeps its word,
    and the gaps follow its text.

        >>> withheld("reproduced", "3 of 3 heads", ["head 4: exponent is absent"])
        ('inconclusive', 'would read reproduced (3 of 3 heads), but head 4: exponent is absent')
    """
    gaps = [g for g in gaps if g]
    if not gaps:
        return verdict, text
    why = "; ".join(gaps)
    if verdict in DECISIVE:
        return INCONCLUSIVE, f"would read {verdict} ({text}), but {why}"
    return verdict, f"{text}; also absent or unreadable: {why}"


def label(raw) -> str | None:
    """A seed's (or an init's) label as written: 0, 0.0, "0" and " 0 " are "0"; another word is kept, stripped;
    None when absent or unreadable (empty, NaN, inf, a bool, a list, a control character)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)) or (isinstance(raw, str) and text_of(raw) != raw):
        return None
    s = raw.strip() if isinstance(raw, str) else raw
    try:
        x = float(s)
    except ValueError:
        return s or None
    if not math.isfinite(x):
        return None
    return str(int(x)) if x == int(x) else str(s)


def seed_gaps(stated, found, what: str, where: str = "config.json's seeds") -> list[str]:
    """What the run's own seeds (`stated`: a list of labels, or a count) say is missing from `found` (the labels
    that hold `what`): one line, 'no WHAT for seed 2 (WHERE)'; or that `stated` is unreadable.  [] when nothing is
    missing, and when the run states no seeds (None).

        >>> seed_gaps([0, 1, 2], ["0", "1"], "row in results.csv")
        ["no row in results.csv for seed 2 (config.json's seeds)"]
    """
    if stated is None:
        return []
    found = {label(x) for x in found} - {None}
    if isinstance(stated, int) and not isinstance(stated, bool) and stated >= 0:
        return [] if len(found) >= stated else [f"no {what} for {stated - len(found)} of the {stated} seeds ({where})"]
    labels = [label(x) for x in stated] if isinstance(stated, list) else None
    if not labels or None in labels:
        return [f"{where} is unreadable ({text_of(stated, 30)}): whether every seed has {what} cannot be read"]
    lack = [s for s in dict.fromkeys(labels) if s not in found]
    return [f"no {what} for seed{'s' if len(lack) != 1 else ''} {', '.join(lack)} ({where})"] if lack else []


def text_of(raw, n: int = 60) -> str:
    """A raw value shown beside a verdict, never judged: its text cut to n characters, each control, format or
    line-separator character a space (the ledger refuses a line that holds one)."""
    s = raw if isinstance(raw, str) else repr(raw)
    s = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") else ch for ch in s[:n + 1])
    return s if len(s) <= n else s[:n - 3] + "..."
