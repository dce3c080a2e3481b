"""jackson/models.py: the Eq. (5) Transformer bank against a plain reference implementation."""
from __future__ import annotations

import math
import pytest
import torch
from torch import nn

from jackson.models import Member, TransformerBank
from jackson.hparams import ModelConfig
from conftest import TINY_MODEL

M_HS = (1, 3, 8)
SEEDS = (11, 12, 13)


@pytest.fixture
def bank():
    return TransformerBank(TINY_MODEL, M_HS, SEEDS)


@pytest.fixture
def x():
    return torch.rand(5, 7, generator=torch.Generator().manual_seed(0))


def linear_stack(params) -> nn.Sequential:
    """nn.Linear layers with GELU between them, weights copied from the (x @ W + b) storage."""
    layers = []
    n = len(params) // 2
    for j in range(n):
        W, b = params[2 * j].detach(), params[2 * j + 1].detach()
        lin = nn.Linear(W.shape[0], W.shape[1])
        with torch.no_grad():
            lin.weight.copy_(W.T)
            lin.bias.copy_(b[0])
        layers.append(lin)
        if j < n - 1:
            layers.append(nn.GELU())
    return nn.Sequential(*layers)


@torch.no_grad()
def reference_forward(member: Member, x: torch.Tensor):
    """One member, one sequence at a time, no padding: returns y (B, T), logits (B, T, T)."""
    f_hat, F_hat = linear_stack(list(member.f_hat)), linear_stack(list(member.F_hat))
    ys, ls = [], []
    for seq in x:
        h = f_hat(seq[:, None])                       # (T, n)
        q = h @ member.W_Q.T                          # (T, m_h)
        k = h @ member.W_K.T
        v = h @ member.W_V.T                          # (T, d_v)
        logits = torch.stack([torch.stack([q[t] @ k[s] for s in range(len(seq))]) for t in range(len(seq))])
        att = torch.exp(logits - logits.max(dim=1, keepdim=True).values)
        att = att / att.sum(dim=1, keepdim=True)
        z = att @ v
        ys.append(F_hat(z)[:, 0])
        ls.append(logits)
    return torch.stack(ys), torch.stack(ls)


def test_output_shapes(bank, x):
    y = bank(x)
    assert y.shape == (3, 5, 7)
    it = bank(x, return_internals=True)
    assert it.y.shape == (3, 5, 7)
    assert it.logits.shape == (3, 5, 7, 7) and it.pattern.shape == (3, 5, 7, 7)
    torch.testing.assert_close(it.y, y, rtol=0, atol=0)
    assert len(bank) == 3 and bank.m_hs == M_HS and bank.seeds == SEEDS and bank.m_max == 8
    # per-member inputs (M, B, T): member i sees its own x
    xs = torch.stack([x, x.flip(0), x * 0.5])
    y2 = bank(xs)
    assert y2.shape == (3, 5, 7)
    torch.testing.assert_close(y2[0], y[0])
    torch.testing.assert_close(y2[1], y[1].flip(0))


def test_member_shapes():
    cfg = ModelConfig(n=8, d_v=6, width=16, depth=3)
    mb = Member(cfg, m_h=3, seed=0)
    assert mb.W_Q.shape == (3, 8) and mb.W_K.shape == (3, 8) and mb.W_V.shape == (6, 8)
    assert [tuple(p.shape) for p in mb.f_hat] == [(1, 16), (1, 16), (16, 16), (1, 16), (16, 8), (1, 8)]
    assert [tuple(p.shape) for p in mb.F_hat] == [(6, 16), (1, 16), (16, 16), (1, 16), (16, 1), (1, 1)]


def test_pattern_is_softmax_of_logits(bank, x):
    it = bank(x, return_internals=True)
    torch.testing.assert_close(it.pattern, torch.softmax(it.logits, dim=-1))
    torch.testing.assert_close(it.pattern.sum(-1), torch.ones(3, 5, 7))
    assert bool((it.pattern >= 0).all())


def test_logits_equal_rho_hat(bank, x):
    it = bank(x, return_internals=True)
    for b in range(len(x)):
        rho = bank.rho_hat(x[b].flatten(), x[b].flatten())   # (M, T, T)
        torch.testing.assert_close(it.logits[:, b], rho, rtol=1e-5, atol=1e-6)
    # rho_hat(u, v) with u != v: the (query, key) roles are not swapped
    u, v = torch.linspace(0, 1, 4), torch.linspace(0.1, 0.9, 6)
    r = bank.rho_hat(u, v)
    assert r.shape == (3, 4, 6)
    for i, mb in enumerate(bank.members):
        ref = linear_stack(list(mb.f_hat))
        with torch.no_grad():
            want = (ref(u[:, None]) @ mb.W_Q.T) @ (ref(v[:, None]) @ mb.W_K.T).T
        torch.testing.assert_close(r[i], want, rtol=1e-5, atol=1e-6)


def test_permutation_equivariance(bank, x):
    p = torch.randperm(x.shape[1], generator=torch.Generator().manual_seed(3))
    assert not torch.equal(p, torch.arange(len(p)))
    torch.testing.assert_close(bank(x[:, p]), bank(x)[..., p], rtol=0, atol=1e-5)
    # outputs vary little at init, so also check the logits, which do: rho_hat(x_p(t), x_p(s))
    lp, l0 = bank(x[:, p], return_internals=True).logits, bank(x, return_internals=True).logits
    assert l0.std() > 1e-2
    torch.testing.assert_close(lp, l0[:, :, p][:, :, :, p], rtol=1e-5, atol=1e-5)


def test_bank_matches_reference_implementation(bank, x):
    it = bank(x, return_internals=True)
    for i, mb in enumerate(bank.members):
        y_ref, l_ref = reference_forward(mb, x)
        torch.testing.assert_close(it.y[i], y_ref, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(it.logits[i], l_ref, rtol=1e-5, atol=1e-6)


def test_member_init_depends_only_on_m_h_and_seed():
    big = TransformerBank(TINY_MODEL, (2, 5, 1), (7, 8, 9))
    for m_h, seed, i in ((2, 7, 0), (5, 8, 1), (1, 9, 2)):
        alone = TransformerBank(TINY_MODEL, (m_h,), (seed,))
        pa, pb = dict(alone.members[0].named_parameters()), dict(big.members[i].named_parameters())
        assert pa.keys() == pb.keys()
        for k in pa:
            assert torch.equal(pa[k], pb[k]), k
        # and its outputs are those of the bank of one
        x = torch.rand(3, 6, generator=torch.Generator().manual_seed(1))
        torch.testing.assert_close(big(x)[i], alone(x)[0], rtol=1e-5, atol=1e-6)
    # different seeds give different members
    a = TransformerBank(TINY_MODEL, (2,), (7,)).members[0]
    b = TransformerBank(TINY_MODEL, (2,), (70,)).members[0]
    assert not torch.equal(a.W_V, b.W_V)


def test_member_init_scales():
    cfg = ModelConfig(n=8, d_v=8, width=16, qk_init=3.0, in_scale=2.0)
    mb = Member(cfg, m_h=8, seed=0)
    assert mb.W_Q.abs().max() <= 3.0 / 8 ** 0.5
    assert mb.W_Q.abs().max() > 1.0 / 8 ** 0.5          # the scale really widens the range
    assert mb.f_hat[0].abs().max() <= 2.0 and mb.f_hat[0].abs().max() > 1.0   # fan_in = 1


def test_member_param_groups(bank):
    groups = bank.member_param_groups()
    assert len(groups) == 3
    for g, mb in zip(groups, bank.members):
        assert {id(p) for p in g} == {id(p) for p in mb.parameters()}
    assert sum(len(g) for g in groups) == len(list(bank.parameters()))


@pytest.mark.parametrize("bad", [0, 9, -1])
def test_validate_m_h_rejects_out_of_range(bad):
    cfg = ModelConfig(n=8)
    with pytest.raises(ValueError, match="--m-h"):
        cfg.validate_m_h(bad)
    with pytest.raises(ValueError, match="--m-h"):
        Member(cfg, bad, 0)


def test_validate_m_h_accepts_range():
    cfg = ModelConfig(n=8)
    for m in (1, 8):
        cfg.validate_m_h(m)
    with pytest.raises(ValueError, match="--m-h"):
        ModelConfig().validate_m_h(33)       # default n = 32


def test_bank_needs_matching_seeds():
    with pytest.raises(ValueError):
        TransformerBank(TINY_MODEL, (1, 2), (0,))
    with pytest.raises(ValueError):
        TransformerBank(TINY_MODEL, (), ())


# ---- positional encoding (Sec. 4.1): x(t) -> A x(t) + e(t) ----------------------------------------

POS = dict(n=8, d_v=8, width=16, d_pos=6, tau_max=20, activation="gelu")   # the hand references use GELU


@pytest.mark.parametrize("pos", ["learned", "sinusoidal"])
def test_positional_encoding_breaks_equivariance_and_feeds_f_hat(pos):
    from jackson.models import TransformerBank
    from jackson.hparams import ModelConfig
    cfg = ModelConfig(pos=pos, **POS)
    bank = TransformerBank(cfg, (1, 3), (0, 1))
    x = torch.rand(4, 12, generator=torch.Generator().manual_seed(0))
    p = torch.randperm(12, generator=torch.Generator().manual_seed(1))
    B, T = x.shape                                         # token embeddings now depend on position
    hp = bank.embed(x[:, p]).view(2, B, T, -1)
    assert not torch.allclose(hp, bank.embed(x).view(2, B, T, -1)[:, :, p], atol=1e-3)
    # embed == f_hat(A x(t) + e(t)) computed by hand for member 1
    mb = bank.members[1]
    e = mb.e if pos == "learned" else bank.e_fixed
    z = x[..., None] * mb.A[0] + e[:12]                    # d = 1: A x(t) is x(t) times A's row
    h = z.reshape(-1, POS["d_pos"])
    ps = list(mb.f_hat)
    for j in range(0, len(ps), 2):
        h = h @ ps[j] + ps[j + 1]
        if j < len(ps) - 2:
            h = torch.nn.functional.gelu(h)
    torch.testing.assert_close(bank.embed(x)[1], h, rtol=1e-5, atol=1e-6)


def test_sinusoidal_table_matches_formula():
    from jackson.models import sinusoidal_table
    e = sinusoidal_table(10, 6)
    for t in (0, 3, 9):
        for i in range(3):
            w = 10000.0 ** (-2 * i / 6)
            assert e[t, 2 * i].item() == pytest.approx(math.sin(t * w), abs=1e-6)
            assert e[t, 2 * i + 1].item() == pytest.approx(math.cos(t * w), abs=1e-6)


def test_positional_encoding_options_and_limits():
    from jackson.models import TransformerBank
    from jackson.hparams import ModelConfig
    learned = TransformerBank(ModelConfig(pos="learned", **POS), (2,), (5,))
    assert learned.members[0].f_hat[0].shape == (POS["d_pos"], 16)   # f_hat reads A x(t) + e(t)
    x = torch.rand(2, 8)
    learned(x).sum().backward()
    assert learned.members[0].e.grad is not None and learned.members[0].A.grad is not None
    with pytest.raises(ValueError, match="--tau-max"):
        learned(torch.rand(2, 21))
    with pytest.raises(ValueError, match="--pos"):
        TransformerBank(ModelConfig(pos="rotary", **POS), (2,), (5,))
    with pytest.raises(ValueError, match="positional"):
        learned.rho_hat(torch.rand(3), torch.rand(3))


# ---- attention kinds beyond the paper: linear and sparse (non-causal) --------------------------

LINEAR = ModelConfig(n=8, d_v=8, width=16, attention="linear", activation="gelu")   # the references below use GELU
SPARSE = ModelConfig(n=8, d_v=8, width=16, attention="sparse", activation="gelu")


def phi_ref(a):
    return torch.where(a > 0, a + 1, torch.exp(a))       # elu + 1, written out


def in_pattern(t: int, s: int, T: int) -> bool:
    """The two-sided Eq. (6) set the sparse bank uses, 0-indexed: B = 2^floor(log2 sqrt T), c = k = 1."""
    B = 2 ** int(math.floor(math.log2(math.sqrt(T)) + 1e-12))
    return abs(t - s) < B or s % B == B - 1


@torch.no_grad()
def reference_forward_kind(member: Member, x: torch.Tensor, kind: str):
    """One member (its own m_h rows, no padding), one sequence and one (t, s) pair at a time:
    y (B, T), logits (B, T, T) and pattern (B, T, T) for attention `kind`."""
    f_hat, F_hat = linear_stack(list(member.f_hat)), linear_stack(list(member.F_hat))
    ys, ls, ps = [], [], []
    for seq in x:
        T = len(seq)
        h = f_hat(seq[:, None])
        q, k, v = h @ member.W_Q.T, h @ member.W_K.T, h @ member.W_V.T
        logits, pattern = torch.zeros(T, T), torch.zeros(T, T)
        for t in range(T):
            if kind == "linear":    # a(t, s) = phi(q_t).phi(k_s); pattern = a / sum_s a
                a = torch.stack([(phi_ref(q[t]) * phi_ref(k[s])).sum() for s in range(T)])
                pattern[t], logits[t] = a / a.sum(), a.log()
            else:                   # sparse: softmax over the allowed s only, -inf elsewhere
                allowed = [s for s in range(T) if in_pattern(t, s, T)]
                logits[t] = float("-inf")
                logits[t, allowed] = torch.stack([q[t] @ k[s] for s in allowed])
                pattern[t, allowed] = torch.softmax(logits[t, allowed], dim=0)
        ys.append(F_hat(pattern @ v)[:, 0])
        ls.append(logits)
        ps.append(pattern)
    return torch.stack(ys), torch.stack(ls), torch.stack(ps)


@pytest.mark.parametrize("cfg", [LINEAR, SPARSE], ids=["linear", "sparse"])
def test_attention_kind_bank_matches_reference(cfg):
    bank = TransformerBank(cfg, M_HS, SEEDS)
    x = torch.rand(3, 16, generator=torch.Generator().manual_seed(0))   # tau = 16: B = 4
    it = bank(x, return_internals=True)
    torch.testing.assert_close(bank(x), it.y, rtol=0, atol=0)           # the O(T) path = the inspected one
    for i, mb in enumerate(bank.members):
        y_ref, l_ref, p_ref = reference_forward_kind(mb, x, cfg.attention)
        torch.testing.assert_close(it.y[i], y_ref, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(it.pattern[i], p_ref, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(it.logits[i], l_ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(it.pattern, torch.softmax(it.logits, dim=-1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(it.pattern.sum(-1), torch.ones(3, 3, 16))


def test_sparse_pattern_is_zero_outside_the_stated_set():
    bank = TransformerBank(SPARSE, M_HS, SEEDS)
    for T in (16, 9):                                   # B = 4, then B = 2
        P = bank(torch.rand(4, T, generator=torch.Generator().manual_seed(T)), return_internals=True).pattern
        allowed = torch.tensor([[in_pattern(t, s, T) for s in range(T)] for t in range(T)])
        assert (P[..., ~allowed] == 0).all()
        assert (P[..., allowed] > 0).all()
        assert not allowed.all()                        # it does leave pairs out


def test_linear_attention_pattern_has_rank_at_most_m_h():
    """phi(Q) phi(K)^T: a rank-m_h matrix before the row normalisation (which keeps the rank)."""
    bank = TransformerBank(LINEAR, (1, 2, 5), (3, 4, 5))
    P = bank(torch.rand(2, 16, generator=torch.Generator().manual_seed(1)), return_internals=True).pattern
    for i, m in enumerate(bank.m_hs):
        assert int(torch.linalg.matrix_rank(P[i].double(), rtol=1e-5).max()) <= m
    # m_h = 1: phi(q_t) phi(k_s) / sum_s' ... does not depend on the query t at all
    torch.testing.assert_close(P[0], P[0][:, :1].expand_as(P[0]))


@pytest.mark.parametrize("cfg", [LINEAR, SPARSE], ids=["linear", "sparse"])
def test_attention_kind_member_alone_equals_bank(cfg):
    """Zero padding up to the bank's m_max changes nothing (phi(0) = 1 would, without the feature mask)."""
    big = TransformerBank(cfg, (2, 6, 1), (7, 8, 9))
    x = torch.rand(3, 16, generator=torch.Generator().manual_seed(2))
    for m_h, seed, i in ((2, 7, 0), (6, 8, 1), (1, 9, 2)):
        alone = TransformerBank(cfg, (m_h,), (seed,))
        torch.testing.assert_close(big(x)[i], alone(x)[0], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(big.rho_hat(x[0], x[1])[i], alone.rho_hat(x[0], x[1])[0], rtol=1e-5, atol=1e-5)


def test_rho_hat_per_attention_kind():
    x = torch.rand(2, 16, generator=torch.Generator().manual_seed(4))
    lin = TransformerBank(LINEAR, M_HS, SEEDS)
    it = lin(x, return_internals=True)
    for b in range(2):   # linear: rho_hat is the effective coupling, the logits at the tokens
        torch.testing.assert_close(it.logits[:, b], lin.rho_hat(x[b], x[b]), rtol=1e-5, atol=1e-5)
    u, v = torch.linspace(0, 1, 4), torch.linspace(0.1, 0.9, 6)
    for i, mb in enumerate(lin.members):
        ref = linear_stack(list(mb.f_hat))
        with torch.no_grad():
            want = (phi_ref(ref(u[:, None]) @ mb.W_Q.T) @ phi_ref(ref(v[:, None]) @ mb.W_K.T).T).log()
        torch.testing.assert_close(lin.rho_hat(u, v)[i], want, rtol=1e-5, atol=1e-5)
    # sparse: the same bilinear rho_hat as softmax (the pattern only restricts where it is used)
    sp, sm = TransformerBank(SPARSE, M_HS, SEEDS), TransformerBank(TINY_MODEL, M_HS, SEEDS)
    assert torch.equal(sp.rho_hat(u, v), sm.rho_hat(u, v))
    allowed = torch.tensor([[in_pattern(t, s, 16) for s in range(16)] for t in range(16)])
    l_sp, l_sm = sp(x, return_internals=True).logits, sm(x, return_internals=True).logits
    assert torch.equal(l_sp[..., allowed], l_sm[..., allowed]) and torch.isinf(l_sp[..., ~allowed]).all()


def test_softmax_default_is_the_old_computation_bit_for_bit():
    """attention = softmax (the default) runs exactly the ops the committed results were made with."""
    assert ModelConfig().attention == "softmax" and TINY_MODEL.attention == "softmax"
    bank = TransformerBank(TINY_MODEL, M_HS, SEEDS)
    x = torch.rand(4, 16, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        h = bank.embed(x)
        M, B, T = 3, 4, 16
        q = (h @ bank._stack_qk("W_Q").transpose(1, 2)).view(M * B, T, -1)
        k = (h @ bank._stack_qk("W_K").transpose(1, 2)).view(M * B, T, -1)
        v = (h @ torch.stack([mb.W_V for mb in bank.members]).transpose(1, 2)).view(M * B, T, -1)
        logits = q @ k.transpose(1, 2)
        pattern = torch.softmax(logits, dim=-1)
        y = bank._mlp((pattern @ v).view(M, B * T, -1), bank._stack_mlp("F_hat")).view(M, B, T)
        it = bank(x, return_internals=True)
    assert torch.equal(it.y, y) and torch.equal(it.logits, logits.view(M, B, T, T))
    assert torch.equal(it.pattern, pattern.view(M, B, T, T))


def test_attention_kind_is_validated():
    with pytest.raises(ValueError, match="--attention"):
        TransformerBank(ModelConfig(n=8, d_v=8, width=16, attention="performer"), (1,), (0,))
    with pytest.raises(ValueError, match="--attention"):
        Member(ModelConfig(n=8, attention="Linear"), 1, 0)
    # a subclass with its own forward (the App. B.1 TaskBank) computes softmax only: refuse, never ignore
    from jackson.app_b.cell import TaskBank
    with pytest.raises(ValueError, match="--attention"):
        TaskBank(LINEAR, 1, (1,), (0,))
    assert len(TaskBank(TINY_MODEL, 1, (1,), (0,))) == 1


@pytest.mark.parametrize("cfg", [LINEAR, SPARSE], ids=["linear", "sparse"])
def test_attention_kind_trains(cfg):
    """Gradients reach W_Q and W_K through every kind (linear: through phi; sparse: through the mask)."""
    bank = TransformerBank(cfg, (1, 3), (0, 1))
    bank(torch.rand(2, 16)).sum().backward()
    for mb in bank.members:
        assert mb.W_Q.grad is not None and mb.W_Q.grad.abs().sum() > 0 and mb.W_K.grad.abs().sum() > 0
