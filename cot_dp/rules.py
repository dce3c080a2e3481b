"""The rules that judge Fig. 1, Table 2 and Sec. 6.2 of Yang et al. on cot-dp sweep folders (reports/cot_dp/).

Registered with jackson.verdict's `rule` decorator; found by the report through the `jackson_lab.rules` entry
point (pyproject.toml).  Standard library only: the report never loads torch.
"""
from __future__ import annotations

import math
import statistics
from typing import Callable

from jackson.evidence import label, number, text_of, value, withheld
from jackson.verdict import INCONCLUSIVE, ONE_SEED, UNTESTED, Claim, Outcome, Run, fmt_g, one_of, rule, seed_bootstrap, verdict_of

TASK_DP = (True, one_of("arithmetic", "ed", "ed_local", "lis"))   # the task a claim is about
MODELS = ("standard", "sparse", "linear")                           # the models a cot-dp sweep trains


# ---- Yang et al. (cot-dp folders) ------------------------------------------------------------------------

def _need(s: dict, task: str) -> dict[str, dict[int, float]]:
    """Per model, the smallest d_model reaching the target accuracy at each size (inf: none swept did); a model
    whose entry is unreadable is left out (`_read_need` names it)."""
    return _read_need(s, task)[0]


def _read_need(s: dict, task: str) -> tuple[dict[str, dict[int, float]], list[str]]:
    """(`_need`, the problems): summary.json's tasks[task][model] sizes and min_d, one min_d per size; a min_d of null
    is the writer's 'no D swept reached the target' (inf), never absent; a size that is not a whole number >= 1 or
    a min_d that is not a positive number (NaN, inf, a word) is unreadable, and that model is left out and named."""
    tasks = s.get("tasks")
    by_model = tasks.get(task) if isinstance(tasks, dict) else None
    if not isinstance(by_model, dict):
        return {}, []
    out, bad = {}, []
    for model, v in by_model.items():
        where = f"summary.json's {task} {model}"
        sizes, ds = (v.get("sizes"), v.get("min_d")) if isinstance(v, dict) else (None, None)
        if not isinstance(sizes, list) or not isinstance(ds, list) or len(sizes) != len(ds) or not sizes:
            bad.append(f"{where} sizes / min_d are absent or unreadable (not two lists of one value per size)")
            continue
        zs = [value(z, f"{where} size", lo=1, whole=True) for z in sizes]
        dd = [value(d, f"{where} min_d at size {z}", lo=1e-300) for z, d in zip(sizes, ds) if d is not None]
        wrong = [str(r) for r in zs + dd if not r.ok]
        if wrong:
            bad.append("; ".join(wrong))
            continue
        out[model] = {z.value: (math.inf if d is None else float(d)) for z, d in zip(zs, ds)}
    return out, bad


def _unreadable_cells(run: Run, tasks: tuple[str, ...]) -> list[str]:
    """results.csv's rows of the tasks whose accuracy, size, D or GFLOPs could not be read (absent, NaN, inf, out of
    range, not a number), named by task, model, size, D and seed: the rule's per-seed readings cannot count them
    either way."""
    out = []
    for r in run.table("results.csv"):
        if r.get("task") in tasks:
            cell = "{} {} size {} D {} seed {}".format(*(text_of(r.get(k), 12) for k in ("task", "model", "size",
                                                                                         "d_model", "seed")))
            xs = [value(r.get("accuracy"), f"{cell}: accuracy", lo=0, hi=1),
                  value(r.get("size"), f"{cell}: size", lo=1, whole=True),
                  value(r.get("d_model"), f"{cell}: d_model", lo=1, whole=True)]
            if r.get("gflops") not in (None, ""):          # empty: not recorded (the interval then uses D only)
                xs.append(value(r.get("gflops"), f"{cell}: gflops", lo=0))
            if not r.get("model") or r.get("seed") in (None, ""):
                out.append(f"{cell}: the model or seed is absent")
            out += [str(x) for x in xs if not x.ok]
    return out


def _target(run: Run):
    """The folder's target accuracy (summary.json's target_acc), the reference every smallest D is read against."""
    return number(run.summary or {}, "target_acc", name="the target accuracy (summary.json's target_acc)", lo=0, hi=1)


def _cannot(run: Run, claim_tasks: tuple[str, ...], *more: str, tiebreak: tuple = ()) -> Outcome | None:
    """The untested outcome naming what the folder lacks (the target accuracy, unreadable cells, `more`), None
    when it lacks nothing."""
    t = _target(run)
    why = ([] if t.ok else [str(t)]) + [m for m in more if m]
    cells = _unreadable_cells(run, claim_tasks)
    if cells:
        why.append(f"results.csv: {len(cells)} cell{'s' if len(cells) != 1 else ''} could not be measured, and the "
                   f"smallest D cannot be read past them ({'; '.join(cells[:5])}{'; ...' if len(cells) > 5 else ''})")
    return Outcome(UNTESTED, "cannot judge: " + "; ".join(why), run.seeds(), tiebreak=tiebreak,
                   interval="none: the folder cannot judge the claim") if why else None


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
    acc = [x.value for x in (value(r.get("best_accuracy"), "best accuracy", lo=0, hi=1) for r in rows) if x.ok]
    base = (run.summary or {}).get("baseline")
    base = base.get(task) if isinstance(base, dict) else None
    base = [value(b, "baseline", lo=0, hi=1) for b in base.values()] if isinstance(base, dict) else []
    return (f"; best accuracy {fmt_g(max(acc), 3) if acc else 'n/a'} (constant-answer baseline "
            f"{', '.join(fmt_g(b.value, 2) for b in base) or 'n/a'})")      # shown beside the verdict, not judged


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
    """results.csv read once: (acc[task][(model, size, D)][seed], gflops[task][cell], target accuracy, seeds); a
    row that does not read is left out (`_unreadable_cells` names those of the claim's tasks)."""
    target = _target(run).value
    acc: dict[str, dict[tuple, dict[str, float]]] = {}
    gflops: dict[str, dict[tuple, float]] = {}      # a cell's GFLOPs do not depend on the seed
    for r in run.table("results.csv"):
        z, d, a = (value(r.get(k), k, lo=0) for k in ("size", "d_model", "accuracy"))
        seed, g = label(r.get("seed")), value(r.get("gflops"), "gflops", lo=0)
        if not (z.ok and d.ok and a.ok and seed and r.get("model")):
            continue
        cell = (r["model"], int(z.value), d.value)
        acc.setdefault(r.get("task"), {}).setdefault(cell, {})[seed] = a.value
        if g.ok:
            gflops.setdefault(r.get("task"), {})[cell] = g.value
    seeds = {s for cells in acc.values() for by_seed in cells.values() for s in by_seed}
    return acc, gflops, target, sorted(seeds, key=lambda s: (len(s), s))


def _dp_gaps(run: Run, needs: dict[str, dict[str, dict[int, float]]],
             sizes: bool = True) -> tuple[list[str], int | None]:
    """What the folder lacks that the rule reads (needs: task -> `_need`): a model with no entry at a size another
    model of the task has (sizes=True); a (task, model, size) of `needs` with no cell in results.csv; a cell of
    results.csv (task, model, size, D) with no row for a seed of config.json's seeds (else of the other cells');
    no cell at all where the folder states several seeds.  With how many seeds every cell holds (None: no cell)."""
    gaps = []
    for task, need in needs.items():
        every = set().union(*need.values()) if need and sizes else set()
        for m, by_size in sorted(need.items()):
            lack = sorted(every - set(by_size))
            gaps += [f"summary.json's {task} {m} has no entry at size {', '.join(map(str, lack))}"] if lack else []
    cells: dict[tuple, set] = {}
    for r in run.table("results.csv"):
        if r.get("task") in needs:
            cells.setdefault((r.get("task"), r.get("model"), label(r.get("size")), label(r.get("d_model"))),
                             set()).add(label(r.get("seed")))
    have = {c[:3] for c in cells}
    lack = [f"{t} {m} size {z}" for t, need in needs.items() for m, by_size in sorted(need.items())
            for z in sorted(by_size) if (t, m, str(z)) not in have]
    if cells and lack:
        gaps.append(f"results.csv has no cell of {', '.join(lack[:3])}{', ...' if len(lack) > 3 else ''}")
    stated, n = run.config.get("seeds"), run.seeds()
    if not cells:
        return gaps + ([f"results.csv holds no cell of {', '.join(needs)} (the per-seed accuracies of the folder's "
                        f"{n} seeds)"] if n and n > 1 else []), None
    seen = set().union(*cells.values()) - {None}
    if isinstance(stated, list):
        expected = [x for x in (label(y) for y in stated) if x]
        gaps += [f"config.json's seeds are unreadable ({text_of(stated, 30)})"] if len(expected) < len(stated) else []
    else:
        expected = sorted(seen, key=lambda x: (len(x), x))
        gaps += [f"results.csv holds {len(seen)} seeds, config.json states {n}"] if n and len(seen) < n else []
    short: dict[str, list[str]] = {}
    for (task, m, z, d), seeds in cells.items():
        for sd in (x for x in expected if x not in seeds):
            short.setdefault(sd, []).append(f"{task} {text_of(m, 12)} size {z} D {d}")
    gaps += [f"results.csv has no row for seed {sd} at {len(c)} cell{'s' if len(c) != 1 else ''} "
             f"({', '.join(c[:3])}{', ...' if len(c) > 3 else ''})" for sd, c in short.items()]
    return gaps, len([x for x in expected if x not in short])


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
    grid = run.config.get("grid")
    dims = [(grid.get(t) or {}).get("dims") if isinstance(grid, dict) and isinstance(grid.get(t) or {}, dict)
            else None for t in tasks]
    return (-len({label(d) for ds in dims if isinstance(ds, list) for d in ds} - {None}),)


def _target_acc(run: Run) -> str:
    return fmt_g((run.summary or {}).get("target_acc"), 2)


@rule("dp_fig1", "cot_dp", """Yang et al. Fig. 1: efficient Transformers need a larger embedding dimension D than the
standard one, growing with the problem size; the standard one does with a fixed D (the paper: 128 or 256 at every
size). From the smallest D reaching the target accuracy at each size (summary.json; none reached: infinite) and the
seed-mean accuracy of every cell (results.csv), five parts: for sparse and for linear, D >= standard's at every size
and > at some; for sparse and for linear, D non-decreasing in size and larger at the largest size than at the
smallest; some one D at which the standard model reaches the target at every size. Reproduced when all five hold;
partly when some; not reproduced when none. Control: the standard Transformer on the same grid and budget. Power:
untested where no model reaches the target at any size (the grid cannot tell the models apart); a folder of one size
cannot show growth: its two growth parts count neither way, and the verdict stands only if they could not change it,
else inconclusive; the share is
bootstrapped over seeds where there are several. Evidence: sparse's and linear's smallest D; reference: the folder's
own target accuracy (summary.json's target_acc, never assumed). An absent or unreadable model entry, target accuracy
or cell accuracy: untested, named; a size a model lacks, or a cell or seed results.csv lacks: inconclusive, named,
with what the rest would read. Between folders with as many seeds, the one sweeping more D values is preferred.""",
      {"task": TASK_DP})
def dp_fig1(claim: Claim, run: Run) -> Outcome | None:
    task = claim.p["task"]
    need, bad = _read_need(run.summary or {}, task)
    if not need and not bad:
        return None                     # the folder does not run this task
    gone = [f"{m} ({'the control' if m == 'standard' else 'evidence'}) is absent" for m in ("standard", "sparse", "linear")
            if m not in need]
    stop = _cannot(run, (task,), *bad, *(["summary.json's " + task + ": " + ", ".join(gone)] if gone else []),
                   tiebreak=_dp_order(run, (task,)))
    if stop:
        return stop
    base = f"smallest D reaching {_target_acc(run)} by size: {_need_text(need)}; {_dims(run, task)}"
    gaps, complete = _dp_gaps(run, {task: need})
    n = complete if gaps and complete is not None else run.seeds()
    if all(d == math.inf for m in need.values() for d in m.values()):
        v, text = withheld(UNTESTED, base + _best(run, task), gaps)
        return Outcome(v, text, n, tiebreak=_dp_order(run, (task,)))
    cells = _dp_cells(run)
    acc, _, target, seeds = cells
    fixed = _fixed_d(acc[task], target, seeds) if acc.get(task) else _fixed_from_need(need)
    parts = _fig1_parts(need, fixed)
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _fig1_share(need_of(task), need_of(task, fixed=True)),
                                     "the same share, each D read from the resample's mean accuracy (results.csv)",
                                     cells)
    text = (base + "; standard reaches it at every size with D " + (", ".join(f"{d:g}" for d in fixed) if fixed
                                                                    else "(none: no one D does)")
            + f"; {sum(parts)} of 5 parts hold")
    v = verdict_of(parts)
    if len(need["standard"]) < 2:       # one size cannot show growth: parts 2 and 4 count neither way (power)
        best, worst = (verdict_of([x if i not in (1, 3) else y for i, x in enumerate(parts)]) for y in (True, False))
        text += "; one size: the two growth parts cannot show"
        if best != worst:
            v, text = INCONCLUSIVE, f"would read {worst} ({text}) or {best} with them"
        else:
            v = worst
            text += ", and cannot change the verdict"
    v, text = withheld(v, text, gaps)
    return Outcome(v, text, n, sum(parts) / 5, lo, hi,
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


@rule("dp_flops", "cot_dp", """Yang et al. Table 2: the standard Transformer needs the fewest FLOPs to reach 90%
accuracy on Arithmetic at every length. Evidence: the standard model's minimum GFLOPs per size (min_gflops.csv; empty:
it never reaches the target, infinite). Control: the efficient models (sparse, linear) on the same grid and budget,
the competitors: a size with none cannot say "fewest". Per size, the standard model wins when its minimum is strictly
below every competitor's (a tie is no win). Reproduced at every judged size; partly at some; not reproduced at none.
Power condition: a size where no model reaches the target cannot tell the models apart; it is named and not judged,
and a folder with no judged size is untested. An unreadable target accuracy (summary.json's target_acc) or cell
accuracy (results.csv): untested; an unreadable value, a model's row absent at a size, or a seed a cell lacks:
inconclusive, named, with what the rest would read. Absolute GFLOPs are not compared: the lengths differ from the
paper's. The share is bootstrapped over seeds where there are several.""",
      {"task": TASK_DP})
def dp_flops(claim: Claim, run: Run) -> Outcome | None:
    rows = [r for r in run.table("min_gflops.csv") if r.get("task") == claim.p["task"]]
    if not rows:
        return None
    by_size: dict[int, dict[str, float]] = {}
    bad: dict[int, list[str]] = {}
    seen: dict[int, set] = {}          # the models with a row at each size
    for r in rows:
        z = value(r.get("size"), "min_gflops.csv size", lo=1, whole=True)
        if not z.ok:
            return _cannot(run, (claim.p["task"],), str(z)) or Outcome(UNTESTED, f"cannot judge: {z}", run.seeds())
        model = text_of(r.get("model") or "?", 20)
        seen.setdefault(z.value, set()).add(model)
        raw = r.get("min_gflops")
        g = value(raw, f"{model} min_gflops", lo=0) if raw not in ("", None) else None
        if g is not None and not g.ok:
            bad.setdefault(z.value, []).append(str(g))
            continue
        by_size.setdefault(z.value, {})[model] = math.inf if g is None else g.value
    stop = _cannot(run, (claim.p["task"],))
    if stop:
        return stop
    lengths = {int(float(r["size"])): text_of(r.get("L", "?"), 12) for r in rows}
    models = set().union(*seen.values())
    gaps = [f"min_gflops.csv has no row for {m} at L {lengths[z]}" for z in sorted(seen)
            for m in sorted(models - seen[z])]
    gaps += [f"L {lengths[z]} could not be measured" for z in sorted(bad)]
    gaps += _dp_gaps(run, {claim.p["task"]: {m: {z: 0 for z in seen if m in seen[z]} for m in models}}, False)[0]
    gaps += [f"min_gflops.csv names no model or an unknown one: {', '.join(sorted(models - set(MODELS)))}"] \
        if models - set(MODELS) else []
    text = "; ".join(f"L {lengths[z]}: " + ", ".join(f"{m} {'-' if g == math.inf else fmt_g(g, 3)}"
                                                      for m, g in sorted(v.items(), key=lambda kv: kv[1]))
                     for z, v in sorted(by_size.items()))
    parts, why = _flops_judged(by_size, bad)
    if why:
        text += "; not judged: " + "; ".join(f"L {lengths.get(z, z)}: {w}" for z, w in why.items())
    judged = [p for p in parts.values() if p is not None]
    if not judged:
        v, text = withheld(UNTESTED, "cannot judge at any size: " + text, gaps)
        return Outcome(v, text, run.seeds())
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _flops_share(need_of(claim.p["task"], by_gflops=True)),
                                     "the same share, each cell's accuracy the resample's mean (results.csv)")
    v, text = withheld(verdict_of(judged), text + f" (min GFLOPs reaching {_target_acc(run)}; {sum(judged)} of "
                       f"{len(judged)} judged sizes won by standard)", gaps)
    return Outcome(v, text, run.seeds(), sum(judged) / len(judged), lo, hi,
                   quantity="share of judged sizes where standard is strictly cheapest", interval=interval)


def _flops_judged(by_size: dict[int, dict[str, float]], bad: dict[int, list[str]] | None = None
                  ) -> tuple[dict[int, bool | None], dict[int, str]]:
    """Per size (by_size[size][model] = min GFLOPs reaching the target, inf: none; bad[size]: unreadable values):
    whether the standard model's is strictly the lowest (True / False), or None with why the size is not judged:
    an unreadable value, no standard model, no competitor, or no model reaching the target."""
    parts, why = {}, {}
    for z in sorted(set(by_size) | set(bad or {})):
        v = by_size.get(z, {})
        others = [g for m, g in v.items() if m != "standard"]
        if (bad or {}).get(z):
            why[z] = "could not be measured (" + "; ".join(bad[z]) + ")"
        elif "standard" not in v:
            why[z] = "no standard model (the evidence)"
        elif not others:
            why[z] = "no competitor (the control: nothing to be fewer than)"
        elif all(g == math.inf for g in v.values()):
            why[z] = "no model reaches the target (the grid cannot tell the models apart)"
        else:
            parts[z] = v["standard"] < min(others)
            continue
        parts[z] = None
    return parts, why


def _flops_parts(by_size: dict[int, dict[str, float]]) -> list[bool]:
    """Per judged size (`_flops_judged`): the standard model's min GFLOPs is strictly the lowest."""
    return [p for p in _flops_judged(by_size)[0].values() if p is not None]


def _flops_share(need: dict[str, dict[int, float]]) -> float | None:
    """dp_flops' share for one reading of need[model][size] = min GFLOPs reaching the target; None where the rule
    would say untested."""
    by_size: dict[int, dict[str, float]] = {}
    for m, zs in need.items():
        for z, g in zs.items():
            by_size.setdefault(z, {})[m] = g
    parts = _flops_parts(by_size)
    return sum(parts) / len(parts) if parts else None


@rule("dp_locality", "cot_dp", """Yang et al. Sec. 6.2, Fig. 2: locality lowers the embedding dimension efficient
Transformers need: ED_Local needs a smaller D than ED. For sparse and for linear, at every size both tasks have,
ED_Local's smallest D reaching the target accuracy (summary.json; none reached: infinite) is <= ED's and < at some
size. Only sizes where the standard model reaches the target on ED count: the paper's standard model learns ED at a
fixed D, and where it does not, the training budget, not locality, is what ED lacks. Reproduced when it holds for both
models; partly for one; not reproduced for none; untested when the standard model reaches the target on ED at no size,
or no efficient model reaches it on either task at a counted size. Evidence: the efficient models' smallest D on
ED_Local; control: the same models on ED (a folder without ED is untested); power: the standard model on ED (absent:
untested); the share is bootstrapped over seeds where there are several; reference: the folder's own target accuracy
(summary.json's target_acc). An absent or unreadable entry, target accuracy or cell accuracy: untested, named; an
efficient model absent from a task, a size a model lacks, a model with no counted size, or a cell or seed results.csv
lacks: inconclusive, named, with what the rest would read. Between folders with as many seeds, the one sweeping more D
values is preferred.""",
      {"task": TASK_DP})
def dp_locality(claim: Claim, run: Run) -> Outcome | None:
    s = run.summary or {}
    (ed, bad_ed), (loc, bad_loc) = _read_need(s, "ed"), _read_need(s, "ed_local")
    if not loc and not bad_loc:
        return None                     # the folder does not run ED_Local
    models = [m for m in ("sparse", "linear") if m in ed and m in loc]
    gone = ([] if ed or bad_ed else ["no ED run (the control)"]) \
        + ([] if models or not ed else ["no efficient model (sparse, linear) on both ED and ED_Local (the evidence)"]) \
        + ([] if "standard" in ed or not ed else ["no standard model on ED (the power condition)"])
    stop = _cannot(run, ("ed", "ed_local"), *bad_ed, *bad_loc, *gone, tiebreak=_dp_order(run, ("ed", "ed_local")))
    if stop:
        return stop
    text = f"ED: {_need_text(ed)}; ED_Local: {_need_text(loc)}; {_dims(run, 'ed')}"
    counted = _locality_counted(ed)
    gaps, complete = _dp_gaps(run, {"ed": ed, "ed_local": loc})
    gaps += [f"{m} has no entry on {' and '.join(t for t, d in (('ED', ed), ('ED_Local', loc)) if m not in d)}"
             for m in ("sparse", "linear") if m not in models]
    gaps += [f"{m}: no size both tasks have where the standard model reaches the target on ED" for m in models
             if not set(ed[m]) & set(loc[m]) & counted and counted]
    n = complete if gaps and complete is not None else run.seeds()
    if _locality_untested(ed, loc, models, counted):
        why = "" if counted else ("; the standard model reaches the target on ED at no size, so this run cannot "
                                  "tell locality from training budget")
        local = _best(run, "ed_local")
        v, text = withheld(UNTESTED, text + why + _best(run, "ed") + (f"; ED_Local{local[1:]}" if local else ""), gaps)
        return Outcome(v, text, n, tiebreak=_dp_order(run, ("ed", "ed_local")))
    parts = _locality_parts(ed, loc, models, counted)
    lo, hi, interval = _dp_bootstrap(run, lambda need_of: _locality_share(need_of("ed"), need_of("ed_local"), models),
                                     "the same share, each D read from the resample's mean accuracy (results.csv)")
    v, text = withheld(verdict_of(parts), text, gaps)
    return Outcome(v, text, n, sum(parts) / len(parts), lo, hi,
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


