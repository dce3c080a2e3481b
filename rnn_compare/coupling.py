"""The coupling's spectrum before and after each alteration, and the checks of which terms a drop loses (the
sign rule, missing terms)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from jackson.figures import figure_style, integer_ticks, pyplot, save
from .config import CompareConfig
from .settings import HOT, MODELS


RANK_TOL = 1e-8     # a singular value below this fraction of sigma_1 counts as zero (numerical rank)


def coupling_spectra(cfg: CompareConfig) -> pd.DataFrame:
    """Singular values of each target's coupling matrix K (CompareCell.coupling): kernel, alteration, i, sigma."""
    rows = []
    for k, a in cfg.targets():
        K = cfg.target_cell(k, a).coupling()
        sv = np.linalg.svd(K, compute_uv=False)
        neg, nz = int((K < -1e-12).sum()), int((np.abs(K) > 1e-12).sum())
        rows += [{"kernel": k, "alteration": a, "i": i + 1, "sigma": float(v), "negative": neg, "nonzero": nz}
                 for i, v in enumerate(sv)]
    return pd.DataFrame(rows)


def energy_rank(sigma, frac: float) -> int:
    """The fewest leading singular values holding `frac` of sum sigma_i^2."""
    e = np.cumsum(np.asarray(sigma, float) ** 2)
    return int(np.searchsorted(e, frac * e[-1] * (1 - 1e-12)) + 1)


def coupling_section(spec: pd.DataFrame, rows: pd.DataFrame) -> list[str]:
    """The POD spectrum of each target's coupling beside the models' held-out MSE (median over seeds)."""
    med = rows.groupby(["kernel", "alteration", "model"]).test_mse.median()
    md = ["## The targets' temporal coupling: POD spectrum of K (y = K x)", "",
          "K is the tau x tau matrix of the linear target as a map of the inputs the model sees (column u: its answer to "
          f"the unit input e_u; `CompareCell.coupling`). Numerical rank: sigma_i > {RANK_TOL:g} sigma_1; r90 / r99: the "
          "fewest sigma_i holding 90% / 99% of sum sigma_i^2. A permutation of the inputs permutes K's columns, so its "
          "spectrum is the original's; mixing changes it. Negative entries of K: weights that softmax attention (>= 0) "
          "cannot give, so a Transformer must carry their signs through its values. Per i: coupling_spectra.csv.", "",
          "| kernel | alteration | sigma_1 | sigma_2 / sigma_1 | numerical rank | r90 | r99 | negative / nonzero entries of K "
          "| RNN MSE (median) | Transformer MSE (median) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (k, a), g in spec.groupby(["kernel", "alteration"], sort=False):
        sv = g.sort_values("i").sigma.to_numpy()
        mse = [f"{med[(k, a, m)]:.3g}" if (k, a, m) in med.index else "-" for m in MODELS]
        md.append(f"| {k} | {a} | {sv[0]:.4g} | {sv[1] / sv[0]:.3g} | {int((sv > RANK_TOL * sv[0]).sum())} | "
                  f"{energy_rank(sv, 0.9)} | {energy_rank(sv, 0.99)} | {g.negative.iloc[0]} / {g.nonzero.iloc[0]} | "
                  f"{mse[0]} | {mse[1]} |")
    return md + [""]


MISSING_TOL = 1.25    # missing_terms_check: a hot position is explained when its MSE is within this factor of the reference
MISSING_SHARE = 0.9   # ... and the drop is "one missing block" when one block explains this share of the hot positions


def drop_errors(K: np.ndarray, x: np.ndarray, j1: int, j2: int) -> np.ndarray:
    """Per output t, the held-out MSE of a model exact but for the terms K_t,t+j x(t+j), j1 <= j <= j2 (those inside
    the sequence), which it replaces by their mean: mean over the inputs x (n, tau) of
    (sum_j K_t,t+j (x(t+j) - 1/2))^2, x ~ U[0,1].  0 where the block holds no term."""
    tau = K.shape[0]
    xc = x - 0.5
    out = np.zeros(tau)
    for t in range(tau):
        out[t] = lost_terms_error(K, xc, t, [t + j for j in range(j1, j2 + 1) if 0 <= t + j < tau])
    return out


def lost_terms_error(K: np.ndarray, xc: np.ndarray, t: int, cols: list[int]) -> float:
    """mean over the centred inputs xc = x - 1/2 of (sum_{u in cols} K_t,u xc_u)^2: the MSE at t of a model exact
    but for the terms K_t,u x(u), u in cols, replaced by their mean (0 for no terms)."""
    return float(np.mean((xc[:, cols] @ K[t, cols]) ** 2)) if cols else 0.0


def sign_rule_errors(K: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per output t, the held-out MSE of a model exact but for the terms of row t of K whose sign differs from
    that of the row's largest entry off the diagonal (x(t)'s own term is kept), replaced by their mean:
    drop_errors' quantity for that set of terms.  The rule was read off the two 24k mixing runs (the future
    filter's x(t+4), the causal filter's tail; reports/rnn_compare/TRAINING.md), so on those it is a fit and
    on any other filter a prediction."""
    tau = K.shape[0]
    xc = x - 0.5
    out = np.zeros(tau)
    for t in range(tau):
        off = [u for u in range(tau) if u != t and abs(K[t, u]) > 1e-12]
        if not off:
            continue
        lead = np.sign(K[t, max(off, key=lambda u: abs(K[t, u]))])
        out[t] = lost_terms_error(K, xc, t, [u for u in off if np.sign(K[t, u]) != lead])
    return out


def sign_rule_check(cfg: CompareConfig, rows: pd.DataFrame) -> pd.DataFrame:
    """Per kernel with a mixed target, what the sign rule predicts for the Transformer's held-out MSE on it --
    the median original-target MSE over seeds plus the mean over t of sign_rule_errors on the held-out inputs
    the cells scored on -- beside each mixed seed's measured MSE.  Columns: kernel, seed, predicted, measured,
    ratio (measured / predicted), rule_error (the mean over t alone), original (the median added)."""
    out = []
    tr = rows[rows.model == "transformer"]
    for k in sorted(set(tr.kernel[tr.alteration == "mixed"])):
        orig = tr[(tr.kernel == k) & (tr.alteration == "original")].test_mse
        if not len(orig):
            continue
        cell = cfg.target_cell(k, "mixed", "transformer")
        rule = float(sign_rule_errors(cell.coupling(), cell.held_out_inputs()).mean())
        pred = rule + float(orig.median())
        for r in tr[(tr.kernel == k) & (tr.alteration == "mixed")].itertuples():
            out.append({"kernel": k, "seed": int(r.seed), "predicted": pred, "measured": float(r.test_mse),
                        "ratio": float(r.test_mse) / pred, "rule_error": rule, "original": float(orig.median())})
    return pd.DataFrame(out)


def sign_rule_section(check: pd.DataFrame) -> list[str]:
    md = ["## What the sign rule predicts for the mixed Transformer", "",
          "The rule read off the 24k mixing runs (reports/rnn_compare/TRAINING.md): the Transformer fits every term of "
          "row t of the mixed target's K except those whose sign differs from the row's largest off-diagonal entry "
          "(x(t)'s own term it fits). Predicted held-out MSE: the original target's (median over seeds) plus the mean "
          "over t of the error of losing those terms on these held-out inputs (`sign_rule_errors`). A fit on the "
          "filters it was read from (this lab's seed-0 length-5 filter, both directions); a prediction on any other. "
          "The original level added assumes the rest of the mixed target is fitted as well as the original; where the "
          "rule drops little, a smoother mixed target can be fitted better than that.",
          "", "| kernel | seed | predicted | measured | measured / predicted |", "|---|---|---|---|---|"]
    md += [f"| {r.kernel} | {r.seed} | {r.predicted:.3g} | {r.measured:.3g} | {r.ratio:.3g} |" for r in check.itertuples()]
    return md + [""]


def missing_terms_check(cfg: CompareConfig, pos: pd.DataFrame) -> pd.DataFrame:
    """Is a mixed target's drop the loss of one block of its coupling's terms?  For each mixed member (kernel,
    model, seed), its hot positions are those whose held-out MSE exceeds HOT x the original target's (median over
    seeds at t, as in `concentration`).  A block is a run of offsets j1..j2 (relative to t); a model exact but for
    the block's terms, replaced by their mean, has at t the MSE drop_errors(K, x, j1, j2)[t] on the very held-out
    inputs the cells scored on.  A hot t is explained by a block when its MSE is within MISSING_TOL of that; the
    block explaining the most hot t is kept (ties: the least median |log(MSE / reference)| over them, then the
    shorter block).  Columns: kernel, model, seed, n_hot, hot_first, hot_last, j1, j2, terms (the block in
    words, `terms_words`), coef_norm (median over the
    explained t of the block's ||K_t,t+j||_2), n_explained, ratio (mean MSE / mean reference over the explained
    t), corr (over the explained t: the reference moves with t only by the sampling of the held-out inputs, so a
    high correlation means the model's error follows those very inputs), unexplained (hot t not explained),
    one_block (it explains at least MISSING_SHARE of the hot t), fitted_where_present (positions outside the hot
    ones where the block's terms are in the target, reference > HOT x the member's MSE, yet fitted)."""
    med = pos.groupby(["kernel", "alteration", "model", "t"]).test_mse.median()
    out, refs = [], {}
    for (k, m, seed), g in pos[pos.alteration == "mixed"].groupby(["kernel", "model", "seed"]):
        if (k, "original", m) not in med.droplevel("t").index:
            continue
        base = med.loc[(k, "original", m)]
        e = g.set_index("t").test_mse.sort_index()
        hot = [int(t) for t in e.index if e[t] > HOT * base.get(t, np.inf)]
        row = {"kernel": k, "model": m, "seed": int(seed), "n_hot": len(hot), "hot_first": min(hot, default=None),
               "hot_last": max(hot, default=None), "j1": None, "j2": None, "terms": "", "coef_norm": np.nan, "n_explained": 0,
               "ratio": np.nan, "corr": np.nan, "unexplained": " ".join(map(str, hot)), "one_block": False,
               "fitted_where_present": ""}
        if hot:
            if k not in refs:               # every block's reference, once per kernel (the same for every member)
                cell = cfg.target_cell(k, "mixed", m)
                K = cell.coupling()
                x = cell.held_out_inputs()
                refs[k] = (K, {(j1, j2): drop_errors(K, x, j1, j2) for j1 in range(-(cfg.tau - 1), cfg.tau)
                               for j2 in range(j1, cfg.tau)})
            K, blocks = refs[k]
            best = None
            for (j1, j2), ref in blocks.items():
                hit = [t for t in hot if ref[t] > 0 and 1 / MISSING_TOL <= e[t] / ref[t] <= MISSING_TOL]
                if not hit:
                    continue
                score = (-len(hit), float(np.median([abs(np.log(e[t] / ref[t])) for t in hit])), j2 - j1)
                if best is None or score < best[0]:
                    best = (score, (j1, j2), hit)
            if best is not None:
                _, (j1, j2), hit = best
                ref = blocks[(j1, j2)]
                norm = [np.linalg.norm([K[t, t + j] for j in range(j1, j2 + 1) if 0 <= t + j < cfg.tau]) for t in hit]
                row.update(j1=j1, j2=j2, terms=terms_words(j1, j2), coef_norm=float(np.median(norm)), n_explained=len(hit),
                           ratio=float(e[hit].mean() / ref[hit].mean()),
                           corr=float(np.corrcoef(e[hit].to_numpy(), ref[hit])[0, 1]) if len(hit) >= 3 else np.nan,
                           unexplained=" ".join(str(t) for t in hot if t not in hit),
                           one_block=len(hit) >= MISSING_SHARE * len(hot),
                           fitted_where_present=" ".join(str(int(t)) for t in e.index
                                                         if t not in hot and ref[t] > HOT * e[t]))
        out.append(row)
    return pd.DataFrame(out)


def terms_words(j1, j2) -> str:
    """'x(t+4)' or 'x(t-31) .. x(t-4)': the terms of a block of offsets."""
    x = lambda j: f"x(t{int(j):+d})" if j else "x(t)"  # noqa: E731
    return x(j1) if j1 == j2 else f"{x(j1)} .. {x(j2)}"


def spans(text: str) -> str:
    """'0 1 2 5 7 8' -> '0-2, 5, 7-8' (a list of positions, for a table cell)."""
    ts = [int(v) for v in str(text).split()]
    parts, i = [], 0
    while i < len(ts):
        j = i
        while j + 1 < len(ts) and ts[j + 1] == ts[j] + 1:
            j += 1
        parts.append(f"{ts[i]}" if i == j else f"{ts[i]}-{ts[j]}")
        i = j + 1
    return ", ".join(parts)


def missing_terms_section(check: pd.DataFrame) -> list[str]:
    md = ["## Is the mixing drop a missing block of terms?", "",
          f"For each member on the mixed target: its hot positions (MSE above {HOT:g}x the original target's at t) "
          "and the run of terms K_t,t+j x(t+j), j1 <= j <= j2, of the target whose loss explains the most of them. A "
          "model exact but for those terms, which it replaces by their mean, has MSE "
          "mean((sum_j K_t,t+j (x(t+j) - 1/2))^2) on these held-out inputs; a hot position is explained when its MSE "
          f"is within {MISSING_TOL:g}x of that. Over the explained positions: MSE / that error, and their correlation "
          "over t (the reference moves with t only through the sampling of the inputs). *One block* when it "
          f"explains at least {MISSING_SHARE:.0%} of the hot positions. Fitted where present: positions outside the "
          "hot ones where those terms are in the target yet the member fits them. Per member: missing_terms.csv "
          "(`rnn_compare.coupling.missing_terms_check`).", "",
          "| kernel | model | seed | hot positions | missing terms | ||K|| of them | explained | MSE / their error | "
          "correlation over t | one block? | hot, not explained | fitted where present |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in check.itertuples():
        hot = f"{r.n_hot} (t = {int(r.hot_first)}..{int(r.hot_last)})" if r.n_hot else "0"
        if r.j1 is None or (isinstance(r.j1, float) and np.isnan(r.j1)):
            md.append(f"| {r.kernel} | {r.model} | {r.seed} | {hot} | - | - | 0 | - | - | no | "
                      f"{spans(r.unexplained) or '-'} | |")
            continue
        md.append(f"| {r.kernel} | {r.model} | {r.seed} | {hot} | {r.terms} | {r.coef_norm:.4g} | "
                  f"{r.n_explained} | {r.ratio:.4g} | {r.corr:.3g} | {'yes' if r.one_block else 'no'} | "
                  f"{spans(r.unexplained) or '-'} | {spans(r.fitted_where_present) or '-'} |")
    return md + [""]


@figure_style()
def plot_coupling(out: Path, spec: pd.DataFrame) -> Path:
    from matplotlib.lines import Line2D
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    styles = {"original": ("C0", "-"), "permuted": ("C3", ":"), "mixed": ("C2", "--")}
    groups = [(k, a, g.sort_values("i")) for (k, a), g in spec.groupby(["kernel", "alteration"], sort=False)]
    ratios = [g.sigma / g.sigma.iloc[0] for _, _, g in groups]
    kept = [float(r[r > RANK_TOL].min()) for r in ratios if (r > RANK_TOL).any()]
    # the axis ends a decade below the smallest nonzero value: a value below RANK_TOL sigma_1 is numerically zero
    # and is drawn on the axis's bottom edge (an open triangle), not at 1e-16 below empty decades
    bottom = 10.0 ** math.floor(math.log10(min(kept))) if kept else RANK_TOL
    zeros = False
    for (k, a, g), r in zip(groups, ratios):
        c, ls = styles.get(a, ("k", "-"))
        zero = r <= RANK_TOL
        (line,) = ax.plot(g.i, r.where(~zero, bottom), ls, color=c if k == "exp" else None, marker="o", ms=2.5,
                          label=f"{k} kernel, {a}")
        if zero.any():
            zeros = True
            ax.plot(g.i[zero], [bottom] * int(zero.sum()), ls="none", marker="v", ms=6, mfc="white",
                    color=line.get_color(), clip_on=False)
    ax.set(yscale="log", xlabel="i", ylabel="sigma_i / sigma_1 of K", ylim=(bottom, 2))
    integer_ticks(ax.xaxis, spec.i)
    handles = ax.get_legend_handles_labels()[0]
    if zeros:
        handles.append(Line2D([], [], ls="none", marker="v", ms=6, mfc="white", color="0.3",
                              label=f"numerically zero (< {RANK_TOL:g} sigma_1), drawn on the axis"))
    ax.legend(handles=handles, fontsize=7)
    fig.suptitle("POD spectrum of each target's temporal coupling K (y = K x)", fontsize=9)
    fig.tight_layout()
    path = out / "coupling_spectra.png"
    save(fig, path)
    return path


def block_references(cfg: CompareConfig, check: pd.DataFrame | None) -> dict:
    """(kernel, model) -> (j1, j2, reference MSE by t) for the block of terms that `missing_terms_check` found in
    most of that model's mixed members (only blocks marked one_block count; none when no block has a majority)."""
    refs = {}
    if check is None or not len(check):
        return refs
    for (k, m), g in check[check.one_block.astype(bool)].groupby(["kernel", "model"]):
        counts = g.groupby(["j1", "j2"]).size()
        n_members = int((check.kernel == k).mul(check.model == m).sum())
        if counts.max() * 2 <= n_members:
            continue
        j1, j2 = (int(v) for v in counts.idxmax())
        cell = cfg.target_cell(k, "mixed", m)
        refs[(k, m)] = (j1, j2, drop_errors(cell.coupling(), cell.held_out_inputs(), j1, j2))
    return refs
