"""The rules that judge Fig. 2, Fig. 3 and Table 1 (ViT) of Jiang & Li on vit-probe folders (reports/vit_probe/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations

import math
import statistics

from jackson.verdict import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, UNTESTED, Claim, Outcome, Run, fmt_f,
    fmt_g, rule, seed_bootstrap)

DECAY_MAX = -0.5       # Fig. 2: sigma_i ~ i^-alpha with alpha > 1/2 is what Theorem 4.1 needs for a decaying rate
SETTLED_L2 = 0.1       # Fig. 3a: successive normalised spectra within 10% (relative L2) count as converged (the sweep's own SETTLED_L2, vit_probe/run_sweep_mh.py)
PAPER_VIT_DROP = 0.02  # Table 1: the paper calls 0.98 -> 0.96 unaffected
CIFAR10_TEST = 10000   # vit-probe permute scores the whole CIFAR-10 test split (its report.json says so)
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


@rule("vit_decay", "vit_probe", f"""Fig. 2: the logit matrices rho_hat(x) of a trained ViT, sampled over inputs, have
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
    text = (f"{len(heads)} heads: decay exponent {fmt_f(min(ex))} to {fmt_f(max(ex))}; {sum(ok)} of {len(ok)} with the "
            f"whole 95% interval below {DECAY_MAX:g}; effective rank {fmt_f(min(er), 1)}-{fmt_f(max(er), 1)}; "
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
                 f"{fmt_f(min(iex)) if iex else 'n/a'} to {fmt_f(max(iex)) if iex else 'n/a'}; training made {sum(steeper)} "
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


@rule("vit_converge", "vit_probe", f"""Fig. 3(a): as m_h grows, the normalised spectrum of rho_hat converges. The
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
    text = ("relative L2 between successive m_h: " + ", ".join(f"{c['m_h_from']}->{c['m_h_to']} {fmt_g(c['rel_l2'], 2)}"
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

        lo, hi, interval = seed_bootstrap(labels, distance, f"the same distance ({a}->{b}) between the normalised "
                                                             "spectra averaged over seeds (spectra.csv)")
        if len(labels) >= 2:
            text += f"; {a}->{b} each seed alone {', '.join(fmt_g(distance([s]), 2) for s in labels)}"
    return Outcome(v, text, run.seeds(), last, lo, hi, "relative L2 distance, last pair of m_h", interval=interval)


@rule("vit_fit", "vit_probe", f"""Fig. 3(b): the training error follows a / m_h^gamma + b with gamma = {PAPER_GAMMA:g}.
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
    text = (f"gamma {fmt_g(g)} +- {fmt_g(se)} (s.e.), b {fmt_g(fit.get('b'))} +- {fmt_g(fit.get('b_se'))}: "
            + ("identified" if ident else "NOT identified by the data")
            + f"; log-log slope of training loss {fmt_f(s.get('loglog_slope'), 3)}"
            + f"; training loss {fmt_g(s.get('loss_first'), 4)} -> {fmt_g(s.get('loss_last'), 4)}"
            + (f"; {CLASS_SORTED}" if _class_sorted(run) else ""))
    return Outcome(_cap(v, run), text, run.seeds(), g, lo, hi, "gamma",
                   interval=f"gamma +- {Z95:g} standard errors of the least-squares fit to the seed-mean training "
                            "loss (normal approximation; from summary.json's fit)")


@rule("vit_permute", "vit_probe", f"""Table 1 (ViT): permuting the input tokens does not affect the Transformer (the paper:
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
    text = (f"permuted {fmt_f(a, 4)} vs control {fmt_f(c, 4)}: d = {fmt_f(d, 4, True)} [{fmt_f(d - half, 4, True)}, "
            f"{fmt_f(d + half, 4, True)}]; before {fmt_f(s['before'], 4)}, zero-shot on permuted tokens "
            f"{fmt_f(s.get('zero_shot_permuted'), 4)}; {s.get('origin', '')}")
    if gain > PAPER_VIT_DROP:
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
                   f"95% normal interval of a difference of two binomial proportions on the {CIFAR10_TEST:,} test "
                   "images (1 seed: test-set sampling only)")


