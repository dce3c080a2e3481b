"""cot_dp.model and cot_dp.flops: the decoder-only Transformer (standard / sparse / linear); FLOPs per sequence."""
from __future__ import annotations

import pytest
import torch

from cot_dp import flops
from cot_dp.model import CotTransformer
from cot_dp.settings import ArchConfig, ModelConfig
from cot_dp.tokenizer import EOS_ID
from jackson.attention import sparse_mask
from jackson.hparams import block_size


# ---- the model -----------------------------------------------------------------------------------

def tiny_model(kind, L=30, D=16, seed=0, **arch):
    return CotTransformer(ModelConfig(model=kind, d_model=D, arch=ArchConfig(**arch)), 20, L, seed).eval()


@pytest.mark.parametrize("kind", ["standard", "sparse", "linear"])
def test_step_by_step_equals_full_forward(kind):
    m = tiny_model(kind, linear_chunk=8)
    x = torch.randint(2, 20, (3, 30), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = m(x)
        caches = [None] * len(m.blocks)
        inc = torch.stack([m.step(x[:, t], t, caches) for t in range(30)], dim=1)
    torch.testing.assert_close(inc, full, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["standard", "sparse", "linear"])
def test_model_is_causal(kind):
    m = tiny_model(kind, linear_chunk=8)
    x = torch.randint(2, 20, (2, 30), generator=torch.Generator().manual_seed(1))
    y = x.clone()
    y[:, 17:] = (y[:, 17:] + 3) % 18 + 2                       # change every token after position 16
    with torch.no_grad():
        a, b = m(x), m(y)
    torch.testing.assert_close(a[:, :17], b[:, :17], rtol=0, atol=1e-6)
    assert not torch.allclose(a[:, 17:], b[:, 17:])


def test_sparse_model_uses_the_eq6_mask_with_the_papers_block():
    m = tiny_model("sparse", L=87)
    att = m.blocks[0].attn
    assert att.block == block_size(87) == 8
    assert torch.equal(att.mask, sparse_mask(87, 8, 1, 1))
    x = torch.randint(2, 20, (1, 40), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        logits, pats = m(x, return_patterns=True)              # the manual path
        torch.testing.assert_close(m(x), logits)               # the fused path computes the same
    assert (pats[0][0, :, ~sparse_mask(40, 8, 1, 1)] == 0).all()


def test_greedy_generation_equals_naive_recomputation():
    m = tiny_model("standard", L=12, seed=3)
    prompts = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]])
    plens = torch.tensor([4, 2])
    out = m.generate(prompts, plens, EOS_ID)
    for b in range(2):
        seq = prompts[b, :int(plens[b])].tolist()
        while len(seq) < 13:
            with torch.no_grad():
                nxt = int(m(torch.tensor([seq[:12]]))[0, len(seq) - 1].argmax())
            seq.append(nxt)
            if nxt == EOS_ID:
                break
        assert out[b, :len(seq)].tolist() == seq


def test_same_seed_same_init_different_seed_different():
    a, b, c = tiny_model("linear", seed=4), tiny_model("linear", seed=4), tiny_model("linear", seed=5)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embed.weight, c.embed.weight)


# ---- FLOPs --------------------------------------------------------------------------------------

def test_flops_formula_by_summing_positions():
    D, L, V, M, H = 32, 40, 20, 3, 4
    mask = sparse_mask(L, block_size(L), 1, 1)
    for model in ("standard", "sparse", "linear"):
        tot = 0
        for i in range(1, L + 1):
            keys = i if model == "standard" else int(mask[i - 1].sum())
            attn = 4 * D * keys if model != "linear" else 4 * D * (D // H) + 4 * D
            tot += M * (8 * D * D + 16 * D * D + attn) + 2 * D * V
        assert flops.per_sequence(model, D, L, V, M, H) == tot
    assert flops.per_sequence("sparse", D, 400, V) < flops.per_sequence("standard", D, 400, V)


def test_paper_table2_is_24MD2L_with_the_stated_dims():
    dims = {"standard": (64, 128, 128, 128), "linear": (256, 512, 512, 512), "sparse": (128, 256, 256, 256)}
    for model, ds in dims.items():
        for D, L, paper in zip(ds, flops.PAPER_TABLE2_LENGTHS, flops.PAPER_TABLE2[model]):
            assert abs(flops.params_flops(D, L) / 1e9 / paper - 1) < 0.05, (model, D, L)
