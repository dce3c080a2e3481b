"""The attention term of Eq. (17) alone: Eq. (5) with f_hat replaced by fixed, given features.

    h(x)   = (phi_1(x), ..., phi_K(x), psi_1(x), ..., psi_K(x))           K = ModelConfig.features_k
    rho_hat(x_t, x_s) = (W_Q h(x_t))^T (W_K h(x_s))                          W_Q, W_K in R^{m_h x dim h}
    H_hat_t = F( a * sum_s softmax_s(rho_hat) f(x_s) + b )                  a, b scalars (the value map)

phi, psi, f and F are the *target's own* families and maps (the psi block is left out when psi is
phi), so every target of Eq. (8) with rank r <= K is exactly representable once m_h >= r
(W_Q = diag(sigma) on the phi block, W_K = I on the psi block, a = 1, b = 0): the feed-forward term
of Eq. (17) is zero (C2 = 0) and what is left is the attention rank.  Only W_Q, W_K (the attention)
and the affine value map (a, b) are trained.  (A first version also learned W_V over (f(x), h(x)):
on alpha = 1.5, rank 6 it ended 3000 steps 2-10x higher at m_h >= 6, 1e-5 - 4e-5, while the exact
representation needs W_V to pick f alone -- an optimisation burden that is not the attention term.)
For rank inf the features stop at K, so a member can use only the first K POD directions (K >= the
largest m_h is checked by the sweep).

`GivenFeatureBank` has the interface of `TransformerBank` that `fit`, `evaluate` and
`learned_spectrum` use: members with their own parameters and seeds, `forward`, `rho_hat`,
`member_param_groups`.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch
from torch import nn

from synthetic.pod_target import basis_matrix, f_map
from ..models import Internals, _uniform
from ..hparams import ModelConfig, given_features_k
from ..threads import step_flops

# F in torch (the target's F_MAPS are numpy): the given read-out applies the target's own F
TORCH_F = {"identity": lambda z: z, "tanh": torch.tanh, "square": lambda z: z * z}


def given_features(x, phi, psi, f, k: int) -> torch.Tensor:
    """(f(x), h(x)) for inputs x (any shape): x.shape + (1 + dim h,), float32 -- the value f(x) first.  phi and psi
    are family names or Python callable bases basis(x, k) (synthetic.pod_target.basis_matrix)."""
    xn = np.asarray(x.detach().cpu().numpy() if torch.is_tensor(x) else x, dtype=np.float64)
    parts = [f_map(f)[0](xn)[..., None], basis_matrix(phi, xn, k, "phi")]
    if psi != phi:
        parts.append(basis_matrix(psi, xn, k, "psi"))
    return torch.from_numpy(np.concatenate(parts, axis=-1)).float()


class GivenMember(nn.Module):
    def __init__(self, cfg: ModelConfig, m_h: int, seed: int, dim: int):
        super().__init__()
        self.m_h, self.seed = m_h, seed
        gen = torch.Generator().manual_seed(seed)
        # W_Q, W_K entries with sd given_qk_sd / (sqrt(dim) m_h^(1/4)): the initial logits then have sd
        # ~ given_qk_sd^2 whatever m_h (|h|^2 ~ dim), instead of growing like sqrt(m_h) and saturating the softmax
        b = cfg.given_qk_sd * math.sqrt(3.0 / dim) / m_h ** 0.25
        self.W_Q = nn.Parameter(_uniform(gen, (m_h, dim), b))
        self.W_K = nn.Parameter(_uniform(gen, (m_h, dim), b))
        self.a = nn.Parameter(torch.ones(()))
        self.b = nn.Parameter(torch.zeros(()))


class GivenFeatureBank(nn.Module):
    """Members (one per (m_h, seed)) of the given-features model, run together."""

    def __init__(self, cfg: ModelConfig, m_hs, seeds, phi: str = "sin", psi: str = "sin",
                 f: str = "identity", F: str = "identity"):
        super().__init__()
        if len(m_hs) != len(seeds) or len(m_hs) == 0:
            raise ValueError("a bank needs one seed per member and at least one member")
        if cfg.attention != "softmax":
            raise ValueError(f"--features given: implemented for softmax attention only, got {cfg.attention}")
        if cfg.features_k is None:           # unset: as a sweep derives it (hparams.given_features_k)
            cfg = dataclasses.replace(cfg, features_k=given_features_k(max(m_hs)))
        if cfg.features_k < max(m_hs):
            raise ValueError(f"--features-k: must be >= the largest m_h ({max(m_hs)}), got {cfg.features_k}")
        self.cfg, self.phi, self.psi, self.f, self.F = cfg, phi, psi, f, F
        self.dim = cfg.features_k * (1 if psi == phi else 2)          # dim h (the value f(x) rides in front)
        self.m_hs, self.seeds = tuple(int(m) for m in m_hs), tuple(int(s) for s in seeds)
        self.members = nn.ModuleList(GivenMember(cfg, m, s, self.dim) for m, s in zip(self.m_hs, self.seeds))
        self.m_max = max(self.m_hs)

    def __len__(self):
        return len(self.members)

    def step_work(self, batch: int, T: int) -> float:
        """One training step's FLOPs on batch x T tokens, estimated (jackson.threads.step_flops): each member's
        coupling A_M (dim x dim) on every token, and its logits and weighted sums over token pairs (dim + 1 wide);
        W_Q, W_K and (a, b) themselves are small beside them.  The fixed features need no gradient, so the backward
        pass takes one product per forward one, not two: 2/3 of step_flops."""
        M, d = len(self.members), self.dim
        return 2.0 / 3.0 * step_flops(M * d * d, batch * T, attention=M * batch * T * T * (d + 1))

    def features(self, x) -> torch.Tensor:
        """(f(x), h(x)): x.shape + (1 + dim,)."""
        return given_features(x, self.phi, self.psi, self.f, self.cfg.features_k).to(self.members[0].W_Q.device)

    def coupling(self) -> torch.Tensor:
        """A_M = W_Q^T W_K per member, (M, dim, dim): rho_hat(u, v) = h(u)^T A_M h(v), rank <= m_h."""
        return torch.stack([mb.W_Q.T @ mb.W_K for mb in self.members])

    def forward(self, x: torch.Tensor, return_internals: bool = False):
        """x: (B, T) inputs shared by all members, or their `features` (B, T, 1 + dim) -> y (M, B, T).

        rho_hat(x_t, x_s) = h_t^T A_M h_s is computed as (h_t^T A_M) . h_s with the member index
        folded into the query side, so one batched matmul per sequence serves every member instead of
        M x B tiny (T x m_h) products, and the logits come out as [b, t, member, s]: the softmax over s
        and the sum over s run along contiguous memory.  The function is the same as the per-member
        reference (checked by the benchmark and tests/test_given.py).  Measured by
        `python benchmarks/bench_given.py step` (32 members, batch 256, dim h 32, one thread): see
        reports/benchmarks.md, "jackson-sweep given features"."""
        hv = x if x.dim() == 3 else self.features(x)                         # (B, T, 1 + dim)
        fx, h = hv[..., 0], hv[..., 1:]                                      # f(x_s): (B, T); h: (B, T, dim)
        B, T, d = h.shape
        M = len(self)
        A = self.coupling()                                                  # (M, d, d)
        Q = h.reshape(B * T, d) @ A.permute(1, 0, 2).reshape(d, M * d)      # (B*T, M*d): h_t^T A_M per member
        logits = torch.bmm(Q.view(B, T * M, d), h.transpose(1, 2)).view(B, T, M, T)   # [b, t, member, s]
        pattern = torch.softmax(logits, dim=-1)                              # softmax over s
        z = torch.bmm(pattern.view(B, T * M, T), fx.unsqueeze(-1)).view(B, T, M).permute(2, 0, 1)  # (M, B, T)
        a = torch.stack([mb.a for mb in self.members]).view(M, 1, 1)
        b = torch.stack([mb.b for mb in self.members]).view(M, 1, 1)
        y = TORCH_F[self.F](a * z + b)
        if return_internals:
            return Internals(y, logits.permute(2, 0, 1, 3), pattern.permute(2, 0, 1, 3))
        return y

    @torch.no_grad()
    def rho_hat(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """h(u_a)^T A_M h(v_b) per member: (M, len(u), len(v))."""
        return self.features(u.reshape(-1))[:, 1:] @ self.coupling() @ self.features(v.reshape(-1))[:, 1:].T

    def member_param_groups(self):
        return [list(mb.parameters()) for mb in self.members]
