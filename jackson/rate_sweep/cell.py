"""The jackson-sweep cell: one POD target (alpha, rank, seed, ...) and the bank of members
(`restarts` per m_h) trained on it, with everything it measures (errors, oracles, curves,
spectra, target diagnostics).

Errors.  `test_mse` is the held-out mean over sequences and positions of (H_t - H_hat_t)^2.  Theorem 4.1 bounds an
L1 error instead, int sum_t |H_t - H_hat_t| dx; `test_l1` is that quantity, E_x sum_t |H_t - H_hat_t| (a sum over
the tau positions, not a mean), and `oracle_l1` the same for the rank-m_h oracle.

Terms of Eq. (17).  `term` says what each member is fitted to:
  full  the target H itself (the default): the error holds both terms of Eq. (17);
  ff    the target with rho replaced by its rank-m_h POD truncation rho_m = sum_{i <= m_h} sigma_i phi_i psi_i, a
        target of its own per member (for rank r <= m_h: H itself).  A rank-m_h attention represents rho_m exactly
        (W_Q f_hat = (sigma_i phi_i)_{i<=m_h}, W_K f_hat = (psi_i)_{i<=m_h}), so the attention term is zero and
        what is left is the feed-forward term e_FF(m_h, m_FF, FFN class): how well f_hat can make phi_i, psi_i
        (i <= m_h) and f, and F_hat make F.  What it cannot isolate: the optimisation error (a member that
        trains badly reads as a large e_FF), and an embedding too narrow to hold all 2 m_h + 1 functions (with
        psi != phi, n = 32 holds them for m_h <= 15; the full model has the same limit).

Initialisations are independent per (target, seed, m_h, restart): `init_seed` hashes all four,
so no initialisation is shared across targets (before, a member's init depended on (seed, m_h)
only and one bad m_h = 9 init was repeated on all nine Fig. 1 targets).  Of a member's restarts
the one with the lowest *training* MSE is reported (its held-out MSE in `test_mse`); the min and
median held-out MSE over the restarts sit beside it, and every restart is in `restarts.csv`.
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from synthetic.kernel_target import KernelTarget
from synthetic.pod_target import PODTarget, Spectrum
from ..fit import evaluate, fit
from ..hparams import FitConfig, ModelConfig, with_features_k
from ..models import TransformerBank
from ..pod import learned_spectrum
from ..runfolder import write_table
from ..schedule import derive_seed, derive_seeds, stable_tag
from ..sweep import config_hash, function_id
from .axes import rank_str
from .given import GivenFeatureBank, given_features

N_BLOCKS = 64  # held-out sequences are split into this many blocks for the bootstrap


@dataclass(frozen=True)
class RateCell:
    alpha: float
    rank: float                      # math.inf for rank inf
    seed: int
    m_hs: tuple[int, ...]
    phi: str = "sin"                 # a family name, or a Python callable basis(x, k) (keyed by jackson.sweep.function_id)
    psi: str = "sin"
    F: str = "identity"              # a name, an expression in x, or a Python callable (keyed by jackson.sweep.function_id)
    f: str = "identity"
    tau: int = 16
    tail_tol: float = 1e-6
    k_max: int = 4096
    n_train: int = 16384
    n_test: int = 4096
    model: ModelConfig = field(default_factory=ModelConfig)
    fit: FitConfig = field(default_factory=FitConfig)
    restarts: int = 1                # independent initialisations per m_h; the best by training MSE is reported
    device: str = "cpu"              # torch device of the training (cpu | cuda | cuda:N)
    c: float = 1.0                   # scale: sigma_i = c i^-alpha
    sigma: tuple[float, ...] = ()    # an explicit spectrum (then alpha is its fitted decay alpha_hat, rank its nonzero count)
    kernel: str = ""                 # rho(u, v) as an expression in u, v or a Python callable: its numerical POD truncated at rank (then alpha is the kernel's alpha_hat)
    pod_nodes: int = 256             # Gauss-Legendre nodes of the kernel's numerical POD
    term: str = "full"               # what each member fits: full (the target) | ff (its rank-m_h truncation: the feed-forward term alone)

    INIT_SCHEME = "v2"               # in the key: v2 = inits independent per target (init_seed); v1 = member_seed

    def __post_init__(self):             # an unset --features-k, as the sweep derives it (hparams.with_features_k)
        if self.model.features_k is None and self.m_hs:
            object.__setattr__(self, "model", with_features_k(self.model, max(self.m_hs), float(self.rank)))

    def target(self) -> PODTarget:
        if self.kernel:
            return KernelTarget(kernel=self.kernel, rank=self.rank, tail_tol=self.tail_tol, k_max=self.k_max,
                                nodes=self.pod_nodes, F=self.F, f=self.f, tau=self.tau)
        if self.sigma:
            sp = Spectrum(explicit=tuple(self.sigma))
        else:
            sp = Spectrum(alpha=self.alpha, rank=self.rank, c=self.c, tail_tol=self.tail_tol, k_max=self.k_max)
        return PODTarget(sp, phi=self.phi, psi=self.psi, F=self.F, f=self.f, tau=self.tau)

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["rank"] = rank_str(self.rank)
        for k in ("phi", "psi", "F", "f", "kernel"):      # a Python callable as its name (JSON; str() would hold an address)
            if callable(d[k]):
                d[k] = function_id(d[k])
        return d

    def run(self, folder: Path, progress: bool = True) -> None:
        measure(self, folder, progress)

    def key(self) -> str:
        return f"a{self.alpha:g}_r{rank_str(self.rank)}_s{self.seed}_{self.INIT_SCHEME}_{config_hash(self)}"

    def target_tag(self) -> int:
        """A 32-bit tag of everything that defines the target (not the model or the fit)."""
        t = {k: getattr(self, k) for k in ("alpha", "phi", "psi", "F", "f", "tau", "tail_tol", "k_max")}
        t.update({k: function_id(t[k]) for k in ("phi", "psi", "F", "f") if callable(t[k])})
        t["rank"] = rank_str(self.rank)
        if self.c != 1.0:                # only when set: the tags (and so the inits) of alpha/rank targets stay as they were
            t["c"] = self.c
        if self.sigma:
            t["sigma"] = list(self.sigma)
        if self.kernel:                  # only when set, like c and sigma
            t["kernel"] = function_id(self.kernel) if callable(self.kernel) else self.kernel
            t["pod_nodes"] = self.pod_nodes
        return stable_tag(t)

    def members(self) -> list[tuple[int, int]]:
        """(m_h, restart) of every member of the bank, m_h-major."""
        return [(m, j) for m in self.m_hs for j in range(self.restarts)]


def init_seed(cell: "RateCell", m_h: int, restart: int) -> int:
    """A rate-cell member's init: independent per (target, seed, m_h, restart), never per bank."""
    return derive_seed(cell.seed, m_h, restart, cell.target_tag())


def make_bank(cell: "RateCell"):
    """The cell's bank: every (m_h, restart) member, Eq. (5) with learned or given features."""
    ms = cell.members()
    m_hs, seeds = [m for m, _ in ms], [init_seed(cell, m, j) for m, j in ms]
    if cell.model.features == "given":
        return GivenFeatureBank(cell.model, m_hs, seeds, phi=cell.phi, psi=cell.psi, f=cell.f, F=cell.F)
    return TransformerBank(cell.model, m_hs, seeds)


def data_seeds(seed: int) -> tuple[int, int]:
    """Disjoint train / held-out sample seeds for a cell seed."""
    return derive_seeds(seed, 10_000, n=2)


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float32)


def _inputs(cell: RateCell, x: np.ndarray) -> torch.Tensor:
    """What the bank reads: the scalar inputs, or (given features) their fixed features, computed once."""
    if cell.model.features == "given":
        return given_features(x, cell.phi, cell.psi, cell.f, cell.model.features_k)
    return _t(x)


CKPT_EVERY_S = 120.0   # a cell's resume checkpoint (cells/.ckpt-<key>.pt, jackson.fit) is saved this often: a killed
                       # run resumes its in-flight cell from there; removed once the cell's results are written


def train_bank(cell: RateCell, x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, y_te: np.ndarray,
               dtype: torch.dtype = torch.float32, progress: bool = True, ckpt: Path | None = None):
    """The cell's bank trained on (x_tr, y_tr) on `cell.device`: (bank, moved to the CPU; FitResult; the
    per-member squared errors on the training and held-out sequences, float64 arrays (members, n)).
    The data reach the bank as float32, whatever `dtype`; another `dtype` (float64: the reference of
    jackson-device-check) casts the bank and the data after that, so every dtype sees the same numbers."""
    torch.manual_seed(0)  # nothing should draw from it; guards against hidden global randomness
    dev = torch.device(cell.device)

    def put(t):
        return t.to(dev) if dtype == torch.float32 else t.to(dev, dtype)

    bank = put(make_bank(cell))
    h_tr, h_te = put(_inputs(cell, x_tr)), put(_inputs(cell, x_te))
    yt_tr, yt_te = put(_t(y_tr)), put(_t(y_te))
    res = fit(bank, h_tr, yt_tr, cell.fit, seed=cell.seed, progress=progress,
              desc=f"alpha={cell.alpha:g} rank={rank_str(cell.rank)} seed={cell.seed}", ckpt=ckpt,
              ckpt_every_s=CKPT_EVERY_S, ident=cell.key())
    err_tr = evaluate(bank, h_tr, yt_tr).double().cpu().numpy()   # (members, n_train)
    err_te = evaluate(bank, h_te, yt_te).double().cpu().numpy()   # (members, n_test)
    return bank.cpu(), res, err_tr, err_te


def choose(train: np.ndarray, status: list[str], restarts: int) -> list[int]:
    """Per m_h (blocks of `restarts` consecutive members), the index of the member with the lowest
    training MSE among those that did not diverge (among all if every restart diverged)."""
    out = []
    for a in range(0, len(train), restarts):
        idx = list(range(a, a + restarts))
        ok = [i for i in idx if not status[i].startswith("diverged") and np.isfinite(train[i])] or idx
        out.append(min(ok, key=lambda i: train[i] if np.isfinite(train[i]) else np.inf))
    return out


def member_targets(cell: RateCell, target: PODTarget, x: np.ndarray, y: np.ndarray,
                   truncated: dict | None = None) -> np.ndarray:
    """What the bank is fitted to on inputs x: the target values y (N, T) for term full; for term ff, each
    member's own rank-m_h truncation (members, N, T) (the exact target where the rank is <= m_h), taken from
    `truncated` (`PODTarget.oracle(x, m_hs)["truncated"]`) when the caller has it already."""
    if cell.term == "full":
        return y
    trunc = truncated if truncated is not None else target.oracle(x, cell.m_hs)["truncated"]
    return np.stack([trunc[m] for m, _ in cell.members()])


def measure(cell: RateCell, folder: Path, progress: bool = True) -> None:
    """Train the cell's bank on its target and write what it measured into `folder`."""
    t0 = time.perf_counter()
    target = cell.target()
    s_train, s_test = data_seeds(cell.seed)
    x_tr, x_te = target.sample(cell.n_train, s_train), target.sample(cell.n_test, s_test)
    y_tr, y_te = target(x_tr), target(x_te)
    oracle = target.oracle(x_te, cell.m_hs)
    diag = target.diagnostics(x_te, y_mean=float(y_tr.mean()))

    fit_tr = member_targets(cell, target, x_tr, y_tr)
    fit_te = member_targets(cell, target, x_te, y_te, oracle["truncated"])   # the held-out oracle is computed above
    ckpt = Path(folder).parent / f".ckpt-{cell.key()}.pt"      # beside the cell's temporary folder: kept if killed
    bank, res, err_tr, err_te = train_bank(cell, x_tr, fit_tr, x_te, fit_te, progress=progress, ckpt=ckpt)
    abs_te = evaluate(bank, _inputs(cell, x_te), _t(fit_te), absolute=True).double().numpy() * cell.tau  # sum over t
    members = cell.members()
    dev = torch.device(cell.device)
    chosen = choose(err_tr.mean(axis=1), res.status, cell.restarts)
    spec = learned_spectrum(bank)[chosen]
    info = target.resolved()

    rows, blocks, every = [], [], []
    for i, (m, j) in enumerate(members):
        every.append({"m_h": m, "restart": j, "init_seed": bank.members[i].seed, "train_mse": err_tr[i].mean(),
                      "test_mse": err_te[i].mean(), "status": res.status[i], "steps": res.steps[i],
                      "chosen": i in chosen})
    for m, i in zip(cell.m_hs, chosen):
        o_tr = ((oracle["truncated"][m] - y_te) ** 2).mean(axis=1)
        o_se = ((oracle["self_exact"][m] - y_te) ** 2).mean(axis=1)
        o_l1 = np.abs(oracle["truncated"][m] - y_te).sum(axis=1)
        mine = [e for e in every if e["m_h"] == m]
        ok = [e["test_mse"] for e in mine if not e["status"].startswith("diverged")]
        rows.append({"alpha": cell.alpha, "rank": rank_str(cell.rank), "m_h": m, "seed": cell.seed,
                     "train_mse": err_tr[i].mean(), "test_mse": err_te[i].mean(),
                     "oracle_mse": o_tr.mean(), "oracle_self_exact_mse": o_se.mean(),
                     "status": res.status[i], "steps": res.steps[i], "K": info["K"],
                     "tail_beyond_K": info["tail_energy"], "cell": cell.key(),
                     "restart": members[i][1], "init_seed": bank.members[i].seed, "restarts": cell.restarts,
                     "test_mse_min": min(ok) if ok else float("nan"),
                     "test_mse_median": float(np.median(ok)) if ok else float("nan"),
                     "n_diverged": len(mine) - len(ok),
                     "test_l1": abs_te[i].mean(), "oracle_l1": o_l1.mean(), "term": cell.term,
                     "activation": cell.model.activation})
        for kind, e in (("test", err_te[i]), ("oracle", o_tr), ("oracle_self_exact", o_se),
                        ("test_l1", abs_te[i]), ("oracle_l1", o_l1)):
            for b, chunk in enumerate(np.array_split(e, N_BLOCKS)):
                blocks.append({"m_h": m, "seed": cell.seed, "kind": kind, "block": b, "mse": chunk.mean()})

    tmp = Path(folder)
    pd.DataFrame(rows).to_csv(tmp / "rows.csv", index=False)
    pd.DataFrame(every).to_csv(tmp / "restarts.csv", index=False, float_format="%.6e")
    # the large tables gzip-compressed (blocks.csv.gz, curve.csv.gz, learned_spectrum.csv.gz; read with table_path)
    write_table(tmp, "blocks.csv", pd.DataFrame(blocks), float_format="%.6e")
    curve = pd.DataFrame(res.curve)
    if len(curve):
        curve["m_h"] = [members[i][0] for i in curve["member"]]
        curve["restart"] = [members[i][1] for i in curve["member"]]
        curve["chosen"] = curve["member"].isin(chosen)
    write_table(tmp, "curve.csv", curve)
    sp = pd.DataFrame(spec, columns=[f"s{k + 1}" for k in range(spec.shape[1])])
    sp.insert(0, "m_h", cell.m_hs)
    write_table(tmp, "learned_spectrum.csv", sp, float_format="%.6e")
    meta = {"cell": cell.as_dict(), "key": cell.key(), "target": info, "diagnostics": diag,
            "complexity": target.complexity(), "sigma_head": target.sigma[:64].tolist(),
            "fit_wall_s": res.wall_s, "cell_wall_s": time.perf_counter() - t0,
            "torch_threads": res.threads, "device": str(dev),
            **({"guarded": res.guarded} if any(res.guarded) else {})}   # per member: the jump guard's restores
    (tmp / "cell.json").write_text(json.dumps(meta, indent=1))
    ckpt.unlink(missing_ok=True)           # every result is written: the folder is renamed into place next
