"""The one-head, one-layer Transformer of Eq. (5), as a bank of independent members.

    h(s)   = f_hat(x(s))                                  f_hat: R^d -> R^n, an MLP
    rho_hat(x_t, x_s) = (W_Q h(t))^T (W_K h(s))           W_Q, W_K in R^{m_h x n}   (Eq. 18)
    H_hat_t = F_hat( sum_s softmax_s(rho_hat) W_V h(s) )  W_V in R^{d_v x n}, F_hat: R^{d_v} -> R

A sweep trains many such models (different m_h, seeds).  `TransformerBank` holds them as one
module: every member owns its own parameter tensors (so optimisers, learning rates and stopping
stay per member), and the forward pass stacks them and runs all members with batched matmuls.
Members with m_h below the bank's largest m_h get their query/key rows padded with zeros, which
add exact zeros to the logits: a member computes the same function as a bank of one (linear
attention switches the padded features off instead, since phi(0) = 1).

m_h is a member attribute (`bank.m_hs`); rho_hat lives in `TransformerBank.rho_hat`.

`ModelConfig.attention` swaps the softmax over s for a non-causal variant of jackson/attention.py
(beyond the paper; the targets keep their softmax):
  softmax  Eq. (5) as written (the default; bit-for-bit the model the committed results used).
  sparse   the softmax restricted to the two-sided Eq. (6) pattern {s : |t - s| < kB} U {every block's
           last c tokens}, B = 2^floor(log2 sqrt tau), c = k = 1 (SPARSE_C, SPARSE_K; Sec. 6.1's values).
  linear   sum_s phi(q_t).phi(k_s) W_V h(s) / sum_s phi(q_t).phi(k_s), phi = elu + 1, with q = W_Q h,
           k = W_K h: a rank-m_h kernel in place of exp(rho_hat).  Equivalently a softmax of the
           effective coupling log(phi(q_t).phi(k_s)), which is what `logits` and `rho_hat` return.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from .hparams import ACTIVATIONS, ATTENTIONS, ModelConfig
from .attention import linear_attention, linear_attention_pattern, phi, sparse_mask
from .hparams import block_size
from .threads import step_flops

SPARSE_C, SPARSE_K = 1, 1   # Eq. (6): summary tokens per block, blocks in the local window (Sec. 6.1)

# The FFN class F^(m_FF) of Sec. 4 (the activation between the layers of f_hat and F_hat).  The theorem allows any
# class, with its own beta; App. C's "dense network" is read as GELU (the default, bit-for-bit the committed runs).
ACTIVATION_FNS = {"gelu": nn.functional.gelu, "relu": torch.relu, "sin": torch.sin}
assert tuple(ACTIVATION_FNS) == ACTIVATIONS


def sinusoidal_table(tau: int, d: int) -> torch.Tensor:
    """The fixed e(t) of Vaswani et al.: e[t, 2i] = sin(t / 10000^(2i/d)), e[t, 2i+1] = cos(...)."""
    t = torch.arange(tau, dtype=torch.float64)[:, None]
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    e = torch.zeros(tau, d, dtype=torch.float64)
    e[:, 0::2] = torch.sin(t * freq)
    e[:, 1::2] = torch.cos(t * freq[: d // 2])
    return e.float()


class Internals(NamedTuple):
    y: torch.Tensor        # (M, B, T) outputs
    logits: torch.Tensor   # (M, B, T, T) pre-softmax rho_hat(x_t, x_s) (sparse: -inf off the pattern; linear: log phi(q).phi(k))
    pattern: torch.Tensor  # (M, B, T, T) attention over s (rows sum to 1): softmax(logits)


def _uniform(gen: torch.Generator, shape, bound: float) -> torch.Tensor:
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(bound).float()


def _mlp_params(gen, sizes, first_scale: float = 1.0) -> list[nn.Parameter]:
    """PyTorch's default nn.Linear init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from `gen`
    (the first layer's bound times first_scale)."""
    out = []
    for j, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        b = (first_scale if j == 0 else 1.0) / math.sqrt(fan_in)
        out.append(nn.Parameter(_uniform(gen, (fan_in, fan_out), b)))   # stored as x @ W
        out.append(nn.Parameter(_uniform(gen, (1, fan_out), b)))
    return out


class Member(nn.Module):
    """One model's parameters (no forward of its own: the bank runs members together)."""

    def __init__(self, cfg: ModelConfig, m_h: int, seed: int):
        super().__init__()
        cfg.validate_m_h(m_h)
        self.m_h, self.seed = m_h, seed
        gen = torch.Generator().manual_seed(seed)
        hid = [cfg.width] * (cfg.depth - 1)
        self.f_hat = nn.ParameterList(_mlp_params(gen, [cfg.f_in, *hid, cfg.n], cfg.in_scale))
        b = cfg.qk_init / math.sqrt(cfg.n)
        self.W_Q = nn.Parameter(_uniform(gen, (m_h, cfg.n), b))
        self.W_K = nn.Parameter(_uniform(gen, (m_h, cfg.n), b))
        self.W_V = nn.Parameter(_uniform(gen, (cfg.d_v, cfg.n), 1.0 / math.sqrt(cfg.n)))
        self.F_hat = nn.ParameterList(_mlp_params(gen, [cfg.d_v, *hid, 1]))
        if cfg.pos != "none":   # drawn last: models without an encoding draw exactly as before
            self.A = nn.Parameter(_uniform(gen, (cfg.d_in, cfg.d_pos), 1.0 / math.sqrt(cfg.d_in)))
        if cfg.pos == "learned":
            self.e = nn.Parameter(0.02 * torch.randn(cfg.tau_max, cfg.d_pos, generator=gen))


class TransformerBank(nn.Module):
    def __init__(self, cfg: ModelConfig, m_hs, seeds):
        super().__init__()
        if len(m_hs) != len(seeds) or len(m_hs) == 0:
            raise ValueError("a bank needs one seed per member and at least one member")
        if cfg.attention not in ATTENTIONS:
            raise ValueError(f"--attention: choose {', '.join(ATTENTIONS)}, got {cfg.attention}")
        if cfg.activation not in ACTIVATIONS:
            raise ValueError(f"--activation: choose {', '.join(ACTIVATIONS)}, got {cfg.activation}")
        if cfg.attention != "softmax" and type(self).forward is not TransformerBank.forward:
            # a subclass with its own forward (jackson/app_b/cell.py's TaskBank) computes softmax only
            raise ValueError(f"--attention: {type(self).__name__} implements softmax only, got {cfg.attention}")
        self.cfg = cfg
        self.m_hs, self.seeds = tuple(int(m) for m in m_hs), tuple(int(s) for s in seeds)
        self.members = nn.ModuleList(Member(cfg, m, s) for m, s in zip(self.m_hs, self.seeds))
        self.m_max = max(self.m_hs)
        if cfg.pos == "sinusoidal":
            self.register_buffer("e_fixed", sinusoidal_table(cfg.tau_max, cfg.d_pos))

    def __len__(self):
        return len(self.members)

    def step_work(self, batch: int, T: int) -> float:
        """One training step's FLOPs on batch x T tokens, estimated (jackson.threads.step_flops): every parameter on
        every token, and a token pair's attention products at the widths summed over members (queries and keys
        stacked at m_max, values at d_v)."""
        n_params = sum(p.numel() for p in self.parameters())
        return step_flops(n_params, batch * T, attention=batch * T * T * len(self.members) * (self.m_max + self.cfg.d_v))

    # ---- stacked views of the members' parameters ------------------------------------------
    def _stack_mlp(self, name):
        layers = [getattr(mb, name) for mb in self.members]
        return [torch.stack([ps[j] for ps in layers]) for j in range(len(layers[0]))]

    def _stack_qk(self, name):
        rows = []
        for mb in self.members:
            w = getattr(mb, name)
            rows.append(nn.functional.pad(w, (0, 0, 0, self.m_max - w.shape[0])))
        return torch.stack(rows)  # (M, m_max, n), zero rows beyond each member's m_h

    def _mlp(self, h, params):
        """h: (M, N, fan_in) -> (M, N, fan_out); the FFN class's activation (cfg.activation) between layers,
        none after the last."""
        act = ACTIVATION_FNS[self.cfg.activation]
        n_layers = len(params) // 2
        for j in range(n_layers):
            h = torch.baddbmm(params[2 * j + 1], h, params[2 * j])
            if j < n_layers - 1:
                h = act(h)
        return h

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """f_hat(x): x (B, T) or (B, T, d) shared by all members, or (M, B, T[, d]) -> (M, B*T, n)."""
        if x.dim() == 2 or (x.dim() == 3 and self.cfg.d_in > 1):
            x = x.unsqueeze(0).expand(len(self), *x.shape)
        if x.dim() == 3:
            x = x.unsqueeze(-1)
        M, B, T, d = x.shape
        if self.cfg.pos != "none":                           # Sec. 4.1: x(t) -> A x(t) + e(t)
            if T > self.cfg.tau_max:
                raise ValueError(f"--tau-max: sequences of length {T} exceed the positional table ({self.cfg.tau_max})")
            A = torch.stack([mb.A for mb in self.members])   # (M, d, d')
            e = (torch.stack([mb.e for mb in self.members]) if self.cfg.pos == "learned"
                 else self.e_fixed[None])[:, :T]             # (M or 1, T, d')
            x = x @ A[:, None] + e[:, None]                  # (M, B, T, d')
            d = x.shape[-1]
        return self._mlp(x.reshape(M, B * T, d), self._stack_mlp("f_hat"))

    def forward(self, x: torch.Tensor, return_internals: bool = False):
        """x: (B, T) shared inputs (or (M, B, T) per member). Returns y (M, B, T)."""
        B, T = x.shape[-2:] if self.cfg.d_in == 1 else x.shape[-3:-1]
        h = self.embed(x)                                   # (M, B*T, n)
        M = h.shape[0]
        W_Q = self._stack_qk("W_Q")                         # (M, m_max, n)
        W_K = self._stack_qk("W_K")
        W_V = torch.stack([mb.W_V for mb in self.members])  # (M, d_v, n)
        q = (h @ W_Q.transpose(1, 2)).view(M * B, T, -1)    # (M*B, T, m_max)
        k = (h @ W_K.transpose(1, 2)).view(M * B, T, -1)
        v = (h @ W_V.transpose(1, 2)).view(M * B, T, -1)    # (M*B, T, d_v)
        kind = self.cfg.attention
        if kind == "linear":
            feats = self._features(B).to(q)                 # (M*B, 1, m_max): member's own m_h only
            z = linear_attention(q, k, v, eps=0.0, causal=False, features=feats)   # no (T, T) matrix
            if return_internals:
                pattern = linear_attention_pattern(q, k, eps=0.0, causal=False, features=feats)
                logits = self._log_kernel(q, k, feats)
        else:
            logits = q @ k.transpose(1, 2)                  # (M*B, T, T): rho_hat(x_t, x_s), Eq. (18)
            if kind == "sparse":                            # only the two-sided Eq. (6) pairs
                mask = sparse_mask(T, block_size(T), SPARSE_C, SPARSE_K, device=q.device, causal=False)
                logits = logits.masked_fill(~mask, float("-inf"))
            pattern = torch.softmax(logits, dim=-1)         # softmax over s
            z = pattern @ v                                 # (M*B, T, d_v)
        z = z.reshape(M, B * T, -1)                         # (M, B*T, d_v)
        y = self._mlp(z, self._stack_mlp("F_hat")).view(M, B, T)
        if return_internals:
            return Internals(y, logits.view(M, B, T, T), pattern.view(M, B, T, T))
        return y

    def _features(self, B: int = 1) -> torch.Tensor:
        """(M*B, 1, m_max) 1 for each member's own m_h features, 0 for its zero padding: phi(0) = 1,
        so a padded row would otherwise add 1 to every linear-attention score."""
        on = torch.tensor([[1.0] * m + [0.0] * (self.m_max - m) for m in self.m_hs])   # (M, m_max)
        return on.repeat_interleave(B, dim=0)[:, None, :]

    @staticmethod
    def _log_kernel(q, k, feats) -> torch.Tensor:
        """log(phi(q_t).phi(k_s)): the coupling whose softmax over s is linear attention's pattern.
        (phi > 0; the clamp only guards float underflow of exp for very negative q, k.)"""
        a = (phi(q) * feats) @ phi(k).transpose(-2, -1)
        return a.clamp_min(torch.finfo(a.dtype).tiny).log()

    @torch.no_grad()
    def rho_hat(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The learned coupling rho_hat(u_a, v_b) = (W_Q f_hat(u_a))^T (W_K f_hat(v_b)): (M, len(u), len(v)).

        softmax: Eq. (18).  sparse: the same function, used only on the pairs (t, s) the pattern lets
        through.  linear: the effective coupling log(phi(W_Q f_hat(u_a)).phi(W_K f_hat(v_b))), whose
        softmax over s is the linear-attention pattern (a log of a rank-m_h positive kernel: not rank m_h).
        Defined for models without positional encoding (with one, rho_hat also depends on t and s)."""
        if self.cfg.pos != "none":
            raise ValueError("rho_hat(u, v) is a function of the inputs only without positional encoding")
        hu = self.embed(u.view(1, -1))                      # (M, len(u), n)
        hv = self.embed(v.view(1, -1))
        q = hu @ self._stack_qk("W_Q").transpose(1, 2)      # (M, len(u), m_max)
        k = hv @ self._stack_qk("W_K").transpose(1, 2)      # (M, len(v), m_max)
        if self.cfg.attention == "linear":
            return self._log_kernel(q, k, self._features().to(q))
        return q @ k.transpose(1, 2)

    def member_param_groups(self):
        """One list of parameters per member (for per-member optimiser groups)."""
        return [list(mb.parameters()) for mb in self.members]
