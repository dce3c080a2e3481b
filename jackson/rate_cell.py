"""The jackson-sweep cell: one POD target (alpha, rank, seed, ...) and the bank of members
(one per m_h) trained on it, with everything it measures (errors, oracles, curves, spectra)."""
from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from synthetic.pod_target import PODTarget, Spectrum
from .fit import FitConfig, evaluate, fit
from .models import ModelConfig, TransformerBank
from .pod import learned_spectrum
from .sweep import config_hash

N_BLOCKS = 64  # held-out sequences are split into this many blocks for the bootstrap


@dataclass(frozen=True)
class RateCell:
    alpha: float
    rank: float                      # math.inf for rank inf
    seed: int
    m_hs: tuple[int, ...]
    phi: str = "sin"
    psi: str = "sin"
    F: str = "identity"
    f: str = "identity"
    tau: int = 16
    tail_tol: float = 1e-6
    k_max: int = 4096
    n_train: int = 16384
    n_test: int = 4096
    model: ModelConfig = field(default_factory=ModelConfig)
    fit: FitConfig = field(default_factory=FitConfig)

    def target(self) -> PODTarget:
        sp = Spectrum(alpha=self.alpha, rank=self.rank, tail_tol=self.tail_tol, k_max=self.k_max)
        return PODTarget(sp, phi=self.phi, psi=self.psi, F=self.F, f=self.f, tau=self.tau)

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["rank"] = rank_str(self.rank)
        return d

    def run(self, folder: Path, progress: bool = True) -> None:
        measure(self, folder, progress)

    def key(self) -> str:
        return f"a{self.alpha:g}_r{rank_str(self.rank)}_s{self.seed}_{config_hash(self)}"


def rank_str(rank: float) -> str:
    return "inf" if math.isinf(rank) else str(int(rank))


def member_seed(seed: int, m_h: int) -> int:
    """A member's init depends only on (seed, m_h), never on which bank it sits in."""
    return int(np.random.SeedSequence([seed, m_h]).generate_state(1)[0])


def data_seeds(seed: int) -> tuple[int, int]:
    """Disjoint train / held-out sample seeds for a cell seed."""
    a, b = np.random.SeedSequence([seed, 10_000]).generate_state(2)
    return int(a), int(b)


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float32)


def measure(cell: RateCell, folder: Path, progress: bool = True) -> None:
    """Train the cell's bank on its target and write what it measured into `folder`."""
    t0 = time.perf_counter()
    target = cell.target()
    s_train, s_test = data_seeds(cell.seed)
    x_tr, x_te = target.sample(cell.n_train, s_train), target.sample(cell.n_test, s_test)
    y_tr, y_te = target(x_tr), target(x_te)
    oracle = target.oracle(x_te, cell.m_hs)

    torch.manual_seed(0)  # nothing should draw from it; guards against hidden global randomness
    bank = TransformerBank(cell.model, cell.m_hs, [member_seed(cell.seed, m) for m in cell.m_hs])
    res = fit(bank, _t(x_tr), _t(y_tr), cell.fit, seed=cell.seed, progress=progress,
              desc=f"alpha={cell.alpha:g} rank={rank_str(cell.rank)} seed={cell.seed}")
    err_tr = evaluate(bank, _t(x_tr), _t(y_tr)).double().numpy()   # (M, n_train)
    err_te = evaluate(bank, _t(x_te), _t(y_te)).double().numpy()   # (M, n_test)
    spec = learned_spectrum(bank)
    info = target.resolved()

    rows, blocks = [], []
    for i, m in enumerate(cell.m_hs):
        o_tr = ((oracle["truncated"][m] - y_te) ** 2).mean(axis=1)
        o_se = ((oracle["self_exact"][m] - y_te) ** 2).mean(axis=1)
        rows.append({"alpha": cell.alpha, "rank": rank_str(cell.rank), "m_h": m, "seed": cell.seed,
                     "train_mse": err_tr[i].mean(), "test_mse": err_te[i].mean(),
                     "oracle_mse": o_tr.mean(), "oracle_self_exact_mse": o_se.mean(),
                     "status": res.status[i], "steps": res.steps[i], "K": info["K"],
                     "tail_beyond_K": info["tail_energy"], "cell": cell.key()})
        for kind, e in (("test", err_te[i]), ("oracle", o_tr), ("oracle_self_exact", o_se)):
            for j, chunk in enumerate(np.array_split(e, N_BLOCKS)):
                blocks.append({"m_h": m, "seed": cell.seed, "kind": kind, "block": j, "mse": chunk.mean()})

    tmp = Path(folder)
    pd.DataFrame(rows).to_csv(tmp / "rows.csv", index=False)
    pd.DataFrame(blocks).to_csv(tmp / "blocks.csv", index=False, float_format="%.6e")
    curve = pd.DataFrame(res.curve)
    if len(curve):
        curve["m_h"] = [cell.m_hs[i] for i in curve["member"]]
    curve.to_csv(tmp / "curve.csv", index=False)
    sp = pd.DataFrame(spec, columns=[f"s{k + 1}" for k in range(spec.shape[1])])
    sp.insert(0, "m_h", cell.m_hs)
    sp.to_csv(tmp / "learned_spectrum.csv", index=False, float_format="%.6e")
    meta = {"cell": cell.as_dict(), "key": cell.key(), "target": info,
            "complexity": target.complexity(), "sigma_head": target.sigma[:64].tolist(),
            "fit_wall_s": res.wall_s, "cell_wall_s": time.perf_counter() - t0,
            "torch_threads": torch.get_num_threads()}
    (tmp / "cell.json").write_text(json.dumps(meta, indent=1))


