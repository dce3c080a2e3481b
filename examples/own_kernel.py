"""Your own coupling kernel rho(u, v) and your own F and f, as Python functions, through the rate pipeline.

    python examples/own_kernel.py [OUT]          # OUT defaults to runs/examples/own-kernel

The kernel's numerical POD (jackson/pod.py, Gauss-Legendre nodes) gives sigma_i, phi_i, psi_i; between the
nodes phi_i, psi_i are extended by the Nystrom formulas (synthetic/kernel_target.py).  F and f are plain
module-level functions: the in-process runner calls them directly, and on a Dask cluster (`scheduler=...`)
Dask's pickling (cloudpickle) sends them -- lambdas too; a module-level function of an importable module is
sent by name, so the workers must be able to import that module.  Cell keys and config.json name a function
by `python:module:qualname#hash-of-its-source` (jackson.sweep.function_id): edit it and its cells rerun.
On the command line the same target is `jackson-sweep --kernel "3*exp(-(u-v)**2/0.05)" --F "tanh(x)" --f "x**3"`.
"""
from __future__ import annotations

import sys

import numpy as np

from jackson import KernelTarget, run_sweep, sweep_config


def kernel(u, v):
    """A Gaussian bump coupling (not of the sin/sin family); numpy broadcasting gives the matrix."""
    return 3.0 * np.exp(-(u - v) ** 2 / 0.05)


def F(z):
    return np.tanh(z)


def f(x):
    return x ** 3


def main(out: str = "runs/examples/own-kernel") -> dict:
    target = KernelTarget(kernel=kernel, rank=float("inf"), F=F, f=f, tau=8)
    print(f"POD: K = {len(target.sigma)} terms, sigma = {np.round(target.sigma, 4).tolist()}, "
          f"alpha_hat = {target.alpha_hat:.3f}, tail beyond K = {target.resolved()['tail_energy']:.2e}")
    x = target.sample(256, seed=0)
    y = target(x)
    oracle = target.oracle(x, ms=[1, 2, 4])
    print("rank-m oracle MSE", {m: f"{np.mean((oracle['truncated'][m] - y) ** 2):.2e}" for m in (1, 2, 4)})

    cfg = sweep_config(quick=True, kernel=kernel, F=F, f=f, m_h=(1, 2, 3), fit={"steps": 30}, out=out)
    result = run_sweep(cfg, command="python examples/own_kernel.py", progress=False)
    (t,) = result.targets
    print(f"fitted exponent {t['exponents']['test']['slope']:+.2f}, oracle {t['exponents']['oracle']['slope']:+.2f}, "
          f"predicted {t['predicted_exponent']:+.2f}; results in {cfg.resolved_out()}")
    return result.summary


if __name__ == "__main__":
    main(*sys.argv[1:2])
