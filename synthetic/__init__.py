"""synthetic: the sequence targets of Jiang & Li.  POD targets H_t(x) = F(sum_s softmax_s(rho(x_t, x_s)) f(x_s))
with rho(u, v) = sum_i sigma_i phi_i(u) psi_i(v) (Eq. 8-10), from a spectrum or from any two-variable
kernel (its numerical POD), and the App. B.1 tasks (nearest point, weighted average, qSA):

    >>> from synthetic import PODTarget, Spectrum
    >>> t = PODTarget(Spectrum(alpha=1.0, rank=2), tau=4)
    >>> t.sigma.tolist()                      # sigma_i = i^-alpha, truncated at the rank
    [1.0, 0.5]
    >>> y = t(t.sample(3, seed=0))            # H_t(x) for 3 sequences of 4 scalars
    >>> y.shape
    (3, 4)
    >>> from synthetic import KernelTarget
    >>> k = KernelTarget(kernel="exp(-(u - v)**2 / 0.1)", rank=3, tau=4)   # a kernel of one's own
    >>> len(k.sigma)
    3

The names below are imported on first use (scientific-python's lazy_loader), so `import synthetic` loads
only what is asked for.
"""
import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(__name__, submod_attrs={
    "pod_target": ["PODTarget", "Spectrum", "TargetError", "decay_exponent", "basis_matrix"],
    "kernel_target": ["KernelTarget"],
    "nearest_point": ["NearestPoint"],
    "weighted_average": ["WeightedAverage"],
    "selection_average": ["SelectionAverage"],
    "task_batch": ["TaskBatch", "make_batch"],
})
