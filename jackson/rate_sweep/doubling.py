"""The doubling check: a convergence label that training on can falsify.

The paper's rule is "train until the loss does not decrease" (App. C).  A schedule's own word ("converged",
`jackson.fit`) is decided inside one budget and cannot see what a longer budget gains (FITTING.md).  This check
asks the question directly: the same member -- same cell (target, data, model, recipe), same restart, same init
seed -- trained with twice the step budget.

    converged     twice the steps lowered its training MSE by less than DOUBLING_TOL (10%)
    budget        twice the steps lowered it by more: its error is an upper bound, the fit was unfinished
    not checked   no member trained with twice the steps exists

The budget is `steps x cycles` (a `--cycles` folder's cap); a partner must have exactly twice it and differ from
the base in nothing else the cell records (its m_h list may be a subset or a superset: members pair by m_h,
restart and init seed).  The label is written beside the base folder's tables (`doubling.csv`, its command and
partners in `doubling.json`) and read by `labels`.

    python -m jackson.rate_sweep.doubling reports/jackson/default-sin reports/jackson/sin-12k-a1.5-rinf

Standard library at import (pandas where a table is read): no torch, nothing trained.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING


from ..verdict import NOT_CHECKED_NOTE  # noqa: F401  (the rules' words read it from here)

if TYPE_CHECKING:                # pandas is imported where a table is read: the rules import the words alone
    import pandas as pd

DOUBLING_TOL = 0.10      # a member is converged when twice the steps lower its training MSE by less than this share
FACTOR = 2               # the partner's step budget over the base's
CONVERGED, BUDGET, NOT_CHECKED = "converged", "budget", "not checked"
LABELS = (CONVERGED, BUDGET, NOT_CHECKED)
UNCHECKED = "not_checked"       # the key of the not-checked members in a summary target's `doubling` entry
FILE, META = "doubling.csv", "doubling.json"
VARIES = ("steps", "cycles")   # the fit fields a partner changes; everything else of the cell must match
RULE = (f"doubling check: a member is {CONVERGED} when the same member (same cell, restart and init seed) trained "
        f"with {FACTOR}x the step budget (steps x cycles) lowers its training MSE by less than {DOUBLING_TOL:.0%}; "
        f"{BUDGET} when it lowers it by more (its error is then an upper bound); {NOT_CHECKED} when no such run exists")
COLUMNS = ("alpha", "rank", "m_ff", "term", "seed", "m_h", "restart", "init_seed", "chosen", "budget_steps",
           "partner_budget_steps", "train_mse", "partner_train_mse", "test_mse", "partner_test_mse", "change",
           "label", "cell", "partner", "partner_cell")


class DoublingError(ValueError):
    """A pair that cannot be checked: one line naming why."""


def label(train: float, doubled: float, tol: float = DOUBLING_TOL) -> str:
    """The label of one member from its training MSE at the budget and at twice it; unreadable = not checked."""
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in (train, doubled)) or train <= 0:
        return NOT_CHECKED
    return CONVERGED if (train - doubled) / train < tol else BUDGET


def budget_steps(fit: dict) -> int:
    """A fit's step budget: steps x cycles (folders written before cycles existed ran one)."""
    return int(fit["steps"]) * int(fit.get("cycles", 1) or 1)


def _cells(folder: Path) -> list[tuple[Path, dict]]:
    cells = folder / "cells"
    if not cells.is_dir():
        raise DoublingError(f"{folder}: no cells/ folder (not a jackson-sweep run folder)")
    out = []
    for c in sorted(p for p in cells.iterdir() if p.is_dir()):
        try:
            meta = json.loads((c / "cell.json").read_text())
        except (OSError, ValueError):
            continue            # an unfinished or unreadable cell: its members stay not checked
        if (c / "restarts.csv").is_file():
            out.append((c, meta))
    if not out:
        raise DoublingError(f"{folder}: no finished cell (cells/*/cell.json and restarts.csv)")
    return out


def _identity(cell: dict) -> dict:
    """What must match between a member and its partner: the cell without the budget and the m_h list, its fit and
    model read as a run of today reads them (a field written before it existed takes its default, the value it ran
    with: jackson.hparams.fit_config)."""
    import dataclasses
    from ..hparams import fit_config, model_config
    fit = {k: v for k, v in dataclasses.asdict(fit_config(cell.get("fit", {}))).items() if k not in VARIES}
    model = dataclasses.asdict(model_config(cell["model"])) if "model" in cell else None
    return {**{k: v for k, v in cell.items() if k not in ("fit", "m_hs", "model")}, "fit": fit, "model": model}


def _differences(a: dict, b: dict) -> list[str]:
    """Each field in which two identities differ, with both values (jackson.checkpoint.differs names them)."""
    from ..checkpoint import differs

    def at(d, name):
        for k in name.split("."):
            d = d.get(k) if isinstance(d, dict) else None
        return d
    return [f"{n} {at(a, n)!r} vs {at(b, n)!r}" for n in differs(a, b)]


def pair(base: Path, *partners: Path) -> pd.DataFrame:
    """Every restart of every member of `base` beside the same restart trained with twice the budget in one of
    `partners` (paired by cell, m_h, restart and init seed; the first partner holding it), labelled by `label`;
    members without a partner are not checked.  A partner holding no cell of `base` at twice its budget is refused,
    named."""
    import pandas as pd
    base = Path(base)
    theirs = [(Path(p), d, m, _identity(m["cell"])) for p in partners for d, m in _cells(Path(p))]
    rows, used = [], set()
    near: dict[Path, str] = {}
    for cdir, meta in _cells(base):
        cell = meta["cell"]
        mine_id = _identity(cell)
        mates = [(p, d, m) for p, d, m, ident in theirs if ident == mine_id]
        for p, d, m, ident in theirs:
            if p not in near and ident != mine_id:
                near[p] = f"{cdir.name}: " + "; ".join(_differences(mine_id, ident)[:3])
        doubled = [x for x in mates if budget_steps(x[2]["cell"]["fit"]) == FACTOR * budget_steps(cell["fit"])]
        for p, d, m in mates:
            if (p, d, m) not in doubled:
                near[p] = (f"{cdir.name}: partner budget {budget_steps(m['cell']['fit'])} steps, "
                           f"need {FACTOR * budget_steps(cell['fit'])}")
        mine = pd.read_csv(cdir / "restarts.csv")
        others = [(p, d, m, pd.read_csv(d / "restarts.csv")) for p, d, m in doubled]
        used.update(p for p, _, _ in doubled)
        width = cell.get("model", {}).get("width")
        for r in mine.itertuples():
            twin = mate = None
            for p, d, m, other in others:
                hit = other[(other.m_h == r.m_h) & (other.restart == r.restart) & (other.init_seed == r.init_seed)]
                if len(hit):
                    twin, mate = hit.iloc[0], (p, d, m)
                    break
            rows.append({
                "alpha": cell["alpha"], "rank": str(cell["rank"]), "m_ff": width, "term": cell.get("term", "full"),
                "seed": cell["seed"], "m_h": int(r.m_h), "restart": int(r.restart), "init_seed": int(r.init_seed),
                "chosen": bool(r.chosen), "budget_steps": budget_steps(cell["fit"]),
                "partner_budget_steps": budget_steps(mate[2]["cell"]["fit"]) if mate else None,
                "train_mse": float(r.train_mse), "partner_train_mse": float(twin.train_mse) if twin is not None else None,
                "test_mse": float(r.test_mse), "partner_test_mse": float(twin.test_mse) if twin is not None else None,
                "change": (1 - float(twin.train_mse) / float(r.train_mse)) if twin is not None and r.train_mse > 0 else None,
                "label": label(float(r.train_mse), float(twin.train_mse)) if twin is not None else NOT_CHECKED,
                "cell": cdir.name, "partner": _rel(mate[0], base) if mate else None,
                "partner_cell": mate[1].name if mate else None})
    for p in (Path(x) for x in partners):
        if p not in used:
            raise DoublingError(f"{p} holds no member of {base} trained with {FACTOR}x its budget"
                                + (f" ({near[p]})" if p in near else ""))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def counts(t: pd.DataFrame) -> dict:
    """The labels of the chosen restarts (the members a curve reads), counted."""
    chosen = t[t.chosen]
    return {k: int((chosen.label == k).sum()) for k in LABELS}


def summary_line(t: pd.DataFrame) -> str:
    """One line: how many members each label holds, the budget ones named with their change."""
    c = counts(t)
    chosen = t[t.chosen]
    moved = chosen[chosen.label == BUDGET]
    worst = chosen[chosen.label == CONVERGED].change.max() if c[CONVERGED] else None
    text = (f"doubling check ({FACTOR}x the steps, tolerance {DOUBLING_TOL:.0%}): {c[CONVERGED]} converged, "
            f"{c[BUDGET]} budget, {c[NOT_CHECKED]} not checked of {len(chosen)} members")
    if worst is not None:
        text += f"; the converged moved at most {worst:.1%}"
    if len(moved):
        text += "; budget: " + ", ".join(f"seed {r.seed} m_h {r.m_h} ({r.change:.1%})" for r in moved.itertuples())
    return text


def read(folder: Path) -> dict:
    """A folder's check as read once: {"partners": doubling.json's list (None when it is absent or unreadable),
    "members": {(alpha, rank, m_ff, term, seed, m_h): (label, change)} of the chosen restarts from doubling.csv ({}
    when it is absent, unreadable or lacks a column)}."""
    import pandas as pd
    folder = Path(folder)
    try:
        partners = json.loads((folder / META).read_text()).get("partners")
    except (OSError, ValueError, AttributeError):
        partners = None
    try:
        t = pd.read_csv(folder / FILE, dtype={"rank": str})
    except (OSError, ValueError):
        return {"partners": partners, "members": {}}
    if not set(COLUMNS) <= set(t.columns):
        return {"partners": partners, "members": {}}
    t = t[t.chosen.astype(bool)]
    return {"partners": partners,
            "members": {(float(r.alpha), str(r.rank), int(r.m_ff), str(r.term), int(r.seed), int(r.m_h)):
                        (r.label if r.label in LABELS else NOT_CHECKED, float(r.change)) for r in t.itertuples()}}


def labels(folder: Path) -> dict:
    """(alpha, rank, m_ff, term, seed, m_h) -> label of the chosen restart, from the folder's doubling.csv; a folder
    without one (or an unreadable one) gives {}, so every member reads not checked."""
    return {k: lab for k, (lab, _) in read(folder)["members"].items()}


def label_of(table: dict, alpha, rank, m_ff, term, seed, m_h) -> str:
    """One member's label from `labels`' table; a member it does not hold is not checked."""
    return table.get((float(alpha), str(rank), int(m_ff), str(term), int(seed), int(m_h)), NOT_CHECKED)


def target_entry(check: dict, rows: pd.DataFrame) -> dict:
    """A summary target's doubling labels from its folder's `read` check: its members (rows of results.csv that did
    not diverge) split into converged, budget ([m_h, seed, change]) and not checked, with the partner folders;
    summary.json stores it.  A check whose doubling.json is unreadable labels nothing."""
    table = check["members"] if check.get("partners") is not None else {}
    out = {"partners": check.get("partners"), CONVERGED: [], BUDGET: [], UNCHECKED: []}
    for r in rows.sort_values(["m_h", "seed"]).itertuples():
        lab, change = table.get((float(r.alpha), str(r.rank), int(r.m_ff), str(getattr(r, "term", "full")),
                                 int(r.seed), int(r.m_h)), (NOT_CHECKED, None))
        if lab == NOT_CHECKED:
            out[UNCHECKED].append([int(r.m_h), int(r.seed)])
        else:
            out[lab].append([int(r.m_h), int(r.seed)] + ([None if change != change else change] if lab == BUDGET else []))
    return out


def members(t: dict) -> dict:
    """A summary target's labels: its stored `doubling` entry, or -- a summary written before the check existed --
    every member not checked."""
    d = t.get("doubling")
    if d is not None:
        return d
    n = sum(v for k, v in (t.get("statuses") or {}).items() if not str(k).startswith(("diverged", "failed")))
    return {"partners": None, CONVERGED: [], BUDGET: [], UNCHECKED: [None] * n}


def entry_lists(t: dict):
    """A summary target's labels as three lists of [m_h, seed, ...] (converged, budget, not checked); None without an
    entry (a summary written before the check: every member not checked), False where the entry is unreadable."""
    d = t.get("doubling")
    if d is None:
        return None
    lists = [d.get(k) if isinstance(d, dict) else None for k in (CONVERGED, BUDGET, UNCHECKED)]
    ok = all(isinstance(x, list) and all(isinstance(i, list) and i and isinstance(i[0], int) for i in x) for x in lists)
    return tuple(lists) if ok else False


def m_h_labels(t: dict, m_h: int) -> tuple[int, int, int]:
    """(converged, budget, not checked) among one m_h's members of a summary target (all not checked without an
    entry: then the count is the curve's members at that m_h)."""
    d = t.get("doubling")
    if d is None:
        row = next((r for r in t.get("curve", []) if int(r["m_h"]) == int(m_h)), {})
        return 0, 0, int(row.get("n_converged", 0)) + int(row.get("n_budget", 0))
    return tuple(sum(1 for x in d[k] if int(x[0]) == int(m_h)) for k in (CONVERGED, BUDGET, UNCHECKED))


def write(base: Path, partners: list[Path], t: pd.DataFrame, command: str) -> None:
    """doubling.csv and doubling.json into the base folder, each whole or absent.  A check already there is replaced
    only by one that reads every partner it read (nothing it measured is lost); else refused, named."""
    from ..runfolder import write_atomic
    base = Path(base)
    meta_path = base / META
    names = [_rel(p, base) for p in partners]
    if meta_path.exists():
        try:
            old = json.loads(meta_path.read_text()).get("partners")
        except (OSError, ValueError):
            old = None
        if not isinstance(old, list) or not set(old) <= set(names):
            raise DoublingError(f"{meta_path} records a check against {', '.join(map(str, old or ['an unreadable partner']))}"
                                f", not all among {', '.join(names)}; name them too, or move the file aside")
    write_atomic(base / FILE, t.to_csv(index=False, float_format="%.6e"))
    write_atomic(meta_path, json.dumps({"command": command, "partners": names, "rule": RULE,
                                        "tolerance": DOUBLING_TOL, "factor": FACTOR, "counts": counts(t),
                                        "line": summary_line(t)}, indent=1) + "\n")


def _rel(partner: Path, base: Path) -> str:
    """The partner as a path relative to the base folder, so the pair holds in any checkout."""
    return os.path.relpath(Path(partner).resolve(), Path(base).resolve())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jackson.rate_sweep.doubling",
                                description="Label each member of a jackson-sweep folder by training on: " + RULE + ". "
                                "Pairs BASE with PARTNER, a folder of the same cells at twice the step budget (e.g. "
                                "the same command with --steps doubled), and writes BASE/doubling.csv and "
                                "doubling.json; trains nothing.")
    p.add_argument("base", help="the jackson-sweep folder whose members are labelled")
    p.add_argument("partners", nargs="+", metavar="PARTNER",
                   help="a jackson-sweep folder of (some of) the same cells at twice the step budget; several may be "
                        "given (e.g. one per seed): each member pairs with the first that holds it")
    a = p.parse_args(argv)
    command = "python -m jackson.rate_sweep.doubling " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        partners = [Path(x) for x in a.partners]
        t = pair(Path(a.base), *partners)
        write(Path(a.base), partners, t, command)
    except DoublingError as err:
        sys.stderr.write(f"{p.prog}: error: {err}\n")
        return 2
    except OSError as err:
        sys.stderr.write(f"{p.prog}: error: cannot read or write {getattr(err, 'filename', '') or ''}: "
                         f"{err.strerror or err}\n")
        return 1
    print(summary_line(t))
    print(f"wrote {Path(a.base) / FILE}, {Path(a.base) / META}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
