"""The jackson-sweep experiment (Fig. 1): config -> cells -> runner -> tables -> figures."""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from synthetic.pod_target import TargetError
from .config import UsageError, check_out_dir, need
from .fit import FitConfig
from .models import ATTENTIONS, ModelConfig
from .results import collect, plot, reference_run, summarize
from .rate_cell import RateCell, rank_str
from .sweep import run_cells


@dataclass(frozen=True)
class SweepConfig:
    alpha: tuple[float, ...] = (1.5,)          # spectral decay exponents: sigma_i = i^-alpha
    rank: tuple[float, ...] = (math.inf,)      # target ranks r (integers >= 1, or inf)
    m_h: tuple[int, ...] = tuple(range(1, 17))  # attention sizes m_h of the bank's members
    seeds: tuple[int, ...] = (0,)              # one cell (data + inits) per seed
    phi: str = "sin"                           # query-side POD family: sin | cos | legendre
    psi: str = "sin"                           # key-side POD family (may differ from phi)
    F: str = "identity"                        # outer map F: identity | tanh | square
    f: str = "identity"                        # value map f: identity | sin | square
    tau: int = 16                              # sequence length
    tail_tol: float = 1e-6                     # rank inf: truncate once sum_{i>K} sigma_i^2 <= this
    k_max: int = 4096                          # rank inf: at most this many POD terms
    n_train: int = 16384                       # training sequences per cell
    n_test: int = 4096                         # held-out sequences per cell
    fit_range: tuple[int, ...] = (1, 8)        # m_h range (lo,hi) of the log-log exponent fit
    model: ModelConfig = field(default_factory=ModelConfig)
    fit: FitConfig = field(default_factory=FitConfig)
    out: str = ""                              # output folder (default: reports/jackson/sweep-<alphas>-<ranks>)
    scheduler: str = ""                        # Dask scheduler address; empty runs in-process
    quick: bool = False                        # seconds-long run: tiny data, model and budget
    compare_to: str = ""                       # another jackson-sweep folder (e.g. the softmax run of the same targets): its held-out curve beside this one in summary.md and error_vs_mh.png

    def resolved_out(self) -> Path:
        if self.out:
            return Path(self.out)
        a = "_".join(f"{x:g}" for x in self.alpha)
        r = "_".join(rank_str(x) for x in self.rank)
        att = "" if self.model.attention == "softmax" else f"-{self.model.attention}"   # never mixed into a softmax folder
        return Path("reports/jackson") / f"sweep-a{a}-r{r}{att}{'-quick' if self.quick else ''}"

    def cells(self) -> list[RateCell]:
        return [RateCell(alpha=a, rank=r, seed=s, m_hs=tuple(self.m_h), phi=self.phi, psi=self.psi,
                     F=self.F, f=self.f, tau=self.tau, tail_tol=self.tail_tol, k_max=self.k_max,
                     n_train=self.n_train, n_test=self.n_test, model=self.model, fit=self.fit)
                for a in self.alpha for r in self.rank for s in self.seeds]

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["rank"] = [rank_str(r) for r in self.rank]
        d["out"] = str(self.resolved_out())
        return d


# --quick: every size shrunk so the whole pipeline runs in seconds (smoke tests, first tries)
QUICK = {"m_h": (1, 2, 3), "n_train": 256, "n_test": 128, "k_max": 128, "fit_range": (1, 3),
         "model": ModelConfig(n=8, d_v=8, width=16),
         "fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=128)}


def validate(cfg: SweepConfig) -> None:
    """Raise UsageError naming the option and the valid range; writes nothing."""
    need(len(cfg.alpha) > 0 and all(a > 0 for a in cfg.alpha), f"--alpha: values must be > 0, got {cfg.alpha}")
    need(len(cfg.rank) > 0, "--rank: give at least one rank")
    for r in cfg.rank:
        need(r >= 1 and (math.isinf(r) or r == int(r)), f"--rank: must be integers >= 1 or inf, got {r:g}")
        if math.isinf(r):
            for a in cfg.alpha:
                need(a > 0.5, f"--alpha: rank inf needs alpha > 0.5 (sum of sigma_i^2 = sum i^-2alpha diverges), got {a:g}")
    need(len(cfg.m_h) > 0 and len(set(cfg.m_h)) == len(cfg.m_h), f"--m-h: give distinct values, got {cfg.m_h}")
    for m in cfg.m_h:
        need(1 <= m <= cfg.model.n, f"--m-h: each m_h must be in 1..{cfg.model.n} (--n, the embedding width), got {m}")
    need(all(s >= 0 for s in cfg.seeds) and len(cfg.seeds) > 0, f"--seeds: need integers >= 0, got {cfg.seeds}")
    need(cfg.tau >= 1, f"--tau: must be >= 1, got {cfg.tau}")
    need(cfg.tail_tol > 0, f"--tail-tol: must be > 0, got {cfg.tail_tol}")
    need(cfg.k_max >= max(cfg.m_h), f"--k-max: must be >= the largest m_h, got {cfg.k_max}")
    need(cfg.n_test >= 64, f"--n-test: must be >= 64 (bootstrap blocks), got {cfg.n_test}")
    need(cfg.n_train >= cfg.fit.batch_size, f"--n-train: must be >= --batch-size ({cfg.fit.batch_size}), got {cfg.n_train}")
    need(len(cfg.fit_range) == 2 and 1 <= cfg.fit_range[0] < cfg.fit_range[1],
         f"--fit-range: give lo,hi with 1 <= lo < hi, got {cfg.fit_range}")
    m, ft = cfg.model, cfg.fit
    need(m.d_in == 1, f"--d-in: POD targets have scalar inputs, so it must be 1, got {m.d_in}")
    need(m.pos == "none", "--pos: Eq. (8) targets carry no position and rho_hat(u, v) needs none; use none")
    need(m.n >= 1 and m.d_v >= 1 and m.width >= 1 and m.depth >= 2,
         "--n, --d-v, --width: must be >= 1 and --depth >= 2 (at least one hidden layer)")
    need(m.qk_init > 0 and m.in_scale > 0, "--qk-init, --in-scale: must be > 0")
    need(m.attention in ATTENTIONS, f"--attention: choose {', '.join(ATTENTIONS)}, got {m.attention}")
    need(ft.steps >= 1 and ft.batch_size >= 1 and ft.eval_every >= 1 and ft.eval_size >= 1,
         "--steps, --batch-size, --eval-every, --eval-size: must be >= 1")
    need(ft.lr > 0 and 0 < ft.min_lr <= ft.lr, f"--lr, --min-lr: need 0 < min-lr <= lr, got {ft.lr}, {ft.min_lr}")
    need(ft.schedule in ("plateau", "cosine"), f"--schedule: choose plateau or cosine, got {ft.schedule}")
    need(0 < ft.lr_decay < 1, f"--lr-decay: must be in (0, 1), got {ft.lr_decay}")
    try:
        for c in cfg.cells():
            if c.seed == cfg.seeds[0]:
                c.target()
    except TargetError as e:
        raise UsageError(str(e)) from None
    check_out_dir(cfg.resolved_out())
    if cfg.compare_to:
        ref = Path(cfg.compare_to)
        need((ref / "summary.json").is_file(), f"--compare-to: {ref} holds no summary.json (not a finished jackson-sweep folder)")
        need(ref.resolve() != cfg.resolved_out().resolve(), "--compare-to: give another run's folder, not this run's --out")
        try:
            targets = reference_run(ref)["targets"]
        except (OSError, KeyError, TypeError, ValueError) as e:
            raise UsageError(f"--compare-to: cannot read {ref / 'summary.json'} as a jackson-sweep summary ({e})") from None
        mine = {(float(a), rank_str(r)) for a in cfg.alpha for r in cfg.rank}
        need(bool(mine & set(targets)), f"--compare-to: {ref} has none of this run's targets (alpha, rank) {sorted(mine)}")


def run_sweep(cfg: SweepConfig, command: str, progress: bool = True) -> dict:
    """Run (or resume) the sweep and rebuild its tables, summary and figures."""
    validate(cfg)
    out = cfg.resolved_out()
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg.as_dict(), indent=1, default=str))
    (out / "command.txt").write_text(command + "\n")
    dirs = run_cells(cfg.cells(), out, scheduler=cfg.scheduler or None, progress=progress)
    tabs = collect(out, dirs)
    resolved = json.loads(json.dumps(cfg.as_dict(), default=str))   # as config.json holds it (lists, not tuples)
    reference = reference_run(cfg.compare_to, resolved) if cfg.compare_to else None
    summary = summarize(out, tabs, tuple(cfg.fit_range), command, reference)
    plot(out, tabs, summary)
    return summary
