"""The columns of every CSV rnn-compare and rnn-mixing-spectrum write: {output kind: {column: meaning}} (`COLUMNS`) and the code that writes each
(`WRITTEN_BY`).  The lab's column dictionary (reports/COLUMNS.md, jackson/lab_report/columns.py) gathers it through
the `jackson_lab.columns` entry point (pyproject.toml)."""
from __future__ import annotations

from jackson.column_words import FIT_STATUS, FIT_STEPS

COLUMNS: dict[str, dict[str, str]] = {
    "rnn-compare results.csv": {
        "kernel": "the linear target's kernel rho: `exp` (Table 2) or `uniform` (U[0,1] values, Table 3)",
        "alteration": "`original`, `permuted` (temporal ordering: first and last `swap` steps traded) or `mixed` "
                      "(inputs filtered by a random theta)",
        "model": "`rnn` or `transformer`",
        "seed": "the member's initialisation seed (the data are the same for every seed: data_seed)",
        "train_mse": "MSE on the n_train training sequences, mean over positions and sequences (squared target units)",
        "test_mse": "MSE on the n_test held-out sequences, mean over positions and sequences",
        "status": FIT_STATUS,
        "steps": FIT_STEPS,
        "init_seed": "the seed of the initialisation this row was trained from: `seed`, or for a retried RNN member "
                     "derive_seed(seed, 40000, retry) (empty in cells written before retries existed)",
        "retry": "0 for the first fit; r when the member's fit diverged and retry r (--rnn-retries) gave this row "
                 "(empty in cells written before retries existed)",
        "mix_direction": "the mixing filter's direction for the run (`future`: (theta*x)[t] = sum_s theta(s) x(t+s), the "
                         "paper's; `past`: causal); it alters only `mixed` rows",
    },
    "rnn-compare tables_long.csv": {
        "kernel": "the linear target's kernel rho: `exp` or `uniform`",
        "alteration": "`original`, `permuted` or `mixed`",
        "model": "`rnn` or `transformer`",
        "mean": "mean over seeds of test_mse (held-out MSE), diverged members left out",
        "std": "sample standard deviation over seeds of test_mse (ddof 1; empty with one seed)",
        "count": "seeds in the mean (members that did not diverge)",
        "paper": "the paper's value (held-out MSE, Tables 2-3); empty where the paper gives none",
    },
    "rnn-compare coupling_spectra.csv": {
        "kernel": "the linear target's kernel rho: `exp` or `uniform`",
        "alteration": "`original`, `permuted` or `mixed`",
        "i": "1-based index of the singular value of K, in decreasing order",
        "sigma": "i-th singular value of K, the tau x tau matrix with y = K x for the inputs x the model sees "
                 "(`CompareCell.coupling`; unitless)",
        "negative": "entries of K below -1e-12 (weights softmax attention cannot give); the same on every row of a target",
        "nonzero": "entries of K with |K| > 1e-12; the same on every row of a target",
    },
    "rnn-compare position_mse.csv": {
        "kernel": "the linear target's kernel rho: `exp` or `uniform`",
        "alteration": "`original`, `permuted` or `mixed`",
        "model": "`rnn` or `transformer`",
        "seed": "the member's initialisation seed",
        "t": "0-based output position in the sequence (0..tau-1)",
        "test_mse": "held-out squared error at output position t, mean over the n_test held-out sequences "
                    "(its mean over t is the member's test_mse in results.csv)",
    },
    "rnn-compare missing_terms.csv": {
        "kernel": "the linear target's kernel rho: `exp` or `uniform`",
        "model": "`rnn` or `transformer`",
        "seed": "the member's initialisation seed",
        "n_hot": "output positions whose held-out MSE on the mixed target exceeds 10x the original target's "
                 "(median over seeds at that position)",
        "hot_first": "the first hot position (0-based t); empty when none",
        "hot_last": "the last hot position (0-based t); empty when none",
        "j1": "first offset of the block of coupling terms K_t,t+j x(t+j) whose loss explains the most hot positions "
              "(j relative to the output t; negative: the past); empty when none explains any",
        "j2": "last offset of that block (j1 <= j <= j2)",
        "terms": "that block in words, e.g. x(t+4) or x(t-7) .. x(t-4); empty when none",
        "coef_norm": "median over the explained positions of the block's ||K_t,t+j||_2 (unitless)",
        "n_explained": "hot positions whose MSE is within 1.25x of the block's loss error (`drop_errors`: "
                       "mean over the held-out inputs of (sum_j K_t,t+j (x(t+j) - 1/2))^2)",
        "ratio": "mean MSE / mean loss error over the explained positions",
        "corr": "correlation over the explained positions of the MSE and the loss error (the latter moves with t "
                "only through the sampling of the held-out inputs)",
        "unexplained": "the hot positions the block does not explain, space-separated",
        "one_block": "True when the block explains at least 90% of the hot positions",
        "fitted_where_present": "positions outside the hot ones where the block's terms are in the target (loss "
                                "error > 10x the member's MSE) yet fitted, space-separated",
    },
    "rnn-mixing-spectrum spectra.csv": {
        "form": "`before` (rho(u, v)) or `after` (rho(u, a u + b v), the mixed inputs of App. D.3)",
        "i": "1-based index of the singular value, in decreasing order",
        "sigma": "i-th singular value of the kernel as an operator on L2[0, 1] (POD on Gauss-Legendre nodes; "
                 "unitless)",
    },
}

WRITTEN_BY: dict[str, str] = {
    "rnn-compare results.csv": "one row per (kernel, alteration, model, seed): `rnn_compare/cell.py` "
                               "`CompareCell.run`",
    "rnn-compare tables_long.csv": "one row per (kernel, alteration, model): `rnn_compare/tables.py` `tables`",
    "rnn-compare coupling_spectra.csv": "one row per (kernel, alteration, i): `rnn_compare/coupling.py` "
                                        "`coupling_spectra`",
    "rnn-compare position_mse.csv": "one row per (kernel, alteration, model, seed, t): `rnn_compare/cell.py` "
                                    "`CompareCell.run` (each cell's position_mse.csv), gathered by `rnn_compare/experiment.py` `positions`",
    "rnn-compare missing_terms.csv": "one row per (kernel, model, seed) of the mixed target: "
                                     "`rnn_compare/coupling.py` `missing_terms_check`",
    "rnn-mixing-spectrum spectra.csv": "one row per (form, i): `rnn_compare/report.py` `write_spectrum_folder`",
}
