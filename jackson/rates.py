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


LAW_FACTOR = 2.0     # an exponential decay must predict held-out log sigma_i with < 1/2 the power law's squared error
LAW_MIN_VALUES = 4   # cross-validation needs at least this many nonzero sigma_i (leave-one-out below 10, 5-fold above)


def spectrum_law(sigma) -> dict:
    """Is a spectrum a power law?  The goodness-of-fit test behind alpha_hat: two straight-line fits to log sigma_i
    over the nonzero values, against log i (a power law, slope -alpha_hat) and against i (an exponential decay,
    slope -1/ell), compared by their cross-validated squared error in log sigma_i (scikit-learn's
    LinearRegression and cross_val_score; leave-one-out with fewer than 10 values, else 5 shuffled folds,
    random_state 0).  Rule: "not a power law" when the exponential's error is below 1/LAW_FACTOR of the power
    law's; "power law" otherwise; "undecided" with fewer than LAW_MIN_VALUES values.  R^2 of the power law
    is reported beside it.  scikit-learn, not a hand-written loop: the folds and scores are its job.

        >>> spectrum_law([i ** -1.5 for i in range(1, 13)])["law"]
        'power law'
        >>> spectrum_law([np.exp(-i / 3) for i in range(1, 13)])["law"]
        'not a power law'
    """
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import KFold, LeaveOneOut, cross_val_score
    s = np.asarray(sigma, dtype=np.float64)
    i = np.flatnonzero(s > 0) + 1.0
    y = np.log(s[s > 0])
    out = {"law": "undecided", "n": int(len(y)), "cv_mse_power": float("nan"), "cv_mse_exponential": float("nan"),
           "r2_power": float("nan"), "rule": f"exponential's CV error < 1/{LAW_FACTOR:g} of the power law's: not a power law"}
    if len(y) < LAW_MIN_VALUES:
        out["why"] = f"{len(y)} nonzero values; the test needs {LAW_MIN_VALUES}"
        return out
    cv = LeaveOneOut() if len(y) < 10 else KFold(5, shuffle=True, random_state=0)
    err = {}
    for name, x in (("power", np.log(i)), ("exponential", i)):
        X = x[:, None]
        err[name] = max(0.0, -cross_val_score(LinearRegression(), X, y, cv=cv, scoring="neg_mean_squared_error").mean().item())
    r2 = float(LinearRegression().fit(np.log(i)[:, None], y).score(np.log(i)[:, None], y))
    law = "not a power law" if err["exponential"] < err["power"] / LAW_FACTOR else "power law"
    out.update(law=law, cv_mse_power=err["power"], cv_mse_exponential=err["exponential"], r2_power=r2)
    return out


def law_text(law: dict) -> str:
    """'power law (CV error in log sigma 1.2e-31 vs exponential 0.31; R^2 1.000)'."""
    if law["law"] == "undecided":
        return f"power law undecided ({law.get('why', '')})"
    return (f"{law['law']} (cross-validated squared error in log sigma_i: power law {law['cv_mse_power']:.2g}, "
            f"exponential {law['cv_mse_exponential']:.2g}; R^2 of the power law {law['r2_power']:.3f})")


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
