"""The rule that judges App. B.1 of Jiang & Li on jackson-tasks folders (reports/tasks/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations


from ..verdict import (INCONCLUSIVE, NOT_REPRODUCED, PARTLY, REPRODUCED, Claim, Outcome, Run, fmt_f, fmt_g, one_of, rule,
                       seed_range)

SUPPORT_MIN = 0.9      # App. B: attention mass on the target's support, per seed
FOF_REL_MAX = 0.01     # App. B: F_hat∘f_hat against F∘f, relative MSE, per seed


# ---- App. B.1 tasks (jackson-tasks folders) ------------------------------------------------------------------

def chance_mass(summary: dict) -> float | None:
    """The control: the mass uniform attention puts on the target's support, i.e. the share of the (row, token)
    entries where the target's selection S is > 0 (summary.json's `control`, mean over seeds; a folder written
    before it was recorded: its coupling `levels`); None when the summary has neither."""
    ctrl = (summary.get("control") or {}).get("uniform_support_mass")
    if isinstance(ctrl, dict) and isinstance(ctrl.get("mean"), (int, float)):
        return float(ctrl["mean"])
    levels = [lv for lv in summary.get("levels") or [] if isinstance(lv, dict)]
    total = sum(lv.get("n_entries") or 0 for lv in levels)
    support = sum(lv.get("n_entries") or 0 for lv in levels if (lv.get("target") or 0) > 0)
    return support / total if total else None


@rule("b1_task", "tasks", f"""App. B.1 (Prop. B.1, Figs. 4-6): the fitted one-layer Transformer recovers the target's
attention and F_hat∘f_hat recovers F∘f. Per seed (summary.json): the attention mass on the target's support
>= {SUPPORT_MIN:g}, and the relative MSE of F_hat∘f_hat against F∘f <= {FOF_REL_MAX:g}. Reproduced when both hold in
every seed; not reproduced when neither holds in any seed; partly otherwise. Ties: the command with fewer
options (the task's defaults). Reference: the target's own attention and F∘f (closed form, Prop. B.1). Control:
uniform attention, whose mass on the support is the support's share of the entries (summary.json's control,
drawn from each seed's held-out data; a constant predictor's relative MSE is 1 against the {FOF_REL_MAX:g} bar).
Power condition: where that share is itself >= {SUPPORT_MIN:g}, uniform attention would pass the attention test,
so the folder cannot decide: inconclusive. Each seed is judged alone.""", {"task": (True, one_of("nearest-point", "weighted-average", "selection-average"))})
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
    chance = chance_mass(s)
    text = (f"attention mass on the support {fmt_f(min(mass), 3)}-{fmt_f(max(mass), 3)} ({sum(att)} of {len(att)} seeds "
            f">= {SUPPORT_MIN:g}"
            + (f"; uniform attention, the control: {fmt_f(chance, 3)}" if chance is not None else "; no control in the "
               "summary")
            + f"); F_hat∘f_hat vs F∘f relative MSE {fmt_g(min(fof), 2)}-{fmt_g(max(fof), 2)} ({sum(ff)} of "
            f"{len(ff)} <= {FOF_REL_MAX:g}); held-out MSE / Var(y) {fmt_g(rel, 2)} (mean)")
    if chance is not None and chance >= SUPPORT_MIN:
        v, text = INCONCLUSIVE, text + f" -- the support holds {chance:.0%} of the entries: uniform attention would pass"
    lo, hi, interval = seed_range(mass, "the per-seed attention mass on the support")
    return Outcome(v, text, len(mass), min(mass), lo, hi, "attention mass on the support, worst seed",
                   (len([w for w in run.command.split() if w.startswith("--")]),), interval)


