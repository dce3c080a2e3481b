"""The names of a rate sweep's axes, shared by its config and its cells without importing torch: a rank as cell keys
and tables write it (`rank_str`), the terms of Eq. (17) a cell can fit (`TERMS`), and the named (phi, psi) pairs
(`CONSTRUCTIONS`, `families_of`), and the FFN class of a model with none of its own (`CLASSLESS_MODEL`)."""
from __future__ import annotations

import math

from ..hparams import DENSE_MODEL, IN_SCALES

CONSTRUCTIONS = {"paper": ("sin", "sin"), "trace-free": ("sin", "cos")}   # --construction: a named (phi, psi) pair
TERMS = ("full", "ff")   # full: the target itself (Theorem 4.1's error); ff: its rank-m_h truncation (the FFN term)


def rank_str(rank: float) -> str:
    """A rank as keys and tables write it: "inf" or the integer."""
    return "inf" if math.isinf(rank) else str(int(rank))


def pair_name(phi, psi) -> str:
    """A (phi, psi) pair in words: its --construction name where it has one, else 'phi/psi'."""
    return next((k for k, v in CONSTRUCTIONS.items() if v == (phi, psi)), f"{phi}/{psi}")


def families_of(cfg: dict) -> tuple:
    """(phi, psi) of a run's config.json: its --construction's pair, else its own phi and psi."""
    return CONSTRUCTIONS.get(cfg.get("construction") or "", (cfg.get("phi"), cfg.get("psi")))


SINE_IN_SCALE = IN_SCALES["sin"]      # the sine class's first-layer scale (hparams.IN_SCALES says why)
# A run's model without an FFN class of its own keeps GELU's fields (ModelConfig.RECORD_DEFAULTS): the given-features
# model (no f_hat or F_hat), and a config.json written before --activation existed.  So their cell keys, and
# what their folders mean, are what they were.
CLASSLESS_MODEL = DENSE_MODEL
