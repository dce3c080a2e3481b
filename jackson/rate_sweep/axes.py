"""The names of a rate sweep's axes, shared by its config and its cells without importing torch: a rank as cell keys
and tables write it (`rank_str`), and the terms of Eq. (17) a cell can fit (`TERMS`)."""
from __future__ import annotations

import math

TERMS = ("full", "ff")   # full: the target itself (Theorem 4.1's error); ff: its rank-m_h truncation (the FFN term)


def rank_str(rank: float) -> str:
    """A rank as keys and tables write it: "inf" or the integer."""
    return "inf" if math.isinf(rank) else str(int(rank))
