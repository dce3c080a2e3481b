"""Thin entry points: rnn-compare (Tables 2-3) and rnn-mixing-spectrum (App. D.3)."""
from __future__ import annotations

import argparse
import sys

from jackson.config import OneLineParser, cli_run, fail


def compare_main(argv: list[str] | None = None) -> int:
    from .experiment import QUICK, CompareConfig, run_compare

    cfg, summary = cli_run("rnn-compare", CompareConfig,
                           "RNN vs Transformer under temporal ordering and mixing (Jiang & Li, Tables 2-3): "
                           "measured tables beside the paper's.", QUICK, run_compare,
                           sys.argv[1:] if argv is None else argv)
    print(f"tables:  {cfg.out}/summary.md, {cfg.out}/tables.tex, {cfg.out}/tables_long.csv")
    print(f"figure:  {cfg.out}/mse_bars.png")
    for name, t in summary["tables"].items():
        for m, v in t.items():
            print(f"{name:9s} {m:11s} original {v['original']:.2e}  altered {v['altered']:.2e}  "
                  f"ratio {v['ratio']:.3g} (paper {v['paper_ratio']:.3g})")
    return 0


def spectrum_main(argv: list[str] | None = None) -> int:
    """Spectrum of rho(u, v) before and after the mixing x~ = (x1, a x1 + b x2) (App. D.3)."""
    import numpy as np
    from .mixing import spectra_before_after

    prog = "rnn-mixing-spectrum"
    p = OneLineParser(prog=prog, description=spectrum_main.__doc__,
                      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--kernel", default="1 + 2*sin(2*pi*u)*sin(2*pi*v)",
                   help="rho(u, v) as a numpy expression in u, v (sin, cos, exp, pi, sqrt allowed)")
    p.add_argument("--a", type=float, default=1.0, help="weight of x1 in the mixed second input")
    p.add_argument("--b", type=float, default=1.0, help="weight of x2 in the mixed second input")
    p.add_argument("--k", type=int, default=6, help="how many singular values to print")
    p.add_argument("--png", default="", help="also save a plot here")
    a = p.parse_args(sys.argv[1:] if argv is None else argv)
    names = {n: getattr(np, n) for n in ("sin", "cos", "exp", "sqrt", "abs", "tanh")} | {"pi": np.pi}
    try:
        code = compile(a.kernel, "<kernel>", "eval")
        bad = [n for n in code.co_names if n not in names and n not in ("u", "v")]
        if bad:
            raise ValueError(f"unknown name {bad[0]}")
        k = lambda u, v: eval(code, {"__builtins__": {}}, dict(names, u=u, v=v)) + 0 * u * v  # noqa: E731,S307
        k(np.array([0.5]), np.array([0.5]))
    except Exception as e:  # any parse or evaluation error of the user's expression
        fail(prog, f"--kernel: cannot evaluate '{a.kernel}' ({e})")
    if a.k < 1:
        fail(prog, f"--k: must be >= 1, got {a.k}")
    r = spectra_before_after(k, a.a, a.b, k=a.k)
    print(f"rho(u, v) = {a.kernel};  mixing x~ = (x1, {a.a:g} x1 + {a.b:g} x2)")
    print("before: " + "  ".join(f"{s:.4f}" for s in r["before"]))
    print("after:  " + "  ".join(f"{s:.4f}" for s in r["after"]))
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        i = np.arange(1, a.k + 1)
        ax.semilogy(i, np.maximum(r["before"], 1e-16), "o-", label="rho(u, v)")
        ax.semilogy(i, np.maximum(r["after"], 1e-16), "s--", label=f"rho(u, {a.a:g}u + {a.b:g}v)")
        ax.set(xlabel="index i", ylabel="singular value", ylim=(1e-4, None), title="App. D.3: mixing raises rank")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
        print(f"figure: {a.png}")
    return 0
