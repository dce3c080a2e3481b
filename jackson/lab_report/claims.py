"""The claims ledger (issue 15): every quantitative claim of the two papers, the run folder that tests it,
and a verdict computed by a stated rule, never typed.

`CLAIMS` declares the claims: an id, the paper, where in it, the claim in words, the paper's value, the
kind of rule that judges it and the command that would test it.  A kind is one small function
`judge(claim, run) -> Outcome | None`, registered with its rule's text by the `kind` decorator just above
it; it reads one run folder's own files (summary.json, results.csv, heads.csv, min_gflops.csv, ...) and
returns None when the folder does not hold the claim's quantities.  `ledger(root)` judges every claim
on every run folder under root:

  * a folder never feeds a verdict when it is a quick or smoke run (config.json "quick": true, or
    --quick in its command), superseded (SUPERSEDED.md) or unfinished (no summary.json, or one a command
    other than command.txt's wrote: a later command is still running into the folder); it is listed
    beside the claims it would test, with the reason;
  * of the folders that hold a claim's quantities, the preferred one (PREFERENCE) gives the row; the
    others are listed with their own verdicts;
  * a claim no folder tests is "untested" and names the command that would test it, unless its entry
    declares why no command of this lab can test it (`Claim.not_testable`): then it is "not applicable"
    and the row says why (the `no_run` kind's rule).

Each outcome carries its headline number (`value`, what it is: `quantity`) with an interval (`lo`, `hi`) and
says in `interval` what kind it is (a range over seeds, a bootstrap over seeds, +- 1.96 s.e., ...) or, when there
is none, "none: why" (1 seed, no per-seed values), so a reader of claims.csv never has to guess.

`jackson-report` (jackson.lab_report.page.build_report) puts the ledger first in index.md and index.html and
writes claims.csv (one row per claim, `csv_text`).  Standard library only: the report never loads torch.

    >>> sorted(VERDICTS)
    ['inconclusive', 'not applicable', 'not reproduced', 'partly', 'reproduced', 'untested']
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import random
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from ..config import UsageError
from ..rates import law_text
from .claim_files import RULE_PARAMS, Claim, lab_claims, match_folders

REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
INCONCLUSIVE = "inconclusive"     # the folder holds the quantities, but its own reference says they could not show the effect
UNTESTED, NOT_APPLICABLE = "untested", "not applicable"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, UNTESTED, NOT_APPLICABLE)

# ---- the thresholds of the rules (each rule's text below quotes them) ------------------------------
# Tables 2-3 of Jiang & Li as printed (rnn_compare.experiment.PAPER holds the same numbers; a test checks)
PAPER_MSE = {("exp", "original", "rnn"): 1.02e-7, ("exp", "permuted", "rnn"): 3.57e-2,
             ("exp", "mixed", "rnn"): 1.58e-7, ("exp", "original", "transformer"): 2.18e-5,
             ("exp", "permuted", "transformer"): 2.51e-5, ("exp", "mixed", "transformer"): 2.39e-4,
             ("uniform", "original", "rnn"): 5.58, ("uniform", "permuted", "rnn"): 5.24,
             ("uniform", "original", "transformer"): 5.43e-4, ("uniform", "permuted", "transformer"): 5.36e-4}
PAPER_RATIO = {(k, a, m): PAPER_MSE[(k, a, m)] / PAPER_MSE[(k, "original", m)]
               for (k, a, m) in PAPER_MSE if a != "original"}
PAPER_UNAFFECTED_MAX = PAPER_RATIO[("exp", "mixed", "rnn")]      # the largest ratio the paper prints unbolded
PAPER_DROP_MIN = PAPER_RATIO[("exp", "mixed", "transformer")]    # the smallest one it prints bold
PAPER_GAP = min(PAPER_MSE[("uniform", a, "rnn")] / PAPER_MSE[("uniform", a, "transformer")]
                for a in ("original", "permuted"))
EXPONENT_TOL = 0.25    # exponents agree when they differ by <= this: over m_h 1..8 it moves e(8)/e(1) by 8^0.25 = 1.7x
KNEE_MIN = 10.0        # an order of magnitude: the finite-rank knee (the sweep's own KNEE_MIN, jackson/rate_sweep/results.py)
PAPER_FILTER_LENGTH = 5  # App. C: "a randomly generated length 5 filter" (rnn-compare's --filter-length default)
DROP_FACTOR = 2.0      # "performance drop": just above the largest ratio the paper calls unaffected (PAPER_UNAFFECTED_MAX)
QUALITY_FACTOR = 3.0   # Tables 2-3: a fit counts as trained to the paper's quality within 3x of the paper's MSE on the original target (issue 17's bar)
GAP_FACTOR = 10.0      # "hard to learn for one model, learnable for the other": an order of magnitude between them
SUPPORT_MIN = 0.9      # App. B: attention mass on the target's support, per seed
FOF_REL_MAX = 0.01     # App. B: F_hat∘f_hat against F∘f, relative MSE, per seed
DECAY_MAX = -0.5       # Fig. 2: sigma_i ~ i^-alpha with alpha > 1/2 is what Theorem 4.1 needs for a decaying rate
SETTLED_L2 = 0.1       # Fig. 3a: successive normalised spectra within 10% (relative L2) count as converged (the sweep's own SETTLED_L2, vit_probe/run_sweep_mh.py)
PAPER_VIT_DROP = 0.02  # Table 1: the paper calls 0.98 -> 0.96 unaffected
CIFAR10_TEST = 10000   # vit-probe permute scores the whole CIFAR-10 test split (its report.json says so)
Z95 = 1.96             # two-sided 95% normal quantile
PAPER_GAMMA = 0.27     # Fig. 3b: 1 / m_h^0.27 + 1.05

PREFERENCE = ("Preferred folder where several test a claim: one that tests it (an inconclusive one included: a "
              "less apt folder does not overrule the best folder's own reference; a folder whose grid cannot test it is "
              "untested, one outside the claim's setting not applicable), then the most seeds, then the kind's own "
              "order (its rule says which), then the folder name. Never used: quick or smoke runs (config.json "
              "\"quick\": true, or --quick in the command), superseded folders (SUPERSEDED.md), unfinished "
              "folders (no summary.json, or a summary.json of another command than command.txt's: a later "
              "command, such as a whole grid after one of its pieces, has not ended); they are listed under "
              "other folders with the reason.")


# ---- run folders --------------------------------------------------------------------------------------

def _read_json(p: Path):
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


@dataclass
class Run:
    """One run folder under the report root, as the ledger reads it."""
    folder: str                 # relative to the root, with /
    path: Path
    config: dict
    summary: dict | None        # summary.json (None: missing or unreadable)
    command: str                # command.txt, else the summary's command
    left_out: str               # why it never feeds a verdict ("" when it may)

    @property
    def section(self) -> str:
        return self.folder.split("/")[0]

    def table(self, name: str) -> list[dict]:
        """Rows of a CSV in the folder (values as strings); [] when it is not there."""
        try:
            with open(self.path / name, newline="") as fh:
                return list(csv.DictReader(fh))
        except OSError:
            return []

    def seeds(self) -> int | None:
        s = self.config.get("seeds", self.config.get("train", {}).get("seeds"))
        if isinstance(s, list):
            return len(s)
        return s if isinstance(s, int) and not isinstance(s, bool) else None


def _left_out(path: Path, config: dict, summary, command: str) -> str:
    commands = command.split() + str((summary or {}).get("command", "")).split()
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
        config = _read_json(path / "config.json") if "config.json" in filenames else {}
        config = config if isinstance(config, dict) else {}
        summary = _read_json(path / "summary.json") if "summary.json" in filenames else None
        summary = summary if isinstance(summary, dict) else None
        lines = (path / "command.txt").read_text().strip().splitlines() if "command.txt" in filenames else []
        command = lines[0].strip() if lines else str((summary or {}).get("command", ""))
        runs.append(Run(Path(os.path.relpath(path, root)).as_posix(), path, config, summary, command,
                        _left_out(path, config, summary, command)))
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


ONE_SEED = "none: 1 seed"


def _seed_range(per_seed: list[float], what: str) -> tuple[float | None, float | None, str]:
    """(lo, hi, interval) of a headline value from its per-seed values: their min and max when there are
    >= 2 seeds; blank with "none: 1 seed" otherwise.  `what` names the per-seed value."""
    if len(per_seed) >= 2:
        return min(per_seed), max(per_seed), f"range over {len(per_seed)} seeds (min, max) of {what}"
    return None, None, ONE_SEED if per_seed else "none: no per-seed values in the folder"


BOOT_EXHAUSTIVE_MAX = 20000   # resamples of the seeds enumerated when there are at most this many (8 seeds: 6435)
BOOT_DRAWS = 2000             # random resamples (random.Random(0)) beyond that


def _seed_bootstrap(seeds: list[str], stat: Callable[[list[str]], float | None], what: str,
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
    return lo, hi, f"{level:.0%} bootstrap over seeds ({how}; {q:.1%} and {1 - q:.1%} points) of {what}"


@dataclass(frozen=True)
class Kind:
    name: str
    section: str                    # the reports/ folder whose runs it reads ("" : none writes one)
    rule: str                       # the rule's text, shown in the ledger
    judge: Callable[[Claim, Run], Outcome | None]


KINDS: dict[str, Kind] = {}


def kind(name: str, section: str, rule: str):
    """Register a rule function under `name`, with the text the ledger shows for it."""
    def register(fn):
        KINDS[name] = Kind(name, section, " ".join(rule.split()), fn)
        return fn
    return register


def _g(x, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _f(x, digits: int = 2, sign: bool = False) -> str:
    return "n/a" if x is None else (f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}")


def _verdict_of(parts: list[bool]) -> str:
    """All parts hold: reproduced; none: not reproduced; some: partly."""
    return REPRODUCED if all(parts) else NOT_REPRODUCED if not any(parts) else PARTLY


# ---- Theorem 4.1 and Fig. 1 (jackson-sweep folders) --------------------------------------------------------

def _same(a, b) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9)
    except (TypeError, ValueError):
        return False


def _targets(run: Run) -> list[dict]:
    return [t for t in (run.summary or {}).get("targets", []) if isinstance(t, dict)]


def _widest(ts: list[dict]) -> dict | None:
    """The target with the largest m_FF (Theorem 4.1 assumes m_FF large enough)."""
    return max(ts, key=lambda t: t.get("m_ff") or 0) if ts else None


def _ffn_matches(t: dict, ffn: str) -> bool:
    """A target fitted with the FFN class `ffn` (the paper's dense network: gelu, the default; given features count
    there as before), for the full target (a --term ff run measures the feed-forward term, not Theorem 4.1's error)."""
    if t.get("term", "full") != "full":
        return False
    if ffn == "gelu":
        return t.get("activation", "gelu") == "gelu"
    return t.get("activation", "gelu") == ffn and t.get("features", "learned") == "learned"


def _target(run: Run, alpha, rank: str, ffn: str = "gelu") -> dict | None:
    return _widest([t for t in _targets(run) if _same(t.get("alpha"), alpha) and str(t.get("rank")) == rank
                    and _ffn_matches(t, ffn)])


def _features(run: Run, t: dict) -> str:
    return str(t.get("features") or run.summary.get("features") or run.config.get("model", {}).get("features") or "learned")


def _setting(run: Run, t: dict) -> str:
    ffn = t.get("activation", "gelu")
    cls = f" ({ffn} FFN, first-layer init scale {t.get('in_scale', 3.0):g})" if ffn != "gelu" else ""
    return f"{_features(run, t)} features{cls}, {run.config.get('construction', 'paper')} construction"


def _not_a_test(run: Run, t: dict) -> str:
    """Why this target cannot test Theorem 4.1 ('' when it can)."""
    att = t.get("attention") or run.summary.get("attention") or "softmax"
    if att != "softmax":
        return f"{att} attention (Theorem 4.1's model is softmax attention)"
    deg = t.get("degenerate") or {}
    if deg.get("flag"):
        return deg.get("why") or "degenerate target or uninformative fit"
    law = (t.get("explicit") or t.get("kernel") or {}).get("law") or {}
    if law.get("law") == "not a power law":
        return ("the target's sigma is not a power law (" + law_text(law) + "): Theorem 4.1's rate has no alpha to "
                "judge it by")
    return ""


def _seeds_of(run: Run, t: dict) -> int | None:
    return t.get("n_seeds") or run.seeds()


def _jackson_order(run: Run, t: dict) -> tuple:
    return (0 if _features(run, t) == "learned" else 1,)


def _jackson_target(claim: Claim, run: Run, rank: str):
    """The claim's (alpha, rank) target in a jackson-sweep run as (target, seeds, tie-break order); None when
    the run has no such target; a not-applicable Outcome when the run cannot test it (flagged target,
    non-softmax attention)."""
    t = _target(run, claim.p["alpha"], rank, claim.p.get("ffn", "gelu"))
    if t is None:
        return None
    n, order = _seeds_of(run, t), _jackson_order(run, t)
    why = _not_a_test(run, t)
    if why:
        return Outcome(NOT_APPLICABLE, why, n, tiebreak=order)
    return t, n, order


@kind("knee", "jackson", f"""Theorem 4.1, finite rank r: with m_h >= r the error can reach ~0. Reproduced when the
held-out MSE falls at least {KNEE_MIN:g}x from m_h = r - 1 to m_h = r (median over seeds of e(r-1)/e(r), the
sweep's knee check) and stays down: the median-over-seeds MSE at every m_h >= r is at least {KNEE_MIN:g}x
below that at m_h = r - 1 (at m_h >= r the rank-m_h oracle is exactly 0); partly when it falls at r but
climbs back at a larger m_h; not reproduced when it does not fall {KNEE_MIN:g}x at r. Power condition: a
{KNEE_MIN:g}x knee can show only where the rank-(r-1) oracle (what the target loses at rank r - 1) is at least
{KNEE_MIN:g}x above the trained floor (the median over m_h >= r of the median-over-seeds MSE); where it is not,
a knee that did not show is inconclusive, not a failure. Control: the oracle curve itself (its knee at r is
infinite). A degenerate target or
uninformative fit (the sweep's flags), or non-softmax attention: not applicable. Ties: the full Eq. (5)
model (features learned) before given features.""")
def knee(claim: Claim, run: Run) -> Outcome | None:
    r = int(claim.p["rank"])
    found = _jackson_target(claim, run, claim.p["rank"])
    if found is None or isinstance(found, Outcome):
        return found                      # the run has no such target, or cannot test it (not applicable)
    t, n, order = found
    ch = t.get("checks", {})
    drop, per_seed = ch.get("knee_drop"), ch.get("knee_per_seed") or []
    if drop is None:
        return None
    curve = {int(c["m_h"]): c.get("test_median", c.get("test_mse")) for c in t.get("curve", [])}
    after = [curve[m] for m in curve if m >= r and curve[m] is not None]
    before = curve.get(r - 1)
    stay = (math.inf if max(after) == 0 else before / max(after)) if after and before is not None else None
    spread = f"; per seed {_g(min(per_seed))}-{_g(max(per_seed))}" if len(per_seed) > 1 else ""
    text = (f"{_setting(run, t)}: e({r - 1})/e({r}) = {_g(drop)} (median{spread}); "
            + ((f"every m_h >= {r} stays at least {_g(stay)}x below m_h = {r - 1}" if stay >= 1 else
                f"the worst m_h >= {r} ends {_g(1 / stay)}x above m_h = {r - 1}") if stay is not None
               else "no curve: the error past r is not checked"))
    oracle = {int(c["m_h"]): c.get("oracle_mse") for c in t.get("curve", [])}.get(r - 1)
    floor = statistics.median(after) if after else None
    powered = oracle is None or floor is None or floor <= 0 or oracle >= KNEE_MIN * floor
    if oracle is not None and floor is not None and floor > 0:
        text += f"; power: rank-{r - 1} oracle {_g(oracle, 2)} is {_g(oracle / floor)}x the trained floor {_g(floor, 2)}"
    if drop < KNEE_MIN and not powered:
        v, text = INCONCLUSIVE, text + f" (< {KNEE_MIN:g}x: a {KNEE_MIN:g}x knee could not show)"
    elif drop < KNEE_MIN:
        v = NOT_REPRODUCED
    elif stay is None or stay >= KNEE_MIN:
        v = REPRODUCED
    else:
        v = PARTLY
    lo, hi, interval = _seed_range(per_seed, "the per-seed e(r-1)/e(r)")
    return Outcome(v, text, n, drop, lo, hi, "e(r-1)/e(r), median over seeds", order, interval)


@kind("rate", "jackson", f"""Theorem 4.1, rank inf: the error decays like m_h^-(2 alpha - 1) (Sec. 5.1). Reference: the
exponent of the exact POD tail sum_{{i > m_h}} sigma_i^2 (Eq. 47, the error's first-order size) fitted over the sweep's
own fit range -- it decides, because over a finite range of m_h the tail's slope is not yet the asymptotic
-(2 alpha - 1) (trace-free targets over m_h 1..8: -0.11, -0.88, -1.65 at alpha 0.55, 1, 1.5, with the tail past K = 4096 counted), and it needs no
sampling; the asymptotic exponent is shown beside it. d = measured exponent - reference, with the bootstrap 95%
interval of the measured one (seeds and held-out blocks). Reproduced when the whole interval of d lies within
+-{EXPONENT_TOL:g} (the sweep's TRACK_SLOPE: over m_h 1..8 a difference of {EXPONENT_TOL:g} moves e(8)/e(1) by
8^{EXPONENT_TOL:g} = {8 ** EXPONENT_TOL:.2g}x); partly when the interval only reaches that band; not reproduced
otherwise, steeper or shallower (an upper bound with an unknown constant is met by any falling curve, so a steeper
curve is no evidence of this rate). Power condition: inconclusive when the reference itself falls by less than
{EXPONENT_TOL:g} in exponent (a flat curve would pass the band). Control: the rank-m_h oracle's exponent, shown. A
floor is reported, not judged. Flagged targets or non-softmax attention: not applicable. Ties: features learned
before given.""")
def rate(claim: Claim, run: Run) -> Outcome | None:
    found = _jackson_target(claim, run, "inf")
    if found is None or isinstance(found, Outcome):
        return found                      # the run has no such target, or cannot test it (not applicable)
    t, n, order = found
    e = (t.get("exponents") or {}).get("test")
    if not e or e.get("slope") is None:
        return None
    asym = t.get("predicted_exponent", -(2 * float(claim.p["alpha"]) - 1))
    fit = t.get("fit_m_h") or run.summary.get("fit_range") or []
    ref = tail_exponent(t)
    which = f"exact-tail reference {_f(ref)} over m_h {fit[0]}..{fit[-1]}" if ref is not None and fit else ""
    if ref is None:
        ref, which = asym, "the asymptotic exponent (the folder's summary has no tail over its fit range)"
    s_, lo, hi = e["slope"], e.get("lo", e["slope"]), e.get("hi", e["slope"])
    if not (isinstance(lo, (int, float)) and math.isfinite(lo) and isinstance(hi, (int, float)) and math.isfinite(hi)):
        lo = hi = s_                      # a two-point fit has no interval
    d, dlo, dhi = s_ - ref, lo - ref, hi - ref
    o = ((t.get("exponents") or {}).get("oracle") or {}).get("slope")
    text = (f"{_setting(run, t)}: exponent {_f(s_)} [{_f(lo)}, {_f(hi)}]"
            + (f" over m_h {fit[0]}..{fit[-1]}" if fit else "")
            + f"; {which}, asymptotic {_f(asym)}; d = {_f(d, sign=True)} [{_f(dlo, sign=True)}, {_f(dhi, sign=True)}]"
            + (f"; rank-m_h oracle {_f(o)}" if o is not None else ""))
    tr = (t.get("checks") or {}).get("tracking") or {}
    if tr.get("floor"):
        text += f"; floor ~{_g(tr.get('floor_value'), 2)} over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]}"
    if abs(ref) <= EXPONENT_TOL:
        v, text = INCONCLUSIVE, text + f"; the reference falls by less than {EXPONENT_TOL:g} in exponent: a flat curve would pass"
    elif -EXPONENT_TOL <= dlo and dhi <= EXPONENT_TOL:
        v = REPRODUCED
    elif dlo <= EXPONENT_TOL and dhi >= -EXPONENT_TOL:
        v, text = PARTLY, text + "; the interval reaches the band"
    else:
        v, text = NOT_REPRODUCED, text + ("; steeper than the reference" if dhi < -EXPONENT_TOL
                                          else "; shallower than the reference")
    boot = (f"95% percentile bootstrap ({e.get('n_boot', '?')} resamples of the seeds, then of the held-out blocks "
            "within each drawn seed; the mean curve refitted each time: jackson.rates.bootstrap_exponent)")
    return Outcome(v, text, n, s_, lo, hi, "measured exponent", order, boot)


def tail_exponent(t: dict) -> float | None:
    """The least-squares exponent of the exact POD tail sum_{i > m_h} sigma_i^2 over the target's fit range (its summary's
    `bound` rows, Eq. 47); None where the summary has fewer than two positive tails there."""
    fit = t.get("fit_m_h") or []
    tail = {int(b["m_h"]): b.get("tail_energy") for b in t.get("bound") or []}
    ms = [m for m in fit if isinstance(tail.get(m), (int, float)) and tail[m] > 0]
    if len(ms) < 2:
        return None
    x = [math.log(m) for m in ms]
    y = [math.log(tail[m]) for m in ms]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)


def _rank_key(r: str) -> float:
    return math.inf if r == "inf" else float(r)


def _rank_comparisons(curves: dict[float, dict[str, dict[int, float]]]) -> tuple[int, int, list[str]]:
    """The rank_order rule's comparisons on curves[alpha][rank][m_h] = held-out MSE: (held, total, fails)."""
    held, total, fails = 0, 0, []
    for alpha, by_rank in sorted(curves.items()):
        rs = sorted(by_rank, key=_rank_key)
        for i, r in enumerate(rs):
            for r2 in rs[i + 1:]:
                for m in sorted(set(by_rank[r]) & set(by_rank[r2])):
                    if m < _rank_key(r2):
                        total += 1
                        if by_rank[r][m] <= by_rank[r2][m]:
                            held += 1
                        else:
                            fails.append(f"alpha {alpha:g}, r {r} vs {r2} at m_h {m}")
    return held, total, fails


def _seed_curves(run: Run, chosen: dict[float, dict[str, dict]]) -> dict[str, dict[float, dict[str, dict[int, float]]]]:
    """Each seed's own held-out MSE curves of the chosen targets (alpha -> rank -> target), from results.csv
    (one row per target, m_h and seed): seed -> alpha -> rank -> {m_h: test_mse}."""
    out: dict[str, dict[float, dict[str, dict[int, float]]]] = {}
    for row in run.table("results.csv"):
        for alpha, by_rank in chosen.items():
            t = by_rank.get(str(row.get("rank")))
            if t is None or not _same(row.get("alpha"), alpha):
                continue
            if row.get("m_ff") not in (None, "") and not _same(row["m_ff"], t.get("m_ff")):
                continue
            try:
                e = float(row["test_mse"])
            except (TypeError, ValueError):
                continue
            if math.isfinite(e):
                out.setdefault(row["seed"], {}).setdefault(alpha, {}).setdefault(str(t["rank"]), {})[int(row["m_h"])] = e
    return out


@kind("rank_order", "jackson", """Fig. 1: at a fixed m_h the error increases with the rank r of the target. For every
alpha and every pair of ranks r < r' in one folder, at every m_h < r' (where the rank-r' target cannot
be exact), the held-out MSE (mean over seeds) of rank r is at most that of rank r'. Reproduced when every
comparison holds; partly when more than half hold; not reproduced otherwise. Reference: the rank-m_h oracle,
ordered so by construction (a rank-r target loses no more than a rank-r' one at the same m_h). Power: the
share of comparisons is bootstrapped over seeds and each seed's own share is printed. Ties: features learned
before given.""")
def rank_order(claim: Claim, run: Run) -> Outcome | None:
    by_alpha: dict[float, dict[str, list]] = {}
    for t in _targets(run):
        if not _not_a_test(run, t) and _ffn_matches(t, "gelu"):
            by_alpha.setdefault(float(t["alpha"]), {}).setdefault(str(t["rank"]), []).append(t)
    chosen = {a: {r: _widest(ts) for r, ts in ranks.items()} for a, ranks in by_alpha.items() if len(ranks) >= 2}
    curves = {a: {r: {int(c["m_h"]): c["test_mse"] for c in t.get("curve", [])} for r, t in by_rank.items()}
              for a, by_rank in chosen.items()}
    held, total, fails = _rank_comparisons(curves)
    if total == 0:
        return None
    ts = [t for a in sorted(chosen) for t in chosen[a].values()]
    seeds = [_seeds_of(run, t) for t in ts]
    feats = _jackson_order(run, ts[0])
    v = REPRODUCED if held == total else PARTLY if held > total / 2 else NOT_REPRODUCED
    text = f"{held} of {total} comparisons hold" + (f"; fails: {'; '.join(fails[:3])}" + (" ..." if len(fails) > 3 else "")
                                                   if fails else "")
    n = min(s for s in seeds if s) if any(seeds) else None
    by_seed = _seed_curves(run, chosen)
    labels = sorted(by_seed, key=lambda k: (len(k), k))

    def share(resample: list[str]) -> float | None:
        """The same share on the mean curves of a resample of the seeds (results.csv)."""
        mean = {a: {r: {m: statistics.fmean(by_seed[s][a][r][m] for s in resample)
                        for m in set.intersection(*(set(by_seed[s].get(a, {}).get(r, {})) for s in resample))}
                    for r in by_rank} for a, by_rank in chosen.items()}
        h, tot, _ = _rank_comparisons(mean)
        return h / tot if tot else None

    lo, hi, interval = _seed_bootstrap(labels, share, "the same share on the mean-over-seeds held-out MSE curves "
                                                      "(results.csv)")
    if len(labels) >= 2:
        text += f"; each seed alone {', '.join(_f(share([s])) for s in labels)}"
    return Outcome(v, text, n, held / total, lo, hi, "share of comparisons that hold", feats, interval)


@kind("alpha_order", "jackson", f"""Fig. 1: the decay rates differ with alpha as -(2 alpha - 1) does: steeper for larger
alpha, by as much as the spectra differ. The rank-inf exponents of one folder (bootstrap 95% intervals); for every
pair alpha < alpha': the direction -- the exponent at alpha' below that at alpha with disjoint intervals; and the
magnitude -- the difference of the two exponents within +-{EXPONENT_TOL:g} of the difference of their references
(the exact-tail exponents over the fit range, as the rate rule; the asymptotic -2 (alpha' - alpha) where a summary
has no tail). Reproduced when every pair holds both; not reproduced when some pair is reversed with disjoint
intervals; partly otherwise (overlapping intervals, or ordered by too little or too much). Control: the references'
own differences, shown. Ties: features learned before given.""")
def alpha_order(claim: Claim, run: Run) -> Outcome | None:
    ex = {}
    for t in _targets(run):
        if str(t.get("rank")) == "inf" and not _not_a_test(run, t):
            e = (t.get("exponents") or {}).get("test")
            best = _target(run, t["alpha"], "inf")
            if e and best is t:
                ref = tail_exponent(t)
                ex[float(t["alpha"])] = (e["slope"], e.get("lo", e["slope"]), e.get("hi", e["slope"]), _seeds_of(run, t), t,
                                         ref if ref is not None else -(2 * float(t["alpha"]) - 1))
    if len(ex) < 2:
        return None
    alphas = sorted(ex)
    ordered = reversed_ = sized = 0
    gaps = []
    for i, a in enumerate(alphas):
        for b in alphas[i + 1:]:
            ordered += ex[b][2] < ex[a][1]
            reversed_ += ex[b][1] > ex[a][2]
            dm, dr = ex[b][0] - ex[a][0], ex[b][5] - ex[a][5]
            sized += abs(dm - dr) <= EXPONENT_TOL
            gaps.append(f"{a:g} -> {b:g}: {_f(dm, sign=True)} (reference {_f(dr, sign=True)})")
    pairs = len(alphas) * (len(alphas) - 1) // 2
    v = (REPRODUCED if ordered == pairs and sized == pairs else NOT_REPRODUCED if reversed_ else PARTLY)
    text = ("; ".join(f"alpha {a:g}: {_f(ex[a][0])} [{_f(ex[a][1])}, {_f(ex[a][2])}] (reference {_f(ex[a][5])}, "
                      f"asymptotic {_f(-(2 * a - 1))})" for a in alphas)
            + f"; {ordered} of {pairs} pairs ordered, {sized} of {pairs} by the reference's amount; differences "
            + ", ".join(gaps))
    seeds = [ex[a][3] for a in alphas if ex[a][3]]
    # per seed: the share of pairs ordered by that seed's own exponents (exponent_per_seed; point estimates,
    # since one seed has no bootstrap interval), for the seeds every alpha has
    per = [{str(k): v for k, v in (ex[a][4].get("exponent_per_seed") or {}).items()} for a in alphas]
    common = sorted(set.intersection(*(set(p) for p in per)), key=lambda k: (len(k), k))
    per_seed = [sum(per[j][s] < per[i][s] for i in range(len(alphas)) for j in range(i + 1, len(alphas))) / pairs
                for s in common]
    lo, hi, interval = _seed_range(per_seed, "the share of pairs ordered by each seed's own exponent (point "
                                             "estimates, exponent_per_seed; the value asks for disjoint bootstrap "
                                             "intervals, which one seed does not have)")
    if len(per_seed) >= 2:
        text += f"; per seed by point estimates {', '.join(_f(x) for x in per_seed)}"
    return Outcome(v, text, min(seeds) if seeds else None, ordered / pairs, lo, hi, "share of alpha pairs ordered",
                   _jackson_order(run, ex[alphas[0]][4]), interval)


# ---- ViT (vit-probe folders) ------------------------------------------------------------------------------

def _class_sorted(run: Run) -> bool:
    """A sweep-mh folder made before subsets were drawn stratified by class (its config.json has no
    subset_seed): its training loss and spectra come from class-sorted subsets (its summary.md says so)."""
    return "subset_seed" not in run.config


def _cap(v: str, run: Run) -> str:
    return PARTLY if v == REPRODUCED and _class_sorted(run) else v


CLASS_SORTED = ("config.json has no subset_seed: training loss and spectra from class-sorted subsets "
                "(its summary.md)")


@kind("vit_decay", "vit_probe", f"""Fig. 2: the logit matrices rho_hat(x) of a trained ViT, sampled over inputs, have
decaying singular values (a low-rank structure). Per head, the decay exponent of sigma_i in i (heads.csv, with
its bootstrap 95% interval over images). Control: the same architecture at random inits on the same images
(init_heads.csv; a random-init ViT's logits decay too, so a decay alone does not show what training did). Reproduced
when every head's whole interval lies below {DECAY_MAX:g} (sigma_i ~ i^-alpha with alpha > 1/2, what Theorem 4.1
needs for an error that decays in m_h) and lies below the steepest init exponent of its layer (training made the
decay); partly when some heads meet both, or every head decays but no faster than at init; not reproduced when
no head's interval lies below {DECAY_MAX:g}; inconclusive when the folder holds no control (decaying heads,
nothing to tell training from architecture). A folder of an untrained model is a control, not a test: untested.""")
def vit_decay(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    heads = run.table("heads.csv")
    if "violin" not in s or not heads or "m_h" in heads[0]:
        return None
    ex = [float(h["exponent"]) for h in heads]
    ok = [float(h["exponent_hi"]) < DECAY_MAX for h in heads]
    er = [float(h["erank"]) for h in heads]
    text = (f"{len(heads)} heads: decay exponent {_f(min(ex))} to {_f(max(ex))}; {sum(ok)} of {len(ok)} with the "
            f"whole 95% interval below {DECAY_MAX:g}; effective rank {_f(min(er), 1)}-{_f(max(er), 1)}; "
            f"{s.get('n_images', '?')} images, tau {s.get('tau', '?')}; one model")
    interval = (f"range over the {len(heads)} heads of one model (min, max head exponent; 1 seed, no spread over "
                "seeds)")
    trained = s.get("trained", bool(run.config.get("checkpoint") or run.config.get("pretrained")))
    if not trained:
        return Outcome(UNTESTED, "the folder probes an untrained model (no checkpoint, no pretrained weights): a "
                                 f"control, not a test of a trained ViT; {text}", 1, max(ex), min(ex), max(ex),
                       "largest (shallowest) head exponent", interval=interval)
    if "steeper_than_init" not in heads[0]:
        v = INCONCLUSIVE if any(ok) else NOT_REPRODUCED
        text += ("; no control in the folder (no init_heads.csv): a random-init ViT's logits decay too, so the decay "
                 "alone cannot say what training did")
    else:
        steeper = [str(h["steeper_than_init"]).lower() in ("true", "1") for h in heads]
        both = [a and b for a, b in zip(ok, steeper)]
        init = run.table("init_heads.csv")
        iex = [float(h["exponent"]) for h in init]
        n_init = len({h.get("init") for h in init})
        if not any(ok):
            v = NOT_REPRODUCED
        elif all(both):
            v = REPRODUCED
        else:
            v = PARTLY
        text += (f"; control: the same architecture at {n_init} random init{'s' if n_init != 1 else ''}, exponents "
                 f"{_f(min(iex)) if iex else 'n/a'} to {_f(max(iex)) if iex else 'n/a'}; training made {sum(steeper)} "
                 f"of {len(heads)} heads decay faster than every init head of their layer")
    return Outcome(v, text, 1, max(ex), min(ex), max(ex), "largest (shallowest) head exponent", interval=interval)


def _rel_l2(a: list[float], b: list[float]) -> float:
    """vit_probe.run_sweep_mh.spectrum_convergence's distance: ||a/a_1 - b/b_1|| / ||b/b_1|| over i <= len(a)."""
    k = min(len(a), len(b))
    ca, cb = [x / a[0] for x in a[:k]], [x / b[0] for x in b[:k]]
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(ca, cb))) / math.sqrt(sum(y * y for y in cb))


def _seed_spectra(run: Run, m_hs: tuple[int, ...]) -> dict[str, dict[int, list[float]]] | None:
    """Each seed's mean spectrum (spectra.csv's seed column; mean over images of sigma_i, i = 1, 2, ...) at the
    given m_h, on the layer and head the sweep compares (config.json spectra_layer, spectra_head): seed -> m_h ->
    [sigma_1, ...].  None when spectra.csv has no seed column."""
    rows = run.table("spectra.csv")
    if not rows or "seed" not in rows[0]:
        return None
    layer = int(run.config.get("spectra_layer", -1)) % (max(int(r["layer"]) for r in rows) + 1)
    head = int(run.config.get("spectra_head", 0))
    spec: dict[str, dict[int, dict[int, float]]] = {}
    for r in rows:
        if int(r["layer"]) == layer and int(r["head"]) == head and int(r["m_h"]) in m_hs:
            spec.setdefault(r["seed"], {}).setdefault(int(r["m_h"]), {})[int(r["i"])] = float(r["mean"])
    return {seed: {m: [v[i] for i in sorted(v)] for m, v in by_m.items()} for seed, by_m in spec.items()
            if set(by_m) == set(m_hs)}


@kind("vit_converge", "vit_probe", f"""Fig. 3(a): as m_h grows, the normalised spectrum of rho_hat converges. The
relative L2 distance between the normalised mean spectra of successive m_h (spectrum_convergence in
summary.json): reproduced when the last pair's is <= {SETTLED_L2:g} (this ledger's choice; every distance is
printed); not reproduced otherwise. A folder whose spectra come from class-sorted test images (config.json
without subset_seed) gets at most partly. Control: the earlier pairs' distances,
printed. Power: the last distance is bootstrapped over seeds (interval shown; one seed has none).""")
def vit_converge(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    conv = [c for c in s.get("convergence", []) if isinstance(c.get("rel_l2"), (int, float)) and not math.isnan(c["rel_l2"])]
    if "fit" not in s or not conv:
        return None
    last = conv[-1]["rel_l2"]
    text = ("relative L2 between successive m_h: " + ", ".join(f"{c['m_h_from']}->{c['m_h_to']} {_g(c['rel_l2'], 2)}"
                                                                for c in conv)
            + (f"; {CLASS_SORTED}" if _class_sorted(run) else ""))
    v = _cap(REPRODUCED if last <= SETTLED_L2 else NOT_REPRODUCED, run)
    a, b = int(conv[-1]["m_h_from"]), int(conv[-1]["m_h_to"])
    spec = _seed_spectra(run, (a, b))
    if spec is None:
        lo, hi, interval = None, None, "none: spectra.csv has no seed column (a folder made before it had one)"
    else:
        labels = sorted(spec, key=lambda k: (len(k), k))

        def distance(resample: list[str]) -> float | None:
            """The same distance between the spectra averaged over a resample of the seeds."""
            k = min(a, b, *(len(spec[s][m]) for s in resample for m in (a, b)))
            mean = {m: [statistics.fmean(spec[s][m][i] for s in resample) for i in range(k)] for m in (a, b)}
            return _rel_l2(mean[a], mean[b]) if k >= 2 else None

        lo, hi, interval = _seed_bootstrap(labels, distance, f"the same distance ({a}->{b}) between the normalised "
                                                             "spectra averaged over seeds (spectra.csv)")
        if len(labels) >= 2:
            text += f"; {a}->{b} each seed alone {', '.join(_g(distance([s]), 2) for s in labels)}"
    return Outcome(v, text, run.seeds(), last, lo, hi, "relative L2 distance, last pair of m_h", interval=interval)


@kind("vit_fit", "vit_probe", f"""Fig. 3(b): the training error follows a / m_h^gamma + b with gamma = {PAPER_GAMMA:g}.
The sweep's fit (summary.json): reproduced when the data identify it (the sweep's own test: every
standard error below its value) and {PAPER_GAMMA:g} lies within gamma +- {Z95:g} s.e.; partly when identified
with gamma > 0 (a power-law decrease) but {PAPER_GAMMA:g} outside; not reproduced when identified with gamma
<= 0. Power condition: a fit the data do not identify is inconclusive (no rate is measured, so none can
disagree). Control: the log-log slope of the training loss, printed beside the fit. Class-sorted training-loss
subsets: at most partly.""")
def vit_fit(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    fit = s.get("fit")
    if not isinstance(fit, dict) or fit.get("gamma") is None:
        return None
    g, se = fit["gamma"], fit.get("gamma_se", math.inf)
    lo, hi = g - Z95 * se, g + Z95 * se
    ident = bool(fit.get("identified"))
    if not ident:
        v = INCONCLUSIVE          # the power condition: the data do not pin down gamma
    elif lo <= PAPER_GAMMA <= hi:
        v = REPRODUCED
    elif g > 0:
        v = PARTLY
    else:
        v = NOT_REPRODUCED
    text = (f"gamma {_g(g)} +- {_g(se)} (s.e.), b {_g(fit.get('b'))} +- {_g(fit.get('b_se'))}: "
            + ("identified" if ident else "NOT identified by the data")
            + f"; log-log slope of training loss {_f(s.get('loglog_slope'), 3)}"
            + f"; training loss {_g(s.get('loss_first'), 4)} -> {_g(s.get('loss_last'), 4)}"
            + (f"; {CLASS_SORTED}" if _class_sorted(run) else ""))
    return Outcome(_cap(v, run), text, run.seeds(), g, lo, hi, "gamma",
                   interval=f"gamma +- {Z95:g} standard errors of the least-squares fit to the seed-mean training "
                            "loss (normal approximation; from summary.json's fit)")


@kind("vit_permute", "vit_probe", f"""Table 1 (ViT): permuting the input tokens does not affect the Transformer (the paper:
0.98 -> 0.96, which it calls unaffected). Judged against the control arm, not the starting model: d = accuracy
after continued training on permuted tokens - accuracy after the same continued training on the original order,
with a 95% interval from two binomial proportions on the {CIFAR10_TEST:,} test images (conservative for the
paired images). A non-inferiority test with margin {PAPER_VIT_DROP:g} (the paper's own unaffected drop):
reproduced when the interval's lower end is at or above -{PAPER_VIT_DROP:g}; not reproduced when its upper end is
below -{PAPER_VIT_DROP:g} (a larger drop, beyond sampling error); inconclusive when the interval holds
-{PAPER_VIT_DROP:g}, or when the control arm still gains more than {PAPER_VIT_DROP:g} over the starting model
(power: a model that has not converged lets the permuted arm lag for that reason alone). Between folders, the
narrower interval first.""")
def vit_permute(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if not all(isinstance(s.get(k), (int, float)) for k in ("after", "control", "before")):
        return None
    a, c = s["after"], s["control"]
    d = a - c
    half = Z95 * math.sqrt(a * (1 - a) / CIFAR10_TEST + c * (1 - c) / CIFAR10_TEST)
    gain = c - s["before"]
    text = (f"permuted {_f(a, 4)} vs control {_f(c, 4)}: d = {_f(d, 4, True)} [{_f(d - half, 4, True)}, "
            f"{_f(d + half, 4, True)}]; before {_f(s['before'], 4)}, zero-shot on permuted tokens "
            f"{_f(s.get('zero_shot_permuted'), 4)}; {s.get('origin', '')}")
    if gain > PAPER_VIT_DROP:
        v = INCONCLUSIVE
        text += (f" (the control arm gains {_f(gain, 4, True)} over the starting model, more than the "
                 f"{PAPER_VIT_DROP:g} margin: not converged)")
    elif d - half >= -PAPER_VIT_DROP:
        v = REPRODUCED
    elif d + half < -PAPER_VIT_DROP:
        v = NOT_REPRODUCED
    else:
        v = INCONCLUSIVE
        text += f" (the interval holds -{PAPER_VIT_DROP:g}: the test images cannot decide)"
    return Outcome(v, text, 1, d, d - half, d + half, "accuracy permuted - control", (half,),
                   f"95% normal interval of a difference of two binomial proportions on the {CIFAR10_TEST:,} test "
                   "images (1 seed: test-set sampling only)")


# ---- RNN vs Transformer (rnn-compare folders) -----------------------------------------------------------

def _mse(run: Run, kernel: str, alteration: str, model: str) -> list[float]:
    return [float(r["test_mse"]) for r in run.table("results.csv")
            if (r.get("kernel"), r.get("alteration"), r.get("model")) == (kernel, alteration, model)
            and not str(r.get("status", "")).startswith(("diverged", "failed"))]


def _quality(kernel: str, original: dict[str, list[float]]) -> str:
    """How well a folder's fits are trained, against the paper: each model's original-target MSE per seed
    (`original`, model -> the seeds' MSEs, as the rule read them) over the paper's, and how many seeds are within
    QUALITY_FACTOR of it.  Shown beside a verdict, never part of its rule: an alteration measured on
    undertrained fits says less, and the reader should see by how much."""
    parts = []
    for model, mse in original.items():
        paper = PAPER_MSE.get((kernel, "original", model))
        if mse and paper:
            x = sorted(v / paper for v in mse)
            parts.append(f"{model} {_g(x[0])}x" + (f"-{_g(x[-1])}x" if _g(x[-1]) != _g(x[0]) else "")
                         + f" ({sum(v <= QUALITY_FACTOR for v in x)} of {len(x)} seeds <= {QUALITY_FACTOR:g}x)")
    return ("; original-target MSE / paper's: " + ", ".join(parts)) if parts else ""


def _label(orig: list[float], alt: list[float]) -> tuple[str, float]:
    ratio = statistics.median(alt) / statistics.median(orig)
    if ratio < DROP_FACTOR:
        return "no drop", ratio
    return ("drop" if min(alt) > max(orig) else "unclear"), ratio


def _pair_range(num: list[float], den: list[float], what: str) -> tuple[float | None, float | None, str]:
    """(lo, hi, interval) of a ratio of medians median(num) / median(den) from the seeds of its two arms: the
    smallest and largest num seed / den seed over every pair (min num / max den, max num / min den).  With an odd
    number of seeds each median is a seed's value, so the ratio of medians is one of these pair ratios; it always
    lies between lo and hi.  Not the range of ratios by seed label (arm a's seed s over arm b's seed s): the two
    arms are separate trainings, and the ratio of medians is not a summary of those."""
    if len(num) * len(den) < 2:
        return None, None, ONE_SEED
    lo = min(num) / max(den) if max(den) > 0 else math.inf
    hi = max(num) / min(den) if min(den) > 0 else math.inf
    return lo, hi, (f"range over every ({what}) pair of seeds ({len(num)} x {len(den)}) of the one seed's MSE over "
                    "the other's: min / max to max / min (contains the ratio of medians)")


def _budget(fit: dict | None) -> int:
    """Examples seen in training (steps x batch size) of one model's fit config; 0 where not written."""
    fit = fit or {}
    return int(fit.get("steps", 0) or 0) * int(fit.get("batch_size", 0) or 0)


def _budgets_text(run: Run) -> str:
    """'; budgets (steps x batch): Transformer 24000 x 256, RNN 1500 x 64 (unequal)'."""
    f, r = run.config.get("fit") or {}, run.config.get("rnn_fit") or {}
    if not f or not r:
        return ""
    same = _budget(f) == _budget(r)
    return (f"; budgets (steps x batch): Transformer {f.get('steps')} x {f.get('batch_size')}, RNN {r.get('steps')} x "
            f"{r.get('batch_size')} ({'equal' if same else 'unequal'})")


def _missing_terms(run: Run, alteration: str) -> str:
    """What the run's summary found of a mixed Transformer's drop (rnn_compare missing_terms_check: whether one
    missing block of the coupling's terms explains its hot positions).  Shown beside a verdict, never part of
    its rule."""
    recs = [r for r in (run.summary or {}).get("missing_terms", []) if r.get("model") == "transformer"]
    if alteration != "mixed" or not recs:
        return ""
    one = [r for r in recs if r.get("one_block")]
    if not one:
        return f"; the Transformer's drop is no one missing block of terms in any of {len(recs)} seeds (missing_terms.csv)"
    words = ", ".join(dict.fromkeys(r["terms"] for r in sorted(one, key=lambda r: (int(r["j1"]), int(r["j2"])))))
    ratios = [float(r["ratio"]) for r in one]
    lo, hi = _g(min(ratios)), _g(max(ratios))
    return (f"; the Transformer's drop is the loss of {words}, in {len(one)} of {len(recs)} seeds (their MSE / that "
            f"loss's error {lo if lo == hi else f'{lo}-{hi}'}; missing_terms.csv)")


def _rnn_order(run: Run) -> tuple:
    """The paper's mixing formula first, then the paper's randomly generated filter (App. C: "a randomly
    generated length 5 filter") before taps given with --filter or another --filter-length (diagnostics), then
    seeds from 0 before inits added with --first-seed, then the larger Transformer training budget, then the
    RNN's: a folder trained longer measures the paper's trained models better (read from config.json, not from
    the outcome, so the choice cannot follow the verdict)."""
    c = run.config
    papers_filter = not c.get("filter") and c.get("filter_length", PAPER_FILTER_LENGTH) == PAPER_FILTER_LENGTH
    return (0 if c.get("mix_direction", "future") == "future" else 1, 0 if papers_filter else 1,
            0 if not c.get("first_seed") else 1, -_budget(c.get("fit")), -_budget(c.get("rnn_fit")))


@kind("alteration", "rnn_compare", f"""Tables 2-3: which model an alteration of the target hurts (the paper's bold = a drop).
Per model, held-out MSE over seeds (results.csv; diverged members left out), altered against original: a
drop when the ratio of medians is >= {DROP_FACTOR:g} (above the largest ratio the paper calls unaffected,
{PAPER_UNAFFECTED_MAX:.3g}; its smallest drop is {PAPER_DROP_MIN:.3g}) and every altered seed lies above every
original seed; no drop when the ratio is < {DROP_FACTOR:g}; unclear otherwise (the seeds overlap). Reproduced when every
model the claim names gets the paper's label; partly when some do; not reproduced when none; inconclusive when
every model with a clear label gets the paper's and the others are unclear (the power condition: seeds that do
not separate). Control: each model's own original arm, trained alike. The row states both models' training budgets
(steps x batch size), equal or not. Ties: the paper's mixing formula (mix_direction future)
before the causal one, then the paper's random length-5 filter before taps given with --filter or another
--filter-length, then seeds from 0 before inits added with --first-seed, then the larger training budget (steps
x batch size in config.json; the Transformer's, then the RNN's).""")
def alteration(claim: Claim, run: Run) -> Outcome | None:
    p = claim.p
    got, parts, ratios, origs, unclear = [], [], [], {}, []
    for model, want in p["expect"]:
        orig, alt = _mse(run, p["kernel"], "original", model), _mse(run, p["kernel"], p["alteration"], model)
        if not orig or not alt:
            return None
        origs[model] = orig
        label, ratio = _label(orig, alt)
        if label == "unclear":
            unclear.append(model)
        else:
            parts.append(label == want)
        ratios.append(ratio)
        lo, hi, interval = _pair_range(alt, orig, f"altered, original; {model}")  # the last model's is the value's
        got.append(f"{model} x{_g(ratio)} ({label}; seeds {_g(min(orig))}-{_g(max(orig))} -> {_g(min(alt))}-{_g(max(alt))})")
    n = min(len(v) for v in origs.values())
    extra = f"; mixing {run.config['mix_direction']}" if p["alteration"] == "mixed" and "mix_direction" in run.config else ""
    if lo is not None:
        interval += ("; lo > 1 exactly when every altered seed lies above every original seed (the seed test of the "
                     "rule's drop)")
    extra += _quality(p["kernel"], origs) + _missing_terms(run, p["alteration"]) + _budgets_text(run)
    if unclear and all(parts):        # the decided models agree; the seeds of the others overlap
        verdict = INCONCLUSIVE
        extra += (f"; {', '.join(unclear)}: the median rises {DROP_FACTOR:g}x or more but the seeds overlap (the data "
                  "cannot say drop or no drop)")
    else:
        verdict = _verdict_of(parts + [False] * len(unclear))
    return Outcome(verdict, "; ".join(got) + extra, n, ratios[-1], lo, hi,
                   f"altered/original, ratio of medians ({p['expect'][-1][0]})", _rnn_order(run), interval)


@kind("gap", "rnn_compare", f"""Table 3: the RNN cannot learn the uniform-kernel target, the Transformer can. On the
original and the permuted arm, the RNN's median held-out MSE over seeds is at least {GAP_FACTOR:g}x the
Transformer's (the paper: at least {PAPER_GAP:.2g}x). Reproduced on both arms; partly on one; not reproduced on none.
Ties: as for the alteration rule (mixing formula, then training budget). Control: the Transformer on the same arm,
trained alike (its fit quality against the paper's MSE is printed); the budgets of both models are stated.""")
def gap(claim: Claim, run: Run) -> Outcome | None:
    parts, got, gaps, origs = [], [], [], {}
    for arm in ("original", "permuted"):
        rnn, tr = _mse(run, "uniform", arm, "rnn"), _mse(run, "uniform", arm, "transformer")
        if not rnn or not tr:
            return None
        if arm == "original":
            origs = {"rnn": rnn, "transformer": tr}
        g = statistics.median(rnn) / statistics.median(tr)
        gaps.append((g, arm, _pair_range(rnn, tr, f"RNN, Transformer; {arm} arm")))
        parts.append(g >= GAP_FACTOR)
        got.append(f"{arm}: RNN {_g(statistics.median(rnn))} (seeds {_g(min(rnn))}-{_g(max(rnn))}) / "
                   f"Transformer {_g(statistics.median(tr))} = {_g(g)}x")
    g, arm, (lo, hi, interval) = min(gaps)          # the headline: the arm where the gap is smaller
    return Outcome(_verdict_of(parts), "; ".join(got) + _quality("uniform", origs),
                   min(len(v) for v in origs.values()), g, lo, hi, f"RNN / Transformer, ratio of medians, on the arm where it is smaller ({arm})",
                   _rnn_order(run), interval)


# ---- App. B.1 tasks (jackson-tasks folders) ------------------------------------------------------------------

@kind("b1_task", "tasks", f"""App. B.1 (Prop. B.1, Figs. 4-6): the fitted one-layer Transformer recovers the target's
attention and F_hat∘f_hat recovers F∘f. Per seed (summary.json): the attention mass on the target's support
>= {SUPPORT_MIN:g}, and the relative MSE of F_hat∘f_hat against F∘f <= {FOF_REL_MAX:g}. Reproduced when both hold in
every seed; not reproduced when neither holds in any seed; partly otherwise. Ties: the command with fewer
options (the task's defaults). Reference: the target's own attention
and F∘f (closed form, Prop. B.1); control: the seeds' spread, each seed judged alone.""")
def b1_task(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if s.get("task") != claim.p["task"]:
        return None
    m = s.get("metrics", {})
    mass, fof = m.get("support_mass", {}).get("per_seed", []), m.get("fof_rel", {}).get("per_seed", [])
    if not mass or not fof:
        return None
    att = [x >= SUPPORT_MIN for x in mass]
    ff = [x <= FOF_REL_MAX for x in fof]
    v = REPRODUCED if all(att) and all(ff) else NOT_REPRODUCED if not any(att) and not any(ff) else PARTLY
    rel = m.get("rel_test_mse", {}).get("mean")
    text = (f"attention mass on the support {_f(min(mass), 3)}-{_f(max(mass), 3)} ({sum(att)} of {len(att)} seeds "
            f">= {SUPPORT_MIN:g}); F_hat∘f_hat vs F∘f relative MSE {_g(min(fof), 2)}-{_g(max(fof), 2)} ({sum(ff)} of "
            f"{len(ff)} <= {FOF_REL_MAX:g}); held-out MSE / Var(y) {_g(rel, 2)} (mean)")
    lo, hi, interval = _seed_range(mass, "the per-seed attention mass on the support")
    return Outcome(v, text, len(mass), min(mass), lo, hi, "attention mass on the support, worst seed",
                   (len([w for w in run.command.split() if w.startswith("--")]),), interval)


# ---- App. D.3 (rnn-mixing-spectrum --out folders) -------------------------------------------------------

D3_AFTER = (1.265, 0.5, 0.4)   # App. D.3 as printed: sigma_1..3 of rho(u, u + v) for rho = 1 + 2 sin sin
D3_REL_TOL = 0.05              # "numerically estimate": agreement within 5% (relative) per singular value


@kind("d3_mixing", "rnn_compare", f"""App. D.3: mixing the inputs raises the rank of rho = 1 + 2 sin(2 pi u) sin(2 pi v)
from 2 to 3, with sigma_1..3 = {", ".join(f"{x:g}" for x in D3_AFTER)} after it. From an rnn-mixing-spectrum folder on
the paper's kernel and mixing (a = b = 1): reproduced when the numerical rank (sigma_i > 1e-8 sigma_1) is 2 before and
3 after and each of sigma_1..3 after is within {D3_REL_TOL:.0%} of the paper's; partly when the rank rises but a value
is further off; not reproduced when the rank does not rise. Reference: the paper's printed values;
control: the spectrum before mixing, computed the same way (its rank must read 2).""")
def d3_mixing(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if s.get("kind") != "rnn-mixing-spectrum" or not s.get("paper") or len(s.get("after", [])) < 3:
        return None
    after, rb, ra = [float(x) for x in s["after"][:3]], s.get("rank_before"), s.get("rank_after")
    off = max(abs(m - p) / p for m, p in zip(after, D3_AFTER))
    rises = isinstance(rb, int) and isinstance(ra, int) and ra > rb
    v = (REPRODUCED if rises and rb == 2 and ra == 3 and off <= D3_REL_TOL else PARTLY if rises else NOT_REPRODUCED)
    text = (f"rank {rb} -> {ra}; sigma after = {', '.join(f'{x:.4f}' for x in after)} "
            f"(largest relative difference from the paper's {off:.1%}); deterministic quadrature "
            f"({s.get('quadrature_nodes', '?')} nodes)")
    return Outcome(v, text, None, off, quantity="largest relative difference of sigma_1..3 after the mixing",
                   interval="none: deterministic quadrature, no seeds and no sampling")


# ---- claims no command writes a folder for yet ---------------------------------------------------------

@kind("no_run", "", """The claim's entry declares why no command of this lab can test it (for example, none trains
a translation model): not applicable, and the row says why. Were a command added, the entry would name it
and the claim would be untested until a folder of that command tests it.""")
def no_run(claim: Claim, run: Run) -> Outcome | None:
    return None


# ---- Yang et al. (cot-dp folders) ------------------------------------------------------------------------

def _need(s: dict, task: str) -> dict[str, dict[int, float]]:
    """Per model, the smallest d_model reaching the target accuracy at each size (inf: none swept did)."""
    out = {}
    for model, v in (s.get("tasks", {}).get(task) or {}).items():
        out[model] = {int(z): (math.inf if d is None else float(d)) for z, d in zip(v.get("sizes", []), v.get("min_d", []))}
    return out


def _need_text(need: dict[str, dict[int, float]]) -> str:
    return "; ".join(f"{m} " + ", ".join("-" if d == math.inf else f"{d:g}" for _, d in sorted(need[m].items()))
                     for m in ("standard", "sparse", "linear") if m in need)


def _dims(run: Run, task: str) -> str:
    dims = sorted({int(float(r["d_model"])) for r in run.table("results.csv") if r.get("task") == task})
    return "D swept: " + (", ".join(map(str, dims)) if dims else "?")


def _best(run: Run, task: str) -> str:
    rows = [r for r in run.table("min_gflops.csv") if r.get("task") == task]
    if not rows:
        return ""
    best = max(float(r["best_accuracy"]) for r in rows)
    base = (run.summary or {}).get("baseline", {}).get(task, {})
    return f"; best accuracy {_g(best, 3)} (constant-answer baseline {', '.join(_g(b, 2) for b in base.values())})"


def _need_of_seeds(acc: dict[tuple, dict[str, float]], target: float, resample: list[str],
                   cost: dict[tuple, float] | None = None) -> dict[str, dict[int, float]]:
    """As `_need`, with each cell's accuracy the mean over `resample` (seed labels, repeats allowed) of its per-seed
    accuracies acc[(model, size, d_model)][seed]: per model and size, the smallest D whose mean reaches `target`
    (inf: none; a cell missing a resampled seed counts as not reaching it); with `cost` (cost[cell], e.g. its
    GFLOPs), the smallest cost instead of the smallest D."""
    out: dict[str, dict[int, float]] = {}
    for (m, z, d), by_seed in acc.items():
        cur = out.setdefault(m, {}).setdefault(z, math.inf)
        c = d if cost is None else cost[(m, z, d)]
        if all(s in by_seed for s in resample) and statistics.fmean(by_seed[s] for s in resample) >= target and c < cur:
            out[m][z] = c
    return out


def _dp_cells(run: Run) -> tuple[dict, dict, float, list[str]]:
    """results.csv read once: (acc[task][(model, size, D)][seed], gflops[task][cell], target accuracy, seeds)."""
    rows = run.table("results.csv")
    target = float((run.summary or {}).get("target_acc", 0.9))
    acc: dict[str, dict[tuple, dict[str, float]]] = {}
    gflops: dict[str, dict[tuple, float]] = {}      # a cell's GFLOPs do not depend on the seed
    for r in rows:
        cell = (r["model"], int(float(r["size"])), float(r["d_model"]))
        acc.setdefault(r.get("task"), {}).setdefault(cell, {})[r["seed"]] = float(r["accuracy"])
        if r.get("gflops") not in (None, ""):
            gflops.setdefault(r.get("task"), {})[cell] = float(r["gflops"])
    return acc, gflops, target, sorted({r["seed"] for r in rows}, key=lambda s: float(s))


def _fixed_d(acc: dict[tuple, dict[str, float]], target: float, resample: list[str], model: str = "standard") -> list[float]:
    """The D values at which `model`'s mean accuracy over `resample` reaches `target` at every size it was run at
    (Yang et al.: the standard Transformer does with one fixed D at every size)."""
    sizes = {z for (m, z, _) in acc if m == model}
    ok: dict[float, set[int]] = {}
    for (m, z, d), by_seed in acc.items():
        if m == model and all(s in by_seed for s in resample) and \
                statistics.fmean(by_seed[s] for s in resample) >= target:
            ok.setdefault(d, set()).add(z)
    return sorted(d for d, zs in ok.items() if sizes and zs == sizes)


def _dp_bootstrap(run: Run, share: Callable[..., float | None], what: str, cells: tuple | None = None):
    """(lo, hi, interval) of a cot-dp rule's share: `share(need_of)` recomputed with need_of(task) read from the
    seed-mean accuracy of each resample of the folder's seeds (results.csv, read once; `_need_of_seeds`,
    `_seed_bootstrap`); need_of(task, by_gflops=True) gives the smallest GFLOPs instead of the smallest D, and
    need_of(task, fixed=True) the D values at which the standard model reaches the target at every size.
    `cells`: `_dp_cells(run)` where the rule has read them already."""
    if run.seeds() == 1:
        return None, None, ONE_SEED
    acc, gflops, target, seeds = cells or _dp_cells(run)

    def need_of(rs, task, by_gflops=False, fixed=False):
        if fixed:
            return _fixed_d(acc.get(task, {}), target, rs)
        return _need_of_seeds(acc.get(task, {}), target, rs, gflops.get(task, {}) if by_gflops else None)

    return _seed_bootstrap(seeds, lambda rs: share(lambda *a, **k: need_of(rs, *a, **k)), what)


def _dp_order(run: Run, tasks: tuple[str, ...]) -> tuple:
    """Between cot-dp folders with as many seeds, the one sweeping more embedding dimensions D on the claim's tasks
    first: it reads each model's smallest D more finely (from config.json's grid, not the outcome, so the choice
    cannot follow the verdict)."""
    grid = run.config.get("grid") or {}
    return (-len({float(d) for t in tasks for d in (grid.get(t) or {}).get("dims", [])}),)


def _target_acc(run: Run) -> str:
    return _g((run.summary or {}).get("target_acc"), 2)


@kind("dp_fig1", "cot_dp", """Yang et al. Fig. 1: efficient Transformers need a larger embedding dimension D than the
standard one, growing with the problem size; the standard one does with a fixed D (the paper: 128 or 256 at every
size). From the smallest D reaching the target accuracy at each size (summary.json; none reached: infinite) and
the seed-mean accuracy of every cell (results.csv), five parts: for sparse and for linear, D >= standard's at every
size and > at some; for sparse and for linear, D non-decreasing in size and larger at the largest size than at
the smallest; some one D at which the standard model reaches the target at every size. Reproduced when all five
hold; partly when some; not reproduced when none; untested when no model reaches the target at any size (the
grid cannot tell the dimensions apart). Between folders with as many seeds, the one sweeping more D values is
preferred. Control: the standard Transformer on
the same grid and budget; power: untested where no model reaches the target (the grid cannot tell the models
apart); the share is bootstrapped over seeds where there are several.""")
def dp_fig1(claim: Claim, run: Run) -> Outcome | None:
    task = claim.p["task"]
    need = _need(run.summary or {}, task)
    if not {"standard", "sparse", "linear"} <= set(need):
        return None
    base = f"smallest D reaching {_target_acc(run)} by size: {_need_text(need)}; {_dims(run, task)}"
    if all(d == math.inf for m in need.values() for d in m.values()):
        return Outcome(UNTESTED, base + _best(run, task), run.seeds(), tiebreak=_dp_order(run, (task,)))
    cells = _dp_cells(run)
    acc, _, target, seeds = cells
    fixed = _fixed_d(acc.get(task, {}), target, seeds) if acc else _fixed_from_need(need)
    parts = _fig1_parts(need, fixed)
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _fig1_share(need_of(task), need_of(task, fixed=True)),
                                     "the same share, each D read from the resample's mean accuracy (results.csv)",
                                     cells)
    text = (base + "; standard reaches it at every size with D " + (", ".join(f"{d:g}" for d in fixed) if fixed
                                                                    else "(none: no one D does)")
            + f"; {sum(parts)} of 5 parts hold")
    return Outcome(_verdict_of(parts), text, run.seeds(), sum(parts) / 5, lo, hi,
                   quantity="share of the five parts that hold", interval=interval, tiebreak=_dp_order(run, (task,)))


def _fixed_from_need(need: dict[str, dict[int, float]]) -> list[float]:
    """Without results.csv: the standard model's smallest D, when it is the same at every size (the one D known
    to work everywhere)."""
    ds = set(need["standard"].values())
    return sorted(ds) if len(ds) == 1 and math.inf not in ds else []


def _fig1_parts(need: dict[str, dict[int, float]], fixed: list[float]) -> list[bool]:
    std = need["standard"]
    parts = []
    for m in ("sparse", "linear"):
        e = need[m]
        zs = sorted(set(e) & set(std))
        parts.append(all(e[z] >= std[z] for z in zs) and any(e[z] > std[z] for z in zs))
        ds = [e[z] for z in sorted(e)]
        parts.append(all(a <= b for a, b in zip(ds, ds[1:])) and ds[-1] > ds[0])
    parts.append(bool(fixed))
    return parts


def _fig1_share(need: dict[str, dict[int, float]], fixed: list[float]) -> float | None:
    if not {"standard", "sparse", "linear"} <= set(need) or all(d == math.inf for m in need.values() for d in m.values()):
        return None
    return sum(_fig1_parts(need, fixed)) / 5


@kind("dp_flops", "cot_dp", """Yang et al. Table 2: the standard Transformer needs the fewest FLOPs to reach 90% accuracy
on Arithmetic at every length. Per size (min_gflops.csv; a model that never reaches the target: infinite),
the standard model's minimum GFLOPs is the lowest. Reproduced at every size; partly at some; not reproduced
at none; untested when no model reaches the target at any size. Absolute GFLOPs are not compared: the
lengths differ from the paper's. Control: the standard Transformer on
the same grid and budget; power: untested where no model reaches the target (the grid cannot tell the models
apart); the share is bootstrapped over seeds where there are several.""")
def dp_flops(claim: Claim, run: Run) -> Outcome | None:
    rows = [r for r in run.table("min_gflops.csv") if r.get("task") == claim.p["task"]]
    if not rows:
        return None
    by_size: dict[int, dict[str, float]] = {}
    for r in rows:
        g = float(r["min_gflops"]) if r.get("min_gflops") not in ("", None) else math.inf
        by_size.setdefault(int(r["size"]), {})[r["model"]] = g
    lengths = {int(r["size"]): r.get("L", "?") for r in rows}
    text = "; ".join(f"L {lengths[z]}: " + ", ".join(f"{m} {'-' if g == math.inf else _g(g, 3)}"
                                                      for m, g in sorted(v.items(), key=lambda kv: kv[1]))
                     for z, v in sorted(by_size.items()))
    if all(g == math.inf for v in by_size.values() for g in v.values()):
        return Outcome(UNTESTED, text, run.seeds())
    parts = _flops_parts(by_size)
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _flops_share(need_of(claim.p["task"], by_gflops=True)),
                                     "the same share, each cell's accuracy the resample's mean (results.csv)")
    return Outcome(_verdict_of(parts), text + f" (min GFLOPs reaching {_target_acc(run)})", run.seeds(),
                   sum(parts) / len(parts), lo, hi, quantity="share of sizes where standard is cheapest",
                   interval=interval)


def _flops_parts(by_size: dict[int, dict[str, float]]) -> list[bool]:
    """Per size (by_size[size][model] = min GFLOPs reaching the target, inf: none): the standard model's is finite
    and the lowest."""
    return [v.get("standard", math.inf) < math.inf and v.get("standard", math.inf) <= min(v.values())
            for _, v in sorted(by_size.items())]


def _flops_share(need: dict[str, dict[int, float]]) -> float | None:
    """dp_flops' share for one reading of need[model][size] = min GFLOPs reaching the target; None where the rule
    would say untested."""
    by_size: dict[int, dict[str, float]] = {}
    for m, zs in need.items():
        for z, g in zs.items():
            by_size.setdefault(z, {})[m] = g
    if not by_size or all(g == math.inf for v in by_size.values() for g in v.values()):
        return None
    parts = _flops_parts(by_size)
    return sum(parts) / len(parts)


@kind("dp_locality", "cot_dp", """Yang et al. Sec. 6.2, Fig. 2: locality lowers the embedding dimension efficient
Transformers need: ED_Local needs a smaller D than ED. For sparse and for linear, at every size both tasks
have, ED_Local's smallest D reaching the target accuracy (summary.json; none reached: infinite) is <= ED's and
< at some size. Only sizes where the standard model reaches the target on ED count: the paper's standard
model learns ED at a fixed D, and where it does not, the training budget, not locality, is what ED lacks.
Reproduced when it holds for both models; partly for one; not reproduced for none; untested when the standard
model reaches the target on ED at no size, or no efficient model reaches it on either task at a counted size.
Between folders with as many seeds, the one sweeping more D values is preferred. Control: the standard Transformer on
the same grid and budget; power: untested where no model reaches the target (the grid cannot tell the models
apart); the share is bootstrapped over seeds where there are several.""")
def dp_locality(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    ed, loc = _need(s, "ed"), _need(s, "ed_local")
    models = [m for m in ("sparse", "linear") if m in ed and m in loc]
    if not models:
        return None
    text = f"ED: {_need_text(ed)}; ED_Local: {_need_text(loc)}; {_dims(run, 'ed')}"
    counted = _locality_counted(ed)
    if _locality_untested(ed, loc, models, counted):
        why = "" if counted else ("; the standard model reaches the target on ED at no size, so this run cannot "
                                  "tell locality from training budget")
        local = _best(run, "ed_local")
        return Outcome(UNTESTED, text + why + _best(run, "ed") + (f"; ED_Local{local[1:]}" if local else ""), run.seeds(),
                       tiebreak=_dp_order(run, ("ed", "ed_local")))
    parts = _locality_parts(ed, loc, models, counted)
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _locality_share(need_of("ed"), need_of("ed_local"), models),
                                     "the same share, each D read from the resample's mean accuracy (results.csv)")
    return Outcome(_verdict_of(parts), text, run.seeds(), sum(parts) / len(parts), lo, hi,
                   quantity="share of efficient models for which ED_Local needs less", interval=interval,
                   tiebreak=_dp_order(run, ("ed", "ed_local")))


def _locality_parts(ed: dict, loc: dict, models: list[str], counted: set[int]) -> list[bool]:
    parts = []
    for m in models:
        zs = sorted(set(ed[m]) & set(loc[m]) & counted)
        parts.append(all(loc[m][z] <= ed[m][z] for z in zs) and any(loc[m][z] < ed[m][z] for z in zs))
    return parts


def _locality_counted(ed: dict) -> set[int]:
    """The sizes dp_locality counts: those where the standard model reaches the target on ED."""
    return {z for z, d in ed.get("standard", {}).items() if d < math.inf}


def _locality_untested(ed: dict, loc: dict, models: list[str], counted: set[int]) -> bool:
    return not counted or all(d == math.inf for m in models for z, d in list(ed[m].items()) + list(loc[m].items())
                              if z in counted)


def _locality_share(ed: dict, loc: dict, models: list[str]) -> float | None:
    """dp_locality's share for one reading of the needs; None where the rule would say untested."""
    counted = _locality_counted(ed)
    if any(m not in ed or m not in loc for m in models) or _locality_untested(ed, loc, models, counted):
        return None
    return sum(_locality_parts(ed, loc, models, counted)) / len(models)


# ---- the declared claims -------------------------------------------------------------------------------

JL, YANG = "Jiang & Li", "Yang et al."
CLAIMS: tuple[Claim, ...] = lab_claims()     # papers/jiang-li.toml, papers/yang.toml
if set(KINDS) != set(RULE_PARAMS):             # every rule has its parameter table, every table its rule
    raise RuntimeError(f"rules without a parameter table or the reverse: {sorted(set(KINDS) ^ set(RULE_PARAMS))}")


# ---- the ledger ----------------------------------------------------------------------------------------

@dataclass
class Row:
    claim: Claim
    verdict: str
    measured: str
    n_seeds: int | None
    folder: str                     # "" when no folder tests it
    outcome: Outcome | None
    others: list[str]               # the other folders: "folder: verdict, n seeds" or "folder: left out (why)"


def _config_covers(claim: Claim, run: Run) -> bool:
    """An unfinished folder covers a claim when its config names the claim's alpha and rank (when it has them)."""
    for key in ("alpha", "rank"):
        if key in claim.p and key in run.config:
            vals = run.config[key] if isinstance(run.config[key], list) else [run.config[key]]
            if not any(_same(v, claim.p[key]) or str(v) == str(claim.p[key]) for v in vals):
                return False
    return True


def _seeds_text(n) -> str:
    return "?" if n is None else f"{n} seed{'s' if n != 1 else ''}"


def judge_claim(claim: Claim, runs: list[Run]) -> Row:
    """One row of the ledger: the claim judged on every folder of its kind's section."""
    k = KINDS[claim.kind]
    judged: list[tuple[Run, Outcome]] = []
    left: list[str] = []
    named = set(match_folders(claim.folders, [r.folder for r in runs])) if claim.folders else None
    for run in runs:
        if named is not None:             # the claim names its folders: those, whatever their section
            if run.folder not in named:
                continue
        elif not k.section or run.section != k.section:
            continue
        if run.summary is None:
            if run.left_out and _config_covers(claim, run):
                left.append(f"{run.folder}: left out ({run.left_out})")
            continue
        try:
            out = k.judge(claim, run)
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as e:
            left.append(f"{run.folder}: unreadable for this rule ({type(e).__name__}: {e})")
            continue
        if out is None:
            continue
        if run.left_out:
            left.append(f"{run.folder}: left out ({run.left_out})")
            continue
        judged.append((run, out))
    # folders that test the claim first (an inconclusive verdict included: the best folder's own reference may say
    # that it cannot decide, and a less apt folder does not overrule it), then those that cannot (untested), then
    # not applicable ones
    weight = {UNTESTED: 1, NOT_APPLICABLE: 2}
    judged.sort(key=lambda ro: (weight.get(ro[1].verdict, 0), -(ro[1].n_seeds or 0), ro[1].tiebreak, ro[0].folder))
    others = [f"{r.folder}: {o.verdict}, {_seeds_text(o.n_seeds)}"
              + (f" ({o.measured})" if o.verdict == NOT_APPLICABLE else "") for r, o in judged[1:]] + left
    if not judged:
        if claim.not_testable:                         # declared in CLAIMS: the no_run kind's rule
            return Row(claim, NOT_APPLICABLE, f"no run folder can test it: {claim.not_testable}", None, "", None, others)
        return Row(claim, UNTESTED, "no run folder" + (f"; would test it: `{claim.command}`" if claim.command else ""),
                   None, "", None, others)
    run, out = judged[0]
    measured = out.measured
    if out.verdict == UNTESTED:
        measured += f"; would test it: `{claim.command}`"
    return Row(claim, out.verdict, measured, out.n_seeds, run.folder, out, others)


def ledger(root: str | os.PathLike, claims: tuple[Claim, ...] | None = None) -> list[Row]:
    """Every claim (default: the lab's, CLAIMS), judged on the run folders under root, in the claims' order.  A
    claim that names folders none of which is a run folder under root is a UsageError naming the claim."""
    runs = find_runs(Path(root))
    claims = CLAIMS if claims is None else claims
    folders = [r.folder for r in runs]
    for c in claims:
        for pat in c.folders:
            if not match_folders((pat,), folders):
                there = (Path(root) / pat).is_dir()
                raise UsageError(f"claim {c.id!r}: folder {pat!r} " + ("holds no run of this lab (no config.json or "
                                 "summary.json)" if there else "is not under") + f" --root {root}")
    return [judge_claim(c, runs) for c in claims]


def counts(rows: list[Row]) -> dict[str, int]:
    return {v: sum(r.verdict == v for r in rows) for v in VERDICTS}


CSV_COLUMNS = ("id", "paper", "where", "claim", "paper_value", "verdict", "measured", "quantity", "value", "lo", "hi",
               "interval", "n_seeds", "folder", "other_folders", "rule", "rule_text", "command")


def _num(x) -> str:
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else repr(float(x))


def csv_text(rows: list[Row]) -> str:
    """claims.csv: one row per claim (tidy), the numbers at full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in rows:
        c, o = r.claim, r.outcome
        w.writerow([c.id, c.paper, c.where, c.text, c.paper_value, r.verdict, r.measured,
                    o.quantity if o else "", _num(o.value if o else None), _num(o.lo if o else None),
                    _num(o.hi if o else None), o.interval if o else "", "" if r.n_seeds is None else r.n_seeds, r.folder,
                    " | ".join(r.others), c.kind, KINDS[c.kind].rule, c.command])
    return buf.getvalue()


# ---- docs/claims.md: the format and every rule ---------------------------------------------------------

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "claims.md"


def rules_markdown() -> str:
    """docs/claims.md: how to write a claims file, and every rule with its parameters and its text (written by
    `python -m jackson.lab_report.claims`; a test checks that the committed file is this)."""
    from . import claim_files as cf
    lines = ["# Claims files", "",
             "A claims file states the claims of one paper as data: which rule judges each claim, the rule's",
             "parameters, the command that makes its data and, optionally, the run folders that may test it.",
             "`jackson-report` judges the lab's own two files (`jackson/lab_report/papers/jiang-li.toml`,",
             "`yang.toml`); `jackson-report --claims FILE --root DIR` judges yours against your folders",
             "(a worked example: `examples/own-claims/`).", "",
             "## Format (TOML)", "", "```toml", *cf.FORMAT_EXAMPLE.strip().splitlines(), "```", "",
             "Required in each claim: `id`, `claim`, `rule`, and the rule's required parameters. Anything else is refused",
             "with one line that names the claim: an unknown key (with the closest known one), an unknown rule, a",
             "parameter the rule does not take or of the wrong kind, a second claim with the same id, a folder that is",
             "not under `--root` or holds no run. A file larger than "
             f"{cf.MAX_BYTES:,} bytes is refused unread.", "",
             "## Verdicts", "",
             f"{', '.join(VERDICTS)}. *Inconclusive*: the folder holds the quantities, but its own reference (a power",
             "condition the rule states) says they could not show the effect. *Untested*: no folder holds the quantities,",
             "or the folder cannot test the claim (an untrained model, a grid without the needed sizes).", "",
             "## Rules", ""]
    for name, k in KINDS.items():
        params = cf.RULE_PARAMS[name]
        ptxt = "; ".join(f"`{p}` ({'required' if req else 'optional'})" for p, (req, _) in params.items()) or "none"
        lines += [f"### `{name}`", "", f"Reads run folders under `{k.section}/` of the root (or the claim's `folders`)."
                  if k.section else "Reads no run folder.", "", f"Parameters: {ptxt}.", "", k.rule, ""]
    lines += ["## Choosing between folders", "", PREFERENCE, ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(rules_markdown())
    print(f"wrote {DOC_PATH}")
