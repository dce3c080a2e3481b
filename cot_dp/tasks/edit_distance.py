"""Edit Distance: the cheapest way to turn s1 into s2; the CoT is the DP table row by row.

    dp[i][j] = min(dp[i-1][j] + del_cost, dp[i][j-1] + ins_cost, dp[i-1][j-1] + (0 if a_i = b_j else sub_cost))

for i = 1..|s1|, j = 1..|s2|.  The table's edges are dp[i][0] = i, dp[0][j] = j with
ed_edges = "unit" (what the public CoT benchmark writes: its edges cost 1 per character whatever
the costs) or i * del_cost, j * ins_cost with ed_edges = "costs" (the textbook DP).
Row i of the CoT is dp[i][1..|s2|] (the edge entry left out) followed by ",".
size = |s1| before the pair is ordered; |s2| is within size-3..size+2 and the shorter string
comes first.  Worked example (costs 2/2/3, unit edges):

    j y k k | y k y j y j <sep> 3 4 5 3 5 5 , 1 3 4 5 3 5 , 3 1 3 5 5 6 , 5 3 4 6 7 8 , <sep> 8

Pairs: 3..letters distinct letters per example; s1 uniform over them; s2 either uniform (40%,
length size-3..size+2) or s1 after 1..size random deletions / substitutions / insertions; pairs
with s1 = s2 or s2 outside the length range are drawn again.  With ed_lengths = "equal" the range is
size alone: every table is size x size, so every entry sits at the same place in every CoT (a
simplification for the CPU budget: the recurrence is unchanged, the row length no longer varies).
"""
from __future__ import annotations

import string

SEP = "<sep>"
SIZES = (2, 64)             # 2-3 only with ed_lengths = "equal": "vary" draws |s2| from size-3..size+2
size_meaning = "length of the first string"
LETTERS = string.ascii_lowercase


def check(cfg) -> None:
    c = cfg.params
    costs = (c.ins_cost, c.del_cost, c.sub_cost)
    if min(costs) < 0 or max(costs) > 20:
        raise ValueError(f"--ins-cost, --del-cost, --sub-cost: costs must be integers in 0..20, got {costs}")
    if c.ed_edges not in ("unit", "costs"):
        raise ValueError(f"--ed-edges: choose unit or costs, got {c.ed_edges}")
    if not 3 <= c.letters <= 26:
        raise ValueError(f"--letters: must be in 3..26, got {c.letters}")
    if c.ed_lengths not in ("vary", "equal"):
        raise ValueError(f"--ed-lengths: choose vary or equal, got {c.ed_lengths}")
    if c.ed_lengths == "vary" and cfg.size < 4:
        raise ValueError(f"--size: {cfg.name} sizes below 4 need --ed-lengths equal (vary draws |s2| "
                         f"from size-3..size+2), got {cfg.size}")


def max_value(cfg) -> int:
    """A bound on every table entry: dp[i][j] <= edge(i) + edge(j) along the table's edges."""
    c, n = cfg.params, cfg.size + 2
    return 2 * n * max(1, c.ins_cost, c.del_cost)


def symbols(cfg) -> list[str]:
    return list(LETTERS) + ["|", SEP, ","] + [str(i) for i in range(max_value(cfg) + 1)]


def table(cfg, s1: list[str], s2: list[str]) -> list[list[int]]:
    """The full DP table dp[0..|s1|][0..|s2|]."""
    c = cfg.params
    e_del, e_ins = (1, 1) if c.ed_edges == "unit" else (c.del_cost, c.ins_cost)
    dp = [[j * e_ins for j in range(len(s2) + 1)]]
    for i in range(1, len(s1) + 1):
        row = [i * e_del]
        for j in range(1, len(s2) + 1):
            row.append(min(dp[i - 1][j] + c.del_cost, row[j - 1] + c.ins_cost,
                           dp[i - 1][j - 1] + (0 if s1[i - 1] == s2[j - 1] else c.sub_cost)))
        dp.append(row)
    return dp


def split_prompt(prompt: list[str]) -> tuple[list[str], list[str]]:
    head = prompt[:prompt.index(SEP)] if SEP in prompt else list(prompt)
    bar = head.index("|")
    return head[:bar], head[bar + 1:]


def reads(cfg, s1: list[str], s2: list[str]) -> list[tuple[int, dict[str, int]]]:
    """Where each table entry's recurrence reads in this pair's CoT: (position of dp[i][j], {read: position}) per
    entry, positions 0-based in `solve`'s tokens; the reads are a_i, b_j (in the prompt), dp[i][j-1], dp[i-1][j-1]
    and dp[i-1][j] where they are in the CoT (the edges dp[0][.], dp[.][0] are not written)."""
    n1, n2 = len(s1), len(s2)
    cot = n1 + n2 + 2                                   # s1 | s2 <sep>

    def at(i, j):
        return cot + (i - 1) * (n2 + 1) + (j - 1)       # rows of n2 values and a ","
    return [(at(i, j), _table_reads(i, j, at, {"a_i": i - 1, "b_j": n1 + j}))
            for i in range(1, n1 + 1) for j in range(1, n2 + 1)]


def _table_reads(i, j, at, letters: dict[str, int]) -> dict[str, int]:
    r = dict(letters)
    if j > 1:
        r["dp[i][j-1]"] = at(i, j - 1)
    if i > 1:
        r["dp[i-1][j]"] = at(i - 1, j)
    if i > 1 and j > 1:
        r["dp[i-1][j-1]"] = at(i - 1, j - 1)
    return r


def solve(cfg, prompt: list[str]) -> list[str]:
    s1, s2 = split_prompt(prompt)
    dp = table(cfg, s1, s2)
    tokens = [*s1, "|", *s2, SEP]
    for row in dp[1:]:
        tokens += [str(v) for v in row[1:]] + [","]
    return tokens + [SEP, str(dp[-1][-1])]


def sample_pair(cfg, rng) -> tuple[list[str], list[str]]:
    n = cfg.size
    equal = cfg.params.ed_lengths == "equal"      # then only pairs with |s2| = n are kept
    while True:
        k = int(rng.integers(3, cfg.params.letters + 1))
        avail = [LETTERS[i] for i in rng.choice(26, size=k, replace=False)]
        s1 = [avail[i] for i in rng.integers(k, size=n)]
        if rng.random() < 0.4:
            s2 = [avail[i] for i in rng.integers(k, size=n if equal else int(rng.integers(n - 3, n + 3)))]
        else:
            s2 = list(s1)
            for _ in range(int(rng.integers(1, n + 1))):
                op = int(rng.integers(3))
                if op == 0 and len(s2) > 1:
                    del s2[int(rng.integers(len(s2)))]
                elif op == 1:
                    s2[int(rng.integers(len(s2)))] = avail[int(rng.integers(k))]
                else:
                    s2.insert(int(rng.integers(len(s2) + 1)), avail[int(rng.integers(k))])
        if s1 != s2 and (len(s2) == n if equal else n - 3 <= len(s2) <= n + 2) and len(s2) >= 1:
            return (s1, s2) if len(s1) <= len(s2) else (s2, s1)


def sample(cfg, rng) -> list[str]:
    s1, s2 = sample_pair(cfg, rng)
    return solve(cfg, [*s1, "|", *s2, SEP])
