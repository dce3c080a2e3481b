"""cot-dp sweep's tables and summary: the constant-answer baseline, the min-GFLOPs table, the smallest D per size
and its trend (`summarize`, summary.md / summary.json)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from jackson.hparams import block_size
from jackson.runfolder import write_atomic
from . import data, flops
from .tasks import TaskConfig
from .tokenizer import Tokenizer
from .cell import write_csv
from .grid import SweepConfig
from .plots import LOSS_MARK, sparse_misses, steps_to_loss


# ---- tables ------------------------------------------------------------------------------------

def answer_baseline(data_dir, task: TaskConfig, n_eval: int = 0) -> float:
    """What a model that ignores its input scores: the share of the scored test examples (the first
    n_eval, as `train.accuracy` scores them) whose answer is the training set's most frequent one.
    The files are read as `data.load` reads them (their test_ans.txt completes prompt-only lines)."""
    chain, tok = Path(data_dir) / "chain", Tokenizer.for_task(task)
    mode = pd.Series([t[-1] for t in data.read_lines(chain / "train_data.txt", task, tok, check_answers=False)]).mode()[0]
    test = data.read_lines(chain / "test_data.txt", task, tok, check_answers=False,
                           answers=data.read_answers(chain / "test_ans.txt"))
    test = test[:n_eval] if n_eval > 0 else test
    return float(np.mean([t[-1] == mode for t in test]))


def min_gflops(res: pd.DataFrame, target: float) -> pd.DataFrame:
    """Per task, model and size: the cheapest D whose (seed-mean) accuracy reaches `target` (Table 2)."""
    g = res.groupby(["task", "model", "size", "d_model"], as_index=False).agg(
        accuracy=("accuracy", "mean"), gflops=("gflops", "first"), gflops_params=("gflops_params", "first"), L=("L", "first"))
    rows = []
    for (task, model, size), grp in g.groupby(["task", "model", "size"]):
        ok = grp[grp.accuracy >= target].sort_values("gflops")
        best = ok.iloc[0] if len(ok) else None
        rows.append({"task": task, "model": model, "size": size, "L": int(grp.L.iloc[0]),
                     "min_d": int(best.d_model) if best is not None else None,
                     "min_gflops": float(best.gflops) if best is not None else np.nan,
                     "min_gflops_params": float(best.gflops_params) if best is not None else np.nan,
                     "best_accuracy": float(grp.accuracy.max())})
    return pd.DataFrame(rows)


def _trend(ds: list) -> str:
    """How the D needed for the target moves with the size (None: not reached)."""
    if all(d is None for d in ds):
        return "never reached"
    if any(d is None for d in ds):
        first_miss = next(i for i, d in enumerate(ds) if d is None)
        return "reached at small sizes only" if all(d is None for d in ds[first_miss:]) else "mixed"
    if ds[-1] > ds[0]:
        return "grows"
    return "flat" if len(set(ds)) == 1 else ("shrinks" if ds[-1] < ds[0] else "varies")


def _or_none(x: float) -> float | None:
    """NaN (no test line carries a CoT, as in the public benchmark's arithmetic test split) -> None,
    so summary.json stays valid JSON (null)."""
    return None if x != x else float(x)


def _f3(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{x:.3f}"


def summarize(out: Path, res: pd.DataFrame, cfg: SweepConfig, command: str) -> dict:
    mg = min_gflops(res, cfg.target_acc)
    write_csv(mg, out / "min_gflops.csv")
    pct = f"{cfg.target_acc:.0%}"
    md = [f"# cot-dp sweep summary ({cfg.preset_label})", "", f"Command: `{command}`", "",
          f"Preset: **{cfg.preset}**{cfg.changes_note}. Data: synthetic CoT datasets generated here (seed {cfg.data_seed}; "
          f"{cfg.n_train} train / {cfg.n_test} test examples per task and size, test disjoint from train), "
          f"in the public CoT benchmark's text format under `data/`. Models: {cfg.arch.n_layers} layers, "
          f"{cfg.arch.n_heads} heads, dropout {cfg.arch.dropout}; training: {cfg.train.total_steps(cfg.n_train)} "
          f"AdamW steps of batch {cfg.train.batch_size}, lr {cfg.train.lr:g} ({cfg.train.schedule}); seeds "
          f"{list(cfg.seeds)}. Accuracy = the final answer of a greedily generated CoT, over "
          f"{int(res.n_eval.iloc[0])} test examples. The paper trained 100 epochs on 1M examples with batch 512: "
          + ("this is that scale." if cfg.preset == "full" else "this run is far smaller, so its absolute accuracies are not the paper's."),
          ""]
    summary = {"command": command, "preset": cfg.preset, "target_acc": cfg.target_acc, "tasks": {}}
    for task in cfg.task_list():
        r = res[res.task == task]
        acc = r.groupby(["model", "size", "d_model"]).accuracy.mean().unstack("d_model")
        acc = acc.reindex([(m, s) for m in cfg.model_list() for s in sorted(r["size"].unique())])
        md += [f"## {task}", "", "Accuracy (mean over seeds); rows: model, size; columns: D. "
               "Sequence length L (longest, tokens): " + ", ".join(
                   f"size {s}: {int(r[r['size'] == s].L.iloc[0])}" for s in sorted(r["size"].unique())), "",
               "| model | size | " + " | ".join(f"D={d}" for d in acc.columns) + " |",
               "|---|---|" + "---|" * len(acc.columns)]
        for (m, s), vals in acc.iterrows():
            md.append(f"| {m} | {s} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
        if "baseline" in r:
            base = {int(k): float(v) for k, v in r.groupby("size").baseline.first().items()}
            summary.setdefault("baseline", {})[task] = base
            md += ["", "A constant answer (the training set's most frequent) scores " + ", ".join(
                f"{b:.3f} at size {s}" for s, b in base.items()) + " on the same test examples."]
        md += ["", f"Smallest D reaching {pct} and its GFLOPs per generated sequence (cot_dp/flops.py):", "",
               "| model | size | L | min D | GFLOPs | GFLOPs (24 M D^2 L only) |", "|---|---|---|---|---|---|"]
        t_sum = {}
        m_t = mg[mg.task == task]
        order = {m: i for i, m in enumerate(cfg.model_list())}
        for _, x in m_t.sort_values(["model", "size"], key=lambda c: c.map(order) if c.name == "model" else c).iterrows():
            reached = x.min_gflops == x.min_gflops
            md.append(f"| {x.model} | {x['size']} | {x.L} | {int(x.min_d) if reached else '-'} | "
                      f"{f'{x.min_gflops:.4g}' if reached else 'not reached'} | "
                      f"{f'{x.min_gflops_params:.4g}' if reached else '-'} |")
        for m in cfg.model_list():
            mm = m_t[m_t.model == m].sort_values("size")
            ds = [None if (d is None or d != d) else int(d) for d in mm.min_d]
            t_sum[m] = {"sizes": mm["size"].tolist(), "min_d": ds, "trend": _trend(ds),
                        "mean_accuracy": float(r[r.model == m].accuracy.mean()),
                        "mean_cot_exact": _or_none(r[r.model == m].cot_exact.mean()),
                        "mean_test_loss": _or_none(r[r.model == m].test_loss.mean())}
        summary["tasks"][task] = t_sum
        md += ["", "D needed for " + pct + " as the size grows: " + "; ".join(
            f"{m}: {', '.join('-' if d is None else str(d) for d in v['min_d'])} ({v['trend']}; mean accuracy "
            f"{v['mean_accuracy']:.3f})" for m, v in t_sum.items()), ""]
    if "arithmetic" in cfg.task_list():
        md += ["## Table 2 of the paper (Arithmetic, min GFLOPs to 90%), beside ours", "",
               "| model | " + " | ".join(f"paper L={L}" for L in flops.PAPER_TABLE2_LENGTHS) + " | measured here |",
               "|---|" + "---|" * (len(flops.PAPER_TABLE2_LENGTHS) + 1)]
        for m in cfg.model_list():
            ours = mg[(mg.task == "arithmetic") & (mg.model == m)].sort_values("size")
            meas = ", ".join(f"L={x.L}: {x.min_gflops:.3g}" if x.min_gflops == x.min_gflops else f"L={x.L}: not reached"
                             for _, x in ours.iterrows())
            md.append(f"| {m} | " + " | ".join(f"{v:g}" for v in flops.PAPER_TABLE2[m]) + f" | {meas} |")
        md += ["", "The paper's values are within 5% of 24 M D^2 L (block matrices only) with D = 64/128/128/128 "
               "(standard), 256/512/512/512 (linear), 128/256/256/256 (sparse); our GFLOPs column also counts "
               "attention and the output head (formula in cot_dp/flops.py).", ""]
    md += _claims(summary, cfg, res, out)
    write_atomic(out / "summary.md", "\n".join(md))
    write_atomic(out / "summary.json", json.dumps(summary, indent=1, default=float))
    return summary


def _claims(summary: dict, cfg: SweepConfig, res: pd.DataFrame, folder: Path | None = None) -> list[str]:
    """The paper's claim, stated beside what this run measured (no verdict the numbers do not give).  folder: the
    run's, whose cells' curves give ED / ED_Local's `steps_to_loss` (also into summary["steps_to_loss"])."""
    out = ["## The claim and what this run measured", "",
           "Claim (Sec. 6.2): efficient models need a larger D as the problem grows, the standard one does not, "
           "and locality reduces that need.", ""]
    for task, ms in summary["tasks"].items():
        out.append(f"- {task}: " + "; ".join(f"{m}: D for {cfg.target_acc:.0%} by size "
                                              f"{', '.join('-' if d is None else str(d) for d in v['min_d'])} ({v['trend']})"
                                              for m, v in ms.items()))
    if "ed_local" in summary["tasks"]:
        from .tasks import ed_local
        out.append("- ED_Local's CoT reaches back at most m = " + ", ".join(
            f"{ed_local.reach(cfg.task_cfg('ed_local', s))} (size {s})" for s in cfg.sizes_of("ed_local"))
            + " tokens (cot_dp/tasks/ed_local.py); ED's and LIS's reach back over the whole sequence")
    eds = [t for t in ("ed", "ed_local") if t in summary["tasks"]]
    if eds and "sparse" in cfg.model_list():
        a, parts = cfg.arch, []
        for t in eds:
            for s in cfg.sizes_of(t):
                Ls = res[(res.task == t) & (res["size"] == s)].L
                if len(Ls):
                    L = int(Ls.iloc[0])
                    miss = sparse_misses(cfg.task_cfg(t, s), L, a.sparse_c, a.sparse_k)
                    parts.append(f"{t} size {s} (L = {L}, B = {block_size(L)}): " + ", ".join(
                        f"{name} {share:.0%} ({far})" for name, (far, share) in miss.items()))
        out.append(f"- What one sparse layer can read (Eq. 6 mask, c = {a.sparse_c}, k = {a.sparse_k}): the share of "
                   "table entries whose recurrence reads a token outside the mask, and in brackets how far back that read "
                   "lies at most, in tokens, over 200 pairs (`sweep.sparse_misses`) -- " + "; ".join(parts)
                   + ". A read outside the mask can only arrive through a summary token of an earlier layer")
    pairs = [(a, b) for a, b in (("ed_local", "ed"), ("ed", "lis")) if a in summary["tasks"] and b in summary["tasks"]]
    for loc, other in pairs:
        T = summary["tasks"]
        both = [m for m in T[loc] if m in T[other]]
        kind = "locality, " if loc == "ed_local" else ""
        out.append(f"- {kind}{loc} vs {other}, means over the grid -- answer accuracy: " + "; ".join(
            f"{m} {T[loc][m]['mean_accuracy']:.3f} vs {T[other][m]['mean_accuracy']:.3f}" for m in both)
            + ". Exact CoT: " + "; ".join(
            f"{m} {_f3(T[loc][m]['mean_cot_exact'])} vs {_f3(T[other][m]['mean_cot_exact'])}" for m in both)
            + ". Held-out loss per CoT/answer token: " + "; ".join(
            f"{m} {_f3(T[loc][m]['mean_test_loss'])} vs {_f3(T[other][m]['mean_test_loss'])}" for m in both))
        steps = steps_to_loss(folder) if loc == "ed_local" and folder is not None else None
        if steps is not None and len(steps):
            word = lambda vs: ", ".join("never" if v is None else f"{v:,}" for v in vs) or "-"  # noqa: E731
            by_d = {}
            for D in sorted(int(d) for d in res[res.task.isin([loc, other])].d_model.unique()):
                st = steps[steps.task.isin([loc, other]) & (steps.d_model == D)].sort_values(["task", "model", "size", "seed"])
                per = {t: {m: [None if v != v else int(v) for v in g.step] for m, g in st[st.task == t].groupby("model")}
                       for t in (loc, other)}
                by_d[D] = per
                out.append(f"- locality, {loc} vs {other}: the step at which each cell's held-out loss per CoT token first "
                           f"fell below {LOSS_MARK:g} (per seed, D = {D}, from its curve.csv; `steps_to_loss`) -- " + "; ".join(
                               f"{m} {word(per[loc].get(m, []))} vs {word(per[other].get(m, []))}" for m in both)
                           + ". The ledger's rule compares D, not steps; this line is beside it, not in it")
            D = max(by_d)       # "d_model"/"steps": the largest D's, as before several D were swept; "by_d": each D's
            summary["steps_to_loss"] = {"threshold": LOSS_MARK, "d_model": D, "steps": by_d[D],
                                        "by_d": {str(d): v for d, v in by_d.items()}}
        base = summary.get("baseline", {})
        if loc in base and other in base:
            out.append(f"- a constant answer scores {loc}: " + ", ".join(f"{b:.3f}" for b in base[loc].values())
                       + f"; {other}: " + ", ".join(f"{b:.3f}" for b in base[other].values()) + " (by size)")
    out.append("")
    return out
