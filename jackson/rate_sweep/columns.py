"""The columns of every CSV jackson-sweep writes, and of the tables jackson.rate_sweep.terms and .l1 write from Python: {output kind: {column: meaning}} (`COLUMNS`) and the code that writes each
(`WRITTEN_BY`).  The lab's column dictionary (reports/COLUMNS.md, jackson/lab_report/columns.py) gathers it through
the `jackson_lab.columns` entry point (pyproject.toml)."""
from __future__ import annotations

from jackson.column_words import FIT_STATUS, FIT_STEPS, LOSS_TRAIN, LR

_SWEEP_TARGET = {
    "alpha": "decay exponent alpha of the target's POD spectrum sigma_i = c i^-alpha (Eq. 12); for an explicit "
             "spectrum (--sigma, --sigma-file) its fitted decay alpha_hat",
    "rank": "rank of the target's spectrum: an integer, or `inf`; for an explicit spectrum its number of nonzero values",
    "m_ff": "m_FF: hidden width of the feed-forward maps f_hat and F_hat (`ModelConfig.width`)",
    "seed": "the cell's seed: draws the training and held-out sequences and, with (m_h, restart, target), the inits",
}

COLUMNS: dict[str, dict[str, str]] = {
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
        "status": FIT_STATUS,
        "steps": FIT_STEPS,
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
        "status": FIT_STATUS,
        "steps": FIT_STEPS,
        "chosen": "True for the restart reported in results.csv (lowest training MSE among those that did not diverge)",
    },
    "jackson-sweep doubling.csv": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "m_ff", "seed")},
        "term": "what the member was fitted to: `full` (the target) or `ff` (its rank-m_h POD truncation)",
        "m_h": "attention size m_h of the member",
        "restart": "index (0-based) of the restart among this m_h's independent initialisations",
        "init_seed": "seed of this restart's initialisation; the partner's member has the same",
        "chosen": "True for the restart reported in results.csv (the member a curve reads)",
        "budget_steps": "the base folder's step budget: steps x cycles",
        "partner_budget_steps": "the partner folder's step budget (twice budget_steps; empty: no partner cell)",
        "train_mse": "MSE of this restart on the n_train training sequences, at budget_steps",
        "partner_train_mse": "the same member's training MSE at twice the budget (empty: no partner member)",
        "test_mse": "MSE of this restart on the n_test held-out sequences, at budget_steps",
        "partner_test_mse": "the same member's held-out MSE at twice the budget",
        "change": "1 - partner_train_mse / train_mse: the share of the training MSE twice the steps removed",
        "label": "the doubling check (`jackson/rate_sweep/doubling.py` `RULE`): `converged` (change below "
                 "`DOUBLING_TOL`), `budget` (above: the error is an upper bound), `not checked` (no partner member)",
        "cell": "the base cell's key, its folder under cells/",
        "partner": "the partner folder that holds this member at twice the budget, relative to the base folder",
        "partner_cell": "the partner cell's key, its folder under the partner folder's cells/",
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
    "jackson-sweep loss_curves.csv.gz": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "seed", "m_ff")},
        "step": "optimiser step of this point (every eval_every steps, and the last)",
        "member": "0-based index of the member in the cell's bank ((m_h, restart) pairs, m_h-major)",
        "train_mse": LOSS_TRAIN,
        "lr": LR,
        "m_h": "attention size m_h of the member",
        "restart": "index (0-based) of the member's restart",
        "chosen": "True for the restart reported in results.csv",
    },
    "jackson-sweep learned_spectrum.csv.gz": {
        **{k: _SWEEP_TARGET[k] for k in ("alpha", "rank", "seed", "m_ff")},
        "m_h": "attention size m_h of the reported member",
        "i": "1-based index of the singular value (the tidy layout of a run folder's table; the committed folders were converted to it on 2026-11-25)",
        "sigma": "i-th largest singular value of the reported member's learned rho_hat (Eq. 18; linear attention: its "
                 "effective coupling), POD on 256 Gauss points with the v-mean removed; 0 past the computed ones",
        "s<k>": "the wide layout a cell's own cells/<key>/learned_spectrum.csv.gz keeps (one row per member): the k-th singular value, as `sigma` at i = k in the run folder's table",
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
}

_TERMS = {
    "ffn": "FFN class of f_hat and F_hat: its activation (and, for sin, the first layer's init scale)",
    "alpha": "decay exponent alpha of the target's spectrum, sigma_i = i^-alpha",
    "rank": "target rank (`inf` here)",
    "m_ff": "m_FF: hidden width of f_hat and F_hat",
    "m_h": "attention size m_h",
    "n_seeds": "seeds that every folder of the row holds (the same data and held-out sequences in each)",
}
PYTHON_COLUMNS = {
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
        "e_max": "the rival model of e_full: max(e_attn, e_ff) (means over seeds and blocks)",
        "ratio_max": "e_full / max(e_attn, e_ff)",
        "ratio_max_lo": "lower end of its 95% bootstrap interval (paired, as ratio_lo)",
        "ratio_max_hi": "upper end of that interval",
        "tells_apart": "True where the sum and the max differ by >= 1.5x (the smaller term >= half the larger): only there can the data tell them apart",
        "prefers": "sum or max: the model with the smaller |log(e_full / model)|; cannot tell where tells_apart is False",
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
}
COLUMNS.update(PYTHON_COLUMNS)

WRITTEN_BY: dict[str, str] = {
    "python terms.csv": "one row per (FFN class, alpha, m_FF, m_h) the three folders share: "
                        "`jackson/rate_sweep/terms.py` `additivity`",
    "python eff.csv": "one row per (FFN class, alpha, rank, m_FF, m_h) of the --term ff folders: "
                      "`jackson/rate_sweep/terms.py` `eff_table`",
    "python oracle_errors.csv": "one row per (alpha, m_h): `jackson/rate_sweep/l1.py` `oracle_errors`",
    "python slopes.csv": "one row per alpha: `jackson/rate_sweep/l1.py` `slopes`",
    "jackson-sweep results.csv": "one row per (target, seed, m_FF, m_h), the reported restart: "
                                 "`jackson/rate_sweep/cell.py` `measure` (rows.csv), gathered by `jackson/rate_sweep/tables.py` `collect`",
    "jackson-sweep restarts.csv": "one row per restart of every m_h: `jackson/rate_sweep/cell.py` `measure`",
    "jackson-sweep doubling.csv": "one row per restart of every member of the base folder: `jackson/rate_sweep/doubling.py` `pair`",
    "jackson-sweep blocks.csv.gz": "one row per (m_h, seed, kind, block): `jackson/rate_sweep/cell.py` `measure`",
    "jackson-sweep loss_curves.csv.gz": "one row per (member, step): `jackson/fit.py` `fit` (curve), "
                                        "`jackson/rate_sweep/cell.py` `measure` (curve.csv.gz)",
    "jackson-sweep learned_spectrum.csv.gz": "one row per (target, seed, m_h): `jackson/pod.py` `learned_spectrum`, "
                                             "`jackson/rate_sweep/cell.py` `measure`",
    "jackson-sweep diagnostics.csv": "one row per (target, seed), on the held-out sequences: "
                                     "`synthetic/pod_target.py` `PODTarget.diagnostics`, `jackson/rate_sweep/tables.py` `collect`",
}
