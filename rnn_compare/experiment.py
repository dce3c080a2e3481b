"""rnn-compare: RNN vs Transformer under temporal ordering and mixing (Tables 2-3, App. C/D).

config -> cells (kernel x alteration x model, seeds as bank members) -> the core runner ->
tables (CSV, markdown, LaTeX) beside the paper's values -> figure -> summary.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from jackson.config import Option, UsageError, need
from jackson.config import options as config_options
from jackson.schedule import MAX_SEED
from jackson.runfolder import check_run_folder, check_scheduler, open_run
from jackson.figures import pyplot, save
from jackson.fit import MAX_LR, FitConfig, evaluate, fit
from jackson.models import ACTIVATIONS, ModelConfig, TransformerBank
from jackson.schedule import derive_seed, derive_seeds
from jackson.sweep import checkpoint_progress, config_hash, run_cells
from .report import seed_range, write_report_json
from .alterations import AlterationError, invert_permutation, mix, mixing_filter, permute, swap_ends
from .models import RNNBank, RNNConfig
from .targets import apply_linear, complexity, kernel, mixed_kernel

# Tables 2 and 3 of the paper (MSE), keyed by (kernel, alteration, model)
PAPER = {("exp", "original", "rnn"): 1.02e-7, ("exp", "permuted", "rnn"): 3.57e-2,
         ("exp", "mixed", "rnn"): 1.58e-7, ("exp", "original", "transformer"): 2.18e-5,
         ("exp", "permuted", "transformer"): 2.51e-5, ("exp", "mixed", "transformer"): 2.39e-4,
         ("uniform", "original", "rnn"): 5.58, ("uniform", "permuted", "rnn"): 5.24,
         ("uniform", "original", "transformer"): 5.43e-4, ("uniform", "permuted", "transformer"): 5.36e-4}
TABLES = {"ordering": [("exp", "original"), ("exp", "permuted")],
          "mixing": [("exp", "original"), ("exp", "mixed")],
          "uniform": [("uniform", "original"), ("uniform", "permuted")]}
MODELS = ("rnn", "transformer")
CKPT_EVERY_S = 120.0       # default seconds between a fit's resume checkpoints (CompareCell, CompareConfig)
RETRY_STREAM = 40_000      # derive_seed(seed, RETRY_STREAM, r): the init of retry r of a diverged RNN member


def transformer_default() -> ModelConfig:
    # App. C: n = d_v = m_h = 32, feed-forward width 128, depth 3, with a positional encoding
    return ModelConfig(n=32, d_v=32, width=128, depth=3, pos="learned", d_pos=32, tau_max=32)


RNN_FIT_DEFAULT = FitConfig(steps=1500, batch_size=64, eval_size=1024)   # the RNN's budget unless told otherwise


@dataclass(frozen=True)
class CompareCell:
    kernel: str                 # exp | uniform
    alteration: str             # original | permuted | mixed
    model: str                  # rnn | transformer
    seeds: tuple[int, ...]      # one bank member per seed
    tau: int = 32
    n_train: int = 8192
    n_test: int = 2048
    data_seed: int = 0
    swap: int = 10
    filter_length: int = 5
    filter_seed: int = 0
    mix_direction: str = "future"
    filter: str = ""            # the filter's taps, comma-separated; "" draws it from (filter_length, filter_seed)
    rnn: RNNConfig = field(default_factory=RNNConfig)
    transformer: ModelConfig = field(default_factory=transformer_default)
    fit: FitConfig = field(default_factory=FitConfig)
    rnn_fit: FitConfig = field(default_factory=FitConfig)
    rnn_retries: int = 0        # RNN cells: fresh initialisations tried for a member whose fit diverged
    ckpt_dir: str = ""          # each fit's resume checkpoint is <ckpt_dir>/<key>-<fit>.pt ("": none; not in the key)
    ckpt_every_s: float = CKPT_EVERY_S  # seconds between resume checkpoints (not in the key)

    def key(self) -> str:
        # rnn_retries and the RNN's budget change nothing a Transformer cell computes, so they are left out of
        # that cell's key (its finished cells are reused when only the RNN's budget changes: the hash reads the
        # default RNN budget in their place, so cells made before keep their keys); nor do the filter's taps,
        # length or seed change an unmixed cell (a run with another filter reuses the original cells of a run
        # with the default one); where checkpoints go and how often change nothing any cell computes
        mixed = self.alteration == "mixed"
        ident = dataclasses.replace(self, ckpt_dir="", ckpt_every_s=CKPT_EVERY_S,
                                    rnn_retries=self.rnn_retries if self.model == "rnn" else 0,
                                    rnn_fit=self.rnn_fit if self.model == "rnn" else RNN_FIT_DEFAULT,
                                    filter=self.filter if mixed else "",
                                    filter_length=self.filter_length if mixed else CompareCell.filter_length,
                                    filter_seed=self.filter_seed if mixed else CompareCell.filter_seed)
        return f"{self.kernel}_{self.alteration}_{self.model}_{config_hash(ident)}"

    def ckpt_path(self, tag: str) -> Path | None:
        return Path(self.ckpt_dir) / f"{self.key()}-{tag}.pt" if self.ckpt_dir else None

    def in_progress(self) -> list[dict]:
        """Each fit's progress from its resume checkpoint (the bank of seeds, then RNN retries), [] if it has none:
        for `--status`."""
        if not self.ckpt_dir:
            return []
        tags = sorted((ck.stem[len(self.key()) + 1:] for ck in Path(self.ckpt_dir).glob(f"{self.key()}-*.pt")),
                      key=lambda tag: (tag != "bank", tag))
        return [checkpoint_progress(tag, self.ckpt_path(tag), lambda st: st["run"]["fit"]["steps"]) for tag in tags]

    def cleanup(self) -> None:
        """Remove the fits' resume checkpoints: called once the cell's folder is in place (jackson.sweep.run_cell)."""
        if self.ckpt_dir:
            for ck in Path(self.ckpt_dir).glob(f"{self.key()}-*.pt"):
                ck.unlink(missing_ok=True)

    def bank(self, seeds) -> RNNBank | TransformerBank:
        return (RNNBank(self.rnn, seeds) if self.model == "rnn" else
                TransformerBank(self.transformer, [self.transformer.n] * len(seeds), seeds))

    def data_seeds(self) -> tuple[int, int]:
        """Seeds of the training and the held-out inputs (data(n_train, .), data(n_test, .))."""
        s_tr, s_te = derive_seeds(self.data_seed, 20_000, n=2)
        return int(s_tr), int(s_te)

    def held_out_inputs(self) -> np.ndarray:
        """The held-out inputs x (n_test, tau) the cell scores on: those `data(n_test, .)` draws at fit time."""
        return self.data(self.n_test, self.data_seeds()[1])[0]

    def data(self, n: int, seed: int):
        """(inputs the model sees, targets) for the altered target; also the kernel it realises."""
        return self._pair(np.random.default_rng(seed).random((n, self.tau)))

    def coupling(self) -> np.ndarray:
        """K (tau x tau) with y = K x' for the inputs x' the model sees: the target is linear, so column u is its
        answer to the unit input e_u.  Its singular values are the POD spectrum of the target's temporal coupling
        (App. D.3): a permutation moves K's columns and keeps them; mixing changes them."""
        eye = np.eye(self.tau)
        raw = permute(eye, invert_permutation(swap_ends(self.tau, self.swap))) if self.alteration == "permuted" else eye
        seen, y, _ = self._pair(raw)
        assert np.array_equal(seen, eye)
        return y.T

    def _pair(self, x: np.ndarray):
        rho = kernel(self.kernel, self.tau, seed=self.data_seed)
        if self.alteration == "original":
            return x, apply_linear(x, rho), rho
        if self.alteration == "permuted":        # H~_t(x o p) = H_t(x): permute inputs, keep outputs
            return permute(x, swap_ends(self.tau, self.swap)), apply_linear(x, rho), rho
        th = mixing_filter(self.filter, self.filter_length, self.filter_seed)
        shifts, k = mixed_kernel(rho, th, self.mix_direction)
        return x, apply_linear(mix(x, th, self.mix_direction), rho), k[shifts >= 0]

    def run(self, folder: Path, progress: bool = True) -> None:
        t0 = time.perf_counter()
        s_tr, s_te = self.data_seeds()
        x_tr, y_tr, rho = self.data(self.n_train, s_tr)
        x_te, y_te, _ = self.data(self.n_test, s_te)
        t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
        fit_cfg = self.rnn_fit if self.model == "rnn" else self.fit
        desc = f"{self.model} {self.kernel} {self.alteration}"
        fit_s = []         # each fit's training seconds, summed over the sessions it was resumed in

        def trained(seeds, tag):
            bank = self.bank(seeds)
            # each fit checkpoints on its own (the bank of seeds, or one retry), so a stopped cell resumes
            # in the fit it was in and keeps the fits it had finished
            res = fit(bank, t(x_tr), t(y_tr), fit_cfg, seed=self.data_seed, progress=progress, desc=desc,
                      ckpt=self.ckpt_path(tag), ckpt_every_s=self.ckpt_every_s, ident=f"{self.key()}-{tag}")
            fit_s.append(res.wall_s)
            return ([res.status, res.steps, evaluate(bank, t(x_tr), t(y_tr)).double().mean(dim=1).tolist(),
                     evaluate(bank, t(x_te), t(y_te)).double().mean(dim=1).tolist()],
                    evaluate(bank, t(x_te), t(y_te), by="position").double().numpy(), res.curve)   # (members, tau)

        (status, steps, e_tr, e_te), by_t, curve = trained(self.seeds, "bank")
        init, retry = list(self.seeds), [0] * len(self.seeds)
        for i, s in enumerate(self.seeds):      # RNN only (rnn_retries): a diverged member gets fresh inits
            for r in range(1, (self.rnn_retries if self.model == "rnn" else 0) + 1):
                if not str(status[i]).startswith("diverged"):
                    break
                seed_r = derive_seed(s, RETRY_STREAM, r)
                (st, sp, tr, te), bt, c = trained((seed_r,), f"retry{i}-{r}")
                curve += [dict(row, member=i, retry=r) for row in c]      # the retry's curve, under its member
                status[i], steps[i], e_tr[i], e_te[i], by_t[i], init[i], retry[i] = st[0], sp[0], tr[0], te[0], bt[0], seed_r, r
        rows = [{"kernel": self.kernel, "alteration": self.alteration, "model": self.model, "seed": s,
                 "train_mse": e_tr[i], "test_mse": e_te[i], "status": status[i], "steps": steps[i],
                 "init_seed": init[i], "retry": retry[i]} for i, s in enumerate(self.seeds)]
        pd.DataFrame(rows).to_csv(folder / "rows.csv", index=False)
        pd.DataFrame([{"seed": s, "t": j, "test_mse": by_t[i, j]} for i, s in enumerate(self.seeds)
                      for j in range(self.tau)]).to_csv(folder / "position_mse.csv", index=False)
        pd.DataFrame(curve).to_csv(folder / "curve.csv", index=False)
        cell = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("ckpt_dir", "ckpt_every_s")}
        # wall_s: this process's time on the cell; fit_wall_s: its fits' training time over every process that
        # trained them (the two differ for a cell resumed from a checkpoint)
        meta = {"cell": cell, "key": self.key(), "wall_s": time.perf_counter() - t0, "fit_wall_s": sum(fit_s),
                "target_var": float(y_te.var()),
                "complexity": None if self.alteration == "permuted" else complexity(rho)}
        (folder / "cell.json").write_text(json.dumps(meta, indent=1, default=float))


@dataclass(frozen=True)
class CompareConfig:
    table: str = "all"           # ordering | mixing | uniform (Table 3) | all
    seeds: int = 3               # how many seeds per model and target (bank members first..first+n-1)
    first_seed: int = 0          # the first bank member's seed: more inits beside a finished run, none retrained
    tau: int = 32                # sequence length (App. C: 32)
    n_train: int = 8192          # training sequences per cell
    n_test: int = 2048           # held-out sequences per cell
    swap: int = 10               # ordering: the first `swap` steps trade places with the last `swap`
    filter_length: int = 5       # mixing: length of the random filter theta (||theta||_1 = 1; unused with --filter)
    filter_seed: int = 0         # mixing: seed of theta (unused with --filter)
    mix_direction: str = "future"  # mixing: future (the paper's x(t+s), not causal) or past (x(t-s), causal)
    filter: str = ""             # mixing: the filter's taps, comma-separated, ||theta||_1 <= 1 (empty: a random one)
    data_seed: int = 0           # inputs and the U[0,1] kernel of Table 3
    rnn: RNNConfig = field(default_factory=RNNConfig)                      # RNN
    transformer: ModelConfig = field(default_factory=transformer_default)  # Transformer
    fit: FitConfig = field(default_factory=lambda: FitConfig(steps=3000, batch_size=64, eval_size=1024))  # Transformer
    rnn_fit: FitConfig = field(default_factory=lambda: RNN_FIT_DEFAULT)  # RNN
    rnn_retries: int = 0         # RNN members whose fit diverged are retrained from up to this many fresh inits
    out: str = "reports/rnn_compare/default"  # output folder
    scheduler: str = ""          # Dask scheduler address; empty runs in-process
    quick: bool = False          # seconds-long run on tiny models and data
    ckpt_every_s: float = CKPT_EVERY_S  # seconds between a fit's resume checkpoints in <out>/checkpoints/ (0: every step)

    CLI = {"seeds": Option("--n-seeds", old=("--seeds",))}   # a count, like --n-train; --seeds lists seeds elsewhere

    def seed_list(self) -> tuple[int, ...]:
        """The bank members' seeds.  A member's init depends on its seed alone and every member sees the same
        batches, so seed s trains alike in any bank that holds it: --first-seed 3 adds inits 3.. to a run of 0..2."""
        return tuple(range(self.first_seed, self.first_seed + self.seeds))

    def targets(self) -> list[tuple[str, str]]:
        names = list(TABLES) if self.table == "all" else [self.table]
        return list(dict.fromkeys(t for n in names for t in TABLES[n]))

    def target_cell(self, kernel: str, alteration: str, model: str = "rnn") -> CompareCell:
        """A cell that makes this config's (kernel, alteration) target and held-out inputs, for the analyses that
        need the target but train nothing (coupling spectra, missing terms); its fit settings are the defaults."""
        return CompareCell(kernel=kernel, alteration=alteration, model=model, seeds=(0,), tau=self.tau,
                           n_test=self.n_test, data_seed=self.data_seed, swap=self.swap,
                           filter_length=self.filter_length, filter_seed=self.filter_seed,
                           mix_direction=self.mix_direction, filter=self.filter)

    def cells(self, ckpt_dir: str | Path = "") -> list[CompareCell]:
        """ckpt_dir: where the cells' fits keep their resume checkpoints (absolute; "" for none)."""
        return [CompareCell(kernel=k, alteration=a, model=m, seeds=self.seed_list(), tau=self.tau,
                            n_train=self.n_train, n_test=self.n_test, data_seed=self.data_seed, swap=self.swap,
                            filter_length=self.filter_length, filter_seed=self.filter_seed,
                            mix_direction=self.mix_direction, filter=self.filter, rnn=self.rnn,
                            transformer=self.transformer, fit=self.fit, rnn_fit=self.rnn_fit,
                            rnn_retries=self.rnn_retries, ckpt_dir=str(ckpt_dir), ckpt_every_s=self.ckpt_every_s)
                for k, a in self.targets() for m in MODELS]


QUICK = {"seeds": 2, "tau": 12, "n_train": 256, "n_test": 128, "swap": 3,
         "rnn": RNNConfig(hidden=16),
         "transformer": ModelConfig(n=8, d_v=8, width=16, pos="learned", d_pos=8, tau_max=12),
         "fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=64),
         "rnn_fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=64),
         # a smoke run never lands in reports/ (where the committed tables live); --out still wins
         "out": "runs/rnn_compare-quick"}
MAX_SEEDS = 1000           # --n-seeds counts bank members, all trained at once in memory
MAX_RETRIES = 10           # --rnn-retries: each retry is one more training of one member
SCHEDULES = ("cosine", "plateau")


def options(cfg) -> list[tuple[str, object]]:
    """(option, value) for every leaf field of a config, named as its parser names them (jackson.config)."""
    out = []
    for path, opt, _ in config_options(type(cfg)):
        v = cfg
        for k in path.split("."):
            v = getattr(v, k)
        out.append((opt, v))
    return out


def validate(cfg: CompareConfig) -> None:
    """Raise UsageError naming the option and the valid range; writes nothing and computes nothing big
    (every check here runs before a cell trains, so no bad value can crash a run half-way)."""
    for opt, v in options(cfg):
        need(not isinstance(v, float) or math.isfinite(v), f"{opt}: must be a finite number, got {v}")
    need(cfg.table in (*TABLES, "all"), f"--table: choose {', '.join(TABLES)} or all, got {cfg.table}")
    need(1 <= cfg.seeds <= MAX_SEEDS, f"--n-seeds: the number of seeds per model must be in 1..{MAX_SEEDS}, got {cfg.seeds}")
    need(0 <= cfg.first_seed <= MAX_SEED - cfg.seeds + 1,
         f"--first-seed: need an integer in 0..2^63-1 (its last member too: --first-seed + --n-seeds - 1), got {cfg.first_seed}")
    for opt, v in (("--data-seed", cfg.data_seed), ("--filter-seed", cfg.filter_seed)):
        need(0 <= v <= MAX_SEED, f"{opt}: need an integer in 0..2^63-1, got {v}")
    need(cfg.tau >= 2, f"--tau: must be >= 2, got {cfg.tau}")
    need(0 <= cfg.rnn_retries <= MAX_RETRIES, f"--rnn-retries: must be in 0..{MAX_RETRIES}, got {cfg.rnn_retries}")
    need(cfg.n_train >= cfg.fit.batch_size, f"--n-train: must be >= --fit-batch-size ({cfg.fit.batch_size})")
    need(cfg.n_test >= 1, "--n-test: must be >= 1")
    need(cfg.ckpt_every_s >= 0, f"--ckpt-every-s: must be a number of seconds >= 0 (0: every step), got {cfg.ckpt_every_s:g}")
    need(bool(cfg.filter) or 1 <= cfg.filter_length <= cfg.tau, f"--filter-length: must be in 1..--tau ({cfg.tau}; taps past the "
                                            f"sequence end read only padding), got {cfg.filter_length}")
    r, m = cfg.rnn, cfg.transformer
    need(r.d_in == 1, f"--rnn-d-in: the targets have scalar inputs, so it must be 1, got {r.d_in}")
    need(m.d_in == 1, f"--transformer-d-in: the targets have scalar inputs, so it must be 1, got {m.d_in}")
    for opt, v in (("--hidden", r.hidden), ("--n", m.n), ("--d-v", m.d_v), ("--width", m.width),
                   ("--depth", m.depth), ("--d-pos", m.d_pos)):
        need(v >= 1, f"{opt}: must be >= 1, got {v}")
    need(m.activation in ACTIVATIONS, f"--activation: choose {', '.join(ACTIVATIONS)}, got {m.activation!r}")
    need(m.qk_init > 0 and m.in_scale > 0, f"--qk-init, --in-scale: must be > 0, got {m.qk_init:g}, {m.in_scale:g}")
    need(m.tau_max >= cfg.tau, f"--tau-max: must be >= --tau ({cfg.tau}), got {m.tau_max}")
    need(m.pos != "none", "--pos: the comparison needs a positional encoding (learned or sinusoidal)")
    need(m.attention == "softmax",
         f"--attention: Tables 2-3 set the paper's softmax Transformer beside the RNN; use softmax, got {m.attention}")
    need(m.features == "learned",
         f"--features: the comparison trains the Eq. (5) model with learned f_hat, F_hat; use learned, got {m.features}")
    for name, f in (("fit", cfg.fit), ("rnn-fit", cfg.rnn_fit)):
        o = f"--{name}-"
        need(f.schedule in SCHEDULES, f"{o}schedule: choose {' or '.join(SCHEDULES)}, got {f.schedule}")
        for opt, v in (("steps", f.steps), ("batch-size", f.batch_size), ("eval-every", f.eval_every),
                       ("eval-size", f.eval_size), ("patience", f.patience)):
            need(v >= 1, f"{o}{opt}: must be >= 1, got {v}")
        need(f.warmup >= 0, f"{o}warmup: must be >= 0, got {f.warmup}")
        need(0 < f.lr <= MAX_LR, f"{o}lr: Adam's peak learning rate must be in 0 < lr <= {MAX_LR:g} (each step moves "
                                  f"a weight by up to lr; larger ones diverge), got {f.lr:g}")
        need(0 <= f.min_lr <= f.lr, f"{o}min-lr: must be in 0..{o}lr ({f.lr:g}; the schedule ends there), got {f.min_lr:g}")
        need(0 < f.lr_decay < 1, f"{o}lr-decay: must be in (0, 1), got {f.lr_decay:g}")
        need(0 <= f.min_improve < 1, f"{o}min-improve: must be in [0, 1), got {f.min_improve:g}")
        need(0 <= f.converged_lr_frac <= 1, f"{o}converged-lr-frac: must be in [0, 1], got {f.converged_lr_frac:g}")
        need(f.explode > 0, f"{o}explode: must be > 0, got {f.explode:g}")
    need(cfg.n_train >= cfg.rnn_fit.batch_size, f"--n-train: must be >= --rnn-fit-batch-size ({cfg.rnn_fit.batch_size})")
    try:
        swap_ends(cfg.tau, cfg.swap)
        th = mixing_filter(cfg.filter, cfg.filter_length, cfg.filter_seed)
        need(len(th) <= cfg.tau, f"--filter: at most --tau ({cfg.tau}) taps, got {len(th)}")
        mix(np.zeros((1, cfg.tau)), [1.0], cfg.mix_direction)
        r.validate()
        m.validate_m_h(m.n)
    except (AlterationError, ValueError) as e:
        raise UsageError(str(e)) from None
    check_run_folder(cfg.out, "rnn-compare")
    check_scheduler(cfg.scheduler)


def filter_words(cfg: CompareConfig) -> str:
    """How the mixing filter was chosen, with its taps (for the summary)."""
    th = mixing_filter(cfg.filter, cfg.filter_length, cfg.filter_seed)
    taps = "(" + ", ".join(f"{v:.4g}" for v in th) + ")"
    if cfg.filter:
        return f"the filter theta = {taps} given by --filter (||theta||_1 = {np.abs(th).sum():.4g})"
    return f"a random length-{cfg.filter_length} filter with ||theta||_1 = 1 (seed {cfg.filter_seed}: theta = {taps})"


def _fmt(m, s):
    return f"{m:.2e} ± {s:.1e}" if np.isfinite(s) else f"{m:.2e}"


ZONES = ("first", "middle", "last")


def zone_of(t, tau: int, swap: int) -> str:
    """Which part of the sequence output position t is in: the first `swap` steps, the last `swap` (the
    two blocks the ordering alteration exchanges), or the middle, which it leaves in place."""
    return "first" if t < swap else ("last" if t >= tau - swap else "middle")


def zone_table(pos: pd.DataFrame, cfg: CompareConfig) -> pd.DataFrame:
    """Held-out MSE averaged over the output positions of each zone, per (kernel, alteration, model, seed);
    columns first, middle, last."""
    z = pos.assign(zone=[zone_of(t, cfg.tau, cfg.swap) for t in pos.t])
    wide = z.groupby(["kernel", "alteration", "model", "seed", "zone"]).test_mse.mean().unstack("zone")
    return wide.reindex(columns=list(ZONES)).reset_index()


def position_section(pos: pd.DataFrame, cfg: CompareConfig) -> list[str]:
    """Where along the sequence the held-out error sits (median over seeds of each zone's mean MSE), and
    for each altered target its zone-by-zone ratio to the original."""
    med = zone_table(pos, cfg).groupby(["kernel", "alteration", "model"])[list(ZONES)].median()
    md = ["## Where the error sits: held-out MSE by output position", "",
          f"Mean held-out MSE over the output positions t of each zone, median over seeds: first = t < {cfg.swap}, "
          f"last = t >= {cfg.tau - cfg.swap} (the blocks the ordering alteration exchanges), middle = the rest. "
          "Diverged members are left out, as in the tables. Per position and seed: position_mse.csv; drawn in "
          "position_mse.png.", "",
          "| kernel | alteration | model | first | middle | last | first / original | middle / original | last / original |",
          "|---|---|---|---|---|---|---|---|---|"]
    for (k, a, m), r in med.iterrows():
        base = med.loc[(k, "original", m)] if (k, "original", m) in med.index and a != "original" else None
        ratios = ([f"{r[z] / base[z]:.3g}" for z in ZONES] if base is not None else ["", "", ""])
        md.append(f"| {k} | {a} | {m} | " + " | ".join(f"{r[z]:.3g}" for z in ZONES) + " | " + " | ".join(ratios) + " |")
    md.append("")
    conc = concentration(pos)
    if len(conc):
        md += [f"Is the drop spread over the sequence or held by a few positions? Per output position, the altered "
               f"target's MSE over the original's (each the median over seeds); *hot* positions are those above "
               f"{HOT}x. Their share of the altered target's summed MSE, and the altered / original ratio of the "
               "mean MSE with them left out:", "",
               "| kernel | alteration | model | median over t of altered / original | hot positions (ratio) | "
               "hot share of altered MSE | mean ratio without them | mean ratio, all t |", "|---|---|---|---|---|---|---|---|"]
        for r in conc.itertuples():
            hot = ", ".join(f"{t} ({v:.3g}x)" for t, v in r.hot[:5]) or "none"
            if len(r.hot) > 5:
                hot += f", and {len(r.hot) - 5} more ({len(r.hot)} of {pos.t.nunique()})"
            md.append(f"| {r.kernel} | {r.alteration} | {r.model} | {r.median_ratio:.3g} | {hot} | "
                      f"{r.hot_share:.0%} | {r.ratio_without_hot:.3g} | {r.ratio_all:.3g} |")
        md.append("")
    return md


HOT = 10.0       # a position whose altered / original MSE ratio exceeds this is 'hot' (position_section)


def concentration(pos: pd.DataFrame) -> pd.DataFrame:
    """For each altered target beside its original (same kernel and model): per position t the ratio of the
    two MSEs (median over seeds each), its median over t, the positions above HOT with their ratios, their
    share of the altered target's summed MSE, and the ratio of mean MSEs with and without them."""
    med = pos.groupby(["kernel", "alteration", "model", "t"]).test_mse.median()
    out = []
    for (k, a, m), alt in med.groupby(level=["kernel", "alteration", "model"]):
        if a == "original" or (k, "original", m) not in med.droplevel("t").index:
            continue
        alt = alt.droplevel(["kernel", "alteration", "model"])
        base = med.loc[(k, "original", m)]
        ratio = alt / base
        hot = ratio[ratio > HOT]
        cold = ratio.index.difference(hot.index)
        out.append({"kernel": k, "alteration": a, "model": m, "median_ratio": float(ratio.median()),
                    "hot": [(int(t), float(v)) for t, v in hot.sort_values(ascending=False).items()],
                    "hot_share": float(alt[hot.index].sum() / alt.sum()),
                    "ratio_without_hot": float(alt[cold].mean() / base[cold].mean()) if len(cold) else float("nan"),
                    "ratio_all": float(alt.mean() / base.mean())})
    return pd.DataFrame(out)


def block_references(cfg: CompareConfig, check: pd.DataFrame | None) -> dict:
    """(kernel, model) -> (j1, j2, reference MSE by t) for the block of terms that `missing_terms_check` found in
    most of that model's mixed members (only blocks marked one_block count; none when no block has a majority)."""
    refs = {}
    if check is None or not len(check):
        return refs
    for (k, m), g in check[check.one_block.astype(bool)].groupby(["kernel", "model"]):
        counts = g.groupby(["j1", "j2"]).size()
        n_members = int((check.kernel == k).mul(check.model == m).sum())
        if counts.max() * 2 <= n_members:
            continue
        j1, j2 = (int(v) for v in counts.idxmax())
        cell = cfg.target_cell(k, "mixed", m)
        refs[(k, m)] = (j1, j2, drop_errors(cell.coupling(), cell.held_out_inputs(), j1, j2))
    return refs


def plot_positions(out: Path, pos: pd.DataFrame, cfg: CompareConfig, refs: dict | None = None) -> Path:
    """Held-out MSE against output position, one panel per (kernel, model): median over seeds, band
    from min to max, original and altered targets together, the exchanged blocks shaded where a panel has a
    permuted target; dashed, where `refs` has the panel, the error of a model that loses only the block of terms
    missing_terms_check found (block_references)."""
    plt = pyplot()
    panels = list(dict.fromkeys(zip(pos.kernel, pos.model)))
    ncols = min(2, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.0 * nrows + 0.6), squeeze=False)
    styles = {"original": "C0", "permuted": "C3", "mixed": "C2"}
    for ax, (k, m) in zip(axes.flat, panels):
        d = pos[(pos.kernel == k) & (pos.model == m)]
        for a, g in d.groupby("alteration"):
            s = g.groupby("t").test_mse
            ax.plot(s.median().index, s.median().values, color=styles.get(a, "k"), label=a)
            ax.fill_between(s.median().index, s.min().values, s.max().values, color=styles.get(a, "k"), alpha=0.2, lw=0)
        if refs and (k, m) in refs:                      # what losing the found block of terms alone would cost
            j1, j2, ref = refs[(k, m)]
            t = np.flatnonzero(ref > 0)
            ax.plot(t, ref[t], "k--", lw=1, label=f"error of a model exact but for {terms_words(j1, j2)} ({m})")
        if (d.alteration == "permuted").any():         # the exchanged blocks mean nothing on a mixing-only panel
            ax.axvspan(-0.5, cfg.swap - 0.5, color="0.85", zorder=0)
            ax.axvspan(cfg.tau - cfg.swap - 0.5, cfg.tau - 0.5, color="0.85", zorder=0,
                       label=f"blocks exchanged by the ordering alteration (first/last {cfg.swap})")
        ax.set(yscale="log", xlabel="output position t", title=f"{m}, {k} kernel", xlim=(-0.5, cfg.tau - 0.5))
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out MSE at t")
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    seen = {}
    for ax in axes.flat[:len(panels)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    labels, handles = list(seen), list(seen.values())
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle(f"Held-out MSE by output position (median over {pos.seed.nunique()} seeds; band: min to max)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.1 / nrows, 1, 1))
    path = out / "position_mse.png"
    save(fig, path)
    return path


def tables(out: Path, rows: pd.DataFrame, metas: dict, cfg: CompareConfig, command: str,
           pos: pd.DataFrame | None = None, spec: pd.DataFrame | None = None,
           check: pd.DataFrame | None = None) -> dict:
    """Table 2 / Table 3 layouts with the paper's values and Altered/Original ratios.  Diverged members
    (non-finite loss, or a training MSE above `explode` x E[y^2]: jackson/fit.py) are left out of every
    mean and named in the summary."""
    bad = rows.status.astype(str).str.startswith("diverged")
    diverged = rows[bad][["kernel", "alteration", "model", "seed", "status"]].to_dict("records")
    rows = rows[~bad]
    g = rows.groupby(["kernel", "alteration", "model"]).test_mse.agg(["mean", "std", "count"])
    long = g.reset_index()
    long["paper"] = [PAPER.get((k, a, m), np.nan) for k, a, m in zip(long.kernel, long.alteration, long.model)]
    long.to_csv(out / "tables_long.csv", index=False)
    md = ["# rnn-compare summary", "", f"Command: `{command}`", "",
          f"Data: synthetic linear targets H_t = sum_s rho(s) x(t-s), x ~ U[0,1], tau = {cfg.tau}; "
          f"held-out MSE, mean ± sd over {cfg.seeds} seeds (model inits{seed_range(cfg.seeds, cfg.first_seed)}). Ordering: the first {cfg.swap} "
          f"time steps swapped with the last {cfg.swap}; mixing: {filter_words(cfg)}, direction '{cfg.mix_direction}' "
          + ("((theta*x)[t] = sum_s theta(s) x(t+s), the paper's formula: the mixed target reads the future, so it is "
             "not causal and lies outside the RNN's space, although App. D.3 treats it as causal)"
             if cfg.mix_direction == "future" else "((theta*x)[t] = sum_s theta(s) x(t-s): causal)")
          + ". Paper values: Jiang & Li, Tables 2-3.", ""]
    summary = {"command": command, "tables": {}, "diverged": diverged,
               "theta": [float(v) for v in mixing_filter(cfg.filter, cfg.filter_length, cfg.filter_seed)]}
    if diverged:
        md += [f"**{len(diverged)} diverged member(s), left out of every mean below:** "
               + "; ".join(f"{d['model']}, {d['kernel']} kernel, {d['alteration']}, seed {d['seed']} ({d['status']})"
                           for d in diverged), ""]
    latex = []
    for name in (list(TABLES) if cfg.table == "all" else [cfg.table]):
        (k0, a0), (k1, a1) = TABLES[name]
        md += [f"## {name} ({'Table 3' if name == 'uniform' else 'Table 2'}, kernel {k0})", "",
               "| model | original (measured) | altered (measured) | altered/original (measured) | "
               "original (paper) | altered (paper) | altered/original (paper) |", "|---|---|---|---|---|---|---|"]
        tex = [r"\begin{tabular}{lcccc}", r"\hline", f"{name} & original & altered & ratio & paper ratio \\\\", r"\hline"]
        for m in MODELS:
            if (k0, a0, m) not in g.index or (k1, a1, m) not in g.index:   # every seed diverged
                md.append(f"| {m} | all seeds diverged | | | | | |")
                summary["tables"].setdefault(name, {})[m] = {"original": float("nan"), "altered": float("nan"),
                                                              "ratio": float("nan"), "paper_ratio": float("nan")}
                continue
            o, a = g.loc[(k0, a0, m)], g.loc[(k1, a1, m)]
            po, pa = PAPER.get((k0, a0, m)), PAPER.get((k1, a1, m))
            ratio, pratio = a["mean"] / o["mean"], (pa / po if po and pa else float("nan"))
            md.append(f"| {m} | {_fmt(o['mean'], o['std'])} | {_fmt(a['mean'], a['std'])} | {ratio:.3g} | "
                      f"{po:.3g} | {pa:.3g} | {pratio:.3g} |")
            tex.append(f"{m} & {o['mean']:.2e} & {a['mean']:.2e} & {ratio:.3g} & {pratio:.3g} \\\\")
            summary["tables"].setdefault(name, {})[m] = {"original": o["mean"], "altered": a["mean"],
                                                          "ratio": ratio, "paper_ratio": pratio}
        tex += [r"\hline", r"\end{tabular}", ""]
        latex += tex
        md.append("")
    spread = rows.groupby(["kernel", "alteration", "model"]).test_mse
    wild = [(k, v.tolist()) for k, v in spread if v.max() > 100 * v.min()]
    if wild:
        md += ["Seeds that disagree by more than 100x (the mean is dominated by the worst; per-seed MSE):", ""]
        md += [f"- {k[2]}, {k[0]} kernel, {k[1]}: " + ", ".join(f"{v:.3g}" for v in vals) for k, vals in wild]
        md.append("")
    if pos is not None and len(pos):
        md += position_section(pos, cfg)
        summary["positions"] = zone_table(pos, cfg).to_dict("records")
        summary["position_concentration"] = concentration(pos).to_dict("records")
    if spec is not None:
        md += coupling_section(spec, rows)
    if pos is not None and len(pos) and (pos.alteration == "mixed").any():
        check = missing_terms_check(cfg, pos) if check is None else check
        if len(check):
            check.to_csv(out / "missing_terms.csv", index=False, float_format="%.6g")
            md += missing_terms_section(check)
            summary["missing_terms"] = check.to_dict("records")
        rule = sign_rule_check(cfg, rows)
        if len(rule):
            md += sign_rule_section(rule)
            summary["sign_rule"] = rule.to_dict("records")
    md += ["## RNN complexity of the targets (App. D.1)", "",
           "| kernel | alteration | decay time | C1 | C2 | C_RNN |", "|---|---|---|---|---|---|"]
    for (k, a), c in sorted({(m["cell"]["kernel"], m["cell"]["alteration"]): m["complexity"]
                             for m in metas.values()}.items()):
        if c is None:
            md.append(f"| {k} | {a} | not causal: outside the RNN space (Prop. 6.1) | inf | - | inf |")
        elif a == "mixed" and cfg.mix_direction == "future":
            md.append(f"| {k} | {a} (causal part only; the target also reads the future) | {c['decay_time']:.3g} | "
                      f"{c['C1']:.3g} | {c['C2']:.3g} | {c['C_RNN']:.3g} |")
        else:
            md.append(f"| {k} | {a} | {c['decay_time']:.3g} | {c['C1']:.3g} | {c['C2']:.3g} | {c['C_RNN']:.3g} |")
    md.append("")
    (out / "summary.md").write_text("\n".join(md))
    (out / "tables.tex").write_text("\n".join(latex))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    return summary


def plot(out: Path, long: pd.DataFrame, inits: str = "", rows: pd.DataFrame | None = None) -> Path:
    """Tables 2-3 as a point-range plot on a log axis (no bars: a bar's length means nothing there): per target
    and model, each seed's held-out MSE (small dots; diverged members left out, as in the tables), their median
    (large marker) and min-max range; the paper's value as a labelled black diamond.  `rows` is results.csv
    (per seed); without it, the mean and sd of tables_long.csv.  `inits` names the model inits when they do not
    start at 0 (report.seed_range)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    present = set(zip(long.kernel, long.alteration))
    order = [t for t in dict.fromkeys(t for ts in TABLES.values() for t in ts) if t in present]
    order.sort(key=lambda t: (t[0] != "exp", ["original", "permuted", "mixed"].index(t[1])))
    labels = [f"{k}\n{a}" for k, a in order]
    xs = np.arange(len(labels))
    ok = None
    if rows is not None:
        ok = rows[~rows.status.astype(str).str.startswith("diverged")]
    for j, m in enumerate(MODELS):
        d = long[long.model == m].set_index(["kernel", "alteration"])
        x = xs + (j - 0.5) * 0.34
        for xi, t in zip(x, order):
            if ok is not None:
                v = ok[(ok.kernel == t[0]) & (ok.alteration == t[1]) & (ok.model == m)].test_mse.to_numpy(float)
            else:
                v = np.array([d.loc[t, "mean"]], dtype=float) if t in d.index else np.array([])
            if not len(v):
                ax.annotate("all seeds\ndiverged", (xi, 0.02), xycoords=("data", "axes fraction"), ha="center",
                            fontsize=6, rotation=90)
                continue
            ax.scatter(np.full(len(v), xi) + np.linspace(-0.06, 0.06, len(v)), v, s=9, color=f"C{j}", alpha=0.6,
                       lw=0, zorder=2)
            ax.plot([xi, xi], [v.min(), v.max()], color=f"C{j}", lw=1.2, zorder=2)
            ax.scatter([xi], [np.median(v)], s=38, color=f"C{j}", edgecolor="white", lw=0.6, zorder=3)
        paper = [d.loc[t, "paper"] if t in d.index else PAPER.get((*t, m), np.nan) for t in order]
        ax.scatter(x + 0.1, paper, color="k", marker="D", s=16, zorder=4)
        ax.scatter([], [], s=38, color=f"C{j}", label=f"{m} (median; dots: seeds; line: range)")
    ax.scatter([], [], color="k", marker="D", s=16, label="the paper's value, beside each model")
    ax.set(yscale="log", xticks=xs, xticklabels=labels, ylabel="held-out MSE")
    ax.grid(False, axis="x")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    fig.suptitle("RNN vs Transformer under temporal ordering and mixing (synthetic linear targets)"
                 + (f"; model inits{inits}" if inits else ""), fontsize=9)
    fig.tight_layout()
    path = out / "mse_bars.png"
    save(fig, path)
    return path


def redraw(folder) -> list[Path]:
    """A finished rnn-compare folder's Tables 2-3 figure (mse_bars.png) drawn again from its tables_long.csv and
    results.csv with `plot`, what the run calls; nothing else is written."""
    from jackson.config import need
    folder = Path(folder)
    missing = [n for n in ("tables_long.csv", "results.csv", "config.json") if not (folder / n).is_file()]
    need(not missing, f"{folder}: no {', '.join(missing)} (not a finished rnn-compare folder)")
    cfg = json.loads((folder / "config.json").read_text())
    seeds = cfg.get("seeds", 1)
    inits = seed_range(seeds, cfg.get("first_seed", 0)) if isinstance(seeds, int) else ""
    return [plot(folder, pd.read_csv(folder / "tables_long.csv"), inits, pd.read_csv(folder / "results.csv"))]


RANK_TOL = 1e-8     # a singular value below this fraction of sigma_1 counts as zero (numerical rank)


def coupling_spectra(cfg: CompareConfig) -> pd.DataFrame:
    """Singular values of each target's coupling matrix K (CompareCell.coupling): kernel, alteration, i, sigma."""
    rows = []
    for k, a in cfg.targets():
        K = cfg.target_cell(k, a).coupling()
        sv = np.linalg.svd(K, compute_uv=False)
        neg, nz = int((K < -1e-12).sum()), int((np.abs(K) > 1e-12).sum())
        rows += [{"kernel": k, "alteration": a, "i": i + 1, "sigma": float(v), "negative": neg, "nonzero": nz}
                 for i, v in enumerate(sv)]
    return pd.DataFrame(rows)


def energy_rank(sigma, frac: float) -> int:
    """The fewest leading singular values holding `frac` of sum sigma_i^2."""
    e = np.cumsum(np.asarray(sigma, float) ** 2)
    return int(np.searchsorted(e, frac * e[-1] * (1 - 1e-12)) + 1)


def coupling_section(spec: pd.DataFrame, rows: pd.DataFrame) -> list[str]:
    """The POD spectrum of each target's coupling beside the models' held-out MSE (median over seeds)."""
    med = rows.groupby(["kernel", "alteration", "model"]).test_mse.median()
    md = ["## The targets' temporal coupling: POD spectrum of K (y = K x)", "",
          "K is the tau x tau matrix of the linear target as a map of the inputs the model sees (column u: its answer to "
          f"the unit input e_u; `CompareCell.coupling`). Numerical rank: sigma_i > {RANK_TOL:g} sigma_1; r90 / r99: the "
          "fewest sigma_i holding 90% / 99% of sum sigma_i^2. A permutation of the inputs permutes K's columns, so its "
          "spectrum is the original's; mixing changes it. Negative entries of K: weights that softmax attention (>= 0) "
          "cannot give, so a Transformer must carry their signs through its values. Per i: coupling_spectra.csv.", "",
          "| kernel | alteration | sigma_1 | sigma_2 / sigma_1 | numerical rank | r90 | r99 | negative / nonzero entries of K "
          "| RNN MSE (median) | Transformer MSE (median) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (k, a), g in spec.groupby(["kernel", "alteration"], sort=False):
        sv = g.sort_values("i").sigma.to_numpy()
        mse = [f"{med[(k, a, m)]:.3g}" if (k, a, m) in med.index else "-" for m in MODELS]
        md.append(f"| {k} | {a} | {sv[0]:.4g} | {sv[1] / sv[0]:.3g} | {int((sv > RANK_TOL * sv[0]).sum())} | "
                  f"{energy_rank(sv, 0.9)} | {energy_rank(sv, 0.99)} | {g.negative.iloc[0]} / {g.nonzero.iloc[0]} | "
                  f"{mse[0]} | {mse[1]} |")
    return md + [""]


MISSING_TOL = 1.25    # missing_terms_check: a hot position is explained when its MSE is within this factor of the reference
MISSING_SHARE = 0.9   # ... and the drop is "one missing block" when one block explains this share of the hot positions


def drop_errors(K: np.ndarray, x: np.ndarray, j1: int, j2: int) -> np.ndarray:
    """Per output t, the held-out MSE of a model exact but for the terms K_t,t+j x(t+j), j1 <= j <= j2 (those inside
    the sequence), which it replaces by their mean: mean over the inputs x (n, tau) of
    (sum_j K_t,t+j (x(t+j) - 1/2))^2, x ~ U[0,1].  0 where the block holds no term."""
    tau = K.shape[0]
    xc = x - 0.5
    out = np.zeros(tau)
    for t in range(tau):
        out[t] = lost_terms_error(K, xc, t, [t + j for j in range(j1, j2 + 1) if 0 <= t + j < tau])
    return out


def lost_terms_error(K: np.ndarray, xc: np.ndarray, t: int, cols: list[int]) -> float:
    """mean over the centred inputs xc = x - 1/2 of (sum_{u in cols} K_t,u xc_u)^2: the MSE at t of a model exact
    but for the terms K_t,u x(u), u in cols, replaced by their mean (0 for no terms)."""
    return float(np.mean((xc[:, cols] @ K[t, cols]) ** 2)) if cols else 0.0


def sign_rule_errors(K: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per output t, the held-out MSE of a model exact but for the terms of row t of K whose sign differs from
    that of the row's largest entry off the diagonal (x(t)'s own term is kept), replaced by their mean:
    drop_errors' quantity for that set of terms.  The rule was read off the two 24k mixing runs (the future
    filter's x(t+4), the causal filter's tail; reports/rnn_compare/TRAINING.md), so on those it is a fit and
    on any other filter a prediction."""
    tau = K.shape[0]
    xc = x - 0.5
    out = np.zeros(tau)
    for t in range(tau):
        off = [u for u in range(tau) if u != t and abs(K[t, u]) > 1e-12]
        if not off:
            continue
        lead = np.sign(K[t, max(off, key=lambda u: abs(K[t, u]))])
        out[t] = lost_terms_error(K, xc, t, [u for u in off if np.sign(K[t, u]) != lead])
    return out


def sign_rule_check(cfg: CompareConfig, rows: pd.DataFrame) -> pd.DataFrame:
    """Per kernel with a mixed target, what the sign rule predicts for the Transformer's held-out MSE on it --
    the median original-target MSE over seeds plus the mean over t of sign_rule_errors on the held-out inputs
    the cells scored on -- beside each mixed seed's measured MSE.  Columns: kernel, seed, predicted, measured,
    ratio (measured / predicted), rule_error (the mean over t alone), original (the median added)."""
    out = []
    tr = rows[rows.model == "transformer"]
    for k in sorted(set(tr.kernel[tr.alteration == "mixed"])):
        orig = tr[(tr.kernel == k) & (tr.alteration == "original")].test_mse
        if not len(orig):
            continue
        cell = cfg.target_cell(k, "mixed", "transformer")
        rule = float(sign_rule_errors(cell.coupling(), cell.held_out_inputs()).mean())
        pred = rule + float(orig.median())
        for r in tr[(tr.kernel == k) & (tr.alteration == "mixed")].itertuples():
            out.append({"kernel": k, "seed": int(r.seed), "predicted": pred, "measured": float(r.test_mse),
                        "ratio": float(r.test_mse) / pred, "rule_error": rule, "original": float(orig.median())})
    return pd.DataFrame(out)


def sign_rule_section(check: pd.DataFrame) -> list[str]:
    md = ["## What the sign rule predicts for the mixed Transformer", "",
          "The rule read off the 24k mixing runs (reports/rnn_compare/TRAINING.md): the Transformer fits every term of "
          "row t of the mixed target's K except those whose sign differs from the row's largest off-diagonal entry "
          "(x(t)'s own term it fits). Predicted held-out MSE: the original target's (median over seeds) plus the mean "
          "over t of the error of losing those terms on these held-out inputs (`sign_rule_errors`). A fit on the "
          "filters it was read from (this lab's seed-0 length-5 filter, both directions); a prediction on any other. "
          "The original level added assumes the rest of the mixed target is fitted as well as the original; where the "
          "rule drops little, a smoother mixed target can be fitted better than that.",
          "", "| kernel | seed | predicted | measured | measured / predicted |", "|---|---|---|---|---|"]
    md += [f"| {r.kernel} | {r.seed} | {r.predicted:.3g} | {r.measured:.3g} | {r.ratio:.3g} |" for r in check.itertuples()]
    return md + [""]


def missing_terms_check(cfg: CompareConfig, pos: pd.DataFrame) -> pd.DataFrame:
    """Is a mixed target's drop the loss of one block of its coupling's terms?  For each mixed member (kernel,
    model, seed), its hot positions are those whose held-out MSE exceeds HOT x the original target's (median over
    seeds at t, as in `concentration`).  A block is a run of offsets j1..j2 (relative to t); a model exact but for
    the block's terms, replaced by their mean, has at t the MSE drop_errors(K, x, j1, j2)[t] on the very held-out
    inputs the cells scored on.  A hot t is explained by a block when its MSE is within MISSING_TOL of that; the
    block explaining the most hot t is kept (ties: the least median |log(MSE / reference)| over them, then the
    shorter block).  Columns: kernel, model, seed, n_hot, hot_first, hot_last, j1, j2, terms (the block in
    words, `terms_words`), coef_norm (median over the
    explained t of the block's ||K_t,t+j||_2), n_explained, ratio (mean MSE / mean reference over the explained
    t), corr (over the explained t: the reference moves with t only by the sampling of the held-out inputs, so a
    high correlation means the model's error follows those very inputs), unexplained (hot t not explained),
    one_block (it explains at least MISSING_SHARE of the hot t), fitted_where_present (positions outside the hot
    ones where the block's terms are in the target, reference > HOT x the member's MSE, yet fitted)."""
    med = pos.groupby(["kernel", "alteration", "model", "t"]).test_mse.median()
    out, refs = [], {}
    for (k, m, seed), g in pos[pos.alteration == "mixed"].groupby(["kernel", "model", "seed"]):
        if (k, "original", m) not in med.droplevel("t").index:
            continue
        base = med.loc[(k, "original", m)]
        e = g.set_index("t").test_mse.sort_index()
        hot = [int(t) for t in e.index if e[t] > HOT * base.get(t, np.inf)]
        row = {"kernel": k, "model": m, "seed": int(seed), "n_hot": len(hot), "hot_first": min(hot, default=None),
               "hot_last": max(hot, default=None), "j1": None, "j2": None, "terms": "", "coef_norm": np.nan, "n_explained": 0,
               "ratio": np.nan, "corr": np.nan, "unexplained": " ".join(map(str, hot)), "one_block": False,
               "fitted_where_present": ""}
        if hot:
            if k not in refs:               # every block's reference, once per kernel (the same for every member)
                cell = cfg.target_cell(k, "mixed", m)
                K = cell.coupling()
                x = cell.held_out_inputs()
                refs[k] = (K, {(j1, j2): drop_errors(K, x, j1, j2) for j1 in range(-(cfg.tau - 1), cfg.tau)
                               for j2 in range(j1, cfg.tau)})
            K, blocks = refs[k]
            best = None
            for (j1, j2), ref in blocks.items():
                hit = [t for t in hot if ref[t] > 0 and 1 / MISSING_TOL <= e[t] / ref[t] <= MISSING_TOL]
                if not hit:
                    continue
                score = (-len(hit), float(np.median([abs(np.log(e[t] / ref[t])) for t in hit])), j2 - j1)
                if best is None or score < best[0]:
                    best = (score, (j1, j2), hit)
            if best is not None:
                _, (j1, j2), hit = best
                ref = blocks[(j1, j2)]
                norm = [np.linalg.norm([K[t, t + j] for j in range(j1, j2 + 1) if 0 <= t + j < cfg.tau]) for t in hit]
                row.update(j1=j1, j2=j2, terms=terms_words(j1, j2), coef_norm=float(np.median(norm)), n_explained=len(hit),
                           ratio=float(e[hit].mean() / ref[hit].mean()),
                           corr=float(np.corrcoef(e[hit].to_numpy(), ref[hit])[0, 1]) if len(hit) >= 3 else np.nan,
                           unexplained=" ".join(str(t) for t in hot if t not in hit),
                           one_block=len(hit) >= MISSING_SHARE * len(hot),
                           fitted_where_present=" ".join(str(int(t)) for t in e.index
                                                         if t not in hot and ref[t] > HOT * e[t]))
        out.append(row)
    return pd.DataFrame(out)


def terms_words(j1, j2) -> str:
    """'x(t+4)' or 'x(t-31) .. x(t-4)': the terms of a block of offsets."""
    x = lambda j: f"x(t{int(j):+d})" if j else "x(t)"  # noqa: E731
    return x(j1) if j1 == j2 else f"{x(j1)} .. {x(j2)}"


def spans(text: str) -> str:
    """'0 1 2 5 7 8' -> '0-2, 5, 7-8' (a list of positions, for a table cell)."""
    ts = [int(v) for v in str(text).split()]
    parts, i = [], 0
    while i < len(ts):
        j = i
        while j + 1 < len(ts) and ts[j + 1] == ts[j] + 1:
            j += 1
        parts.append(f"{ts[i]}" if i == j else f"{ts[i]}-{ts[j]}")
        i = j + 1
    return ", ".join(parts)


def missing_terms_section(check: pd.DataFrame) -> list[str]:
    md = ["## Is the mixing drop a missing block of terms?", "",
          f"For each member on the mixed target: its hot positions (MSE above {HOT:g}x the original target's at t) "
          "and the run of terms K_t,t+j x(t+j), j1 <= j <= j2, of the target whose loss explains the most of them. A "
          "model exact but for those terms, which it replaces by their mean, has MSE "
          "mean((sum_j K_t,t+j (x(t+j) - 1/2))^2) on these held-out inputs; a hot position is explained when its MSE "
          f"is within {MISSING_TOL:g}x of that. Over the explained positions: MSE / that error, and their correlation "
          "over t (the reference moves with t only through the sampling of the inputs). *One block* when it "
          f"explains at least {MISSING_SHARE:.0%} of the hot positions. Fitted where present: positions outside the "
          "hot ones where those terms are in the target yet the member fits them. Per member: missing_terms.csv "
          "(`rnn_compare.experiment.missing_terms_check`).", "",
          "| kernel | model | seed | hot positions | missing terms | ||K|| of them | explained | MSE / their error | "
          "correlation over t | one block? | hot, not explained | fitted where present |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in check.itertuples():
        hot = f"{r.n_hot} (t = {int(r.hot_first)}..{int(r.hot_last)})" if r.n_hot else "0"
        if r.j1 is None or (isinstance(r.j1, float) and np.isnan(r.j1)):
            md.append(f"| {r.kernel} | {r.model} | {r.seed} | {hot} | - | - | 0 | - | - | no | "
                      f"{spans(r.unexplained) or '-'} | |")
            continue
        md.append(f"| {r.kernel} | {r.model} | {r.seed} | {hot} | {r.terms} | {r.coef_norm:.4g} | "
                  f"{r.n_explained} | {r.ratio:.4g} | {r.corr:.3g} | {'yes' if r.one_block else 'no'} | "
                  f"{spans(r.unexplained) or '-'} | {spans(r.fitted_where_present) or '-'} |")
    return md + [""]


def plot_coupling(out: Path, spec: pd.DataFrame) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    styles = {"original": ("C0", "-"), "permuted": ("C3", ":"), "mixed": ("C2", "--")}
    for (k, a), g in spec.groupby(["kernel", "alteration"], sort=False):
        g = g.sort_values("i")
        c, ls = styles.get(a, ("k", "-"))
        ax.plot(g.i, g.sigma / g.sigma.iloc[0], ls, color=c if k == "exp" else None, marker="o", ms=2.5,
                label=f"{k} kernel, {a}")
    ax.set(yscale="log", xlabel="i", ylabel="sigma_i / sigma_1 of K", ylim=(max(RANK_TOL, ax.get_ylim()[0]), 2))
    ax.legend(fontsize=7)
    fig.suptitle("POD spectrum of each target's temporal coupling K (y = K x)", fontsize=9)
    fig.tight_layout()
    path = out / "coupling_spectra.png"
    save(fig, path)
    return path


def positions(dirs, metas: dict) -> pd.DataFrame | None:
    """The cells' per-position held-out MSE in one long table (kernel, alteration, model, seed, t, test_mse);
    None when a cell predates position_mse.csv (cells committed before it was written)."""
    if not all((d / "position_mse.csv").exists() for d in dirs):
        return None
    parts = []
    for d in dirs:
        c = metas[d.name]["cell"]
        parts.append(pd.read_csv(d / "position_mse.csv").assign(kernel=c["kernel"], alteration=c["alteration"],
                                                                 model=c["model"]))
    return pd.concat(parts, ignore_index=True)[["kernel", "alteration", "model", "seed", "t", "test_mse"]]


def compare_grid(cfg: CompareConfig) -> tuple[Path, list[CompareCell]]:
    """The run folder and cells of a checked config, checkpoints where run_compare keeps them (`--status`)."""
    validate(cfg)
    out = Path(cfg.out).expanduser().resolve()
    return out, cfg.cells(ckpt_dir=out / "checkpoints")


def run_compare(cfg: CompareConfig, command: str, progress: bool = True) -> dict:
    out, cells = compare_grid(cfg)
    with open_run(out, "rnn-compare", command, dataclasses.asdict(cfg), scheduler=cfg.scheduler):
        if progress:
            print(f"rnn-compare: writing to {out}", flush=True)
        # a cell stopped mid-fit resumes from <out>/checkpoints/ (git-ignored; removed once the cell is in place)
        dirs = run_cells(cells, out, scheduler=cfg.scheduler or None, progress=progress)
        with contextlib.suppress(OSError):
            (out / "checkpoints").rmdir()      # only if empty: set-aside checkpoints (<name>.corrupt-*) are kept
        metas = {d.name: json.loads((d / "cell.json").read_text()) for d in dirs}
        # each row names its cell's mixing direction (cells written before the column existed hold it in cell.json)
        rows = pd.concat([pd.read_csv(d / "rows.csv").assign(mix_direction=metas[d.name]["cell"]["mix_direction"])
                          for d in dirs], ignore_index=True)
        for c in ("init_seed", "retry"):     # integers; empty for cells written before they existed
            if c in rows:
                rows[c] = rows[c].astype("Int64")
        rows.to_csv(out / "results.csv", index=False, float_format="%.6e")
        pos, check = positions(dirs, metas), None
        if pos is not None:             # diverged members are left out here as in every table
            bad = rows[rows.status.astype(str).str.startswith("diverged")]
            drop = set(zip(bad.kernel, bad.alteration, bad.model, bad.seed))
            pos = pos[[k not in drop for k in zip(pos.kernel, pos.alteration, pos.model, pos.seed)]]
            pos.to_csv(out / "position_mse.csv", index=False, float_format="%.6e")
            check = missing_terms_check(cfg, pos) if (pos.alteration == "mixed").any() else None
            plot_positions(out, pos, cfg, block_references(cfg, check))
        spec = coupling_spectra(cfg)
        spec.to_csv(out / "coupling_spectra.csv", index=False, float_format="%.6e")
        plot_coupling(out, spec)
        summary = tables(out, rows, metas, cfg, command, pos, spec, check)
        plot(out, pd.read_csv(out / "tables_long.csv"), seed_range(cfg.seeds, cfg.first_seed), rows)
        write_report_json(out)
    return summary
