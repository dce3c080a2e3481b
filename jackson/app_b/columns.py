"""The columns of every CSV jackson-tasks writes: {output kind: {column: meaning}} (`COLUMNS`) and the code that writes each
(`WRITTEN_BY`).  The lab's column dictionary (reports/COLUMNS.md, jackson/lab_report/columns.py) gathers it through
the `jackson_lab.columns` entry point (pyproject.toml)."""
from __future__ import annotations

_TASK_CHECKS = {
    "argmax_in_support": "share (0..1) of held-out rows t whose argmax_s A[t, s] (trained attention) lies in the "
                         "support of the target's S[t]",
    "tv": "total variation TV(A[t], S[t]) = 1/2 sum_s abs(A - S), mean over held-out rows (0: A = S, 1: disjoint)",
    "support_mass": "mass the trained attention A[t] puts on the support of S[t], mean over held-out rows (0..1)",
}

COLUMNS: dict[str, dict[str, str]] = {
    "jackson-tasks results.csv": {
        "task": "App. B.1 task: nearest-point, weighted-average or selection-average",
        "seed": "the cell's seed: draws the training, held-out and probe instances and the model's init",
        "train_mse": "MSE on the training instances, mean over positions, outputs and instances",
        "test_mse": "MSE on the held-out instances, mean over positions, outputs and instances",
        "target_var": "Var(y) over held-out instances and positions, mean over output dimensions",
        **_TASK_CHECKS,
        "fof_mse": "MSE of F_hat(f_hat(x)) against F(f(x)) on the probe tokens (tokens the target attends to), "
                   "mean over tokens and outputs",
        "fof_rel": "fof_mse / Var(F(f(x))) over the probe tokens (mean over outputs)",
        "fof_median_abs": "median over probe tokens of the largest absolute error (over outputs) of F_hat(f_hat) "
                          "against F(f)",
        "fof_max_abs": "largest absolute error of F_hat(f_hat) against F(f) over probe tokens and outputs",
        "status": "the fit's verdict (jackson/fit.py): `converged`, `budget` or `diverged: <what> at step N`",
        "steps": "optimiser steps the model ran",
        "fit_wall_s": "seconds of the training loop",
        "rel_test_mse": "test_mse / target_var",
    },
    "jackson-tasks by_kind.csv": {
        "seed": "the cell's seed",
        "kind": "kind of held-out row t: `u_t` (nearest-point), `x_pred` or `point` (weighted-average), "
                "`N index`/`N indices` (selection-average: distinct indices s(t) names)",
        "n_rows": "held-out rows (instance, position) of this kind",
        "test_mse": "held-out MSE over the rows of this kind (mean over outputs and rows)",
        **{k: v.replace("held-out rows", "the held-out rows of this kind") for k, v in _TASK_CHECKS.items()},
    },
    "jackson-tasks levels.csv": {
        "seed": "the cell's seed",
        "target": "a value the target's coupling S[t, s] takes (rounded to 1e-9); rows only when S has at most 8 "
                  "distinct values",
        "n_entries": "held-out entries (instance, t, s) where S equals `target`",
        "mean_A": "mean of the trained attention A[t, s] over those entries",
        "sd_A": "standard deviation of A[t, s] over those entries",
    },
    "jackson-tasks fof_by_position.csv": {
        "seed": "the cell's seed",
        "position": "token position t of the probe tokens",
        "n_tokens": "probe tokens at this position",
        "median_abs": "median over those tokens of the largest absolute error (over outputs) of F_hat(f_hat) "
                      "against F(f)",
        "max_abs": "largest such error over those tokens",
    },
    "jackson-tasks loss_curves.csv": {
        "seed": "the cell's seed",
        "step": "optimiser step of this point (every eval_every steps, and the last)",
        "member": "0-based index of the member in the bank (always 0: one model per cell)",
        "train_mse": "MSE on the first `eval_size` training instances at this step, mean over positions, outputs and "
                     "instances",
        "lr": "the learning rate at this step",
    },
}

WRITTEN_BY: dict[str, str] = {
    "jackson-tasks results.csv": "one row per seed: `jackson/app_b/cell.py` `measure`, `jackson/app_b/results.py` `collect`",
    "jackson-tasks by_kind.csv": "one row per (seed, row kind): `jackson/app_b/cell.py` `measure`",
    "jackson-tasks levels.csv": "one row per (seed, coupling level): `jackson/app_b/cell.py` `coupling_levels`",
    "jackson-tasks fof_by_position.csv": "one row per (seed, position): `jackson/app_b/results.py` `fof_by_position`",
    "jackson-tasks loss_curves.csv": "one row per step: `jackson/fit.py` `fit` (curve)",
}
