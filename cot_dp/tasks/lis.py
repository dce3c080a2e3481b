"""LIS: the length of the longest (strictly) increasing subsequence; the CoT is the dp array.

    dp_i = 1 + max{dp_j : j < i, a_j < a_i}   (1 if there is no such j),   answer = max_i dp_i

Every dp_i may need every earlier a_j and dp_j: no locality (m = the whole sequence).
size = n, the sequence length.  Worked example (n = 6):

    12 40 7 33 90 51 <sep> 1 2 1 2 3 3 <sep> 3

Sequences: n numbers uniform in 0..value_range-1, then an increasing run of r of them (r uniform
in 1..min(n, value_range), distinct sorted values at sorted random places) is planted so the
answers spread over 1..n instead of sitting near 2 sqrt(n).
"""
from __future__ import annotations

import numpy as np

SEP = "<sep>"
SIZES = (2, 512)
size_meaning = "sequence length"


def check(cfg) -> None:
    if not 2 <= cfg.params.value_range <= 2048:
        raise ValueError(f"--value-range: must be in 2..2048, got {cfg.params.value_range}")


def symbols(cfg) -> list[str]:
    return [SEP] + [str(i) for i in range(max(cfg.params.value_range, cfg.size + 1))]


def dp_array(a: list[int]) -> list[int]:
    """dp_i = 1 + max{dp_j : j < i, a_j < a_i}, one numpy pass per i (O(n^2) work, n = 250 in ~1 ms)."""
    a = np.asarray(a)
    dp = np.ones(len(a), dtype=np.int64)
    for i in range(1, len(a)):
        prev = dp[:i][a[:i] < a[i]]
        if len(prev):
            dp[i] = prev.max() + 1
    return dp.tolist()


def solve(cfg, prompt: list[str]) -> list[str]:
    head = prompt[:prompt.index(SEP)] if SEP in prompt else list(prompt)
    dp = dp_array([int(t) for t in head])
    return [*head, SEP, *(str(v) for v in dp), SEP, str(max(dp))]


def sample(cfg, rng) -> list[str]:
    n, V = cfg.size, cfg.params.value_range
    a = rng.integers(V, size=n)
    r = int(rng.integers(1, min(n, V) + 1))
    a[sorted(rng.choice(n, size=r, replace=False))] = sorted(rng.choice(V, size=r, replace=False))
    return solve(cfg, [str(int(x)) for x in a] + [SEP])
