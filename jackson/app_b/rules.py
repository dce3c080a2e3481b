"""The rule that judges App. B.1 of Jiang & Li on jackson-tasks folders (reports/tasks/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations


from ..evidence import Reading, label, missing, number, per_seed, value, withheld
from ..verdict import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, UNTESTED, Claim, Outcome, Run, fmt_f, fmt_g,
                       one_of, rule, seed_range)

SUPPORT_MIN = 0.9      # App. B: attention mass on the target's support, per seed
FOF_REL_MAX = 0.01     # App. B: F_hat∘f_hat against F∘f, relative MSE, per seed


# ---- App. B.1 tasks (jackson-tasks folders) ------------------------------------------------------------------

FROM_LEVELS = ("the control (uniform attention's mass on the support), derived from summary.json's coupling levels: "
               "the folder records no control entry")


def chance_mass(summary: dict) -> float | None:
    """The control's value (`control_reading`); None when it is absent or unreadable."""
    return control_reading(summary).value


def control_reading(summary: dict) -> Reading:
    """The control: the mass uniform attention puts on the target's support, i.e. the share of the (row, token)
    entries where the target's selection S is > 0 (summary.json's `control`, mean over seeds; a folder written
    before it was recorded: its coupling `levels`).  Absent when the summary has neither; unreadable when the
    value is not a number in [0, 1] or the levels' entry counts are not whole numbers >= 0."""
    name = "the control (uniform attention's mass on the support, summary.json's control)"
    ctrl = number(summary, "control", "uniform_support_mass", "mean", name=name, lo=0, hi=1)
    if not ctrl.absent or summary.get("levels") in (None, []):
        return ctrl
    levels = summary.get("levels")
    if not isinstance(levels, list) or not all(isinstance(lv, dict) for lv in levels):
        return Reading(name, None, "unreadable (summary.json's levels is not a list of tables)")
    counts = [(value(lv.get("n_entries"), "n_entries", lo=0, whole=True), value(lv.get("target"), "target"))
              for lv in levels]
    if not counts or not all(n.ok and t.ok for n, t in counts):
        return Reading(name, None, "unreadable (summary.json's levels: an entry count or level is absent or not a number)")
    total = sum(n.value for n, _ in counts)
    if not total:
        return Reading(name, None, "unreadable (summary.json's levels count no entries)")
    return Reading(FROM_LEVELS, sum(n.value for n, t in counts if t.value > 0) / total)


@rule("b1_task", "tasks", f"""App. B.1 (Prop. B.1, Figs. 4-6): the fitted one-layer Transformer recovers the target's
attention and F_hat∘f_hat recovers F∘f. Evidence, per seed (summary.json's metrics, one value per seed of the folder's
own seeds list): the attention mass on the target's support >= {SUPPORT_MIN:g}, and the relative MSE of F_hat∘f_hat
against F∘f <= {FOF_REL_MAX:g}. Reproduced when both hold in every seed; not reproduced when neither holds in any;
partly otherwise. A seed's value, or the seeds list (summary.json's, else config.json's), absent or unreadable:
inconclusive, named, with what the rest would read; no measured seed: untested. Reference: the target's own attention
and F∘f (closed form, Prop. B.1). Control: uniform attention, whose mass on the support is the support's share of the
entries (summary.json's control, drawn from each seed's held-out data; a constant predictor's relative MSE is 1
against the {FOF_REL_MAX:g} bar); a control absent or unreadable: untested. Power condition: where that share is
itself >= {SUPPORT_MIN:g}, uniform attention would pass the attention test, so the folder cannot decide: inconclusive.
Ties: the command with fewer options (the task's defaults).""",
      {"task": (True, one_of("nearest-point", "weighted-average", "selection-average"))})
def b1_task(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    if s.get("task") != claim.p["task"]:
        return None
    seeds = s.get("seeds")
    if seeds is None:               # a folder whose summary does not list its seeds: its config's, where it does
        train = run.config.get("train")
        seeds = run.config.get("seeds", train.get("seeds") if isinstance(train, dict) else None)
    labels = seeds if isinstance(seeds, list) and seeds and None not in map(label, seeds) else None
    stated = [] if labels else [f"the folder's seeds list (summary.json's seeds, else config.json's) is "
                                f"{'absent' if seeds is None else 'unreadable'}: whether every seed has a value "
                                "cannot be read"]
    mass, bad_mass = per_seed(s, "metrics", "support_mass", "per_seed", name="attention mass on the support",
                              labels=labels, lo=0, hi=1)
    fof, bad_fof = per_seed(s, "metrics", "fof_rel", "per_seed", name="F_hat∘f_hat vs F∘f relative MSE",
                            labels=labels, lo=0)
    chance = control_reading(s)
    tiebreak = (len([w for w in run.command.split() if w.startswith("--")]),)
    cannot = [why for why in (bad_mass, bad_fof) if why] + ([str(chance)] if not chance.ok else [])
    if bad_mass or bad_fof:
        return Outcome(UNTESTED, "cannot judge: " + "; ".join(cannot), None, tiebreak=tiebreak,
                       interval="none: no per-seed values")
    n = len(mass)
    if not labels and len(fof) != n:
        return Outcome(UNTESTED, f"cannot judge: {n} per-seed attention masses but {len(fof)} relative MSEs", None,
                       tiebreak=tiebreak, interval="none: no per-seed values")
    measured = [i for i in range(n) if mass[i].ok and fof[i].ok]
    unmeasured = missing([r for i in range(n) if i not in measured for r in (mass[i], fof[i])])
    if not measured:
        return Outcome(UNTESTED, f"cannot judge: no seed could be measured ({unmeasured})", None, tiebreak=tiebreak,
                       interval="none: no seed measured")
    m = [mass[i].value for i in measured]
    f = [fof[i].value for i in measured]
    att = [x >= SUPPORT_MIN for x in m]
    ff = [x <= FOF_REL_MAX for x in f]
    v = REPRODUCED if all(att) and all(ff) else NOT_REPRODUCED if not any(att) and not any(ff) else PARTLY
    rel = number(s, "metrics", "rel_test_mse", "mean", name="held-out MSE / Var(y)", lo=0).value   # shown, not judged
    k = len(measured)
    of = f"{k} measured seeds" if k == n else f"{k} measured of {n} seeds"
    text = (f"attention mass on the support {fmt_f(min(m), 3)}-{fmt_f(max(m), 3)} ({sum(att)} of {of} >= "
            f"{SUPPORT_MIN:g}" + (f"; uniform attention, the control: {fmt_f(chance.value, 3)}" if chance.ok else "")
            + (" (derived from summary.json's coupling levels; the folder records no control entry)"
               if chance.name == FROM_LEVELS else "")
            + f"); F_hat∘f_hat vs F∘f relative MSE {fmt_g(min(f), 2)}-{fmt_g(max(f), 2)} ({sum(ff)} of {of} <= "
            f"{FOF_REL_MAX:g}); held-out MSE / Var(y) {fmt_g(rel, 2)} (mean)")
    if not chance.ok:
        v, text = UNTESTED, f"cannot judge: {chance}; {text}"
    elif chance.value >= SUPPORT_MIN:
        v, text = INCONCLUSIVE, text + (f" -- the support holds {chance.value:.0%} of the entries: uniform attention "
                                        "would pass")
    v, text = withheld(v, text, [unmeasured] + stated)
    lo, hi, interval = seed_range(m, "the per-seed attention mass on the support (measured seeds)")
    return Outcome(v, text, k, min(m), lo, hi, "attention mass on the support, worst measured seed", tiebreak, interval)
