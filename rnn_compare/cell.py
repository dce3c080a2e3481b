"""One rnn-compare cell (`CompareCell`): a (kernel, alteration, model) target with its seeds as bank members,
trained by the core runner; its tables: rows.csv, position_mse.csv, curve.csv, cell.json."""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from jackson.hparams import FitConfig, ModelConfig
from jackson.fit import evaluate, fit
from jackson.models import TransformerBank
from jackson.schedule import derive_seed, derive_seeds
from jackson.sweep import checkpoint_progress, config_hash
from .alterations import invert_permutation, mix, mixing_filter, permute, swap_ends
from .models import RNNBank
from .targets import apply_linear, complexity, kernel, mixed_kernel
from .settings import CKPT_EVERY_S, RETRY_STREAM, RNN_FIT_DEFAULT, RNNConfig, transformer_default


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
