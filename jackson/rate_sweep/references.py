"""The reference runs that measure a curve's terms of Eq. (17) on the same target: the committed --term ff run (e_FF,
the feed-forward term alone) and the committed --features given run (e_attn, the attention term alone), each found by
key -- the settings that define what it measured -- and read as a curve over m_h (median over seeds)."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pandas as pd

from ..config import UsageError, need, read_json
from ..hparams import fit_config, model_config, recorded
from . import doubling
from .axes import families_of, rank_str


def ff_curves(folder: Path) -> dict:
    """A --term ff folder's e_FF per target: {(alpha, rank, m_FF): {m_h: median over seeds}} (for --ff-from)."""
    res = pd.read_csv(Path(folder) / "results.csv", dtype={"rank": str})
    if "m_ff" not in res:
        res["m_ff"] = 128
    return {(float(a), str(r), int(w)): g.groupby("m_h").test_mse.median().to_dict()
            for (a, r, w), g in res.groupby(["alpha", "rank", "m_ff"])}


SAME_FF = ("phi", "psi", "construction", "F", "f", "tau", "tail_tol", "k_max", "n_train", "n_test", "c", "sigma", "kernel",
           "model", "fit", "restarts")


def find_ff_run(config: dict, targets, root: Path = Path("reports/jackson")) -> str:
    """A finished --term ff folder under `root` made with this run's settings (everything in SAME_FF equal: targets,
    data, model and FFN class, fit) and holding one of its (alpha, rank, m_FF) targets -- e_FF at another width is
    another term (Eq. 17's m_FF): the committed answer to "which term limits this curve" for a run that did not
    measure it.  '' when there is none."""
    if not root.is_dir():
        return ""
    widths = config.get("m_ff") or [(config.get("model") or {}).get("width", 128)]    # no m_ff axis: the model's width
    want = {(float(a), str(r), int(w)) for a, r in targets for w in (widths if isinstance(widths, (list, tuple)) else [widths])}
    for cand in sorted(root.iterdir()):
        cfg_path, res = cand / "config.json", cand / "results.csv"
        if not (cfg_path.is_file() and res.is_file() and (cand / "summary.json").is_file()):
            continue
        try:
            other = read_json(cfg_path)
            rows = pd.read_csv(res, dtype={"rank": str}, usecols=lambda c: c in ("alpha", "rank", "m_ff"))
        except (OSError, ValueError, KeyError):
            continue
        if not isinstance(other, dict) or other.get("term") != "ff" or bool(other.get("quick")) != bool(config.get("quick")):
            continue
        if any(_setting(other, k) != _setting(config, k) for k in SAME_FF):
            continue
        w = rows["m_ff"] if "m_ff" in rows else pd.Series(128, index=rows.index)
        if want & {(float(a), str(r), int(x)) for a, r, x in zip(rows.alpha, rows["rank"], w)}:
            return str(cand)
    return ""


# the settings that define a target and its data: a given-features run with these equal measures this run's attention
# term alone (its model and fit are the given-features recipe's own, so they are not compared)
SAME_TARGET = ("F", "f", "tau", "tail_tol", "k_max", "n_train", "n_test", "c", "sigma", "kernel")


UNSET = {"c": 1.0, "sigma": [], "kernel": ""}     # a folder older than these options ran with these values


def _get(cfg: dict, k: str):
    v = cfg.get(k, UNSET.get(k))
    return list(v) if isinstance(v, tuple) else v



UNCAPPED = 2      # a given-features run is an uncapped reference up to m_h = features_k / UNCAPPED: with fewer features
                  # than that the rank-m_h member has no spare ones to choose from (FITTING.md: at features_k 16 the card's
                  # m_h 16 member stays at 1.11e-5 whatever the recipe; with 64, 5.7e-6)


def features_k(config: dict) -> int:
    """The given features a --features given run's config.json records (16 before the option existed)."""
    return int(recorded(config.get("model") or {}, "features_k"))


def uncapped_to(k: int, rank: str = "inf") -> float:
    """The largest m_h up to which k given features leave a reference uncapped: k / UNCAPPED, or every m_h where the
    target has no more than k terms (a rank-r target needs only r)."""
    return math.inf if rank != "inf" and int(float(rank)) <= k else k // UNCAPPED


def capped(config: dict, m_h_max: int, rank: str = "inf") -> bool:
    """Whether a given-features run (its config.json) is capped below a curve up to m_h_max (`uncapped_to`)."""
    return m_h_max > uncapped_to(features_k(config), rank)


def attn_note(folder: str, m_h_max: int, rank: str = "inf", stuck=None) -> str:
    """How the summary names a reference run's feature count, which way a cap cuts, and its stuck members left out."""
    left = ("; stuck members left out of e_attn (nested models: a failed fit of the reference): "
            + ", ".join(f"m_h {m} seed {sd}" for m, sd in stuck)) if stuck else ""
    try:
        cfg = read_json(Path(folder) / "config.json")
    except (OSError, ValueError):
        return "its feature count unreadable" + left
    k = features_k(cfg)
    if capped(cfg, m_h_max, rank):
        return (f"features_k {k}, capped: fewer than {UNCAPPED} x m_h {m_h_max} given features, so e_attn is too high "
                f"at the largest m_h and e_full / (e_attn + e_FF) too low there") + left
    return f"features_k {k}" + left


def find_attn_run(config: dict, targets, root: Path = Path("reports/jackson"), recipe: tuple | None = None) -> str:
    """A finished --features given folder under `root` on this run's targets and data (SAME_TARGET equal, the same
    (phi, psi) after --construction, the same quick flag) holding one of its (alpha, rank) targets: the attention term
    of Eq. (17) alone, measured.  One folder serves the whole run, so the folders holding the most of its targets come
    first.  A reference must not be capped below the curve it is compared with, so among them a folder with
    at least UNCAPPED x this run's largest m_h features (`capped`) comes first, and among those one whose members a
    doubling check labelled (doubling.py: its doubling.json); then one trained with `recipe`
    ((FitConfig, restarts), e.g. the given-features recipe: jackson-sweep passes GIVEN's); then by name.  A capped one
    is used only where there is no other, and the summary says so (`attn_note`).  '' when there is none."""
    found = _attn_runs(config, targets, root)
    most = max((n for _, _, n in found), default=0)     # one folder serves every target it holds:
    found = [(c, o) for c, o, n in found if n == most]  # the one holding the most of them first
    m_max = max((int(m) for m in config.get("m_h") or []), default=0)
    ranks = {str(r) for _, r in targets}
    rank = "inf" if "inf" in ranks or not ranks else str(max(int(float(r)) for r in ranks))
    pool = [(c, o) for c, o in found if not capped(o, m_max, rank)] or found
    pool = [(c, o) for c, o in pool if (Path(c) / doubling.META).is_file()] or pool    # checked by training on first
    best = [c for c, other in pool if recipe and recipe_of(other) == tuple(recipe)]
    return (best or [c for c, _ in pool] or [""])[0]


def _setting(config: dict, k: str):
    """A config.json field as a run of today would resolve it: a fit or model written before one of its fields existed
    reads with that field's default (the value it ran with), so a newer run of the same settings still matches."""
    v = config.get(k)
    if k == "fit" and isinstance(v, dict):
        return fit_config(v)
    if k == "model" and isinstance(v, dict):
        return dataclasses.asdict(model_config(v))
    return v


def recipe_of(config: dict) -> tuple:
    """(FitConfig, restarts) a run's config.json records: a fit written before a FitConfig field existed reads with
    that field's default (hparams.fit_config), so an older folder still matches the recipe it ran."""
    fit = config.get("fit")
    return (fit_config(fit) if isinstance(fit, dict) else None, config.get("restarts"))


def _attn_runs(config: dict, targets, root: Path) -> list[tuple[str, dict, int]]:
    """Every finished --features given folder under `root` that measures the attention term of one of this run's
    targets, by name: (folder, its config.json, how many of the run's targets it holds)."""
    if not root.is_dir():
        return []
    found = []
    want = {(float(a), str(r)) for a, r in targets}
    for cand in sorted(root.iterdir()):
        cfg_path, res = cand / "config.json", cand / "results.csv"
        if not (cfg_path.is_file() and res.is_file() and (cand / "summary.json").is_file()) or (cand / "SUPERSEDED.md").exists():
            continue
        try:
            other = read_json(cfg_path)
            rows = pd.read_csv(res, dtype={"rank": str}, usecols=lambda c: c in ("alpha", "rank"))
        except (OSError, ValueError, KeyError):
            continue
        if not isinstance(other, dict) or (other.get("model") or {}).get("features") != "given":
            continue
        if other.get("term", "full") != "full" or bool(other.get("quick")) != bool(config.get("quick")):
            continue
        if families_of(other) != families_of(config) or any(_get(other, k) != _get(config, k) for k in SAME_TARGET):
            continue
        held = want & {(float(a), str(r)) for a, r in zip(rows.alpha, rows["rank"])}
        if held:
            found.append((str(cand), other, len(held)))
    return found


def _stuck(res: pd.DataFrame) -> dict:
    from .checks import STUCK_FACTOR, outliers
    return {(float(a), str(r)): sorted((o["m_h"], o["seed"]) for o in outliers(g, STUCK_FACTOR))
            for (a, r), g in res.groupby(["alpha", "rank"])}


def attn_stuck(folder: Path) -> dict:
    """A --features given folder's stuck members, by the nested models' control (checks.outliers at
    checks.STUCK_FACTOR): {(alpha, rank): [(m_h, seed), ...]}; a failed fit of the reference, not the attention term."""
    return _stuck(pd.read_csv(Path(folder) / "results.csv", dtype={"rank": str}))


def attn_curves(folder: Path, stuck: dict | None = None) -> dict:
    """A --features given folder's e_attn per target: {(alpha, rank): {m_h: median over seeds}}, its stuck members
    (`attn_stuck`, or `stuck` when the caller has them) left out of the median; an m_h whose every member is stuck
    has no e_attn."""
    res = pd.read_csv(Path(folder) / "results.csv", dtype={"rank": str})
    stuck = _stuck(res) if stuck is None else stuck
    out = {}
    for (a, r), g in res.groupby(["alpha", "rank"]):
        bad = set(stuck.get((float(a), str(r)), []))
        keep = g[[(int(m), int(s)) not in bad for m, s in zip(g.m_h, g.seed)]]
        out[(float(a), str(r))] = keep.groupby("m_h").test_mse.median().to_dict()
    return out


def check_ff_from(cfg) -> None:
    """--ff-from: a finished --term ff jackson-sweep folder holding one of this run's targets; one line otherwise."""
    ref = Path(cfg.ff_from)
    need(cfg.term == "full" and cfg.model.features == "learned",
         "--ff-from: explains the curve of a learned-features --term full run")
    need((ref / "results.csv").is_file() and (ref / "config.json").is_file(),
         f"--ff-from: {ref} holds no results.csv and config.json (not a finished jackson-sweep folder)")
    try:
        other = read_json(ref / "config.json")
        res = pd.read_csv(ref / "results.csv", dtype={"rank": str}, usecols=["alpha", "rank"])
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(f"--ff-from: cannot read {ref} as a jackson-sweep folder ({e})") from None
    need(isinstance(other, dict) and other.get("term") == "ff",
         f"--ff-from: {ref} is not a --term ff run (its config.json says term {other.get('term', 'full')!r})")
    fam = families_of(other)
    need(tuple(fam) == cfg.families(), f"--ff-from: {ref} fitted other bases (phi, psi) {tuple(fam)}, this run "
                                       f"{cfg.families()}")
    mine = {(float(a), rank_str(r)) for a, r, _ in cfg.targets()}
    theirs = {(float(a), str(r)) for a, r in zip(res.alpha, res["rank"])}
    need(bool(mine & theirs), f"--ff-from: {ref} has none of this run's targets (alpha, rank) {sorted(mine)}")
