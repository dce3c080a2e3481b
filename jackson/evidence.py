"""What a claim's rule reads from a run folder, as one of three: present and valid, absent, or unreadable.

A rule never lets an absent or unreadable input decide a verdict: it names what is missing and says
"untested" (or "inconclusive" where its own power condition cannot be read).  `number` reads one value out of
a summary.json (nested keys) or a CSV cell, `per_seed` a list of per-seed values, and `missing` joins the
problems of several readings into the line the ledger prints.

    >>> number({"after": 0.75}, "after", name="the permuted arm's accuracy", lo=0, hi=1).value
    0.75
    >>> str(number({"after": float("nan")}, "after", name="the permuted arm's accuracy"))
    "the permuted arm's accuracy is unreadable (NaN)"
    >>> str(number({}, "metrics", "fof_rel", name="the relative MSE"))
    'the relative MSE is absent'
"""
from __future__ import annotations

import math
from dataclasses import dataclass

ABSENT = "absent"


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
