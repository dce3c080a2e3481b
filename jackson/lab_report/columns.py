"""The column dictionary: every column of every CSV the lab writes, with its meaning and units.

`COLUMNS` maps an output kind -- "<command> <file name>", since the same file name means different
things for different commands (results.csv of jackson-sweep, jackson-tasks, rnn-compare, vit-probe,
cot-dp) -- to {column: one-line meaning}.  Each line was written from the code that writes the
column (named in `WRITTEN_BY`).  A column written as a numbered family (`s1`, `s2`, ...) has one
line under a pattern name with `<k>` (`s<k>`).  `kind_of` tells the kind of a committed CSV under
reports/ (from its run folder's command.txt); `render` writes reports/COLUMNS.md;
`python -m jackson.lab_report.columns` (the command the page names) rewrites that page.  tests/test_columns.py checks that every column of
every committed CSV under reports/ (cells/ left out) has a line, and that the page is a fresh
rendering.

Units: the synthetic targets (jackson-sweep, jackson-tasks, rnn-compare) are unitless, so their MSEs
are in squared target units; cross-entropies are in nats (natural log); times are in seconds unless
the name says ms.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
PAGE = REPORTS / "COLUMNS.md"

# ---- shared lines ---------------------------------------------------------------------------------
_SWEEP_TARGET = {
    "alpha": "decay exponent alpha of the target's POD spectrum sigma_i = c i^-alpha (Eq. 12); for an explicit "
             "spectrum (--sigma, --sigma-file) its fitted decay alpha_hat",
    "rank": "rank of the target's spectrum: an integer, or `inf`; for an explicit spectrum its number of nonzero values",
    "m_ff": "m_FF: hidden width of the feed-forward maps f_hat and F_hat (`ModelConfig.width`)",
    "seed": "the cell's seed: draws the training and held-out sequences and, with (m_h, restart, target), the inits",
}
_FIT_STATUS = ("the fit's verdict on the member (jackson/fit.py): `converged`, `budget` (ran the whole step budget) "
               "or `diverged: <what> at step N`")
_FIT_STEPS = "optimiser steps the member ran (the budget, unless it converged or diverged earlier)"
_LOSS_TRAIN = ("MSE of the member on the first `eval_size` training sequences at this step, mean over positions and "
               "sequences (squared target units)")
_LR = "the member's learning rate at this step"
_TASK_CHECKS = {
    "argmax_in_support": "share (0..1) of held-out rows t whose argmax_s A[t, s] (trained attention) lies in the "
                         "support of the target's S[t]",
    "tv": "total variation TV(A[t], S[t]) = 1/2 sum_s abs(A - S), mean over held-out rows (0: A = S, 1: disjoint)",
    "support_mass": "mass the trained attention A[t] puts on the support of S[t], mean over held-out rows (0..1)",
}
_VIT_M_H = "attention size per head m_h (query/key dimension) of the trained ViT (sweep-mh only)"
_VIT_LAYER = "0-based index of the transformer block probed"
_VIT_HEAD = "0-based index of the attention head probed"
_VIT_HEAD_FIT = {   # the columns of a head's spectrum summary (vit_probe/spectra.py head_table), trained or at init
    "tau": "tokens per image: the size of the logit matrix and the number of singular values",
    "sigma1": "largest singular value of the mean spectrum (mean over images)",
    "exponent": "slope of log mean singular value against log index over the fit range (capped at the rank bound m_h)",
    "exponent_lo": "2.5% bootstrap quantile of the exponent, resampling images",
    "exponent_hi": "97.5% bootstrap quantile of the exponent, resampling images",
    "erank": "effective rank exp(H(p)), p = s / sum s, of the mean spectrum (Roy & Vetterli 2007)",
    "r90": "number of leading singular values of the mean spectrum holding 90% of sum s^2",
}
_COT_KEYS = {
    "task": "CoT DP task: arithmetic, ed (edit distance), ed_local, lis",
    "size": "problem size of the task (its `--size`)",
    "model": "attention kind of the decoder: standard, sparse (Eq. 6 mask) or linear",
    "d_model": "embedding dimension D of the decoder",
    "seed": "seed of the model's initialisation and training",
}
_COT_L = "L: longest sequence of the dataset in tokens (eos left out), over training and test; the L of the FLOPs count"

COLUMNS: dict[str, dict[str, str]] = {
    # ---- jackson-sweep ----------------------------------------------------------------------------
    "jackson-sweep results.csv": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "m_ff")},
        "m_h": "attention size m_h of the member (rank of its rho_hat, Eq. 5)",
        "seed": _SWEEP_TARGET["seed"],
        "train_mse": "MSE of the reported member (the restart with the lowest training MSE) on the n_train training "
                     "sequences, mean over positions and sequences (squared target units)",
        "test_mse": "MSE of the reported member on the n_test held-out sequences, mean over positions and sequences",
        "oracle_mse": "held-out MSE of the oracle: the target with rho replaced by its exact rank-m_h POD truncation, "
                      "mean over positions and sequences",
        "oracle_self_exact_mse": "held-out MSE of the oracle that truncates rho to rank m_h only for s != t and keeps "
                                 "the full rho's s = t logits, mean over positions and sequences",
        "status": _FIT_STATUS,
        "steps": _FIT_STEPS,
        "K": "number of POD terms the target actually uses: its rank when finite (or the explicit spectrum's length), "
             "else the smallest K whose ideal tail is at most tail_tol (at most k_max)",
        "tail_beyond_K": "sum over i > K of sigma_i^2 of the ideal spectrum, left out by the truncation "
                         "(0 for a finite rank or an explicit spectrum)",
        "cell": "the cell's key, its folder under cells/: `a<alpha>_r<rank>_s<seed>_v2_<hash of non-default fields>`",
        "restart": "index (0-based) of the reported restart among this m_h's restarts",
        "init_seed": "seed of the reported member's initialisation, derived from (seed, m_h, restart, target)",
        "restarts": "independent initialisations per m_h in the cell",
        "test_mse_min": "smallest held-out MSE over this m_h's restarts that did not diverge (NaN if all diverged)",
        "test_mse_median": "median held-out MSE over this m_h's restarts that did not diverge (NaN if all diverged)",
        "n_diverged": "how many of this m_h's restarts diverged",
        "test_l1": "Theorem 4.1's own error of the reported member on the held-out sequences: the mean over sequences of "
                   "sum_t |H_t - H_hat_t| (a sum over the tau positions); empty for cells made before it was measured",
        "oracle_l1": "the same L1 error for the rank-m_h oracle (rho replaced by its rank-m_h POD truncation)",
        "term": "what each member was fitted to: `full` (the target) or `ff` (its rank-m_h POD truncation: the "
                "feed-forward term of Eq. (17) alone; then test_mse, test_l1 are against that truncation)",
        "activation": "the FFN class of f_hat and F_hat: the activation between their layers (gelu, relu, sin)",
    },
    "jackson-sweep restarts.csv": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "seed", "m_ff")},
        "m_h": "attention size m_h of the member",
        "restart": "index (0-based) of the restart among this m_h's independent initialisations",
        "init_seed": "seed of this restart's initialisation, derived from (seed, m_h, restart, target)",
        "train_mse": "MSE of this restart on the n_train training sequences, mean over positions and sequences",
        "test_mse": "MSE of this restart on the n_test held-out sequences, mean over positions and sequences",
        "status": _FIT_STATUS,
        "steps": _FIT_STEPS,
        "chosen": "True for the restart reported in results.csv (lowest training MSE among those that did not diverge)",
    },
    "jackson-sweep blocks.csv.gz": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "m_ff", "seed")},
        "m_h": "attention size m_h",
        "kind": "whose error: `test` (the reported trained member), `oracle` (rank-m_h rho), `oracle_self_exact` "
                "(rank-m_h rho for s != t, exact s = t), `test_l1`, `oracle_l1` (the same members' L1 error of "
                "Theorem 4.1, in the `mse` column: the mean over the block's sequences of sum_t |error|)",
        "block": "index (0..63) of the block: the held-out sequences split in order into 64 blocks for the bootstrap",
        "mse": "MSE over positions and the held-out sequences of this block",
    },
    "jackson-sweep loss_curves.csv": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "seed", "m_ff")},
        "step": "optimiser step of this point (every eval_every steps, and the last)",
        "member": "0-based index of the member in the cell's bank ((m_h, restart) pairs, m_h-major)",
        "train_mse": _LOSS_TRAIN,
        "lr": _LR,
        "m_h": "attention size m_h of the member",
        "restart": "index (0-based) of the member's restart",
        "chosen": "True for the restart reported in results.csv",
    },
    "jackson-sweep learned_spectrum.csv": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "seed", "m_ff")},
        "m_h": "attention size m_h of the reported member",
        "i": "1-based index of the singular value (the tidy layout of a run folder's table; the committed folders were converted to it on 2026-11-25)",
        "sigma": "i-th largest singular value of the reported member's learned rho_hat (Eq. 18; linear attention: its "
                 "effective coupling), POD on 256 Gauss points with the v-mean removed; 0 past the computed ones",
        "s<k>": "the wide layout a cell's own cells/<key>/learned_spectrum.csv keeps (one row per member): the k-th singular value, as `sigma` at i = k in the run folder's table",
    },
    "jackson-sweep diagnostics.csv": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "m_ff", "seed")},
        "diag_logit": "mean of the target's logit rho(x_t, x_t) over positions and held-out sequences",
        "offdiag_logit": "mean of rho(x_t, x_s), s != t, over pairs and held-out sequences",
        "offdiag_logit_sd": "standard deviation of rho(x_t, x_s), s != t, over pairs and held-out sequences",
        "self_weight": "mean self-attention weight softmax_s(rho(x_t, .))[t] of the target, over positions and "
                       "held-out sequences (above 0.5: degenerate target)",
        "var_y": "variance of the target H(x) over positions and held-out sequences",
        "mse_mean": "held-out MSE of the constant predictor (the mean of the training targets)",
        "mse_copy": "held-out MSE of the copy predictor y_t = F(f(x_t)) (attention on itself only)",
        "mse_uniform": "held-out MSE of the uniform-attention predictor y_t = F(mean_s f(x_s)) (ignores rho)",
    },
    # ---- jackson-tasks (App. B) -------------------------------------------------------------------
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
    # ---- rnn-compare ------------------------------------------------------------------------------
    "rnn-compare results.csv": {
        "kernel": "the linear target's kernel rho: `exp` (Table 2) or `uniform` (U[0,1] values, Table 3)",
        "alteration": "`original`, `permuted` (temporal ordering: first and last `swap` steps traded) or `mixed` "
                      "(inputs filtered by a random theta)",
        "model": "`rnn` or `transformer`",
        "seed": "the member's initialisation seed (the data are the same for every seed: data_seed)",
        "train_mse": "MSE on the n_train training sequences, mean over positions and sequences (squared target units)",
        "test_mse": "MSE on the n_test held-out sequences, mean over positions and sequences",
        "status": _FIT_STATUS,
        "steps": _FIT_STEPS,
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
    # ---- vit-probe --------------------------------------------------------------------------------
    "vit-probe spectra.csv": {
        "m_h": _VIT_M_H,
        "seed": "seed of the model's initialisation and training (sweep-mh only; folders made before it was written "
                "gained it from their cells' cell.json)",
        "layer": _VIT_LAYER,
        "head": _VIT_HEAD,
        "i": "1-based index of the singular value, in decreasing order",
        "mean": "mean over images of the i-th singular value of the pre-softmax logit matrix rho_hat(x) (tau x tau) "
                "of this layer and head",
        "q05": "5% quantile over images of the i-th singular value",
        "q25": "25% quantile over images of the i-th singular value",
        "q50": "median over images of the i-th singular value",
        "q75": "75% quantile over images of the i-th singular value",
        "q95": "95% quantile over images of the i-th singular value",
    },
    "vit-probe heads.csv": {
        "m_h": _VIT_M_H,
        "layer": _VIT_LAYER,
        "head": _VIT_HEAD,
        "n_images": "images whose logit matrices were decomposed",
        **_VIT_HEAD_FIT,
        "init_min": "the control (vit-probe spectra of a trained model): the smallest (steepest) exponent of any "
                    "head of this layer over the random inits of the same architecture (init_heads.csv)",
        "init_max": "the control: the largest exponent of any head of this layer over the random inits",
        "init_median": "the control: the median exponent of this layer's heads over the random inits",
        "steeper_than_init": "True when this head's whole 95% interval lies below init_min: training made it decay "
                             "faster than every init head of its layer",
    },
    "vit-probe init_heads.csv": {
        "init": "which random init of the model's architecture (its torch seed; no checkpoint loaded)",
        "layer": _VIT_LAYER,
        "head": _VIT_HEAD,
        "n_images": "images whose logit matrices were decomposed (the same images as the trained model's)",
        **_VIT_HEAD_FIT,
    },
    "vit-probe init_spectra.csv": {
        "init": "which random init of the model's architecture (its torch seed; no checkpoint loaded)",
        "layer": _VIT_LAYER,
        "head": _VIT_HEAD,
        "i": "1-based index of the singular value, in decreasing order",
        "mean": "mean over images of the i-th singular value of the random-init model's logit matrix",
        "q05": "5% quantile over images of the i-th singular value",
        "q25": "25% quantile over images of the i-th singular value",
        "q50": "median over images of the i-th singular value",
        "q75": "75% quantile over images of the i-th singular value",
        "q95": "95% quantile over images of the i-th singular value",
    },
    "vit-probe violin_samples.csv": {
        "image": "0-based index of the image among those probed",
        "i": "1-based index of the singular value (the first k_show), decreasing",
        "sv": "that singular value of the image's logit matrix at the violin layer and head (Fig. 2)",
    },
    "vit-probe results.csv": {
        "m_h": "attention size per head m_h of the trained ViT",
        "seed": "seed of the model's initialisation and training",
        "arch": "the architecture spec the ViT was built from",
        "params": "number of model parameters",
        "train_loss_eval": "mean cross-entropy (nats), eval mode, on n_eval_train training images (a stratified "
                           "subset, the same in every cell)",
        "train_err_eval": "top-1 error (0..1), eval mode, on those n_eval_train training images",
        "n_eval_train": "training images in that evaluation",
        "train_loss_last_epoch": "mean training cross-entropy (nats) over the last epoch's batches, train mode",
        "test_loss": "mean cross-entropy (nats), eval mode, on the test split",
        "test_acc": "top-1 accuracy (0..1) on the test split",
        "epochs": "training epochs (the config's `--epochs`)",
        "n_train": "training images used",
        "train_wall_s": "seconds of training (time before a resume included)",
        "cell_wall_s": "seconds of the whole cell (training, evaluation, spectra), this run",
    },
    "vit-probe history.csv": {
        "epoch": "epochs done at this point (step / steps per epoch)",
        "step": "optimiser steps done",
        "train_loss": "mean training cross-entropy (nats) over this epoch's batches, train mode",
        "train_err": "share (0..1) of wrong top-1 predictions over this epoch's training batches",
        "wall_s": "seconds since training began (time before a resume included)",
        "m_h": "attention size per head m_h of the model",
        "seed": "seed of the model's initialisation and training",
    },
    "vit-probe spectrum_convergence.csv": {
        "m_h_from": "the smaller of two successive m_h",
        "m_h_to": "the next m_h",
        "compared_i": "leading singular values compared: min(m_h_from, m_h_to)",
        "rel_l2": "relative L2 distance norm(c_from - c_to) / norm(c_to) of the normalised mean spectra "
                  "sigma_i / sigma_1 (seed means, i up to compared_i) at the report's layer and head",
    },
    "vit-probe permute.csv": {
        "phase": "which model: the original model; the original model tested on permuted tokens without further "
                 "training; continued training on permuted (or, the control, original) data for N epochs",
        "test_data": "`original` or `permuted`: whether the test images' patch tokens are permuted (the first "
                     "n_first moved to the end)",
        "accuracy": "top-1 accuracy (0..1) on the test split",
        "train_loss_last_epoch": "mean training cross-entropy (nats) over the last epoch of the continued training; "
                                 "empty for the rows without it",
    },
    # ---- cot-dp -----------------------------------------------------------------------------------
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
        "device": "torch device it trained on",
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
    # ---- jackson-report ---------------------------------------------------------------------------
    "jackson-report claims.csv": {
        "id": "the claim's identifier",
        "paper": "the paper making the claim: Jiang & Li, or Yang et al.",
        "where": "where in the paper",
        "claim": "the claim in words",
        "paper_value": "the value as the paper states it",
        "verdict": "reproduced, partly, not reproduced, inconclusive (the folder's own reference could not show the effect), untested or not applicable (computed by the rule)",
        "measured": "words and numbers read or computed from the folder's files",
        "quantity": "what `value` is",
        "value": "the headline number (see `quantity`); empty when none",
        "lo": "lower end of value's interval (what kind: `interval`); empty when none",
        "hi": "upper end of value's interval (what kind: `interval`); empty when none",
        "interval": "what `lo` and `hi` are, in words: e.g. a range over seeds, a bootstrap over seeds (and held-out "
                    "blocks), +- 1.96 standard errors; or `none: <why>` when they are empty (1 seed, no per-seed "
                    "values); empty for rows no folder judges",
        "n_seeds": "seeds behind the verdict; empty when unknown",
        "folder": "the run folder giving the row, relative to reports/; empty when no folder tests it",
        "other_folders": "the other folders that test the claim, joined by ' | ': each with its verdict and seeds, "
                         "or left out and why",
        "rule": "the kind of the claim: the name of the rule that judges it (jackson/lab_report/claims.py `KINDS`)",
        "rule_text": "the rule's text, thresholds included",
        "command": "the command that would test the claim; empty when none in this lab",
    },
    "jackson-report tables.csv": {
        "folder": "the run folder whose headline table the cell is in, relative to reports/ (tables.tex's table "
                  "tab:<folder>)",
        "title": "the table's title: the run's title in the report, with [superseded] or [quick run] where it is one",
        "row": "the cell's row in its table, from 1 (one row per quantity the paper gives a value for)",
        "column": "the cell's column: quantity (what is compared), paper (the paper's value), measured (this run's), "
                  "measured vs paper (their difference for exponents, accuracies and rows whose report.json declares "
                  "compare: difference, such as App. B attention weights; else their ratio)",
        "value": "the cell as the report and tables.tex show it (numbers to 3 significant digits; — where there is "
                 "none or no ratio can be formed)",
        "number": "the number behind a paper or measured cell at full precision; empty for text and other columns",
        "lo": "for a measured cell with an interval (in brackets in its value; its kind is in the row's quantity, e.g. "
              "a 95% bootstrap interval of an exponent): the lower end at full precision; else empty",
        "hi": "the upper end of that interval; else empty",
    },
}

_TERMS = {
    "ffn": "FFN class of f_hat and F_hat: its activation (and, for sin, the first layer's init scale)",
    "alpha": "decay exponent alpha of the target's spectrum, sigma_i = i^-alpha",
    "rank": "target rank (`inf` here)",
    "m_ff": "m_FF: hidden width of f_hat and F_hat",
    "m_h": "attention size m_h",
    "n_seeds": "seeds that every folder of the row holds (the same data and held-out sequences in each)",
}
COLUMNS.update({
    "python terms.csv": {
        **_TERMS,
        "e_full": "held-out MSE of the full Eq. (5) model, features learned (mean over seeds and held-out blocks)",
        "e_attn": "held-out MSE of the attention term alone: the given-features model (mean)",
        "e_ff": "held-out MSE of the feed-forward term alone: the --term ff model against the rank-m_h truncation (mean)",
        "e_attn_plus_ff": "e_attn + e_ff",
        "oracle": "held-out MSE of the rank-m_h oracle (rho cut to its rank-m_h POD truncation; mean)",
        "ratio": "e_full / (e_attn + e_ff), from the means",
        "ratio_lo": "lower end of its 95% bootstrap interval (seeds, then blocks of the same held-out sequences, paired)",
        "ratio_hi": "upper end of that interval",
        "ratio_of_medians": "median-over-seeds e_full / (median e_attn + median e_ff)",
        "e_full_median_seed": "median over seeds of each seed's e_full",
        "e_attn_median_seed": "median over seeds of each seed's e_attn",
        "e_ff_median_seed": "median over seeds of each seed's e_ff",
        "limiting": "the term that limits the curve at this m_h by jackson/rate_sweep/terms.py's rule (medians over seeds): "
                    "attention, feed-forward, both or neither",
        "full": "the folder of e_full", "ff": "the folder of e_ff", "attn": "the folder of e_attn",
    },
    "python eff.csv": {
        **_TERMS,
        "e_ff": "the feed-forward term alone: held-out MSE against the rank-m_h truncation, mean over seeds",
        "e_ff_median": "its median over seeds",
        "e_ff_min": "its smallest value over seeds",
        "e_ff_max": "its largest value over seeds",
        "oracle": "held-out MSE of the rank-m_h oracle against the target itself, mean over seeds",
        "n_seeds": "seeds in the --term ff folder",
        "folder": "the --term ff folder",
    },
    "python oracle_errors.csv": {
        "alpha": "decay exponent alpha of the target's spectrum, sigma_i = i^-alpha (rank inf, K terms)",
        "m_h": "rank m_h of the truncation",
        "mse": "MSE of the rank-m_h truncation against the target, mean over positions and sequences",
        "l1": "Theorem 4.1's error of the truncation: the mean over sequences of sum_t |H_t - H_t^(m_h)|",
        "tail": "the exact tail sum_{i > m_h} sigma_i^2 over the K terms",
    },
    "python slopes.csv": {
        "alpha": "decay exponent alpha",
        "mse_slope": "least-squares exponent of the MSE against m_h",
        "l1_slope": "least-squares exponent of the L1 error against m_h",
        "tail_slope": "least-squares exponent of the exact tail against m_h",
        "predicted_mse": "the first-order prediction for the MSE, -(2 alpha - 1)",
        "predicted_l1": "the first-order prediction for the L1 error, half of it",
        "m_h": "the m_h range of the fits",
    },
})

WRITTEN_BY: dict[str, str] = {
    "python terms.csv": "one row per (FFN class, alpha, m_FF, m_h) the three folders share: "
                        "`jackson/rate_sweep/terms.py` `additivity`",
    "python eff.csv": "one row per (FFN class, alpha, rank, m_FF, m_h) of the --term ff folders: "
                      "`jackson/rate_sweep/terms.py` `eff_table`",
    "python oracle_errors.csv": "one row per (alpha, m_h): `jackson/rate_sweep/l1.py` `oracle_errors`",
    "python slopes.csv": "one row per alpha: `jackson/rate_sweep/l1.py` `slopes`",
    "jackson-sweep results.csv": "one row per (target, seed, m_FF, m_h), the reported restart: "
                                 "`jackson/rate_sweep/cell.py` `measure` (rows.csv), gathered by `jackson/rate_sweep/results.py` `collect`",
    "jackson-sweep restarts.csv": "one row per restart of every m_h: `jackson/rate_sweep/cell.py` `measure`",
    "jackson-sweep blocks.csv.gz": "one row per (m_h, seed, kind, block): `jackson/rate_sweep/cell.py` `measure`",
    "jackson-sweep loss_curves.csv": "one row per (member, step): `jackson/fit.py` `fit` (curve), "
                                     "`jackson/rate_sweep/cell.py` `measure` (curve.csv)",
    "jackson-sweep learned_spectrum.csv": "one row per (target, seed, m_h): `jackson/pod.py` `learned_spectrum`, "
                                          "`jackson/rate_sweep/cell.py` `measure`",
    "jackson-sweep diagnostics.csv": "one row per (target, seed), on the held-out sequences: "
                                     "`synthetic/pod_target.py` `PODTarget.diagnostics`, `jackson/rate_sweep/results.py` `collect`",
    "jackson-tasks results.csv": "one row per seed: `jackson/app_b/experiment.py` `measure`, `jackson/app_b/results.py` `collect`",
    "jackson-tasks by_kind.csv": "one row per (seed, row kind): `jackson/app_b/experiment.py` `measure`",
    "jackson-tasks levels.csv": "one row per (seed, coupling level): `jackson/app_b/experiment.py` `coupling_levels`",
    "jackson-tasks fof_by_position.csv": "one row per (seed, position): `jackson/app_b/results.py` `fof_by_position`",
    "jackson-tasks loss_curves.csv": "one row per step: `jackson/fit.py` `fit` (curve)",
    "rnn-compare results.csv": "one row per (kernel, alteration, model, seed): `rnn_compare/experiment.py` "
                               "`CompareCell.run`",
    "rnn-compare tables_long.csv": "one row per (kernel, alteration, model): `rnn_compare/experiment.py` `tables`",
    "rnn-compare coupling_spectra.csv": "one row per (kernel, alteration, i): `rnn_compare/experiment.py` "
                                        "`coupling_spectra`",
    "rnn-compare position_mse.csv": "one row per (kernel, alteration, model, seed, t): `rnn_compare/experiment.py` "
                                    "`CompareCell.run` (each cell's position_mse.csv), gathered by `positions`",
    "rnn-compare missing_terms.csv": "one row per (kernel, model, seed) of the mixed target: "
                                     "`rnn_compare/experiment.py` `missing_terms_check`",
    "rnn-mixing-spectrum spectra.csv": "one row per (form, i): `rnn_compare/report.py` `write_spectrum_folder`",
    "vit-probe spectra.csv": "one row per ([m_h, seed,] layer, head, i): `vit_probe/spectra.py` `spectrum_table` "
                             "(vit-probe spectra and sweep-mh)",
    "vit-probe heads.csv": "one row per ([m_h,] layer, head): `vit_probe/spectra.py` `head_table` "
                           "(vit-probe spectra and sweep-mh)",
    "vit-probe init_heads.csv": "one row per (init, layer, head): `vit_probe/run_spectra.py` `init_control` "
                                "(vit-probe spectra of a trained model: the control)",
    "vit-probe init_spectra.csv": "one row per (init, layer, head, i): `vit_probe/run_spectra.py` `init_control`",
    "vit-probe violin_samples.csv": "one row per (image, i): `vit_probe` `run_spectra`",
    "vit-probe results.csv": "one row per (m_h, seed): `vit_probe` `MhCell.run` (vit-probe sweep-mh)",
    "vit-probe history.csv": "one row per epoch of each cell: `vit_probe/train.py` `train`, "
                             "`vit_probe` `MhCell.run` (vit-probe sweep-mh)",
    "vit-probe spectrum_convergence.csv": "one row per pair of successive m_h: `vit_probe` "
                                          "`spectrum_convergence` (vit-probe sweep-mh)",
    "vit-probe permute.csv": "one row per (model, test data): `vit_probe` `run_permute`",
    "cot-dp results.csv": "one row per (task, size, model, D, seed): `cot_dp/sweep.py` `CotCell.run`, "
                          "`baseline` from `answer_baseline`",
    "cot-dp min_gflops.csv": "one row per (task, model, size): `cot_dp/sweep.py` `min_gflops` (Table 2)",
    "cot-dp estimate.csv": "one row per cell, `cot-dp sweep --estimate`: `cot_dp/sweep.py` `estimate` "
                           "(copies kept under reports/cot_dp/estimates/ as `<preset>-<tasks>.csv`)",
    "cot-dp position_accuracy.csv": "one row per (position, row, col) of the CoT, in each cell folder (sweep) or run "
                                    "folder (train): `cot_dp/train.py` `position_accuracy`",
    "jackson-report claims.csv": "one row per claim: `jackson/lab_report/claims.py` `csv_text`",
    "jackson-report tables.csv": "one row per cell of every run's headline table (those of tables.tex): "
                                 "`jackson/lab_report/page.py` `tables_csv`, the cells from `headline_rows`",
}


# ---- lookups ----------------------------------------------------------------------------------------

def meaning(kind: str, column: str) -> str | None:
    """The line for `column` of output kind `kind` (a `<k>` pattern matches digits); None if it has none."""
    cols = COLUMNS.get(kind, {})
    if column in cols:
        return cols[column]
    for name, text in cols.items():
        if "<k>" in name and re.fullmatch(re.escape(name).replace(re.escape("<k>"), r"\d+"), column):
            return text
    return None


def kind_of(path: Path, reports: Path = REPORTS) -> str | None:
    """The output kind of a CSV under `reports`: "<program> <file name>", the program from the first word of
    its run folder's command.txt; reports/claims.csv and reports/tables.csv are jackson-report's,
    reports/cot_dp/estimates/*.csv are cot-dp estimate.csv tables kept under another name.  None when it
    cannot tell."""
    path = Path(path)
    rel = path.resolve().relative_to(Path(reports).resolve()).as_posix()
    cmd = path.parent / "command.txt"
    if cmd.is_file():
        words = cmd.read_text().split()
        return f"{words[0]} {path.name}" if words else None
    if rel in ("claims.csv", "tables.csv"):
        return f"jackson-report {rel}"
    if rel.startswith("cot_dp/estimates/"):
        return "cot-dp estimate.csv"
    return None


def committed_csvs(reports: Path = REPORTS) -> list[Path]:
    """Every CSV under reports/, cells/ folders left out."""
    return sorted(p for p in Path(reports).rglob("*.csv") if "cells" not in p.relative_to(reports).parts)


# ---- the page ---------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """reports/COLUMNS.md: a section per output kind, a table column | meaning."""
    n_cols = sum(len(c) for c in COLUMNS.values())
    out = ["# Column dictionary", "",
           "Generated by `python -m jackson.lab_report.columns` from `jackson/lab_report/columns.py` (`COLUMNS`); do not edit by hand: "
           "change the dictionary and rerun. `tests/test_columns.py` checks that every column of every CSV under "
           "`reports/` (cells/ folders left out) has a line here, and that this page is a fresh rendering.", "",
           f"{len(COLUMNS)} output kinds, {n_cols} column lines. An output kind is a command and a file name "
           "(results.csv means something different for each command). A name with `<k>` stands for a numbered "
           "family of columns (k = 1, 2, ...). MSEs of the synthetic targets are in squared target units (the "
           "targets are unitless); cross-entropies in nats; times in seconds unless the name says ms.", "",
           "## Contents", ""]
    out += [f"- [{k}](#{_anchor(k)})" for k in COLUMNS]
    for kind, cols in COLUMNS.items():
        out += ["", f"## {kind}", ""]
        if kind in WRITTEN_BY:
            out += [_cell(WRITTEN_BY[kind][0].upper() + WRITTEN_BY[kind][1:]) + ".", ""]
        out += ["| column | meaning |", "|---|---|"]
        out += [f"| `{c}` | {_cell(m)} |" for c, m in cols.items()]
    return "\n".join(out) + "\n"


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def write(path: Path = PAGE) -> Path:
    Path(path).write_text(render())
    return Path(path)


def main(argv: list[str] | None = None) -> int:
    p = write()
    print(f"columns: {p} ({len(COLUMNS)} output kinds, {sum(len(c) for c in COLUMNS.values())} columns)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
