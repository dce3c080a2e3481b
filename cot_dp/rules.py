"""The rules that judge Fig. 1, Table 2 and Sec. 6.2 of Yang et al. on cot-dp sweep folders (reports/cot_dp/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations

import math
import statistics
from typing import Callable

from jackson.verdict import ONE_SEED, UNTESTED, Claim, Outcome, Run, fmt_g, one_of, rule, seed_bootstrap, verdict_of

TASK_DP = (True, one_of("arithmetic", "ed", "ed_local", "lis"))   # the task a claim is about


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
    return f"; best accuracy {fmt_g(best, 3)} (constant-answer baseline {', '.join(fmt_g(b, 2) for b in base.values())})"


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

    return seed_bootstrap(seeds, lambda rs: share(lambda *a, **k: need_of(rs, *a, **k)), what)


def _dp_order(run: Run, tasks: tuple[str, ...]) -> tuple:
    """Between cot-dp folders with as many seeds, the one sweeping more embedding dimensions D on the claim's tasks
    first: it reads each model's smallest D more finely (from config.json's grid, not the outcome, so the choice
    cannot follow the verdict)."""
    grid = run.config.get("grid") or {}
    return (-len({float(d) for t in tasks for d in (grid.get(t) or {}).get("dims", [])}),)


def _target_acc(run: Run) -> str:
    return fmt_g((run.summary or {}).get("target_acc"), 2)


@rule("dp_fig1", "cot_dp", """Yang et al. Fig. 1: efficient Transformers need a larger embedding dimension D than the
standard one, growing with the problem size; the standard one does with a fixed D (the paper: 128 or 256 at every
size). From the smallest D reaching the target accuracy at each size (summary.json; none reached: infinite) and
the seed-mean accuracy of every cell (results.csv), five parts: for sparse and for linear, D >= standard's at every
size and > at some; for sparse and for linear, D non-decreasing in size and larger at the largest size than at
the smallest; some one D at which the standard model reaches the target at every size. Reproduced when all five
hold; partly when some; not reproduced when none; untested when no model reaches the target at any size (the
grid cannot tell the dimensions apart). Between folders with as many seeds, the one sweeping more D values is
preferred. Control: the standard Transformer on
the same grid and budget; power: untested where no model reaches the target (the grid cannot tell the models
apart); the share is bootstrapped over seeds where there are several.""", {"task": TASK_DP})
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
    return Outcome(verdict_of(parts), text, run.seeds(), sum(parts) / 5, lo, hi,
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


@rule("dp_flops", "cot_dp", """Yang et al. Table 2: the standard Transformer needs the fewest FLOPs to reach 90% accuracy
on Arithmetic at every length. Per size (min_gflops.csv; a model that never reaches the target: infinite),
the standard model's minimum GFLOPs is the lowest. Reproduced at every size; partly at some; not reproduced
at none; untested when no model reaches the target at any size. Absolute GFLOPs are not compared: the
lengths differ from the paper's. Control: the standard Transformer on
the same grid and budget; power: untested where no model reaches the target (the grid cannot tell the models
apart); the share is bootstrapped over seeds where there are several.""", {"task": TASK_DP})
def dp_flops(claim: Claim, run: Run) -> Outcome | None:
    rows = [r for r in run.table("min_gflops.csv") if r.get("task") == claim.p["task"]]
    if not rows:
        return None
    by_size: dict[int, dict[str, float]] = {}
    for r in rows:
        g = float(r["min_gflops"]) if r.get("min_gflops") not in ("", None) else math.inf
        by_size.setdefault(int(r["size"]), {})[r["model"]] = g
    lengths = {int(r["size"]): r.get("L", "?") for r in rows}
    text = "; ".join(f"L {lengths[z]}: " + ", ".join(f"{m} {'-' if g == math.inf else fmt_g(g, 3)}"
                                                      for m, g in sorted(v.items(), key=lambda kv: kv[1]))
                     for z, v in sorted(by_size.items()))
    if all(g == math.inf for v in by_size.values() for g in v.values()):
        return Outcome(UNTESTED, text, run.seeds())
    parts = _flops_parts(by_size)
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _flops_share(need_of(claim.p["task"], by_gflops=True)),
                                     "the same share, each cell's accuracy the resample's mean (results.csv)")
    return Outcome(verdict_of(parts), text + f" (min GFLOPs reaching {_target_acc(run)})", run.seeds(),
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


@rule("dp_locality", "cot_dp", """Yang et al. Sec. 6.2, Fig. 2: locality lowers the embedding dimension efficient
Transformers need: ED_Local needs a smaller D than ED. For sparse and for linear, at every size both tasks
have, ED_Local's smallest D reaching the target accuracy (summary.json; none reached: infinite) is <= ED's and
< at some size. Only sizes where the standard model reaches the target on ED count: the paper's standard
model learns ED at a fixed D, and where it does not, the training budget, not locality, is what ED lacks.
Reproduced when it holds for both models; partly for one; not reproduced for none; untested when the standard
model reaches the target on ED at no size, or no efficient model reaches it on either task at a counted size.
Between folders with as many seeds, the one sweeping more D values is preferred. Control: the standard Transformer on
the same grid and budget; power: untested where no model reaches the target (the grid cannot tell the models
apart); the share is bootstrapped over seeds where there are several.""", {"task": TASK_DP})
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
    return Outcome(verdict_of(parts), text, run.seeds(), sum(parts) / len(parts), lo, hi,
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


