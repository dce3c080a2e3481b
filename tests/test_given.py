"""jackson/rate_sweep/given.py: the given-features model of the attention term alone, checked against the target
itself (exact representation once m_h >= r), a naive per-member loop, and its rank."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from jackson.fit import evaluate, fit
from jackson.hparams import FitConfig, ModelConfig
from jackson.rate_sweep.given import GivenFeatureBank, given_features
from jackson.pod import learned_spectrum
from synthetic.pod_target import PODTarget, Spectrum, basis_matrix

CFG = ModelConfig(features="given", features_k=8)


def _set_exact(bank: GivenFeatureBank, i: int, sigma: np.ndarray, same: bool) -> None:
    """W_Q = diag(sigma) on the phi block, W_K = I on the psi block: rho_hat = rho exactly (m_h >= r)."""
    mb = bank.members[i]
    r, K = len(sigma), bank.cfg.features_k
    with torch.no_grad():
        mb.W_Q.zero_()
        mb.W_K.zero_()
        for j in range(r):
            mb.W_Q[j, j] = float(sigma[j])
            mb.W_K[j, j if same else K + j] = 1.0
        mb.a.fill_(1.0)
        mb.b.fill_(0.0)


@pytest.mark.parametrize("psi", ["sin", "cos"])
def test_exact_representation_reproduces_the_target(psi):
    """C2 = 0: with the closed-form weights a member with m_h >= r *is* the target (to float32)."""
    target = PODTarget(Spectrum(alpha=1.0, rank=3), phi="sin", psi=psi, tau=6)
    x = target.sample(64, seed=3)
    bank = GivenFeatureBank(CFG, (3, 5), (0, 1), phi="sin", psi=psi)
    for i in range(2):
        _set_exact(bank, i, target.sigma, same=psi == "sin")
    y = bank(torch.tensor(x, dtype=torch.float32)).detach().double().numpy()
    for i in range(2):
        np.testing.assert_allclose(y[i], target(x), atol=2e-6)
    # and rho_hat on a grid is the target's kernel
    u = np.linspace(0, 1, 7)
    rh = bank.rho_hat(torch.tensor(u, dtype=torch.float32), torch.tensor(u, dtype=torch.float32)).double().numpy()
    np.testing.assert_allclose(rh[0], target.kernel(u, u), atol=1e-5)


def _cheb(x, k):          # a basis the lab does not name: sqrt2 cos(pi i x), orthonormal on [0, 1]
    return np.sqrt(2.0) * np.cos(np.pi * np.arange(1, k + 1) * np.asarray(x)[..., None])


def _legendre_cols(x, k):  # the "legendre" family as a callable
    return basis_matrix("legendre", x, k)


@pytest.mark.parametrize("same", [True, False])
def test_exact_representation_with_callable_bases(same):
    """A Python callable basis as the given features: the closed-form member is the target, as for the families."""
    psi = _cheb if same else _legendre_cols
    target = PODTarget(Spectrum(alpha=1.0, rank=3), phi=_cheb, psi=psi, tau=6)
    x = target.sample(64, seed=4)
    bank = GivenFeatureBank(CFG, (3, 4), (0, 1), phi=_cheb, psi=psi)
    assert bank.dim == (8 if same else 16)
    for i in range(2):
        _set_exact(bank, i, target.sigma, same=same)
    y = bank(torch.tensor(x, dtype=torch.float32)).detach().double().numpy()
    for i in range(2):
        np.testing.assert_allclose(y[i], target(x), atol=2e-6)


def test_forward_equals_a_naive_member_loop():
    """The folded computation (member index on the query side) is the plain Eq. (5) with h fixed; its
    internals (logits and pattern, (M, B, T, T)) are each member's q_t . k_s and softmax over s."""
    bank = GivenFeatureBank(CFG, (1, 2, 4), (5, 6, 7), phi="sin", psi="cos", f="square", F="tanh")
    with torch.no_grad():
        for mb in bank.members:
            mb.a.fill_(0.7)
            mb.b.fill_(-0.1)
    x = torch.rand(5, 6, generator=torch.Generator().manual_seed(0))
    y = bank(x)
    it = bank(x, return_internals=True)
    xn = x.double().numpy()
    h = np.concatenate([basis_matrix("sin", xn, 8), basis_matrix("cos", xn, 8)], axis=-1)
    for i, mb in enumerate(bank.members):
        q = h @ mb.W_Q.detach().double().numpy().T
        k = h @ mb.W_K.detach().double().numpy().T
        lg = q @ k.transpose(0, 2, 1)
        att = np.exp(lg - lg.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        want = np.tanh(0.7 * np.einsum("bts,bs->bt", att, xn ** 2) - 0.1)
        np.testing.assert_allclose(y[i].detach().double().numpy(), want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(it.logits[i].detach().double().numpy(), lg, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(it.pattern[i].detach().double().numpy(), att, rtol=1e-4, atol=1e-6)
    # precomputed features give the same numbers as raw inputs
    torch.testing.assert_close(bank(bank.features(x)), y)
    assert given_features(x, "sin", "cos", "square", 8).shape == (5, 6, 17)


def test_rho_hat_has_rank_at_most_m_h():
    bank = GivenFeatureBank(CFG, (1, 3), (0, 1), phi="sin", psi="cos")
    spec = learned_spectrum(bank, n=64, k=8, centered=False)
    assert (spec[0, 1:] < 1e-5 * spec[0, 0]).all()
    assert (spec[1, 3:] < 1e-5 * spec[1, 0]).all() and spec[1, 2] > 1e-3 * spec[1, 0]


def test_training_finds_the_rank_two_target_and_not_with_m_h_one():
    """A short fit (seconds): m_h = 2 gets far below m_h = 1 on a rank-2 target -- the knee of Theorem 4.1."""
    target = PODTarget(Spectrum(alpha=1.5, rank=2), phi="sin", psi="cos", tau=8)
    x, xt = target.sample(2048, seed=0), target.sample(512, seed=1)
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    bank = GivenFeatureBank(ModelConfig(features="given", features_k=4), (1, 2), (11, 12), phi="sin", psi="cos")
    res = fit(bank, bank.features(t(x)), t(target(x)),
              FitConfig(steps=600, batch_size=128, lr=3e-2, warmup=20, eval_every=50, eval_size=512), seed=0, progress=False)
    e = evaluate(bank, bank.features(t(xt)), t(target(xt))).mean(dim=1)
    assert not any(s.startswith("diverged") for s in res.status)
    assert e[1] < e[0] / 10, e


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="--features-k"):
        GivenFeatureBank(ModelConfig(features="given", features_k=2), (3,), (0,))
    with pytest.raises(ValueError, match="softmax"):
        GivenFeatureBank(ModelConfig(features="given", attention="linear"), (1,), (0,))


def test_initial_logit_scale_does_not_grow_with_m_h():
    """W_Q, W_K are scaled by m_h^(-1/4), so the initial logits have about the same sd at every m_h."""
    x = torch.rand(64, 16, generator=torch.Generator().manual_seed(1))
    sds = []
    for m in (1, 4, 16):
        bank = GivenFeatureBank(ModelConfig(features="given", features_k=16), (m,) * 8, tuple(range(8)), psi="cos")
        _, logits, _ = bank(x, return_internals=True)
        sds.append(float(logits.detach().std()))
    assert max(sds) / min(sds) < 2.0, sds
    assert math.isfinite(sum(sds))
