"""Tidy tables from a sweep's finished cells (`collect`), a target's curve over seeds (`target_curve`), the
reference run a grid is judged against, and the exponent of a block table."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from ..runfolder import table_path, write_atomic, write_table
from ..rates import bootstrap_exponent
from .blocks import read_blocks
from ..config import read_json
from ..hparams import recorded
from .columns import COLUMNS


ORACLES = {"test": "trained (held-out)", "oracle": "oracle: rank-m_h rho",
           "oracle_self_exact": "oracle: rank-m_h rho, s=t exact"}
# Theorem 4.1's own error, E_x sum_t |H_t - H_hat_t| (cell.py); cells made before it was measured have none
L1_KINDS = {"test_l1": "trained (held-out), L1 error of Theorem 4.1", "oracle_l1": "oracle: rank-m_h rho, L1 error"}


def rank_sort_key(r: str) -> float:
    return math.inf if r == "inf" else float(r)


def ff_width(meta: dict) -> int:
    """The cell's m_FF: the hidden width of f_hat and F_hat."""
    return int(meta["cell"].get("model", {}).get("width", 128))


SPECTRUM_KEYS = ["alpha", "rank", "seed", "m_ff", "m_h"]


def spectrum_long(wide: pd.DataFrame) -> pd.DataFrame:
    """The learned spectra as a tidy table, one row per (target, seed, m_FF, m_h, i): columns SPECTRUM_KEYS, i,
    sigma.  The cells keep one row per member with columns s1..sK (`cell.py`); this is what the run writes."""
    cols = [c for c in wide.columns if re.fullmatch(r"s\d+", c)]
    keys = [c for c in wide.columns if c not in cols]
    if not cols:
        return pd.DataFrame(columns=[*keys, "i", "sigma"])
    out = wide.melt(id_vars=keys, value_vars=cols, var_name="i", value_name="sigma")
    out["i"] = out["i"].str[1:].astype(int)
    return out.sort_values([*keys, "i"], kind="stable").reset_index(drop=True)


def spectrum_wide(table: pd.DataFrame) -> pd.DataFrame:
    """learned_spectrum.csv.gz as the plot takes it (one row per member, s1..sK), from the tidy layout or from the
    wide one that folders written before 2026-11-25 hold."""
    if "sigma" not in table:
        return table
    keys = [c for c in table.columns if c not in ("i", "sigma")]
    wide = table.pivot(index=keys, columns="i", values="sigma").reset_index()
    wide.columns = [c if isinstance(c, str) else f"s{c}" for c in wide.columns]
    return wide


def collect(out_dir: Path, cell_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    """Concatenate the cells' tables into the sweep's tidy tables and write them (the large ones gzip-compressed:
    loss_curves.csv.gz, learned_spectrum.csv.gz, blocks.csv.gz).  A cell's large tables are read as NAME.csv.gz or,
    in a cell written before they were compressed, NAME.csv (`table_path`)."""
    tabs = {}
    metas = [read_json(d / "cell.json") for d in cell_dirs]
    for name in ("rows", "blocks", "curve", "learned_spectrum", "restarts"):
        parts = []
        for d, meta in zip(cell_dirs, metas):
            path = table_path(d, f"{name}.csv")
            if not path.exists():                    # restarts.csv: cells written before restarts existed
                continue
            df = pd.read_csv(path, dtype={"rank": str})
            c = meta["cell"]
            if name != "rows":
                df.insert(0, "alpha", c["alpha"])
                df.insert(1, "rank", c["rank"])
                if "seed" not in df:
                    df.insert(2, "seed", c["seed"])
            if "m_ff" not in df:
                df.insert(3 if name != "rows" else 2, "m_ff", ff_width(meta))
            if name == "rows":                       # what an older cell did not write but its cell.json says
                if "term" not in df:
                    df["term"] = c.get("term", "full")
                if "activation" not in df:
                    df["activation"] = recorded(c.get("model", {}), "activation")
            parts.append(df)
        tabs[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    for t in tabs.values():
        if "rank" in t:
            t["rank"] = t["rank"].astype(str)
    tabs["diagnostics"] = pd.DataFrame([{"alpha": m["cell"]["alpha"], "rank": str(m["cell"]["rank"]), "m_ff": ff_width(m),
                                         "seed": m["cell"]["seed"], **m.get("diagnostics", {})} for m in metas])
    if len(tabs["rows"]):            # every folder the same columns, in their declared order (a measure an older
        tabs["rows"] = tabs["rows"].reindex(columns=list(COLUMNS["jackson-sweep results.csv"]))   # cell lacks: empty
    write_atomic(out_dir / "results.csv", tabs["rows"].to_csv(index=False, float_format="%.6e"))
    write_table(out_dir, "loss_curves.csv", tabs["curve"], float_format="%.6e")
    write_table(out_dir, "learned_spectrum.csv", spectrum_long(tabs["learned_spectrum"]), float_format="%.6e")
    write_table(out_dir, "blocks.csv", tabs["blocks"], float_format="%.6e")
    write_atomic(out_dir / "restarts.csv", tabs["restarts"].to_csv(index=False, float_format="%.6e"))
    write_atomic(out_dir / "diagnostics.csv", tabs["diagnostics"].to_csv(index=False, float_format="%.6e"))
    tabs["meta"] = {(m["cell"]["alpha"], str(m["cell"]["rank"]), ff_width(m)): m for m in metas}
    return tabs


# what `rho_hat` (the learned spectrum) is for each attention kind (jackson/models.py)
RHO_HAT = {"softmax": "rho_hat = (W_Q f_hat(u))^T W_K f_hat(v), Eq. (18)",
           "sparse": "rho_hat = (W_Q f_hat(u))^T W_K f_hat(v), Eq. (18), used only on the pairs the sparse pattern lets through",
           "linear": "the effective coupling log(phi(W_Q f_hat(u)).phi(W_K f_hat(v))), phi = elu + 1, whose softmax over s "
                     "is the linear-attention pattern"}
ATTENTION_TEXT = {
    "softmax": "softmax attention, Eq. (5) as written",
    "sparse": "sparse attention (beyond the paper): the softmax over s restricted to the two-sided Eq. (6) pattern "
              "{s : |t - s| < kB} U {every block's last c tokens}, B = 2^floor(log2 sqrt tau), c = k = 1",
    "linear": "linear attention (beyond the paper): sum_s phi(q_t).phi(k_s) v_s / sum_s phi(q_t).phi(k_s), "
              "phi = elu + 1, q = W_Q f_hat(x), k = W_K f_hat(x), non-causal -- a rank-m_h kernel in place of "
              "exp(rho_hat); the targets keep their softmax of a coupling"}


def attention_of(meta: dict) -> str:
    """The attention kind a cell used (cells written before the option existed used softmax)."""
    return meta["cell"].get("model", {}).get("attention", "softmax")


def targets_of(rows: pd.DataFrame):
    """(alpha, rank, m_ff) of every target (and feed-forward width) in the run."""
    keys = rows[["alpha", "rank", "m_ff"]].drop_duplicates().values.tolist()
    return sorted(((float(a), str(r), int(w)) for a, r, w in keys), key=lambda k: (k[0], rank_sort_key(k[1]), k[2]))


# the SweepConfig fields that define a target and its data: two runs compare only if these agree
SAME_DATA = ("phi", "psi", "F", "f", "tau", "tail_tol", "k_max", "n_train", "n_test", "seeds", "c", "sigma")


def reference_run(folder: str | Path, config: dict | None = None) -> dict:
    """Another jackson-sweep folder to set beside this one (--compare-to): its attention, its curves and
    exponents per target (from its summary.json), and the data fields in which its config differs."""
    folder = Path(folder)
    s = read_json(folder / "summary.json")
    other = read_json(folder / "config.json") if (folder / "config.json").exists() else {}
    differs = [k for k in SAME_DATA if config is not None and k in other and k in config and other[k] != config[k]]
    blocks = read_blocks(folder)
    return {"folder": str(folder), "attention": s.get("attention", "softmax"), "command": s.get("command", ""),
            "fit_range": s.get("fit_range"), "differs": differs, "blocks": blocks,
            "targets": {(float(t["alpha"]), str(t["rank"])): {
                "attention": t.get("attention", s.get("attention", "softmax")),
                "curve": {int(r["m_h"]): float(r["test_mse"]) for r in t["curve"]},
                "exponent": t.get("exponents", {}).get("test"), "checks": t.get("checks", {})}
                for t in s["targets"]}}


def block_exponent(blocks: pd.DataFrame, alpha: float, rank: str, fit_ms, kind: str = "test",
                   m_ff: int | None = None) -> dict:
    """Slope of log MSE vs log m_h over fit_ms with its bootstrap interval, from a blocks table
    (one row per m_h, seed, kind and block of held-out sequences)."""
    fit_ms = [int(m) for m in fit_ms]
    ranks = pd.to_numeric(blocks["rank"].astype(str))      # "2", "inf" (read as text) or 2.0, inf (as pandas reads)
    b = blocks[(blocks.alpha == alpha) & (ranks == float(rank)) & blocks.m_h.isin(fit_ms)]
    if m_ff is not None and "m_ff" in b:
        b = b[b.m_ff == m_ff]
    t = b[b.kind == kind].pivot_table(index=["seed", "block"], columns="m_h", values="mse")[fit_ms]
    arr = t.to_numpy().reshape(t.index.get_level_values(0).nunique(), -1, len(fit_ms))
    e = bootstrap_exponent(fit_ms, arr)
    if len(fit_ms) == 2:      # a line through two points: the "fit" is exact, so an interval would describe the data's
        e.update(lo=float("nan"), hi=float("nan"),          # noise, not a rate: none is given
                 why_no_interval=TWO_POINTS.format(*fit_ms))
    return e


TWO_POINTS = ("two m_h only, {} and {} (a fit takes the m_h in the fit range, below the rank, not diverged): a line "
              "through two points, no interval")


def failed_members(rows: pd.DataFrame) -> pd.Series:
    """The members left out of every curve and fit: diverged (or failed) ones."""
    return rows.status.astype(str).str.startswith(("diverged", "failed"))


def target_curve(rows: pd.DataFrame) -> pd.DataFrame:
    """One target's curve over seeds, a row per m_h, from its rows of results.csv (diverged members left
    out, counted in n_diverged): the medians and min-max bands the figures draw, the means the summary prints."""
    div = failed_members(rows)
    sel = rows[~div]
    curve = sel.groupby("m_h").agg(
        train_mse=("train_mse", "mean"), test_mse=("test_mse", "mean"),
        test_median=("test_mse", "median"), test_min=("test_mse", "min"), test_max=("test_mse", "max"),
        test_sd=("test_mse", "std"), oracle_mse=("oracle_mse", "mean"),
        oracle_self_exact_mse=("oracle_self_exact_mse", "mean"),
        n_seeds=("seed", "nunique"), n_converged=("status", lambda s: int((s == "converged").sum())),
        n_budget=("status", lambda s: int((s == "budget").sum()))).reset_index()
    if "test_mse_min" in sel:
        extra = sel.groupby("m_h").agg(restart_min=("test_mse_min", "mean"), restart_median=("test_mse_median", "mean"))
        curve = curve.merge(extra.reset_index(), on="m_h", how="left")
    if "test_l1" in sel and sel.test_l1.notna().any():
        l1 = sel.groupby("m_h").agg(test_l1=("test_l1", "mean"), test_l1_median=("test_l1", "median"),
                                    oracle_l1=("oracle_l1", "mean"))
        curve = curve.merge(l1.reset_index(), on="m_h", how="left")
    ndiv = rows[div].groupby("m_h").size()
    curve["n_diverged"] = [int(ndiv.get(m, 0)) for m in curve.m_h]
    return curve
