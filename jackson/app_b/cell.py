"""One jackson-tasks cell (`TaskCell`: a task and a seed): the Eq. (53) bank fitted by the core `fit`, then
examined against the target's own parts (attention checks, F_hat∘f_hat, the coupling levels)."""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from synthetic.nearest_point import NearestPoint
from synthetic.selection_average import SelectionAverage
from synthetic.weighted_average import WeightedAverage
from ..runfolder import write_table
from ..fit import evaluate, fit
from ..hparams import DENSE_MODEL, FitConfig, ModelConfig
from ..models import Internals, TransformerBank, _mlp_params
from ..schedule import derive_seeds, member_seed, seeded_generator
from ..sweep import config_hash


# ---- the Eq. (53) model ---------------------------------------------------------------------

class TaskBank(TransformerBank):
    """Eq. (53): the core Eq. (5) bank with F_hat: R^{d_v} -> R^{d_out} and vector tokens x(t) in R^{d_in}.

    Only the last layer of each member's F_hat changes shape (d_out columns instead of one, drawn from
    PyTorch's default init with a generator seeded by (member seed, d_out)); with d_out = 1 the bank is
    the core bank, parameter for parameter.  `forward` returns y flattened to (M, B, T * d_out), one
    scalar per (position, output) slot, which is what the core `fit` and `evaluate` average over;
    `internals` returns y as (M, B, T, d_out) with the logits and the attention pattern.
    """

    def __init__(self, cfg: ModelConfig, d_out: int, m_hs, seeds):
        super().__init__(cfg, m_hs, seeds)
        if cfg.pos != "none":
            raise ValueError("--pos: the tasks carry their own position information; use none")
        self.d_out = int(d_out)
        if self.d_out > 1:
            for mb in self.members:
                W, b = _mlp_params(seeded_generator(mb.seed, self.d_out), [mb.F_hat[-2].shape[0], self.d_out])
                mb.F_hat[-2], mb.F_hat[-1] = W, b

    def internals(self, x: torch.Tensor) -> Internals:
        """x: (B, T, d_in) shared by all members -> y (M, B, T, d_out), logits and pattern (M, B, T, T)."""
        B, T = x.shape[:2]
        h = self.embed(x)                                   # (M, B*T, n)
        M = h.shape[0]
        W_V = torch.stack([mb.W_V for mb in self.members])  # (M, d_v, n)
        q = (h @ self._stack_qk("W_Q").transpose(1, 2)).view(M * B, T, -1)   # (M*B, T, m_max)
        k = (h @ self._stack_qk("W_K").transpose(1, 2)).view(M * B, T, -1)
        v = (h @ W_V.transpose(1, 2)).view(M * B, T, -1)    # (M*B, T, d_v)
        logits = q @ k.transpose(1, 2)                      # (M*B, T, T): (W_Q f(x_t))^T W_K f(x_s)
        pattern = torch.softmax(logits, dim=-1)             # A: softmax over s
        z = (pattern @ v).view(M, B * T, -1)                # (M, B*T, d_v)
        y = self._mlp(z, self._stack_mlp("F_hat")).view(M, B, T, self.d_out)
        return Internals(y, logits.view(M, B, T, T), pattern.view(M, B, T, T))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_in) -> y: (M, B, T * d_out), position-major."""
        return self.internals(x).y.flatten(2)

    @torch.no_grad()
    def fof_hat(self, tokens: torch.Tensor) -> torch.Tensor:
        """F_hat(W_V f_hat(x)) for tokens (N, d_in): (M, N, d_out), the model's F∘f (Prop. B.1)."""
        h = self.embed(tokens[None])                        # (M, N, n)
        W_V = torch.stack([mb.W_V for mb in self.members])  # (M, d_v, n)
        return self._mlp(h @ W_V.transpose(1, 2), self._stack_mlp("F_hat"))


# ---- configs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskCell:
    task: NearestPoint | WeightedAverage | SelectionAverage   # the task and its parameters
    seed: int                                                  # data draw and model init
    n_train: int = 16384                                       # training sequences
    n_test: int = 4096                                         # held-out sequences
    m_h: int = 32                                              # attention size
    n_probe: int = 4096                                        # tokens for the F_hat∘f_hat check
    model: ModelConfig = field(default_factory=lambda: DENSE_MODEL)    # d_in is the task's
    fit: FitConfig = field(default_factory=FitConfig)          # the training budget and schedule

    def key(self) -> str:
        return f"{self.task.name}_s{self.seed}_{config_hash(self)}"

    def run(self, folder: Path, progress: bool = True) -> None:
        measure(self, folder, progress)


def cells(cfg) -> list[TaskCell]:
    tr = cfg.train
    model = dataclasses.replace(cfg.model, d_in=cfg.task.d_in)
    return [TaskCell(task=cfg.task, seed=s, n_train=tr.n_train, n_test=tr.n_test, m_h=tr.m_h,
                     n_probe=tr.n_probe, model=model, fit=cfg.fit) for s in tr.seeds]


def data_seeds(seed: int) -> tuple[int, int, int]:
    """Disjoint train / held-out / probe sample seeds for a cell seed."""
    return derive_seeds(seed, 30_000, n=3)


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a, dtype=torch.float32)


@torch.no_grad()
def predict(bank: TaskBank, x: np.ndarray, chunk: int = 1024):
    """Outputs (M, n, tau, d_out) and attention patterns (M, n, tau, tau) as float64 arrays."""
    ys, As = [], []
    for a in range(0, len(x), chunk):
        it = bank.internals(_t(x[a:a + chunk]))
        ys.append(it.y.double().numpy())
        As.append(it.pattern.double().numpy())
    return np.concatenate(ys, axis=1), np.concatenate(As, axis=1)


# ---- Proposition B.1 checks --------------------------------------------------------------------

def attention_checks(A: np.ndarray, S: np.ndarray) -> dict[str, np.ndarray]:
    """Per row (n, tau): is argmax_s A[t, s] in the support of S[t]; total variation
    1/2 sum_s |A - S| (0: A = S, 1: disjoint); the mass A puts on S's support."""
    top = A.argmax(axis=-1)[..., None]
    return {"argmax_in_support": (np.take_along_axis(S, top, axis=-1)[..., 0] > 0).astype(float),
            "tv": 0.5 * np.abs(A - S).sum(axis=-1),
            "support_mass": (A * (S > 0)).sum(axis=-1)}


def coupling_levels(A: np.ndarray, S: np.ndarray, max_levels: int = 8) -> list[dict]:
    """A averaged over the entries where S takes each of its values (when S has at most max_levels
    distinct values, as in Eq. 64's {0, 1/k, ..., 1}); [] when S is continuous."""
    lv = np.round(S, 9)
    values = np.unique(lv)
    if len(values) > max_levels:
        return []
    return [{"target": float(v), "n_entries": int((lv == v).sum()), "mean_A": float(A[lv == v].mean()),
             "sd_A": float(A[lv == v].std())} for v in values]


def fof_check(fof_hat: np.ndarray, fof: np.ndarray) -> dict[str, float]:
    """F_hat∘f_hat against F∘f on the same tokens, (N, d_out) each: MSE, MSE / Var(F∘f), largest error."""
    mse = float(((fof_hat - fof) ** 2).mean())
    var = float(fof.var(axis=0).mean())
    err = np.abs(fof_hat - fof).max(axis=-1)                        # (N,) worst output of each token
    return {"fof_mse": mse, "fof_rel": mse / var if var > 0 else float("nan"),
            "fof_median_abs": float(np.median(err)), "fof_max_abs": float(err.max())}


def probe_tokens(batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens the target attends to (some S[t, s] > 0), their F∘f and their positions: (N, d_in), (N, d_out), (N,)."""
    used = batch.select.max(axis=1) > 0                # (n, tau): token s gets weight from some t
    pos = np.broadcast_to(np.arange(batch.x.shape[1]), used.shape)
    return batch.x[used], batch.fof[used], pos[used]


def pick_example(task, batch) -> int:
    """The held-out instance drawn in the pictures: the first with two segments (weighted average,
    as in Fig. 5), the first naming 1, 2 and 3 distinct indices (qSA, as in Fig. 6), else the first."""
    kinds = task.row_kinds(batch.x)
    for i in range(len(batch.x)):
        if isinstance(task, WeightedAverage) and (kinds[i] == "x_pred").sum() == 2:
            return i
        if isinstance(task, SelectionAverage) and len(set(kinds[i])) == min(3, task.k, task.tau):
            return i
    return 0


def fof_grid(task, bank: TaskBank, n_side: int = 41) -> pd.DataFrame | None:
    """Weighted average, d = 2: F_hat∘f_hat and |x| on a grid of points (mid mass, segment 0, t = 1)."""
    if not (isinstance(task, WeightedAverage) and task.d == 2):
        return None
    g = np.linspace(-task.box, task.box, n_side)
    xy = np.stack(np.meshgrid(g, g, indexing="xy"), axis=-1).reshape(-1, 2)
    tok = task.tokens(xy, np.full(len(xy), 0.5 * (task.m_lo + task.m_hi)))
    hat = bank.fof_hat(_t(tok))[0, :, 0].double().numpy()
    return pd.DataFrame({"x1": xy[:, 0], "x2": xy[:, 1], "fof_hat": hat, "fof": task.F(task.f(tok))[:, 0]})


def measure(cell: TaskCell, folder: Path, progress: bool = True) -> None:
    """Train the cell's model on its task and write what it measured into `folder`."""
    t0 = time.perf_counter()
    task = cell.task
    s_tr, s_te, s_pr = data_seeds(cell.seed)
    tr, te = task.sample(cell.n_train, s_tr), task.sample(cell.n_test, s_te)
    pr = task.sample(-(-cell.n_probe // task.tau), s_pr)

    torch.manual_seed(0)  # nothing should draw from it; guards against hidden global randomness
    bank = TaskBank(cell.model, task.d_out, [cell.m_h], [member_seed(cell.seed, cell.m_h)])
    res = fit(bank, _t(tr.x), _t(tr.y).flatten(1), cell.fit, seed=cell.seed, progress=progress,
              desc=f"{task.name} seed={cell.seed}")
    train_mse = evaluate(bank, _t(tr.x), _t(tr.y).flatten(1)).double().mean().item()
    y_hat, A = predict(bank, te.x)
    y_hat, A = y_hat[0], A[0]                                        # (n, tau, d_out), (n, tau, tau)
    err = ((y_hat - te.y) ** 2).mean(axis=-1)                        # (n, tau)
    checks = attention_checks(A, te.select)
    tok, fof, pos = (a[:cell.n_probe] for a in probe_tokens(pr))
    fof_hat = bank.fof_hat(_t(tok))[0].double().numpy()              # (N, d_out)

    row = {"task": task.name, "seed": cell.seed, "train_mse": train_mse, "test_mse": float(err.mean()),
           "target_var": float(te.y.var(axis=(0, 1)).mean()),
           **{k: float(v.mean()) for k, v in checks.items()}, **fof_check(fof_hat, fof),
           "status": res.status[0], "steps": res.steps[0], "fit_wall_s": res.wall_s}
    row["rel_test_mse"] = row["test_mse"] / row["target_var"]
    kinds = task.row_kinds(te.x)
    by_kind = [{"seed": cell.seed, "kind": k, "n_rows": int((kinds == k).sum()),
                "test_mse": float(err[kinds == k].mean()),
                **{c: float(v[kinds == k].mean()) for c, v in checks.items()}}
               for k in sorted(set(kinds.ravel()))]
    levels = [{"seed": cell.seed, **r} for r in coupling_levels(A, te.select)]

    folder = Path(folder)
    pd.DataFrame([row]).to_csv(folder / "rows.csv", index=False)
    pd.DataFrame(by_kind).to_csv(folder / "by_kind.csv", index=False)
    pd.DataFrame(levels, columns=["seed", "target", "n_entries", "mean_A", "sd_A"]).to_csv(
        folder / "levels.csv", index=False)
    pd.DataFrame(res.curve).to_csv(folder / "curve.csv", index=False)
    cols = {"position": pos, **{f"fof_{j}": fof[:, j] for j in range(task.d_out)},
            **{f"fof_hat_{j}": fof_hat[:, j] for j in range(task.d_out)}}
    # the two large tables gzip-compressed: fof.csv.gz, fof_grid.csv.gz (read with table_path)
    write_table(folder, "fof.csv", pd.DataFrame(cols), float_format="%.6e")
    grid = fof_grid(task, bank)
    if grid is not None:
        write_table(folder, "fof_grid.csv", grid, float_format="%.6e")
    i = pick_example(task, te)
    ex = {"index": i, "x": te.x[i].tolist(), "y": te.y[i].tolist(), "y_hat": y_hat[i].tolist(),
          "A": A[i].tolist(), "S": te.select[i].tolist(), "kinds": kinds[i].tolist()}
    (folder / "example.json").write_text(json.dumps(ex))
    meta = {"cell": dataclasses.asdict(cell), "task": task.name, "key": cell.key(),
            "data_seeds": [s_tr, s_te, s_pr], "cell_wall_s": time.perf_counter() - t0,
            "torch_threads": res.threads}
    (folder / "cell.json").write_text(json.dumps(meta, indent=1, default=str))


# ---- running ------------------------------------------------------------------------------------
