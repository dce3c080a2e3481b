"""Column meanings the experiments share: what jackson.fit writes about each fitted member (its status, steps,
loss curve).  The experiments' column dictionaries (their columns.py) quote these lines."""
from __future__ import annotations

FIT_STATUS = ("the fit's verdict on the member (jackson/fit.py): `converged`, `budget` (ran the whole step budget) "
               "or `diverged: <what> at step N`")
FIT_STEPS = "optimiser steps the member ran (the budget, unless it converged or diverged earlier)"
LOSS_TRAIN = ("MSE of the member on the first `eval_size` training sequences at this step, mean over positions and "
               "sequences (squared target units)")
LR = "the member's learning rate at this step"
