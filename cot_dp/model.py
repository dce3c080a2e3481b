"""The decoder-only Transformer of Sec. 3 / 6.1 with a choice of attention.

    x_0 = Embed(s_i) + p_i                         sinusoidal p_i (fixed), dropout
    h   = x + Attn(LN(x))                          H heads of width D/H, causal; Eq. (1), (3)-(4) or (8)
    x'  = h + FFN(LN(h)),  FFN = W_2 GELU(W_1 .)   W_1: D -> 4D, W_2: 4D -> D; Eq. (2), (5)
    logits = W_out LN(x_M)                          next-token distribution

Pre-LayerNorm (GPT-2) blocks; no biases in the attention and FFN matrices (as Eqs. 3-5 write
them); Xavier-uniform init of every matrix, drawn from the model's own seed.  Attention:
standard = causal softmax; sparse = softmax on the Eq. (6) pattern with B = 2^floor(log2 sqrt L),
L the longest sequence the model is built for; linear = phi(x) = elu(x) + 1 linear attention.
All three come from jackson/attention.py.  `step` runs one position at a time with a cache
(keys/values, or linear attention's recurrent state): generation costs one forward pass in
total, and `tests/test_cot_dp_model.py` checks it gives the same logits as `forward`.
"""
from __future__ import annotations


import torch
from torch import nn

from jackson.attention import causal_mask, linear_attention, linear_attention_pattern, linear_attention_step, softmax_attention, sparse_mask
from jackson.hparams import block_size
from jackson.models import sinusoidal_table

from .settings import ModelConfig


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, max_len: int):
        super().__init__()
        D, self.H = cfg.d_model, cfg.arch.n_heads
        self.kind, self.chunk = cfg.kind, cfg.arch.linear_chunk
        self.W_Q = nn.Linear(D, D, bias=False)
        self.W_K = nn.Linear(D, D, bias=False)
        self.W_V = nn.Linear(D, D, bias=False)
        self.W_O = nn.Linear(D, D, bias=False)
        if self.kind == "sparse":
            self.block = block_size(max_len)
            mask = sparse_mask(max_len, self.block, cfg.arch.sparse_c, cfg.arch.sparse_k)
        else:
            mask = causal_mask(max_len)
        self.register_buffer("mask", mask, persistent=False)   # (L, L): who may attend to whom

    def heads(self, x):
        """(B, T, D) -> q, k, v each (B, H, T, D/H)."""
        B, T, D = x.shape
        split = lambda W: W(x).view(B, T, self.H, D // self.H).transpose(1, 2)  # noqa: E731
        return split(self.W_Q), split(self.W_K), split(self.W_V)

    def forward(self, x, return_pattern: bool = False):
        B, T, D = x.shape                                          # batch, time, channels
        q, k, v = self.heads(x)                                    # (B, H, T, dh)
        if self.kind == "linear":
            y = linear_attention(q, k, v, chunk=self.chunk)        # (B, H, T, dh)
            pattern = linear_attention_pattern(q, k) if return_pattern else None
        elif return_pattern:
            r = softmax_attention(q, k, v, self.mask[:T, :T], return_internals=True)
            y, pattern = r.out, r.pattern                          # pattern (B, H, T, T)
        else:   # the same masked softmax in torch's fused kernel (tests check it equals the manual path)
            y, pattern = softmax_attention(q, k, v, self.mask[:T, :T], fused=True), None
        y = self.W_O(y.transpose(1, 2).reshape(B, T, D))
        return (y, pattern) if return_pattern else y

    def step(self, x, t: int, cache):
        """One position: x (B, D) at position t (0-based) -> (B, D); cache = (K, V) or a LinearState."""
        B, D = x.shape
        q, k, v = (a[:, :, 0] for a in self.heads(x[:, None]))    # (B, H, dh)
        if self.kind == "linear":
            y, cache = linear_attention_step(q, k, v, cache)       # (B, H, dh)
        else:
            K = k[:, :, None] if cache is None else torch.cat([cache[0], k[:, :, None]], dim=2)  # (B, H, t+1, dh)
            V = v[:, :, None] if cache is None else torch.cat([cache[1], v[:, :, None]], dim=2)
            y = softmax_attention(q[:, :, None], K, V, self.mask[t:t + 1, :t + 1])[:, :, 0]
            cache = (K, V)
        return self.W_O(y.reshape(B, D)), cache


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, max_len: int):
        super().__init__()
        D = cfg.d_model
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = Attention(cfg, max_len)
        self.W_1 = nn.Linear(D, 4 * D, bias=False)
        self.W_2 = nn.Linear(4 * D, D, bias=False)
        self.drop = nn.Dropout(cfg.arch.dropout)

    def ffn(self, h):
        return self.drop(self.W_2(nn.functional.gelu(self.W_1(self.ln2(h)))))

    def forward(self, x, return_pattern: bool = False):
        a = self.attn(self.ln1(x), return_pattern)
        a, pattern = a if return_pattern else (a, None)
        h = x + self.drop(a)
        x = h + self.ffn(h)
        return (x, pattern) if return_pattern else x

    def step(self, x, t, cache):
        a, cache = self.attn.step(self.ln1(x), t, cache)
        h = x + self.drop(a)
        return h + self.ffn(h), cache


class CotTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig, vocab_size: int, max_len: int, seed: int):
        super().__init__()
        cfg.check(max_len)
        self.cfg, self.max_len = cfg, max_len
        D = cfg.d_model
        self.embed = nn.Embedding(vocab_size, D)
        self.register_buffer("pos", sinusoidal_table(max_len, D), persistent=False)  # (L, D)
        self.drop = nn.Dropout(cfg.arch.dropout)
        self.blocks = nn.ModuleList(Block(cfg, max_len) for _ in range(cfg.arch.n_layers))
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, vocab_size, bias=False)
        gen = torch.Generator().manual_seed(seed)
        for p in self.parameters():          # Xavier on every matrix; LayerNorms stay (1, 0)
            if p.dim() >= 2:
                nn.init.xavier_uniform_(p, generator=gen)

    def forward(self, idx, return_patterns: bool = False):
        """idx (B, T) token ids -> logits (B, T, V) [and the per-layer (B, H, T, T) patterns]."""
        B, T = idx.shape
        if T > self.max_len:
            raise ValueError(f"sequence of {T} tokens is longer than the model's max_len {self.max_len}")
        x = self.drop(self.embed(idx) + self.pos[:T])              # (B, T, D)
        patterns = []
        for blk in self.blocks:
            if return_patterns:
                x, p = blk(x, True)
                patterns.append(p)
            else:
                x = blk(x)
        logits = self.head(self.ln_f(x))                           # (B, T, V)
        return (logits, patterns) if return_patterns else logits

    def step(self, tok, t: int, caches: list):
        """tok (B,) ids at position t -> logits (B, V) for position t + 1; caches updated in place."""
        x = self.drop(self.embed(tok) + self.pos[t])               # (B, D)
        for i, blk in enumerate(self.blocks):
            x, caches[i] = blk.step(x, t, caches[i])
        return self.head(self.ln_f(x))

    @torch.no_grad()
    def generate(self, prompts: torch.Tensor, prompt_lens: torch.Tensor, eos_id: int) -> torch.Tensor:
        """Greedy decoding of a batch with prompts of different lengths, one position at a time.

        prompts (B, T_p) right-padded; position t takes the prompt's token while t < prompt_len and
        the model's own previous argmax after.  Returns (B, max_len + 1) ids: prompt, generation,
        then <eos> (or the sequence stops at max_len)."""
        B = prompts.shape[0]
        out = torch.full((B, self.max_len + 1), eos_id, dtype=torch.long, device=prompts.device)
        out[:, :prompts.shape[1]] = prompts
        plen = prompt_lens.to(prompts.device)
        done = torch.zeros(B, dtype=torch.bool, device=prompts.device)
        caches = [None] * len(self.blocks)
        for t in range(self.max_len):
            nxt = self.step(out[:, t], t, caches).argmax(dim=-1)   # (B,)
            forced = t + 1 < plen
            nxt = torch.where(forced, out[:, t + 1], torch.where(done, eos_id, nxt))
            out[:, t + 1] = nxt
            done |= (~forced) & (nxt == eos_id)
            if bool(done.all()):
                break
        return out


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
