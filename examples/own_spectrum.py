"""Your own spectrum, on a basis of your own, through the whole rate pipeline (Jiang & Li, Eq. 8-10; Theorem 4.1).

    python examples/own_spectrum.py [OUT]        # OUT defaults to runs/examples/own-spectrum

1. a target from an explicit list of singular values sigma_i and a POD basis given as a Python function
   basis(x, k) -> x.shape + (k,) (here sqrt2 cos(pi i x), orthonormal on [0, 1]; phi="sin", psi="sin" is the
   paper's, App. C), its rank-m oracle;
2. the same target through `run_sweep` at the --quick sizes: fits, exponents, learned spectrum, figures,
   summary.md and report.json in OUT (seconds on one core).  config.json and the cell keys name the basis by
   `python:module:qualname#hash-of-its-source` (jackson.sweep.function_id), as they name a callable F or f.
"""
from __future__ import annotations

import sys

import numpy as np

from jackson import PODTarget, Spectrum, run_sweep, sweep_config

SIGMA = (1.0, 0.6, 0.35, 0.2, 0.1)          # any non-increasing list; its decay alpha_hat is fitted


def cheb(x, k):
    """phi_i(x) = sqrt2 cos(pi i x), i = 1..k, at points x of any shape: x.shape + (k,)."""
    return np.sqrt(2.0) * np.cos(np.pi * np.arange(1, k + 1) * np.asarray(x)[..., None])


cheb.sup = np.sqrt(2.0)                      # sup_i ||phi_i||_inf, for the constant C0 (nan when not stated)


def main(out: str = "runs/examples/own-spectrum") -> dict:
    target = PODTarget(Spectrum(explicit=SIGMA), phi=cheb, psi=cheb, tau=8)
    x = target.sample(256, seed=0)
    y = target(x)
    oracle = target.oracle(x, ms=[1, 2, 3, 5])
    for m in (1, 2, 3, 5):                  # rank 5: the rank-5 truncation is the target itself
        print(f"rank-{m} oracle MSE {np.mean((oracle['truncated'][m] - y) ** 2):.3e}")
    c = target.complexity()
    print("alpha_hat", round(target.decay(), 4), "C0", round(c["C0"], 4), "C1", round(c["C1"], 4))

    cfg = sweep_config(quick=True, sigma=SIGMA, phi=cheb, psi=cheb, m_h=(1, 2, 3), fit={"steps": 30}, out=out)
    result = run_sweep(cfg, command="python examples/own_spectrum.py", progress=False)
    (t,) = result.targets
    print(f"fitted exponent {t['exponents']['test']['slope']:+.2f}, predicted {t['predicted_exponent']:+.2f}; "
          f"results in {cfg.resolved_out()}")
    return result.summary


if __name__ == "__main__":
    main(*sys.argv[1:2])
