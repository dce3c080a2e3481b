"""Your own spectrum through the whole rate pipeline (Jiang & Li, Eq. 8-10; Theorem 4.1).

    python examples/own_spectrum.py [OUT]        # OUT defaults to runs/examples/own-spectrum

1. a target from an explicit list of singular values sigma_i (sin/sin POD basis, App. C), its rank-m oracle;
2. the same spectrum through `run_sweep` at the --quick sizes: fits, exponents, learned spectrum, figures,
   summary.md and report.json in OUT (seconds on one core).
"""
from __future__ import annotations

import sys

import numpy as np

from jackson import PODTarget, Spectrum, run_sweep, sweep_config

SIGMA = (1.0, 0.6, 0.35, 0.2, 0.1)          # any non-increasing list; its decay alpha_hat is fitted


def main(out: str = "runs/examples/own-spectrum") -> dict:
    target = PODTarget(Spectrum(explicit=SIGMA), tau=8)
    x = target.sample(256, seed=0)
    y = target(x)
    oracle = target.oracle(x, ms=[1, 2, 3, 5])
    for m in (1, 2, 3, 5):                  # rank 5: the rank-5 truncation is the target itself
        print(f"rank-{m} oracle MSE {np.mean((oracle['truncated'][m] - y) ** 2):.3e}")
    print("alpha_hat", round(target.decay(), 4), "C1", round(target.complexity()["C1"], 4))

    cfg = sweep_config(quick=True, sigma=SIGMA, m_h=(1, 2, 3), fit={"steps": 30}, out=out)
    summary = run_sweep(cfg, command="python examples/own_spectrum.py", progress=False)
    (t,) = summary["targets"]
    print(f"fitted exponent {t['exponents']['test']['slope']:+.2f}, predicted {t['predicted_exponent']:+.2f}; "
          f"results in {cfg.resolved_out()}")
    return summary


if __name__ == "__main__":
    main(*sys.argv[1:2])
