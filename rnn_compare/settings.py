"""What rnn-compare compares and its defaults, shared by its config and its cells without torch: the paper's
Tables 2-3 (`PAPER`, `TABLES`), the models, the RNN's settings (`RNNConfig`), the Transformer's and both budgets."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from jackson.hparams import DENSE_MODEL, FitConfig, ModelConfig


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
    # App. C's dense network (GELU, first-layer scale 3, as the committed tables ran; ModelConfig's own default is the
    # rate sweeps' sine class): n = d_v = m_h = 32, feed-forward width 128, depth 3, with a positional encoding
    return dataclasses.replace(DENSE_MODEL, n=32, d_v=32, width=128, depth=3, pos="learned", d_pos=32, tau_max=32)


RNN_FIT_DEFAULT = FitConfig(steps=1500, batch_size=64, eval_size=1024)   # the RNN's budget unless told otherwise


@dataclass(frozen=True)
class RNNConfig:
    hidden: int = 128          # hidden units (App. C)
    activation: str = "linear"  # linear (App. C) or tanh
    d_in: int = 1              # input dimension

    def validate(self):
        if self.activation not in ("linear", "tanh"):
            raise ValueError(f"--activation: choose linear or tanh, got {self.activation}")
        if self.hidden < 1:
            raise ValueError(f"--hidden: must be >= 1, got {self.hidden}")


HOT = 10.0       # a position whose altered / original MSE ratio exceeds this is 'hot' (position_section)


def fmt_mean_sd(m, s):
    return f"{m:.2e} ± {s:.1e}" if np.isfinite(s) else f"{m:.2e}"
