"""ED_Local: Edit Distance with a CoT of bounded reach (the locality study, Sec. 6.2 / Fig. 2).

Same pairs, costs and answers as `ed` (edit_distance.py).  In `ed` every table entry dp[i][j]
needs a_i and b_j, which sit in the prompt: up to the whole sequence back.  ED_Local restates,
before row i, what the rest of the computation still needs -- like each arithmetic step restates
the remaining expression -- so block i is

    a_i ... a_|s1| | b_1 ... b_|s2| : dp[i][1] ... dp[i][|s2|] ,

and every CoT token is a function of tokens at most m = |s1| + 2|s2| + 4 positions back (dp[i][j]
reads dp[i][j-1], dp[i-1][j-1], dp[i-1][j] in the block before, a_i and b_j in its own block; the
restated letters copy the block before; the first block copies the prompt).  m grows like the
size n (about 3n), while the sequence grows like 2.5 n^2: this is Definition 5.3's m-locality
with m = O(sqrt(L)).  In `ed`, m is the whole sequence.  Worked example (costs 2/2/3, unit edges):

    k k | y k k <sep> k k | y k k : 3 1 2 , k | y k k : 4 3 1 , <sep> 1
"""
from __future__ import annotations

from . import edit_distance as ed

SEP = ed.SEP
SIZES = ed.SIZES
size_meaning = ed.size_meaning
check = ed.check


def symbols(cfg) -> list[str]:
    return ed.symbols(cfg) + [":"]


def reach(cfg) -> int:
    """m, the locality of this CoT, for the longest pair of this size (|s1| <= |s2| <= size + 2)."""
    n = cfg.size + 2
    return 3 * n + 4


def solve(cfg, prompt: list[str]) -> list[str]:
    s1, s2 = ed.split_prompt(prompt)
    dp = ed.table(cfg, s1, s2)
    tokens = [*s1, "|", *s2, SEP]
    for i in range(1, len(s1) + 1):
        tokens += [*s1[i - 1:], "|", *s2, ":"] + [str(v) for v in dp[i][1:]] + [","]
    return tokens + [SEP, str(dp[-1][-1])]


def reads(cfg, s1: list[str], s2: list[str]) -> list[tuple[int, dict[str, int]]]:
    """As `edit_distance.reads`, in this CoT: a_i and b_j are read where block i restates them (the nearest copy)."""
    n1, n2 = len(s1), len(s2)
    start = [0, n1 + n2 + 2]                            # start[i]: first token of block i (the prompt ends at <sep>)
    for i in range(1, n1):
        start.append(start[i] + (n1 - i + 1) + 2 * n2 + 3)   # a_i..a_n1 | s2 : row ,

    def at(i, j):
        return start[i] + (n1 - i + 1) + 1 + n2 + 1 + (j - 1)
    return [(at(i, j), ed._table_reads(i, j, at, {"a_i": start[i], "b_j": start[i] + (n1 - i + 1) + j}))
            for i in range(1, n1 + 1) for j in range(1, n2 + 1)]


def sample(cfg, rng) -> list[str]:
    s1, s2 = ed.sample_pair(cfg, rng)
    return solve(cfg, [*s1, "|", *s2, SEP])
