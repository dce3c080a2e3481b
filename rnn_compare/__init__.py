"""rnn_compare: the RNN against the Transformer under temporal ordering and mixing (Jiang & Li, Sec. 6,
Tables 2-3, App. D).  Linear targets H_t(x) = sum_s rho(s) x(t - s), their alterations, the models and
the run behind `rnn-compare`; the App. D.3 spectra behind `rnn-mixing-spectrum`:

    >>> import numpy as np
    >>> from rnn_compare import apply_linear, kernel, spectra_before_after, numerical_rank
    >>> apply_linear(np.array([[1.0, 0.0, 2.0]]), kernel("exp", 3)).round(4).tolist()   # targets.py's worked example
    [[1.0, 0.3679, 2.1353]]
    >>> s = spectra_before_after()            # rho = 1 + 2 sin(2 pi u) sin(2 pi v), inputs mixed as (x1, x1 + x2)
    >>> numerical_rank(s["before"]), numerical_rank(s["after"])
    (2, 3)

A whole run from Python: `run_compare(CompareConfig(...), command="...")`.  The names below are imported
on first use (scientific-python's lazy_loader), so `import rnn_compare` does not load torch.
"""
import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(__name__, submod_attrs={
    "targets": ["KERNELS", "kernel", "apply_linear", "mixed_kernel", "complexity"],
    "alterations": ["swap_ends", "permute", "invert_permutation", "random_filter", "mix"],
    "mixing": ["spectra_before_after"],
    "models": ["RNNBank"],
    "settings": ["RNNConfig", "TABLES", "MODELS", "PAPER"],
    "config": ["CompareConfig"],
    "cell": ["CompareCell"],
    "experiment": ["run_compare"],
    "report": ["numerical_rank", "write_spectrum_folder"],
})
