"""The columns of every CSV cot-dp writes: {output kind: {column: meaning}} (`COLUMNS`) and the code that writes each
(`WRITTEN_BY`).  The lab's column dictionary (reports/COLUMNS.md, jackson/lab_report/columns.py) gathers it through
the `jackson_lab.columns` entry point (pyproject.toml)."""
from __future__ import annotations

_COT_KEYS = {
    "task": "CoT DP task: arithmetic, ed (edit distance), ed_local, lis",
    "size": "problem size of the task (its `--size`)",
    "model": "attention kind of the decoder: standard, sparse (Eq. 6 mask) or linear",
    "d_model": "embedding dimension D of the decoder",
    "seed": "seed of the model's initialisation and training",
}
_COT_L = "L: longest sequence of the dataset in tokens (eos left out), over training and test; the L of the FLOPs count"

COLUMNS: dict[str, dict[str, str]] = {
    "cot-dp results.csv": {
        **_COT_KEYS,
        "accuracy": "share (0..1) of the scored test examples whose greedily generated answer is right",
        "cot_exact": "share (0..1) of the scored test examples with a CoT whose generated sequence equals the reference "
                     "exactly (NaN when none has a CoT)",
        "n_eval": "test examples scored by generation",
        "test_loss": "mean NLL (nats) per CoT/answer token on the first eval_size test lines with a CoT, at the last "
                     "loss-curve point (NaN when none has a CoT)",
        "L": _COT_L,
        "mean_len": "mean test sequence length in tokens, eos left out",
        "gflops": "analytic GFLOPs to generate one sequence of L tokens (cot_dp/flops.py `per_sequence`)",
        "gflops_params": "GFLOPs counted from the block parameters alone: 24 M D^2 L / 1e9 (M layers)",
        "params": "number of model parameters",
        "steps": "optimiser steps",
        "step_ms": "milliseconds per optimiser step: training wall time / steps (loss-curve points included)",
        "train_s": "seconds of training",
        "eval_s": "seconds of the generation scoring",
        "device": "torch device it trained on; devices in order of use joined by '+' for a cell resumed on another "
                  "device (cuda+cpu), whose step_ms blends both: cell.json's devices gives each one's steps and "
                  "step_ms (steps saved by a checkpoint that did not record its device are not named)",
        "baseline": "accuracy (0..1) of always answering the training set's most frequent answer, on the same scored "
                    "test examples",
    },
    "cot-dp min_gflops.csv": {
        "task": _COT_KEYS["task"],
        "model": _COT_KEYS["model"],
        "size": _COT_KEYS["size"],
        "L": _COT_L,
        "min_d": "the D with the fewest GFLOPs whose seed-mean accuracy reaches target_acc (empty: none does)",
        "min_gflops": "gflops at min_d (NaN: none reaches target_acc)",
        "min_gflops_params": "gflops_params at min_d (NaN: none reaches target_acc)",
        "best_accuracy": "highest seed-mean accuracy (0..1) over D",
    },
    "cot-dp estimate.csv": {
        **_COT_KEYS,
        "L": _COT_L,
        "step_ms": "median milliseconds of an optimiser step over 8 timed steps (after 2 warm-up steps)",
        "steps": "optimiser steps the cell would run",
        "gen_s": "projected seconds of the generation scoring (n_eval examples), from one timed batch",
        "projected_s": "projected seconds of the cell: steps x step time + loss-curve points + generation",
    },
    "cot-dp position_accuracy.csv": {
        "position": "place in the CoT: 0 is the first token after the prompt (the answer and <eos> count)",
        "row": "the position's segment of the CoT, split after every \",\" token (ED: the DP table's row i, 0-based; "
               "0 throughout for a task whose CoT has no commas)",
        "col": "the position's place within its segment (ED with equal lengths: row, col is the entry dp[row+1][col+1])",
        "accuracy": "teacher-forced accuracy (0..1): the share of lines whose argmax at this place is the true token, "
                    "given the true tokens before it",
        "n": "test lines (with a CoT, at most 2048) that reach this place",
    },
}

WRITTEN_BY: dict[str, str] = {
    "cot-dp results.csv": "one row per (task, size, model, D, seed): `cot_dp/cell.py` `CotCell.run`, "
                          "`baseline` from `answer_baseline`",
    "cot-dp min_gflops.csv": "one row per (task, model, size): `cot_dp/tables.py` `min_gflops` (Table 2)",
    "cot-dp estimate.csv": "one row per cell, `cot-dp sweep --estimate`: `cot_dp/sweep.py` `estimate` "
                           "(copies kept under reports/cot_dp/estimates/ as `<preset>-<tasks>.csv`)",
    "cot-dp position_accuracy.csv": "one row per (position, row, col) of the CoT, in each cell folder (sweep) or run "
                                    "folder (train): `cot_dp/train.py` `position_accuracy`",
}
