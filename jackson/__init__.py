"""jackson-lab: the approximation rate of the one-layer, one-head Transformer (Jiang & Li, Theorem 4.1).

Build a sequence target with a chosen spectrum, fit Eq. (5) Transformers of growing attention size
m_h, and read the rate:

    >>> from jackson import PODTarget, Spectrum
    >>> target = PODTarget(Spectrum(alpha=1.5, rank=float("inf")), tau=8)
    >>> x = target.sample(4, seed=0)                  # 4 sequences of 8 scalars in [0, 1]
    >>> target(x).shape                               # H_t(x) for every t
    (4, 8)

A whole sweep (cells, fits, oracles, exponents, figures, summary.md) of that target from Python, with the
command line's options and checks (`jackson-sweep --quick` for the target's own spectrum, bases and tau; the
quick preset is a smoke test of the pipeline, and README.md's example is a small run whose error falls):

    from jackson import SweepResult, run_sweep
    result = run_sweep(target, quick=True, seeds=(0, 1), out="runs/py-quick")
    result.exponents, result.results, result.paths["figures"]
    SweepResult.load("runs/py-quick")                 # the finished folder, opened again as the same result

The names below are the public interface; everything is imported on first use (so `import jackson`
does not load torch).  ARCHITECTURE.md says where every quantity of the paper lives.
"""
from __future__ import annotations

import importlib

__version__ = "1.0.0"   # the one place the version is written: pyproject.toml reads it, CITATION.cff repeats it
                        # (tests/test_repository.py), environment.json and the report name it

# public name -> module that defines it.  Written out here rather than with lazy_loader.attach (which
# synthetic, rnn_compare, vit_probe and cot_dp use): attach only loads submodules of the package itself,
# and jackson re-exports the targets of another package (synthetic).
# The functions `fit` and `pod` are not exported: a package attribute cannot be both a function and the
# submodule of the same name (importing jackson.fit rebinds jackson.fit); use jackson.fit.fit, jackson.pod.pod.
_EXPORTS = {
    # targets (Eq. 8-10)
    "PODTarget": "synthetic.pod_target", "Spectrum": "synthetic.pod_target", "TargetError": "synthetic.pod_target",
    "KernelTarget": "synthetic.kernel_target",
    # the model (Eq. 5), its training and the POD of what it learned
    "ModelConfig": "jackson.models", "TransformerBank": "jackson.models",
    "FitConfig": "jackson.fit", "evaluate": "jackson.fit",
    "learned_spectrum": "jackson.pod",
    # rates and the terms of the bound (Eq. 17)
    "predicted_exponent": "jackson.rates", "fit_power_law": "jackson.rates", "bootstrap_exponent": "jackson.rates",
    "bound_terms": "jackson.rates",
    # the rate sweep (Fig. 1)
    "SweepConfig": "jackson.rate_sweep.config", "sweep_config": "jackson.rate_sweep.config",
    "run_sweep": "jackson.rate_sweep.experiment", "SweepResult": "jackson.rate_sweep.experiment",
    "TargetKey": "jackson.rate_sweep.experiment",
    "RateCell": "jackson.rate_sweep.cell",
    # the shared core
    "run_cells": "jackson.sweep", "function_id": "jackson.sweep", "open_run": "jackson.runfolder", "Expression": "jackson.expr",
    "UsageError": "jackson.config",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'jackson' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
