"""The columns of every CSV vit-probe writes: {output kind: {column: meaning}} (`COLUMNS`) and the code that writes each
(`WRITTEN_BY`).  The lab's column dictionary (reports/COLUMNS.md, jackson/lab_report/columns.py) gathers it through
the `jackson_lab.columns` entry point (pyproject.toml)."""
from __future__ import annotations

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

COLUMNS: dict[str, dict[str, str]] = {
    "vit-probe spectra.csv.gz": {
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
    "vit-probe init_spectra.csv.gz": {
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
    "vit-probe violin_samples.csv.gz": {
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
}

WRITTEN_BY: dict[str, str] = {
    "vit-probe spectra.csv.gz": "one row per ([m_h, seed,] layer, head, i): `vit_probe/spectra.py` `spectrum_table` "
                                "(vit-probe spectra and sweep-mh)",
    "vit-probe heads.csv": "one row per ([m_h,] layer, head): `vit_probe/spectra.py` `head_table` "
                           "(vit-probe spectra and sweep-mh)",
    "vit-probe init_heads.csv": "one row per (init, layer, head): `vit_probe/run_spectra.py` `init_control` "
                                "(vit-probe spectra of a trained model: the control)",
    "vit-probe init_spectra.csv.gz": "one row per (init, layer, head, i): `vit_probe/run_spectra.py` `init_control`",
    "vit-probe violin_samples.csv.gz": "one row per (image, i): `vit_probe` `run_spectra`",
    "vit-probe results.csv": "one row per (m_h, seed): `vit_probe` `MhCell.run` (vit-probe sweep-mh)",
    "vit-probe history.csv": "one row per epoch of each cell: `vit_probe/train.py` `train`, "
                             "`vit_probe` `MhCell.run` (vit-probe sweep-mh)",
    "vit-probe spectrum_convergence.csv": "one row per pair of successive m_h: `vit_probe` "
                                          "`spectrum_convergence` (vit-probe sweep-mh)",
    "vit-probe permute.csv": "one row per (model, test data): `vit_probe` `run_permute`",
}
