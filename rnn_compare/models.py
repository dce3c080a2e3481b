"""The RNN of Section 6 / App. C, as a bank that the core `jackson.fit.fit` trains unchanged.

    h_t = act(W h_{t-1} + U x_t),  h_{-1} = 0,   y_t = c^T h_t        (Eq. 72-73; act = identity or tanh)

With act = identity the model is H_hat_t(x) = sum_s c^T W^s U x(t - s) (Eq. 74): a causal
convolution with kernel rho_hat(s) = c^T W^s U, which `kernel()` returns.  Members are
independent (own W, U, c, own Adam group) and run together with batched matmuls, exactly like
`jackson.models.TransformerBank`, whose interface this mirrors: `len`, `member_param_groups`,
`forward(x: (B, T)) -> (M, B, T)`.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .settings import RNNConfig




class RNNMember(nn.Module):
    def __init__(self, cfg: RNNConfig, seed: int):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        b = 1.0 / math.sqrt(cfg.hidden)   # torch.nn.RNN's default U(-1/sqrt(hidden), 1/sqrt(hidden))
        u = lambda *shape: nn.Parameter((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(b).float())  # noqa: E731
        self.W = u(cfg.hidden, cfg.hidden)   # h_t = act(h_{t-1} W^T + x_t U^T)
        self.U = u(cfg.hidden, cfg.d_in)
        self.c = u(cfg.hidden)


class RNNBank(nn.Module):
    def __init__(self, cfg: RNNConfig, seeds):
        super().__init__()
        cfg.validate()
        self.cfg, self.seeds = cfg, tuple(int(s) for s in seeds)
        self.members = nn.ModuleList(RNNMember(cfg, s) for s in self.seeds)

    def __len__(self):
        return len(self.members)

    def member_param_groups(self):
        return [list(mb.parameters()) for mb in self.members]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T) or (B, T, d) shared by all members -> y: (M, B, T).

        Linear members use Eq. (74): y_t = sum_s rho_hat(s) x(t-s) with rho_hat(s) = c^T W^s U, one
        (T x T) causal Toeplitz matmul instead of T small recurrent steps (same function, 1.8-2.3x faster
        forward + backward on the lab CPU, reports/benchmarks.md); tanh members run the recurrence."""
        if self.cfg.activation == "linear" and (x.dim() == 2 or x.shape[-1] == 1):
            x2 = x if x.dim() == 2 else x[..., 0]
            T = x2.shape[1]
            k = self._kernel_graph(T)                                      # (M, T), differentiable
            idx = torch.arange(T)
            lag = idx[:, None] - idx[None, :]                              # t - t'
            K = torch.where(lag >= 0, k[:, lag.clamp(min=0)], torch.zeros(()))   # (M, T, T) causal Toeplitz
            return torch.einsum("bj,mtj->mbt", x2, K)
        return self.recurrent(x)

    def _kernel_graph(self, T: int) -> torch.Tensor:
        W = torch.stack([mb.W for mb in self.members])                    # (M, n, n)
        v = torch.stack([mb.U[:, 0] for mb in self.members])[:, :, None]   # (M, n, 1): U
        c = torch.stack([mb.c for mb in self.members])[:, None, :]         # (M, 1, n)
        ks = []
        for _ in range(T):
            ks.append((c @ v)[:, 0, 0])                                    # c^T W^s U
            v = W @ v
        return torch.stack(ks, dim=1)

    def recurrent(self, x: torch.Tensor) -> torch.Tensor:
        """The recurrence h_t = act(W h_{t-1} + U x_t), y_t = c^T h_t, step by step: (M, B, T)."""
        if x.dim() == 2:
            x = x.unsqueeze(-1)
        B, T, _ = x.shape
        W = torch.stack([mb.W for mb in self.members]).transpose(1, 2)   # (M, n, n), acts as h @ W^T
        U = torch.stack([mb.U for mb in self.members]).transpose(1, 2)   # (M, d, n)
        c = torch.stack([mb.c for mb in self.members])[:, :, None]       # (M, n, 1)
        drive = x.unsqueeze(0) @ U[:, None]                              # (M, B, T, n): U x_t
        act = torch.tanh if self.cfg.activation == "tanh" else (lambda z: z)
        h = torch.zeros(len(self), B, W.shape[1], dtype=x.dtype)
        ys = []
        for t in range(T):
            h = act(torch.baddbmm(drive[:, :, t], h, W))                 # (M, B, n)
            ys.append(h @ c)                                             # (M, B, 1)
        return torch.cat(ys, dim=2)

    @torch.no_grad()
    def kernel(self, length: int) -> torch.Tensor:
        """rho_hat(s) = c^T W^s U for s < length (linear members; d = 1): (M, length)."""
        return self._kernel_graph(length)
