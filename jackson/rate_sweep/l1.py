"""Theorem 4.1's own error beside the MSE, on the rank-m oracle alone (no training).

Theorem 4.1 bounds the L1 error int sum_t |H_t - H_hat_t| dx; the lab's fits and curves use the MSE.  To first order
the output error is linear in the logit error, and the logit error of the rank-m truncation has energy
sum_{i>m} sigma_i^2 ~ m^-(2 alpha - 1): so the MSE should fall like m^-(2 alpha - 1) and the L1 error like its square
root, m^-(alpha - 1/2), half the exponent.  `oracle_errors` measures both for the exact rank-m truncation of a POD
target (synthetic.pod_target.PODTarget.oracle), and `slopes` fits their exponents.

    python -m jackson.rate_sweep.l1 --alpha 1,1.5,2 --m-h 1-64 --n 20000 --k-max 1024 --out reports/jackson/l1-oracle
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from synthetic.pod_target import PODTarget, Spectrum
from ..config import parse_float_list, parse_int_list
from ..figures import figure_style, pyplot, save
from ..runfolder import environment, write_atomic, write_report
from ..rates import fit_power_law, predicted_exponent


def oracle_errors(alpha: float, m_hs, n: int = 20000, k_max: int = 1024, tau: int = 16, seed: int = 0,
                  phi: str = "sin", psi: str = "cos") -> pd.DataFrame:
    """Per m: the MSE (mean over sequences and positions) and the L1 error E_x sum_t |H_t - H_t^(m)| of the rank-m
    truncation of the rank-inf target sigma_i = i^-alpha, i <= k_max (trace-free by default), on n sequences."""
    target = PODTarget(Spectrum(alpha=alpha, k_max=k_max, tail_tol=1e-300), phi=phi, psi=psi, tau=tau)
    x = target.sample(n, seed)
    orc = target.oracle(x, list(m_hs))
    y = orc["exact"]
    tail = np.cumsum((target.sigma ** 2)[::-1])[::-1]
    return pd.DataFrame([{"alpha": alpha, "m_h": int(m), "mse": float(((orc["truncated"][m] - y) ** 2).mean()),
                          "l1": float(np.abs(orc["truncated"][m] - y).sum(axis=1).mean()),
                          "tail": float(tail[m]) if m < len(tail) else 0.0} for m in m_hs])


def slopes(t: pd.DataFrame) -> pd.DataFrame:
    """Per alpha: the fitted exponents of the MSE, the L1 error and the exact tail, and the first-order predictions."""
    out = []
    for alpha, g in t.groupby("alpha"):
        out.append({"alpha": alpha, "mse_slope": fit_power_law(g.m_h, g.mse)[0], "l1_slope": fit_power_law(g.m_h, g.l1)[0],
                    "tail_slope": fit_power_law(g.m_h, g["tail"])[0], "predicted_mse": predicted_exponent(alpha),
                    "predicted_l1": predicted_exponent(alpha) / 2, "m_h": f"{g.m_h.min()}..{g.m_h.max()}"})
    return pd.DataFrame(out)


@figure_style()
def plot(t: pd.DataFrame, path: Path) -> list[Path]:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), sharex=True)
    for (alpha, g), c in zip(t.groupby("alpha"), ("C0", "C1", "C2", "C3", "C4")):
        axes[0].loglog(g.m_h, g.mse, "o-", ms=3, color=c, label=f"α = {alpha:g}")
        axes[1].loglog(g.m_h, g.l1, "o-", ms=3, color=c, label=f"α = {alpha:g}")
    axes[0].set_ylabel("MSE of the rank-$m_h$ oracle")
    axes[1].set_ylabel(r"$E\,\sum_t |H_t - H^{(m_h)}_t|$ (Theorem 4.1's error)")
    for ax in axes:
        ax.set_xlabel("$m_h$")
        ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return save(fig, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m jackson.rate_sweep.l1",
                                description="MSE and Theorem 4.1's L1 error of the rank-m_h POD oracle, and their exponents.")
    p.add_argument("--alpha", default="1,1.5,2", help="decay exponents, comma list (each > 0.5) (default: 1,1.5,2)")
    p.add_argument("--m-h", default="1-64", help="ranks m_h of the truncation (default: 1-64)")
    p.add_argument("--n", type=int, default=20000, help="sequences (default: 20000)")
    p.add_argument("--k-max", type=int, default=1024, help="POD terms K of the target (default: 1024)")
    p.add_argument("--tau", type=int, default=16, help="sequence length (default: 16)")
    p.add_argument("--out", required=True, help="output folder")
    a = p.parse_args(argv)
    try:
        alphas, ms = parse_float_list(a.alpha), parse_int_list(a.m_h)
    except ValueError as e:
        p.exit(2, f"{p.prog}: error: --alpha, --m-h: {e}\n")
    if not all(x > 0.5 for x in alphas) or not all(1 <= m < a.k_max for m in ms) or a.n < 1 or a.tau < 1:
        p.exit(2, f"{p.prog}: error: need alpha > 0.5, 1 <= m_h < --k-max, --n >= 1, --tau >= 1\n")
    t = pd.concat([oracle_errors(al, ms, a.n, a.k_max, a.tau) for al in alphas], ignore_index=True)
    s = slopes(t)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "oracle_errors.csv", t.to_csv(index=False, float_format="%.6e"))
    write_atomic(out / "slopes.csv", s.to_csv(index=False, float_format="%.4f"))
    command = "python -m jackson.rate_sweep.l1 " + " ".join(argv if argv is not None else sys.argv[1:])
    write_atomic(out / "command.txt", command + "\n")
    write_atomic(out / "environment.json", json.dumps(environment("python -m jackson.rate_sweep.l1", command, None),
                                                      indent=1) + "\n")
    write_atomic(out / "config.json", json.dumps({"alpha": list(alphas), "m_h": list(ms), "n": a.n, "k_max": a.k_max,
                                                 "tau": a.tau, "seed": 0, "phi": "sin", "psi": "cos"}, indent=1))
    plot(t, out / "oracle_mse_l1.png")
    write_report(out, {
        "section": "jackson", "title": f"Theorem 4.1's L1 error beside the MSE, rank-m_h oracle ({out.name})",
        "data": (f"synthetic trace-free POD targets sigma_i = i^-alpha, K = {a.k_max} terms, tau = {a.tau}, {a.n} "
                 f"sequences of U[0,1] inputs; m_h {min(ms)}..{max(ms)}; no training"),
        "command": command, "seeds": "0 (one sample of sequences)",
        "paper": [{"quantity": f"alpha = {r.alpha:g}: exponent of the L1 error of the rank-m_h oracle (first order: "
                               f"half the MSE's)", "paper": r.predicted_l1, "measured": r.l1_slope} for r in s.itertuples()]
                 + [{"quantity": f"alpha = {r.alpha:g}: exponent of the MSE of the rank-m_h oracle (first order: "
                                 f"-(2 alpha - 1))", "paper": r.predicted_mse, "measured": r.mse_slope} for r in s.itertuples()],
        "text": "The output error is to first order linear in the logit error, so the MSE follows the tail "
                "sum_{i>m} sigma_i^2 and the L1 error its square root.",
        "figures": [{"file": "oracle_mse_l1.png", "caption": "MSE (left) and Theorem 4.1's L1 error E sum_t |H_t - "
                     "H_t^(m_h)| (right) of the rank-m_h POD truncation, against m_h."}]})
    for _, r in s.iterrows():
        print(f"alpha={r.alpha:g}: MSE exponent {r.mse_slope:+.2f} (first order {r.predicted_mse:+.2f}), L1 exponent "
              f"{r.l1_slope:+.2f} (half: {r.predicted_l1:+.2f}), exact tail {r.tail_slope:+.2f}, m_h {r.m_h}")
    print(f"wrote {out}/oracle_errors.csv, slopes.csv, oracle_mse_l1.png")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
