"""One cot-dp cell (`CotCell`): a (task, size, model, D, seed) decoder trained on its dataset by the core runner."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from jackson.checkpoint import devices_label
from jackson.runfolder import portable_path, replace_via_temp, write_atomic
from jackson.sweep import checkpoint_progress, non_default
from . import data, flops
from .model import CotTransformer, n_params
from .settings import ModelConfig, TrainConfig
from .tasks import TaskConfig
from .train import accuracy, device_steps, position_accuracy, train


def write_csv(df: pd.DataFrame, path: Path, **kwargs) -> None:
    """df.to_csv (no index) through a temporary file and a rename (jackson.runfolder.replace_via_temp): the file
    is complete or absent, a symbolic link in its place is replaced, never written through, and a file that was
    there before the run in a folder it does not own is refused."""
    replace_via_temp(path, lambda tmp: df.to_csv(tmp, index=False, **kwargs))


@dataclass(frozen=True)
class CotCell:
    task: TaskConfig            # task and size
    model: ModelConfig          # attention and D
    train: TrainConfig
    n_train: int                # the dataset: examples, seed (with `task` they name it)
    n_test: int
    data_seed: int
    seed: int = 0               # model seed: init, batch order, dropout
    n_eval: int = 0             # test examples scored by generation (0: all)
    max_len: int = 0            # positions the model is built for (0: the data's longest sequence)
    data_dir: str = ""          # where the dataset lives (not part of the key)
    device: str = "cpu"         # where it trains (not part of the key)
    ckpt_dir: str = ""          # its resume checkpoint is <ckpt_dir>/<key>.pt, absolute ("": none; not part of the key)
    ckpt_every_s: float = 120.0  # seconds between resume checkpoints (not part of the key)

    def key(self) -> str:
        ident = {"task": non_default(self.task), "model": non_default(self.model), "train": non_default(self.train),
                 "n_train": self.n_train, "n_test": self.n_test, "data_seed": self.data_seed, "seed": self.seed,
                 "n_eval": self.n_eval, "max_len": self.max_len}
        h = hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:10]
        return f"{self.task.name}-{self.task.size}_{self.model.model}_d{self.model.d_model}_s{self.seed}_{h}"

    def ckpt_path(self) -> Path | None:
        return Path(self.ckpt_dir) / f"{self.key()}.pt" if self.ckpt_dir else None

    def in_progress(self) -> list[dict]:
        """Its training so far, from its resume checkpoint ([] if it has none): for `--status`."""
        ck = self.ckpt_path()
        if ck is None or not ck.is_file():
            return []
        return [checkpoint_progress("training", ck, lambda st: st["run"]["steps"])]

    def cleanup(self) -> None:
        """Remove the resume checkpoint: called once the cell's results are in place (jackson.sweep.run_cell)."""
        ck = self.ckpt_path()
        if ck is not None:
            ck.unlink(missing_ok=True)

    def run(self, folder: Path, progress: bool = True) -> None:
        t0 = time.perf_counter()
        ds = data.load(self.data_dir, self.task, check_answers=False)
        L = ds.max_len
        model = CotTransformer(self.model, len(ds.tokenizer), self.max_len or L, self.seed)
        desc = f"{self.task.name}-{self.task.size} {self.model.model} D={self.model.d_model}"
        res = train(model, ds.train, ds.test, self.train, self.seed, self.device, progress, desc,
                    ckpt=self.ckpt_path(), ckpt_every_s=self.ckpt_every_s, ident=self.key())
        t1 = time.perf_counter()
        acc = accuracy(model, ds.test, self.device, self.train.gen_batch, self.n_eval)
        a = self.model.arch
        row = {"task": self.task.name, "size": self.task.size, "model": self.model.model,
               "d_model": self.model.d_model, "seed": self.seed, **acc,
               "test_loss": res.curve[-1]["test_loss"], "L": L,
               "mean_len": float(ds.test.lengths.float().mean()) - 1,
               "gflops": flops.per_sequence(self.model.model, self.model.d_model, L, len(ds.tokenizer),
                                            a.n_layers, a.n_heads, a.sparse_c, a.sparse_k,
                                            getattr(model.blocks[0].attn, "block", None)) / 1e9,
               "gflops_params": flops.params_flops(self.model.d_model, L, a.n_layers) / 1e9,
               "params": n_params(model), "steps": res.steps, "step_ms": res.step_ms,
               "train_s": res.wall_s, "eval_s": time.perf_counter() - t1,
               "device": devices_label(res.devices) or self.device}
        # after the row, so that eval_s stays the generation's time alone
        by_pos = position_accuracy(model, ds.test, ds.tokenizer.ids.get(","), self.device, self.train.gen_batch)
        write_csv(pd.DataFrame([row]), folder / "rows.csv")
        write_csv(pd.DataFrame(res.curve), folder / "curve.csv")
        write_csv(by_pos, folder / "position_accuracy.csv", float_format="%.6g")
        # wall_s: this process's time on the cell; fit_wall_s: training time over every process that trained it
        # the dataset and checkpoint folders as a record keeps paths (relative inside the working directory)
        cell = dataclasses.asdict(self) | {k: portable_path(getattr(self, k)) for k in ("data_dir", "ckpt_dir")}
        meta = {"cell": cell, "key": self.key(), "wall_s": time.perf_counter() - t0,
                "fit_wall_s": res.wall_s, "torch_threads": res.threads, "devices": device_steps(res),
                "vocab": len(ds.tokenizer), "block": getattr(model.blocks[0].attn, "block", None)}
        write_atomic(folder / "cell.json", json.dumps(meta, indent=1, default=str))
