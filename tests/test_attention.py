"""jackson/attention.py: each variant against an independent element-by-element computation, and causality."""
from __future__ import annotations

import math

import pytest
import torch

from jackson.attention import causal_mask, linear_attention, linear_attention_pattern, linear_attention_step, mask_ascii, softmax_attention, sparse_mask
from jackson.hparams import block_size


def qkv(T, d=4, d_v=3, lead=(2, 3), seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*lead, T, n, generator=g, dtype=torch.float64) for n in (d, d, d_v))


def phi_ref(x):
    return torch.where(x > 0, x + 1, torch.exp(x))     # elu(x) + 1 written out


def linear_ref(q, k, v):
    """sum_{j<=i} phi(q_i).phi(k_j) v_j / sum_{j<=i} phi(q_i).phi(k_j), one i at a time."""
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for i in range(q.shape[-2]):
        w = (phi_ref(q[..., i:i + 1, :]) * phi_ref(k[..., :i + 1, :])).sum(-1)   # (..., i+1)
        out[..., i, :] = (w[..., None] * v[..., :i + 1, :]).sum(-2) / w.sum(-1, keepdim=True)
    return out


def eq6(i, j, B, c, k):
    """Eq. (6) for 1-indexed positions, restricted to j <= i."""
    return j <= i and (i - k * B < j or (j - 1) % B >= B - c)


# ---- linear attention ------------------------------------------------------------------------

@pytest.mark.parametrize("T,chunk", [(1, 1), (7, 1), (7, 3), (10, 4), (12, 64), (16, 8)])
def test_linear_equals_masked_full_linear_attention(T, chunk):
    q, k, v = qkv(T)
    got = linear_attention(q, k, v, chunk=chunk, eps=0.0)
    torch.testing.assert_close(got, linear_ref(q, k, v), rtol=1e-10, atol=1e-12)
    # the (T, T) matrix it applies, for inspection, gives the same outputs
    torch.testing.assert_close(linear_attention_pattern(q, k, eps=0.0) @ v, got, rtol=1e-10, atol=1e-12)


def test_linear_recurrent_form_equals_prefix_sums():
    q, k, v = qkv(9)
    state, outs = None, []
    for t in range(9):
        o, state = linear_attention_step(q[..., t, :], k[..., t, :], v[..., t, :], state, eps=0.0)
        outs.append(o)
    torch.testing.assert_close(torch.stack(outs, -2), linear_attention(q, k, v, chunk=4, eps=0.0), rtol=1e-10, atol=1e-12)
    S = sum(phi_ref(k[..., j, :])[..., :, None] * v[..., j, None, :] for j in range(9))
    torch.testing.assert_close(state.S, S)             # the state is sum phi(k_j) v_j^T


def test_linear_attention_pattern_rows_are_causal_and_normalised():
    q, k, _ = qkv(6)
    P = linear_attention_pattern(q, k, eps=0.0)
    assert (P.triu(1) == 0).all() and (P >= 0).all()
    torch.testing.assert_close(P.sum(-1), torch.ones(P.shape[:-1], dtype=P.dtype))


# ---- the sparse mask -------------------------------------------------------------------------

@pytest.mark.parametrize("L,B,c,k", [(16, 4, 1, 1), (20, 4, 1, 2), (23, 4, 2, 1), (30, 8, 1, 1), (9, 3, 3, 1),
                                     (40, 8, 0, 2), (17, 1, 1, 1)])
def test_sparse_mask_is_eq6_element_by_element(L, B, c, k):
    m = sparse_mask(L, B, c, k)
    assert m.shape == (L, L) and m.dtype == torch.bool
    for i in range(1, L + 1):
        for j in range(1, L + 1):
            assert bool(m[i - 1, j - 1]) == eq6(i, j, B, c, k), (i, j)


def test_block_size_is_the_papers_rule():
    for L in range(1, 600):
        assert block_size(L) == 2 ** math.floor(math.log2(math.sqrt(L)) + 1e-12), L
    assert [block_size(L) for L in (87, 221, 355, 505)] == [8, 8, 16, 16]


def test_mask_picture():
    pic = mask_ascii(sparse_mask(8, 2, 1, 1)).splitlines()
    assert len(pic) == 8 and all(len(r) == 8 for r in pic)
    assert pic[0] == "#......." and pic[7] == ".#.#.###"   # summary tokens 2, 4, 6 (8) and the window {7, 8}
    with pytest.raises(ValueError):
        sparse_mask(8, 2, c=3)


# ---- softmax and sparse attention --------------------------------------------------------------

@pytest.mark.parametrize("B,c,k", [(4, 1, 1), (3, 2, 1), (2, 1, 2)])
def test_sparse_attention_equals_softmax_over_the_allowed_keys_only(B, c, k):
    T = 13
    q, kk, v = qkv(T, lead=(2,))
    got = softmax_attention(q, kk, v, sparse_mask(T, B, c, k), scale=1.0)
    for i in range(1, T + 1):
        js = [j - 1 for j in range(1, T + 1) if eq6(i, j, B, c, k)]
        w = torch.softmax(q[:, i - 1:i] @ kk[:, js].transpose(-2, -1), dim=-1)   # (2, 1, |I_i|)
        torch.testing.assert_close(got[:, i - 1], (w @ v[:, js])[:, 0])


@pytest.mark.parametrize("scale", [None, 1.0])
def test_fused_path_equals_the_manual_path(scale):
    q, k, v = qkv(11)
    for mask in (causal_mask(11), sparse_mask(11, 4, 1, 1), sparse_mask(11, 2, 1, 2)):
        torch.testing.assert_close(softmax_attention(q, k, v, mask, scale, fused=True),
                                   softmax_attention(q, k, v, mask, scale))


def test_softmax_internals():
    q, k, v = qkv(5)
    r = softmax_attention(q, k, v, causal_mask(5), return_internals=True)
    torch.testing.assert_close(r.logits[..., 2:3, :3], q[..., 2:3, :] @ k[..., :3, :].transpose(-2, -1) / 2.0)  # d = 4
    assert torch.isinf(r.logits[..., 2, 3:]).all() and (r.pattern[..., 2, 3:] == 0).all()
    torch.testing.assert_close(r.pattern @ v, r.out)


# ---- non-causal variants (the Eq. (5) model: every s) -------------------------------------------

def linear_full_ref(q, k, v, on=None):
    """sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j) over ALL j, one (i, j) at a time;
    `on` (d,) 0/1 keeps only those features."""
    on = torch.ones(q.shape[-1], dtype=q.dtype) if on is None else on
    T = q.shape[-2]
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for i in range(T):
        w = torch.stack([(on * phi_ref(q[..., i, :]) * phi_ref(k[..., j, :])).sum(-1) for j in range(T)], -1)
        out[..., i, :] = (w[..., None] * v).sum(-2) / w.sum(-1, keepdim=True)
    return out


def eq6_two_sided(i, j, B, c, k):
    """The non-causal pattern: |i - j| < kB, or j is one of the last c tokens of its block (1-indexed)."""
    return abs(i - j) < k * B or (j - 1) % B >= B - c


@pytest.mark.parametrize("T", [1, 5, 16])
def test_noncausal_linear_equals_the_full_sum(T):
    q, k, v = qkv(T)
    got = linear_attention(q, k, v, eps=0.0, causal=False)
    want = linear_full_ref(q, k, v)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
    P = linear_attention_pattern(q, k, eps=0.0, causal=False)
    assert (P > 0).all()                                 # every key gets weight: no triangle
    torch.testing.assert_close(P.sum(-1), torch.ones(P.shape[:-1], dtype=P.dtype))
    torch.testing.assert_close(P @ v, got, rtol=1e-10, atol=1e-12)
    if T > 1:   # and it is not the causal one
        assert not torch.allclose(got, linear_attention(q, k, v, eps=0.0))


def test_linear_features_switch_features_off():
    """features = 0 removes a feature from phi(q).phi(k); phi(0) = 1 would otherwise add 1 to every score."""
    q, k, v = qkv(6, d=5)
    on = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0], dtype=q.dtype)
    want = linear_full_ref(q, k, v, on)
    torch.testing.assert_close(linear_attention(q, k, v, eps=0.0, causal=False, features=on[None]), want)
    torch.testing.assert_close(linear_attention_pattern(q, k, eps=0.0, causal=False, features=on[None]) @ v, want)
    # the same as dropping those columns
    keep = on.bool()
    torch.testing.assert_close(want, linear_attention(q[..., keep], k[..., keep], v, eps=0.0, causal=False))
    # the causal path honours it too
    torch.testing.assert_close(linear_attention(q, k, v, chunk=2, eps=0.0, features=on[None]),
                               linear_attention(q[..., keep], k[..., keep], v, chunk=2, eps=0.0))


@pytest.mark.parametrize("L,B,c,k", [(16, 4, 1, 1), (20, 4, 1, 2), (23, 4, 2, 1), (9, 3, 3, 1), (17, 1, 1, 1), (40, 8, 0, 1)])
def test_noncausal_sparse_mask_element_by_element(L, B, c, k):
    m = sparse_mask(L, B, c, k, causal=False)
    assert m.shape == (L, L) and m.dtype == torch.bool and m.diagonal().all()
    for i in range(1, L + 1):
        for j in range(1, L + 1):
            assert bool(m[i - 1, j - 1]) == eq6_two_sided(i, j, B, c, k), (i, j)
    # its lower triangle is the causal Eq. (6) mask
    assert torch.equal(m & causal_mask(L), sparse_mask(L, B, c, k))
    if c < B and L > k * B:                              # then (1, kB + 1) is neither local nor a summary
        assert not m[0, k * B]


def test_noncausal_sparse_picture():
    pic = mask_ascii(sparse_mask(8, 2, 1, 1, causal=False)).splitlines()
    assert pic[0] == "##.#.#.#" and pic[4] == ".#.###.#"   # window {i-1, i, i+1}, summaries 2, 4, 6, 8


def test_noncausal_sparse_attention_and_full_softmax():
    T = 13
    q, kk, v = qkv(T, lead=(2,))
    got = softmax_attention(q, kk, v, sparse_mask(T, 4, 1, 1, causal=False), scale=1.0)
    for i in range(1, T + 1):
        js = [j - 1 for j in range(1, T + 1) if eq6_two_sided(i, j, 4, 1, 1)]
        w = torch.softmax(q[:, i - 1:i] @ kk[:, js].transpose(-2, -1), dim=-1)
        torch.testing.assert_close(got[:, i - 1], (w @ v[:, js])[:, 0])
    # mask=None: every key, the same as an all-True mask
    full = torch.ones(T, T, dtype=torch.bool)
    torch.testing.assert_close(softmax_attention(q, kk, v, None), softmax_attention(q, kk, v, full))


# ---- causality -------------------------------------------------------------------------------

VARIANTS = {
    "softmax": lambda q, k, v: softmax_attention(q, k, v, causal_mask(q.shape[-2])),
    "sparse": lambda q, k, v: softmax_attention(q, k, v, sparse_mask(q.shape[-2], 4, 1, 1)),
    "linear": lambda q, k, v: linear_attention(q, k, v, chunk=4),
    "linear_pure_prefix": lambda q, k, v: linear_attention(q, k, v, chunk=1),
}


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("t0", [0, 5, 10])
def test_changing_a_future_token_never_changes_a_past_output(name, t0):
    f = VARIANTS[name]
    q, k, v = qkv(14)
    before = f(q, k, v)
    g = torch.Generator().manual_seed(1)
    q2, k2, v2 = (a.clone() for a in (q, k, v))
    for a in (q2, k2, v2):
        a[..., t0 + 1:, :] += 3 * torch.randn(a[..., t0 + 1:, :].shape, generator=g, dtype=a.dtype)
    after = f(q2, k2, v2)
    assert torch.equal(before[..., :t0 + 1, :], after[..., :t0 + 1, :])
    assert not torch.allclose(before[..., t0 + 1:, :], after[..., t0 + 1:, :])
