"""Rates: power-law fits with bootstrap intervals and the computable terms of Eq. (17).

Theorem 4.1 (Eq. 17):
    int sum_t |H_t - H_hat_t| dx  <=  tau^2 C0 ( C1 / m_h^(2 alpha - 1)  +  C2 m_h^(beta+1) / m_FF^beta )
The first (attention) term is computable from the target: C0, C1 from `PODTarget.complexity`.
The second needs the feed-forward rate beta and C2, which are assumptions of the theorem, not
measurable properties of a target, so it is not computed.  The proof's own intermediate quantity
is the tail energy sum_{i > m_h} sigma_i^2 (Eq. 47), which `bound_terms` reports exactly.
"""
from __future__ import annotations

import numpy as np


def predicted_exponent(alpha: float) -> float:
    """Slope of log error vs log m_h predicted by Theorem 4.1: -(2 alpha - 1)."""
    return -(2.0 * alpha - 1.0)


def fit_power_law(m, err) -> tuple[float, float]:
    """Least-squares fit of log err = slope * log m + b; returns (slope, b)."""
    lm, le = np.log(np.asarray(m, float)), np.log(np.asarray(err, float))
    A = np.stack([lm, np.ones_like(lm)], axis=1)
    (slope, b), *_ = np.linalg.lstsq(A, le, rcond=None)
    return float(slope), float(b)


def bootstrap_exponent(m, blocks: np.ndarray, n_boot: int = 1000, seed: int = 0,
                       level: float = 0.95) -> dict:
    """Slope of the mean error over m, with a bootstrap interval.

    blocks: (n_seeds, n_blocks, len(m)) mean squared errors of disjoint blocks of held-out
    sequences.  Each bootstrap replicate resamples seeds, then blocks within each drawn seed,
    with replacement, and refits the slope on the resampled mean curve.
    """
    blocks = np.asarray(blocks, float)
    S, Bk, _ = blocks.shape
    slope, b = fit_power_law(m, blocks.mean(axis=(0, 1)))
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    for j in range(n_boot):
        si = rng.integers(0, S, S)
        bi = rng.integers(0, Bk, (S, Bk))
        curve = blocks[si[:, None], bi].mean(axis=(0, 1))
        boots[j] = fit_power_law(m, curve)[0]
    q = (1 - level) / 2
    return {"slope": slope, "intercept": b, "lo": float(np.quantile(boots, q)),
            "hi": float(np.quantile(boots, 1 - q)), "n_boot": n_boot}


def bound_terms(sigma: np.ndarray, alpha: float, C0: float, C1: float, tau: int, m_hs,
                tail_beyond: float = 0.0) -> list[dict]:
    """Per m_h: the tail energy of Eq. (47) and the attention term of Eq. (17).

    tail_beyond: sum of sigma_i^2 past the realised truncation K (rank inf).
    """
    sq = np.asarray(sigma, float) ** 2
    out = []
    for m in m_hs:
        out.append({"m_h": int(m), "tail_energy": float(sq[m:].sum()) + tail_beyond,
                    "attention_term": float(tau ** 2 * C0 * C1 * m ** predicted_exponent(alpha))})
    return out
