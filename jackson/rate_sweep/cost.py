"""What one cell of a rate sweep holds in memory at its peak, priced from the config alone (`cell_bytes`) and
checked against the limit (`check`, through `jackson.budget`) before a target is built or a run folder opened.

A cell holds its training and held-out sequences and targets (float64, n x tau each), the full target's logits
over the larger set (`PODTarget.__call__` builds them whole: n x tau x tau, with their softmax), the held-out
oracles (two per m_h), one chunk of the target's basis values (`synthetic.pod_target.chunk_bytes`: K terms per
position), the float32 copies the bank reads, and one training step of the bank of len(m_h) x restarts members
(`jackson.budget.transformer_bytes`, the members folded into the batch), or its evaluation in batches of 1,024.
No torch, no numpy: the sizes are multiplied, nothing is allocated.

The time of the sweep (`sweep_flops`, checked by `jackson.sweep.check_time_left`): its cells (widths x targets x
seeds; where that is over the limit and the run resumes, only those it has still to train: their keys are built
then, not before) x the fit's steps x the FLOPs of one step of the cell's bank (`step_work`:
the same estimate as the bank's own `step_work`, jackson.threads.step_flops, from the config alone), at the fastest
rate measured on the lab's machine,
so a floor (evaluations, oracles and the target are left out).  A run on a CUDA device is not priced for time: no
rate was measured there."""
from __future__ import annotations

import math

from synthetic.pod_target import Spectrum, TargetError, chunk_bytes
from .. import budget
from ..threads import step_flops
from ..config import UsageError

EVAL_BATCH = 1024     # jackson.fit.evaluate's batch


def terms(cfg, alpha: float, rank: float) -> int:
    """K of one target of `cfg`, without realising its values."""
    if cfg.kernel:
        return min(cfg.pod_nodes, cfg.k_max) if math.isinf(rank) else int(rank)
    if cfg.sigma or cfg.sigma_file:
        return len(cfg.explicit())
    if math.isfinite(rank):
        return int(rank)
    try:
        return Spectrum(alpha=alpha, rank=rank, c=cfg.c, tail_tol=cfg.tail_tol, k_max=cfg.k_max).terms()
    except TargetError as e:
        raise UsageError(str(e)) from None


def cell_bytes(cfg, k: int, width: int) -> dict[str, float]:
    """The memory of one cell of `cfg` whose target has K = k terms and whose MLPs are `width` wide, by part."""
    m, ft, tau = cfg.resolved_model(), cfg.fit, cfg.tau
    n_tr, n_te = cfg.n_train, cfg.n_test
    members = len(cfg.m_h) * cfg.restarts
    feats = 1 + 2 * m.features_k if m.features == "given" else m.d_in
    targets_ff = members if cfg.term == "ff" else 1            # --term ff: a target per member
    step = budget.transformer_bytes(members * min(ft.batch_size, n_tr), tau, max(m.n, m.d_v), m.depth, mlp=width,
                                    params=members * 2 * (m.depth * width * width + 2 * m.n * m.n))
    evaluate = budget.transformer_bytes(members * min(EVAL_BATCH, max(n_tr, n_te)), tau, max(m.n, m.d_v), m.depth,
                                        mlp=width, train=False)
    per = {"the sequences and targets": budget.F64 * (n_tr + n_te) * tau * (2 + targets_ff),
           "the target's logits over the training set": 3 * budget.F64 * max(n_tr, n_te) * tau * tau,
           "the held-out oracles": budget.F64 * (2 * len(cfg.m_h) + 1) * n_te * tau,
           "the float32 inputs the bank reads": budget.F32 * (n_tr + n_te) * tau * (feats + targets_ff)}
    per.update(chunk_bytes(tau, k))
    peak = max((step, evaluate), key=budget.total)
    per.update(peak)
    return per


def check(cfg) -> None:
    """Refuse, in one line naming the estimate and the limit, a sweep whose largest cell cannot fit in memory."""
    worst, what = None, ""
    for w in cfg.widths():
        for a in cfg.alpha if not (cfg.sigma or cfg.sigma_file or cfg.kernel) else cfg.alpha[:1]:
            for r in cfg.rank:
                k = terms(cfg, a, r)
                parts = cell_bytes(cfg, k, w)
                if worst is None or budget.total(parts) > budget.total(worst):
                    worst, what = parts, (f"one cell of this sweep (tau {cfg.tau:,}, {cfg.n_train:,} training and "
                                          f"{cfg.n_test:,} held-out sequences, K {k:,}, width {w:,})")
    budget.check(what, worst)
    if cfg.device == "cpu":            # a resumed run over the limit: only the cells it has still to train
        from ..sweep import check_time_left
        check_time_left("this sweep", cfg.resolved_out(), lambda left: sweep_flops(cfg, left), cfg.cells)


def member_params(m, m_h: int, width: int) -> int:
    """The weights of one member of a TransformerBank (jackson.models.Member) with MLPs `width` wide: f_hat and F_hat
    (weights and biases), W_Q and W_K (m_h x n), W_V (d_v x n), and the positional map and table when it has them."""
    def mlp(sizes):
        return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))
    hid = [width] * (m.depth - 1)
    n = mlp([m.f_in, *hid, m.n]) + 2 * m_h * m.n + m.d_v * m.n + mlp([m.d_v, *hid, 1])
    n += m.d_in * m.d_pos if m.pos != "none" else 0
    n += m.tau_max * m.d_pos if m.pos == "learned" else 0
    return n


def step_work(cfg, width: int) -> float:
    """The FLOPs of one training step of a cell's bank (len(m_h) x restarts members, MLPs `width` wide): what the
    bank's own `step_work` gives (jackson.models.TransformerBank, jackson.rate_sweep.given.GivenFeatureBank)."""
    m, tau, batch = cfg.resolved_model(), cfg.tau, min(cfg.fit.batch_size, cfg.n_train)
    m_hs = [mh for mh in cfg.m_h for _ in range(cfg.restarts)]
    M = len(m_hs)
    if m.features == "given":
        phi, psi = cfg.families()
        d = m.features_k * (1 if psi == phi else 2)
        return 2.0 / 3.0 * step_flops(M * d * d, batch * tau, attention=M * batch * tau * tau * (d + 1))
    return step_flops(sum(member_params(m, mh, width) for mh in m_hs), batch * tau,
                      attention=batch * tau * tau * M * (max(m_hs) + m.d_v))


def sweep_flops(cfg, left: list | None = None) -> tuple[float, str]:
    """(the training FLOPs of the sweep's cells, the count in words): every cell, or only `left`, the cells a resumed
    run has still to train (jackson.sweep.unfinished; each cell's MLP width is its model's)."""
    from ..sweep import left_text
    targets = len(cfg.rank) if cfg.kernel else 1 if (cfg.sigma or cfg.sigma_file) else len(cfg.alpha) * len(cfg.rank)
    cells = len(cfg.widths()) * targets * len(cfg.seeds)
    per = {w: step_work(cfg, w) for w in cfg.widths()}
    widths = ([c.model.width for c in left] if left is not None else
              [w for w in cfg.widths() for _ in range(targets * len(cfg.seeds))])
    members = len(cfg.m_h) * cfg.restarts
    n_steps = cfg.fit.steps * cfg.fit.cycles + cfg.fit.check_steps   # the cap: stopped members still ride in the bank's step
    flops = n_steps * sum(per[w] for w in widths)
    return flops, (f"{left_text(len(widths), cells)} x {n_steps:,} steps of a bank of {members:,} "
                   f"members, up to {max(per.values()) / 1e9:.3g} GFLOP a step")
