"""The tables (CSV, markdown, LaTeX) beside the paper's values, the point-range figure, and a finished folder's
figures drawn again from its tables (`redraw`)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from jackson.figures import figure_style, pyplot, save
from .report import seed_members, seed_range
from .alterations import mixing_filter
from .config import CompareConfig, filter_words
from .coupling import (coupling_section, missing_terms_check, missing_terms_section, plot_coupling, sign_rule_check,
                       sign_rule_section)
from .positions import concentration, position_section, zone_table
from .settings import MODELS, PAPER, TABLES, fmt_mean_sd
from jackson.config import read_json


def tables(out: Path, rows: pd.DataFrame, metas: dict, cfg: CompareConfig, command: str,
           pos: pd.DataFrame | None = None, spec: pd.DataFrame | None = None,
           check: pd.DataFrame | None = None) -> dict:
    """Table 2 / Table 3 layouts with the paper's values and Altered/Original ratios.  Diverged members
    (non-finite loss, or a training MSE above `explode` x E[y^2]: jackson/fit.py) are left out of every
    mean and named in the summary."""
    bad = rows.status.astype(str).str.startswith("diverged")
    diverged = rows[bad][["kernel", "alteration", "model", "seed", "status"]].to_dict("records")
    rows = rows[~bad]
    g = rows.groupby(["kernel", "alteration", "model"]).test_mse.agg(["mean", "std", "count"])
    long = g.reset_index()
    long["paper"] = [PAPER.get((k, a, m), np.nan) for k, a, m in zip(long.kernel, long.alteration, long.model)]
    long.to_csv(out / "tables_long.csv", index=False)
    md = ["# rnn-compare summary", "", f"Command: `{command}`", "",
          f"Data: synthetic linear targets H_t = sum_s rho(s) x(t-s), x ~ U[0,1], tau = {cfg.tau}; "
          f"held-out MSE, mean ± sd over {len(cfg.seeds)} seeds (model inits{seed_range(cfg.seeds)}). Ordering: the first {cfg.swap} "
          f"time steps swapped with the last {cfg.swap}; mixing: {filter_words(cfg)}, direction '{cfg.mix_direction}' "
          + ("((theta*x)[t] = sum_s theta(s) x(t+s), the paper's formula: the mixed target reads the future, so it is "
             "not causal and lies outside the RNN's space, although App. D.3 treats it as causal)"
             if cfg.mix_direction == "future" else "((theta*x)[t] = sum_s theta(s) x(t-s): causal)")
          + ". Paper values: Jiang & Li, Tables 2-3.", ""]
    summary = {"command": command, "tables": {}, "diverged": diverged,
               "theta": [float(v) for v in mixing_filter(cfg.filter, cfg.filter_length, cfg.filter_seed)]}
    if diverged:
        md += [f"**{len(diverged)} diverged member(s), left out of every mean below:** "
               + "; ".join(f"{d['model']}, {d['kernel']} kernel, {d['alteration']}, seed {d['seed']} ({d['status']})"
                           for d in diverged), ""]
    latex = []
    for name in (list(TABLES) if cfg.table == "all" else [cfg.table]):
        (k0, a0), (k1, a1) = TABLES[name]
        md += [f"## {name} ({'Table 3' if name == 'uniform' else 'Table 2'}, kernel {k0})", "",
               "| model | original (measured) | altered (measured) | altered/original (measured) | "
               "original (paper) | altered (paper) | altered/original (paper) |", "|---|---|---|---|---|---|---|"]
        tex = [r"\begin{tabular}{lcccc}", r"\hline", f"{name} & original & altered & ratio & paper ratio \\\\", r"\hline"]
        for m in MODELS:
            if (k0, a0, m) not in g.index or (k1, a1, m) not in g.index:   # every seed diverged
                md.append(f"| {m} | all seeds diverged | | | | | |")
                summary["tables"].setdefault(name, {})[m] = {"original": float("nan"), "altered": float("nan"),
                                                              "ratio": float("nan"), "paper_ratio": float("nan")}
                continue
            o, a = g.loc[(k0, a0, m)], g.loc[(k1, a1, m)]
            po, pa = PAPER.get((k0, a0, m)), PAPER.get((k1, a1, m))
            ratio, pratio = a["mean"] / o["mean"], (pa / po if po and pa else float("nan"))
            md.append(f"| {m} | {fmt_mean_sd(o['mean'], o['std'])} | {fmt_mean_sd(a['mean'], a['std'])} | {ratio:.3g} | "
                      f"{po:.3g} | {pa:.3g} | {pratio:.3g} |")
            tex.append(f"{m} & {o['mean']:.2e} & {a['mean']:.2e} & {ratio:.3g} & {pratio:.3g} \\\\")
            summary["tables"].setdefault(name, {})[m] = {"original": o["mean"], "altered": a["mean"],
                                                          "ratio": ratio, "paper_ratio": pratio}
        tex += [r"\hline", r"\end{tabular}", ""]
        latex += tex
        md.append("")
    spread = rows.groupby(["kernel", "alteration", "model"]).test_mse
    wild = [(k, v.tolist()) for k, v in spread if v.max() > 100 * v.min()]
    if wild:
        md += ["Seeds that disagree by more than 100x (the mean is dominated by the worst; per-seed MSE):", ""]
        md += [f"- {k[2]}, {k[0]} kernel, {k[1]}: " + ", ".join(f"{v:.3g}" for v in vals) for k, vals in wild]
        md.append("")
    if pos is not None and len(pos):
        md += position_section(pos, cfg)
        summary["positions"] = zone_table(pos, cfg).to_dict("records")
        summary["position_concentration"] = concentration(pos).to_dict("records")
    if spec is not None:
        md += coupling_section(spec, rows)
    if pos is not None and len(pos) and (pos.alteration == "mixed").any():
        check = missing_terms_check(cfg, pos) if check is None else check
        if len(check):
            check.to_csv(out / "missing_terms.csv", index=False, float_format="%.6g")
            md += missing_terms_section(check)
            summary["missing_terms"] = check.to_dict("records")
        rule = sign_rule_check(cfg, rows)
        if len(rule):
            md += sign_rule_section(rule)
            summary["sign_rule"] = rule.to_dict("records")
    md += ["## RNN complexity of the targets (App. D.1)", "",
           "| kernel | alteration | decay time | C1 | C2 | C_RNN |", "|---|---|---|---|---|---|"]
    for (k, a), c in sorted({(m["cell"]["kernel"], m["cell"]["alteration"]): m["complexity"]
                             for m in metas.values()}.items()):
        if c is None:
            md.append(f"| {k} | {a} | not causal: outside the RNN space (Prop. 6.1) | inf | - | inf |")
        elif a == "mixed" and cfg.mix_direction == "future":
            md.append(f"| {k} | {a} (causal part only; the target also reads the future) | {c['decay_time']:.3g} | "
                      f"{c['C1']:.3g} | {c['C2']:.3g} | {c['C_RNN']:.3g} |")
        else:
            md.append(f"| {k} | {a} | {c['decay_time']:.3g} | {c['C1']:.3g} | {c['C2']:.3g} | {c['C_RNN']:.3g} |")
    md.append("")
    (out / "summary.md").write_text("\n".join(md))
    (out / "tables.tex").write_text("\n".join(latex))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    return summary


@figure_style()
def plot(out: Path, long: pd.DataFrame, inits: str = "", rows: pd.DataFrame | None = None) -> Path:
    """Tables 2-3 as a point-range plot on a log axis (no bars: a bar's length means nothing there): per target
    and model, each seed's held-out MSE (small dots; diverged members left out, as in the tables), their median
    (large marker) and min-max range; the paper's value as a diamond in its model's colour.  `rows` is results.csv
    (per seed); without it, the mean and sd of tables_long.csv.  `inits` names the model inits when they do not
    start at 0 (report.seed_range)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    present = set(zip(long.kernel, long.alteration))
    order = [t for t in dict.fromkeys(t for ts in TABLES.values() for t in ts) if t in present]
    order.sort(key=lambda t: (t[0] != "exp", ["original", "permuted", "mixed"].index(t[1])))
    labels = [f"{k}\n{a}" for k, a in order]
    xs = np.arange(len(labels))
    ok = None
    if rows is not None:
        ok = rows[~rows.status.astype(str).str.startswith("diverged")]
    for j, m in enumerate(MODELS):
        d = long[long.model == m].set_index(["kernel", "alteration"])
        x = xs + (j - 0.5) * 0.34
        for xi, t in zip(x, order):
            if ok is not None:
                v = ok[(ok.kernel == t[0]) & (ok.alteration == t[1]) & (ok.model == m)].test_mse.to_numpy(float)
            else:
                v = np.array([d.loc[t, "mean"]], dtype=float) if t in d.index else np.array([])
            if not len(v):
                ax.annotate("all seeds\ndiverged", (xi, 0.02), xycoords=("data", "axes fraction"), ha="center",
                            fontsize=6, rotation=90)
                continue
            ax.scatter(np.full(len(v), xi) + np.linspace(-0.06, 0.06, len(v)), v, s=9, color=f"C{j}", alpha=0.6,
                       lw=0, zorder=2)
            ax.plot([xi, xi], [v.min(), v.max()], color=f"C{j}", lw=1.2, zorder=2)
            ax.scatter([xi], [np.median(v)], s=38, color=f"C{j}", edgecolor="white", lw=0.6, zorder=3)
        paper = [d.loc[t, "paper"] if t in d.index else PAPER.get((*t, m), np.nan) for t in order]
        # the paper's value in its model's colour (a black diamond's model was told only by its place)
        ax.scatter(x + 0.1, paper, color=f"C{j}", edgecolor="k", lw=0.6, marker="D", s=18, zorder=4)
        ax.scatter([], [], s=38, color=f"C{j}", label=f"{m} (median; dots: seeds; line: range)")
        ax.scatter([], [], color=f"C{j}", edgecolor="k", lw=0.6, marker="D", s=18, label=f"{m}: the paper's value")
    ax.set(yscale="log", xticks=xs, xticklabels=labels, ylabel="held-out MSE")
    ax.grid(False, axis="x")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.suptitle("RNN vs Transformer under temporal ordering and mixing (synthetic linear targets)"
                 + (f"; model inits{inits}" if inits else ""), fontsize=9)
    fig.tight_layout()
    path = out / "mse_bars.png"
    save(fig, path)
    return path


def redraw(folder) -> list[Path]:
    """A finished rnn-compare folder's Tables 2-3 figure (mse_bars.png) drawn again from its tables_long.csv and
    results.csv with `plot`, and its coupling_spectra.png from coupling_spectra.csv with `plot_coupling`, what the
    run calls; nothing else is written."""
    from jackson.config import need
    folder = Path(folder)
    missing = [n for n in ("tables_long.csv", "results.csv", "config.json") if not (folder / n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished rnn-compare folder)")
    cfg = read_json(folder / "config.json")
    inits = seed_range(seed_members(cfg))
    pngs = [plot(folder, pd.read_csv(folder / "tables_long.csv"), inits, pd.read_csv(folder / "results.csv"))]
    if (folder / "coupling_spectra.csv").is_file():
        pngs.append(plot_coupling(folder, pd.read_csv(folder / "coupling_spectra.csv")))
    return pngs
