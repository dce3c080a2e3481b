"""The sweep's block table: every held-out block's error per (target, m_h, seed, kind), the data of every
bootstrap interval (jackson.rates.bootstrap_exponent) and of the term analysis (terms.py)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..runfolder import table_path

BLOCKS = "blocks.csv.gz"   # the sweep's block MSEs (every cell's blocks table), gzip-compressed: 8x smaller, read as is


def blocks_path(folder: Path) -> Path | None:
    """A finished folder's (or cell's) block table: blocks.csv.gz, or blocks.csv in a folder written before it was
    compressed (`table_path`); None when it has neither."""
    p = table_path(folder, "blocks.csv")
    return p if p.is_file() else None


def read_blocks(folder: Path) -> pd.DataFrame | None:
    p = blocks_path(folder)
    return pd.read_csv(p, dtype={"rank": str}) if p else None
