"""The names of a rate sweep's axes, shared by its config and its cells without importing torch: a rank as cell keys
and tables write it (`rank_str`), the terms of Eq. (17) a cell can fit (`TERMS`), and the named (phi, psi) pairs
(`CONSTRUCTIONS`, `families_of`), and the FFN class a sweep fits unless told (`DEFAULT_MODEL`)."""
from __future__ import annotations

import math

from ..hparams import ModelConfig

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


# jackson-sweep's FFN class (Eq. 17's F^(m_FF)): sine, its first layer's frequencies U(-60, 60) for scalar inputs.
# Chosen by measurement (reports/jackson/FITTING.md, "The default FFN class"): on the card's target (3 seeds) the
# sine full model sits at 0.79-0.99x e_attn + e_FF at every m_h 1..16, limited by its attention term (its e_FF is
# 3.5x-7,400x smaller), where GELU's floors at its own e_FF (~8e-5) from m_h 6; on shifted-Legendre bases it is
# again the lower curve.  `--activation gelu` (App. C's dense network, first-layer scale 3) and `relu` are one option away; a
# given --in-scale wins.  In-scale 60 was measured at 3,000 steps on the trace-free target, alpha 1.5: m_h 16 at
# 1.5x its rank-16 oracle with 60, 2.6x with 30 (../shared/notes/training-observations.md).
SINE_IN_SCALE = 60.0
DEFAULT_MODEL = ModelConfig(activation="sin", in_scale=SINE_IN_SCALE)
# A run's model without an FFN class of its own keeps ModelConfig's fields (GELU, scale 3): the given-features
# model (no f_hat or F_hat), and a config.json written before --activation existed.  So their cell keys, and
# what their folders mean, are what they were.
CLASSLESS_MODEL = ModelConfig()
