"""The rules that judge Fig. 2, Fig. 3 and Table 1 (ViT) of Jiang & Li on vit-probe folders (reports/vit_probe/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations

import math
import re
import statistics

from jackson.evidence import Reading, label, missing, number, seed_gaps, text_of, value, withheld
from jackson.verdict import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, UNTESTED, Claim, Outcome, Run, fmt_f,
    fmt_g, rule, seed_bootstrap)

DECAY_MAX = -0.5       # Fig. 2: sigma_i ~ i^-alpha with alpha > 1/2 is what Theorem 4.1 needs for a decaying rate
SETTLED_L2 = 0.1       # Fig. 3a: successive normalised spectra within 10% (relative L2) count as converged (the sweep's own SETTLED_L2, vit_probe/run_sweep_mh.py)
PAPER_VIT_DROP = 0.02  # Table 1: the paper calls 0.98 -> 0.96 unaffected
CIFAR10_CLASSES = 10   # vit-probe reads CIFAR-10 only (vit_probe.cifar_io.CLASSES): chance accuracy is 1/10
Z95 = 1.96             # two-sided 95% normal quantile
PAPER_GAMMA = 0.27     # Fig. 3b: 1 / m_h^0.27 + 1.05


# ---- ViT (vit-probe folders) ------------------------------------------------------------------------------

def _class_sorted(run: Run) -> bool:
    """A sweep-mh folder made before subsets were drawn stratified by class (its config.json has no
    subset_seed): its training loss and spectra come from class-sorted subsets (its summary.md says so)."""
    return "subset_seed" not in run.config


def _cap(v: str, run: Run) -> str:
    return PARTLY if v == REPRODUCED and _class_sorted(run) else v


CLASS_SORTED = ("config.json has no subset_seed: training loss and spectra from class-sorted subsets "
                "(its summary.md)")


def _init_control(run: Run, layers: set[str]) -> tuple[dict[str, dict[str, list[float]]], list[str]]:
    """The control as init_heads.csv holds it: (layer -> init -> its heads' exponents; the gaps: an unreadable row,
    a layer of `layers` some init has no readable exponent for, other inits than summary.json's control states)."""
    rows, gaps, by = run.table("init_heads.csv"), [], {}
    if not rows:
        return {}, ["init_heads.csv (the control's exponents) is absent or empty"]
    inits = {label(r.get("init")) for r in rows} - {None}
    for r in rows:
        where = f"init_heads.csv init {text_of(r.get('init'), 8)} layer {text_of(r.get('layer'), 8)}"
        init, layer, x = label(r.get("init")), label(r.get("layer")), value(r.get("exponent"), f"{where}: exponent")
        if init is None or layer is None or not x.ok:
            gaps.append(str(x) if not x.ok else f"{where}: its init or layer is unreadable")
        else:
            by.setdefault(layer, {}).setdefault(init, []).append(x.value)
    for layer in sorted(layers):
        lack = sorted(inits - set(by.get(layer, {})))
        if lack or layer not in by:
            gaps.append(f"init_heads.csv has no readable exponent of layer {layer} at init {', '.join(lack) or 'any'}")
    ctrl = (run.summary or {}).get("control")
    n = number(ctrl, "inits", name="summary.json's control inits", lo=1, whole=True) if isinstance(ctrl, dict) else None
    if n is not None and not n.absent and (not n.ok or n.value != len(inits)):
        gaps.append(str(n) if not n.ok else f"init_heads.csv holds {len(inits)} inits, summary.json's control {n.value}")
    return by, gaps


@rule("vit_decay", "vit_probe", f"""Fig. 2: the logit matrices rho_hat(x) of a trained ViT, sampled over inputs, have
decaying singular values (a low-rank structure). Evidence: per head, the decay exponent of sigma_i in i (heads.csv)
with its bootstrap 95% interval over images; the power condition is that interval: a head counts as decaying only when
its whole interval lies below {DECAY_MAX:g} (sigma_i ~ i^-alpha with alpha > 1/2, what Theorem 4.1 needs for an error
that decays in m_h). Control: the same architecture at random inits on the same images (init_heads.csv; a random-init
ViT's logits decay too): a head is steeper than init when its interval lies below its layer's steepest init exponent,
recomputed and checked against heads.csv's steeper_than_init. Reproduced when every head decays and lies below its
layer's init heads; partly when some do, or every head decays but no faster than at init; not reproduced when no head
decays. Inconclusive when the folder holds no control. Absent or unreadable evidence (a head's exponent, interval or
flag, an init exponent, fewer heads or inits than summary.json's control states): inconclusive, named, with what the
rest would read; no readable head: untested. An untrained model's folder is a control, not a test: untested.""")
def vit_decay(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    heads = run.table("heads.csv")
    if "violin" not in s or not heads or "m_h" in heads[0]:
        return None
    has_control = "steeper_than_init" in heads[0]
    measured, gaps = [], []
    for h in heads:
        where = f"layer {text_of(h.get('layer', '?'), 8)} head {text_of(h.get('head', '?'), 8)}"
        ex, hi = value(h.get("exponent"), f"{where}: exponent"), value(h.get("exponent_hi"), f"{where}: exponent_hi")
        layer = Reading(f"{where}: layer", 0.0) if label(h.get("layer")) else Reading(f"{where}: layer", None, "unreadable")
        flag = str(h.get("steeper_than_init", "")).strip().lower()
        ctrl = Reading(f"{where}: steeper_than_init", 1.0 if flag in ("true", "1") else 0.0) \
            if flag in ("true", "1", "false", "0") or not has_control else \
            Reading(f"{where}: steeper_than_init", None, "absent" if not flag else f"unreadable ({text_of(flag, 20)!r})")
        bad = missing([layer, ex, hi, ctrl])
        if bad:
            gaps.append(bad)
        else:
            er = value(h.get("erank"), "erank", lo=0)
            measured.append((where, label(h.get("layer")), ex.value, hi.value, ctrl.value == 1.0, er.value))
    trained = s.get("trained", bool(run.config.get("checkpoint") or run.config.get("pretrained")))
    if not isinstance(trained, bool):
        return Outcome(UNTESTED, f"cannot judge: summary.json's trained is unreadable ({text_of(trained, 20)!r}, not "
                                 "true or false)", 1, interval="none: no head judged")
    if not measured:
        return Outcome(UNTESTED, f"cannot judge: no head could be measured ({'; '.join(gaps)})", 1,
                       interval="none: no head measured")
    ex = [m[2] for m in measured]
    ok = [m[3] < DECAY_MAX for m in measured]
    er = [m[5] for m in measured if m[5] is not None]
    text = (f"{len(measured)} heads: decay exponent {fmt_f(min(ex))} to {fmt_f(max(ex))}; {sum(ok)} of {len(ok)} with "
            f"the whole 95% interval below {DECAY_MAX:g}; effective rank "
            + (f"{fmt_f(min(er), 1)}-{fmt_f(max(er), 1)}" if er else "n/a")
            + f"; {text_of(s.get('n_images', '?'), 12)} images, tau {text_of(s.get('tau', '?'), 12)}; one model")
    interval = (f"range over the {len(measured)} measured heads of one model (min, max head exponent; 1 seed, no "
                "spread over seeds)")
    if not trained:
        return Outcome(UNTESTED, "the folder probes an untrained model (no checkpoint, no pretrained weights): a "
                                 f"control, not a test of a trained ViT; {text}", 1, max(ex), min(ex), max(ex),
                       "largest (shallowest) head exponent", interval=interval)
    if not has_control:
        v = INCONCLUSIVE
        text += ("; no control in the folder (no init_heads.csv): a random-init ViT's logits decay too, so the heads "
                 "alone cannot say what training did")
    else:
        by, more = _init_control(run, {m[1] for m in measured})
        gaps += more
        steeper = []                # per measured head: below every init exponent of its layer
        for where, layer, _, hi, flag, _ in measured:
            xs = [x for d in by.get(layer, {}).values() for x in d]
            steeper.append(hi < min(xs) if xs else flag)        # no readable control: the flag, named below
            if xs and steeper[-1] != flag:
                gaps.append(f"{where}: heads.csv's steeper_than_init reads {flag}, init_heads.csv gives {steeper[-1]}")
        n = number(s.get("control"), "heads", name="summary.json's control heads", lo=1, whole=True)
        if isinstance(s.get("control"), dict) and not n.absent and (not n.ok or n.value != len(heads)):
            gaps.append(str(n) if not n.ok else f"heads.csv holds {len(heads)} heads, summary.json's control {n.value}")
        iex = [x for d in by.values() for xs in d.values() for x in xs]
        n_init = len({i for d in by.values() for i in d})
        both = [a and b for a, b in zip(ok, steeper)]
        v = NOT_REPRODUCED if not any(ok) else REPRODUCED if all(both) else PARTLY
        text += (f"; control: the same architecture at {n_init} random init{'s' if n_init != 1 else ''}, exponents "
                 f"{fmt_f(min(iex)) if iex else 'n/a'} to {fmt_f(max(iex)) if iex else 'n/a'}; training made "
                 f"{sum(steeper)} of {len(measured)} heads decay faster than every init head of "
                 "their layer")
    v, text = withheld(v, text, gaps)
    return Outcome(v, text, 1, max(ex), min(ex), max(ex), "largest (shallowest) head exponent", interval=interval)


def _rel_l2(a: list[float], b: list[float]) -> float:
    """vit_probe.run_sweep_mh.spectrum_convergence's distance: ||a/a_1 - b/b_1|| / ||b/b_1|| over i <= len(a)."""
    k = min(len(a), len(b))
    ca, cb = [x / a[0] for x in a[:k]], [x / b[0] for x in b[:k]]
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(ca, cb))) / math.sqrt(sum(y * y for y in cb))


def _seed_spectra(run: Run, m_hs: tuple[int, ...]) -> tuple[dict[str, dict[int, list[float]]] | None, list[str], set]:
    """(each seed's mean spectrum, the gaps, the seeds with a row there): spectra.csv's seed column; mean over images
    of sigma_i, i = 1, 2, ..., at the given m_h, on the layer and head the sweep compares (config.json spectra_layer,
    spectra_head): seed -> m_h -> [sigma_1, ...].  A seed with an absent or unreadable value, sigma_1 <= 0 or no row
    at one of the m_h is left out and named.  None when spectra.csv has no seed column or its rows are not numbers."""
    rows = run.table("spectra.csv")
    if not rows or "seed" not in rows[0]:
        return None, [], set()
    try:
        layer = int(run.config.get("spectra_layer", -1)) % (max(int(r["layer"]) for r in rows) + 1)
        head = int(run.config.get("spectra_head", 0))
        spec: dict[str, dict[int, dict[int, Reading]]] = {}
        for r in rows:
            if int(r["layer"]) == layer and int(r["head"]) == head and int(r["m_h"]) in m_hs:
                spec.setdefault(label(r["seed"]) or "?", {}).setdefault(int(r["m_h"]), {})[int(r["i"])] = \
                    value(r.get("mean"), f"seed {text_of(r['seed'], 8)}, m_h {r['m_h']}, sigma_{r['i']}", lo=0)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None, ["spectra.csv is unreadable (a layer, head, m_h or i that is not a whole number)"], set()
    out, bad = {}, []
    for seed, by_m in spec.items():
        problems = missing(x for v in by_m.values() for x in v.values())
        if set(by_m) != set(m_hs) or problems or any(v[min(v)].value <= 0 for v in by_m.values()):
            bad.append(problems or (f"seed {seed}: sigma_1 is 0" if set(by_m) == set(m_hs) else
                                    f"seed {seed}: no spectrum at m_h {', '.join(str(m) for m in m_hs if m not in by_m)}"))
            continue
        out[seed] = {m: [v[i].value for i in sorted(v)] for m, v in by_m.items()}
    return out, bad, set(spec)


@rule("vit_converge", "vit_probe", f"""Fig. 3(a): as m_h grows, the normalised spectrum of rho_hat converges.
Evidence: the relative L2 distance between the normalised mean spectra of the last pair of successive m_h
(spectrum_convergence in summary.json); the earlier pairs' are shown. Reference: settled means <= {SETTLED_L2:g} (this
ledger's choice, the sweep's own). Power condition: the distance bootstrapped over the folder's seeds (spectra.csv,
each seed's spectrum): reproduced when the distance and the whole interval are <= {SETTLED_L2:g}; not reproduced when
the distance and the whole interval are above it; inconclusive when the interval holds {SETTLED_L2:g} (the seeds
disagree), or when there is no interval (fewer than 2 measured seeds, or a spectra.csv without a seed column): the
seeds' spread is unknown. Control: none (one model's spectra against a fixed bar). An absent or unreadable last
distance: untested, named; a seed (config.json's seeds) whose spectrum is absent or unreadable: inconclusive, named,
with what the rest would read. A folder whose spectra come from class-sorted test images (config.json without
subset_seed) gets at most partly.""")
def vit_converge(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if "fit" not in s and "convergence" not in s:
        return None
    conv = s.get("convergence")
    if not isinstance(conv, list) or not conv or not all(isinstance(c, dict) for c in conv):
        why = "absent" if not conv else "unreadable (not a list of pairs)"
        return Outcome(UNTESTED, f"cannot judge: summary.json's convergence (the distances between successive m_h) is "
                                 f"{why}", run.seeds(), interval="none: no distance")
    lastc = conv[-1]
    a = value(lastc.get("m_h_from"), "the last pair's m_h_from", lo=1, whole=True)
    b = value(lastc.get("m_h_to"), "the last pair's m_h_to", lo=1, whole=True)
    d = value(lastc.get("rel_l2"), "the last pair's relative L2 distance (summary.json's convergence)", lo=0)
    bad = missing([d, a, b])
    pairs = ", ".join(f"{text_of(c.get('m_h_from'), 8)}->{text_of(c.get('m_h_to'), 8)} "
                      f"{fmt_g(x.value, 2) if (x := value(c.get('rel_l2'), '')).ok else 'n/a'}" for c in conv)
    text = f"relative L2 between successive m_h: {pairs}" + (f"; {CLASS_SORTED}" if _class_sorted(run) else "")
    if bad:
        return Outcome(UNTESTED, f"cannot judge: {bad}; {text}", run.seeds(), interval="none: no last distance")
    last, a, b = d.value, a.value, b.value
    spec, gaps, seen = _seed_spectra(run, (a, b))
    n = run.seeds()
    if spec is None:
        lo, hi, interval = None, None, ("none: " + gaps.pop() if gaps else
                                        "none: spectra.csv has no seed column (a folder made before it had one)")
    else:
        labels = sorted(spec, key=lambda k: (len(k), k))

        def distance(resample: list[str]) -> float | None:
            """The same distance between the spectra averaged over a resample of the seeds."""
            k = min(a, b, *(len(spec[s][m]) for s in resample for m in (a, b)))
            mean = {m: [statistics.fmean(spec[s][m][i] for s in resample) for i in range(k)] for m in (a, b)}
            return _rel_l2(mean[a], mean[b]) if k >= 2 else None

        lo, hi, interval = seed_bootstrap(labels, distance, f"the same distance ({a}->{b}) between the normalised "
                                                             "spectra averaged over seeds (spectra.csv)")
        if len(labels) >= 2:
            text += f"; {a}->{b} each seed alone {', '.join(fmt_g(distance([s]), 2) for s in labels)}"
        gaps += seed_gaps(run.config.get("seeds"), seen, f"spectrum at m_h {a} and {b} in spectra.csv")
        n = len(labels) if gaps else n
    if lo is None:
        v = INCONCLUSIVE
        text += f" (power: no interval over seeds, {interval[6:]}: the seeds' spread is unknown)"
    elif last <= SETTLED_L2 and hi <= SETTLED_L2:
        v = REPRODUCED
    elif last > SETTLED_L2 and lo > SETTLED_L2:
        v = NOT_REPRODUCED
    else:
        v = INCONCLUSIVE
        text += f" (power: the interval over seeds holds {SETTLED_L2:g}: the seeds disagree)"
    v, text = withheld(_cap(v, run), text, gaps)
    return Outcome(v, text, n, last, lo, hi, "relative L2 distance, last pair of m_h", interval=interval)


@rule("vit_fit", "vit_probe", f"""Fig. 3(b): the training error follows a / m_h^gamma + b with gamma =
{PAPER_GAMMA:g}. Evidence: the sweep's fit (summary.json: gamma and b with their standard errors). Reference: the
paper's gamma, {PAPER_GAMMA:g}. Reproduced when the data identify the fit and {PAPER_GAMMA:g} lies within gamma +-
{Z95:g} s.e.; partly when identified with gamma > 0 (a power-law decrease) but {PAPER_GAMMA:g} outside; not reproduced
when identified with gamma <= 0. Power condition: identification, the sweep's own test recomputed from the standard
errors (the s.e. of gamma below |gamma| and that of b below |b|); a fit the data do not identify is inconclusive (no
rate is measured, so none can disagree). Control: none (one curve against the paper's exponent); the log-log slope of
the training loss is shown, not judged. A failed fit, or an absent or unreadable gamma, b or s.e.: untested, named;
results.csv absent, or lacking a readable training loss at an m_h or seed of config.json: inconclusive, named,
with what the fit would read. Class-sorted training-loss subsets: at most partly.""")
def vit_fit(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if "fit" not in s:
        return None
    fit = s.get("fit")
    if isinstance(fit, dict) and fit.get("ok") is False:
        return Outcome(UNTESTED, "cannot judge: the sweep could not fit a / m_h^gamma + b "
                                 f"({text_of(fit.get('why', 'no reason given'))})",
                       run.seeds(), interval="none: no fit")
    g = number(fit, "gamma", name="the fit's gamma (summary.json's fit)")
    se = number(fit, "gamma_se", name="the standard error of gamma", lo=0)
    b = number(fit, "b", name="the fit's b")
    bse = number(fit, "b_se", name="the standard error of b", lo=0)
    bad = missing([g, se, b, bse])
    if bad:
        return Outcome(UNTESTED, f"cannot judge: {bad}", run.seeds(), interval="none: no fit")
    g, se = g.value, se.value
    lo, hi = g - Z95 * se, g + Z95 * se
    ident = se < abs(g) and bse.value < max(abs(b.value), 1e-12)
    if not ident:
        v = INCONCLUSIVE          # the power condition: the data do not pin down gamma
    elif lo <= PAPER_GAMMA <= hi:
        v = REPRODUCED
    elif g > 0:
        v = PARTLY
    else:
        v = NOT_REPRODUCED
    text = (f"gamma {fmt_g(g)} +- {fmt_g(se)} (s.e.), b {fmt_g(b.value)} +- {fmt_g(bse.value)}: "
            + ("identified" if ident else "NOT identified by the data (power: a standard error not below its value)")
            + f"; log-log slope of training loss {fmt_f(value(s.get('loglog_slope'), '').value, 3)}"
            + f"; training loss {fmt_g(value(s.get('loss_first'), '').value, 4)} -> "
            + f"{fmt_g(value(s.get('loss_last'), '').value, 4)}" + (f"; {CLASS_SORTED}" if _class_sorted(run) else ""))
    v, text = withheld(_cap(v, run), text, _fit_gaps(run))
    return Outcome(v, text, run.seeds(), g, lo, hi, "gamma",
                   interval=f"gamma +- {Z95:g} standard errors of the least-squares fit to the seed-mean training "
                            "loss (normal approximation; from summary.json's fit)")


def _fit_gaps(run: Run) -> list[str]:
    """What the fit's inputs lack: results.csv holds a readable train_loss_eval at every m_h of config.json's mh for
    every seed of its seeds (the fit is to their mean: a seed short at an m_h moves it).  A folder without it (absent,
    empty, unreadable) cannot show the summary's fit was made from the whole grid: that is a gap too."""
    got, gaps = {}, []
    rows = run.table("results.csv")
    if not rows:
        return ["results.csv (the training loss per m_h and seed the fit is made from) is absent, empty or unreadable"]
    for r in rows:
        m, where = label(r.get("m_h")), f"results.csv m_h {text_of(r.get('m_h'), 8)} seed {text_of(r.get('seed'), 8)}"
        x = value(r.get("train_loss_eval"), f"{where}: train_loss_eval")
        if m is None or not x.ok:
            gaps.append(str(x) if x.problem else f"{where}: m_h is unreadable")
        got.setdefault(m, set()).add(label(r.get("seed")))
    mh = run.config.get("mh")
    for m in [label(x) for x in mh] if isinstance(mh, list) else [m for m in got if m]:
        gaps += seed_gaps(run.config.get("seeds"), got.get(m, ()), f"row at m_h {m} in results.csv") \
            if m in got else [f"results.csv has no row at m_h {m} (config.json's mh)"]
    return gaps


def n_test_images(run: Run) -> Reading:
    """How many test images the folder's accuracies are over: summary.json's n_test, else the count its summary.md
    states ("Accuracy on the N test images", a folder written before summary.json held it)."""
    name = "the number of test images (summary.json's n_test)"
    n = number(run.summary or {}, "n_test", name=name, lo=1, whole=True)
    if not n.absent:
        return n
    try:
        with open(run.path / "summary.md", encoding="utf-8", errors="replace") as fh:
            md = fh.read(100_000)          # the sentence is in the first lines; a huge file is not read whole
    except OSError:
        return n
    found = re.search(r"Accuracy on the ([0-9][0-9,]*) test images", md)
    return value(found.group(1).replace(",", ""), name + ", as summary.md states it", lo=1, whole=True) if found else n


def _half(a: float, c: float, n: int) -> float:
    """Half the 95% normal interval of a difference of two binomial proportions a, c, each on n test images."""
    return Z95 * math.sqrt(a * (1 - a) / n + c * (1 - c) / n)


@rule("vit_permute", "vit_probe", f"""Table 1 (ViT): permuting the input tokens does not affect the Transformer (the
paper: 0.98 -> 0.96, which it calls unaffected). Evidence: the accuracy after continued training on permuted tokens
(summary.json's after). Control: the accuracy after the same continued training on the original order (control); d =
after - control, with a 95% interval from two binomial proportions on the folder's own number of test images
(summary.json's n_test, else the count its summary.md states; conservative for the paired images). Reference: a
non-inferiority margin of {PAPER_VIT_DROP:g} (the paper's own unaffected drop): reproduced when the interval's lower
end is at or above -{PAPER_VIT_DROP:g}; not reproduced when its upper end is below -{PAPER_VIT_DROP:g} (a larger drop,
beyond sampling error); inconclusive when the interval holds -{PAPER_VIT_DROP:g}. Power conditions, each inconclusive
when it fails: the control arm gains at most {PAPER_VIT_DROP:g} over the starting model (before; a model that has not
converged lets the permuted arm lag for that reason alone), and the quality floor: a permuted arm at chance
(1/{CIFAR10_CLASSES}, CIFAR-10) would read not reproduced, i.e. the control stands far enough above chance for the
test to fail (a model at chance cannot be hurt by a permutation, having learned nothing). An absent or unreadable
accuracy (NaN, inf, outside [0, 1]) or test count: untested, named. Between folders, the narrower interval first.""")
def vit_permute(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if "after" not in s and "zero_shot_permuted" not in s:
        return None
    after = number(s, "after", name="the permuted arm's accuracy (summary.json's after)", lo=0, hi=1)
    ctrl = number(s, "control", name="the control arm's accuracy (summary.json's control)", lo=0, hi=1)
    before = number(s, "before", name="the starting model's accuracy (summary.json's before)", lo=0, hi=1)
    n = n_test_images(run)
    bad = missing([after, ctrl, before, n])
    if bad:
        return Outcome(UNTESTED, f"cannot judge: {bad}", 1, tiebreak=(math.inf,), interval="none: no interval")
    a, c, n = after.value, ctrl.value, n.value
    d, half = a - c, _half(a, c, n)
    gain = c - before.value
    chance = 1 / CIFAR10_CLASSES
    text = (f"permuted {fmt_f(a, 4)} vs control {fmt_f(c, 4)}: d = {fmt_f(d, 4, True)} [{fmt_f(d - half, 4, True)}, "
            f"{fmt_f(d + half, 4, True)}] on {n:,} test images; before {fmt_f(before.value, 4)}, zero-shot on permuted "
            f"tokens {fmt_f(s.get('zero_shot_permuted') if isinstance(s.get('zero_shot_permuted'), (int, float)) else None, 4)}"
            f"; {text_of(s.get('origin', ''), 120)}")
    if (chance - c) + _half(chance, c, n) >= -PAPER_VIT_DROP:
        v = INCONCLUSIVE
        text += (f" (the control's accuracy {fmt_f(c, 4)} is too close to chance, {chance:g}: a permuted arm at chance "
                 f"would not read a drop beyond the {PAPER_VIT_DROP:g} margin, so the test cannot fail)")
    elif gain > PAPER_VIT_DROP:
        v = INCONCLUSIVE
        text += (f" (the control arm gains {fmt_f(gain, 4, True)} over the starting model, more than the "
                 f"{PAPER_VIT_DROP:g} margin: not converged)")
    elif d - half >= -PAPER_VIT_DROP:
        v = REPRODUCED
    elif d + half < -PAPER_VIT_DROP:
        v = NOT_REPRODUCED
    else:
        v = INCONCLUSIVE
        text += f" (the interval holds -{PAPER_VIT_DROP:g}: the test images cannot decide)"
    return Outcome(v, text, 1, d, d - half, d + half, "accuracy permuted - control", (half,),
                   f"95% normal interval of a difference of two binomial proportions on the {n:,} test images "
                   "(1 seed: test-set sampling only)")
