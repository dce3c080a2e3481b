"""cot_dp.tasks: arithmetic, edit distance, ED_Local and LIS against independent solvers."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from cot_dp.tasks import arithmetic, edit_distance
from cot_dp_helpers import task


BENCH_ED = "j y k k | y k y j y j <sep> 3 4 5 3 5 5 , 1 3 4 5 3 5 , 3 1 3 5 5 6 , 5 3 4 6 7 8 , <sep> 8"


# ---- arithmetic vs Python's own evaluation -----------------------------------------------------

class ModP:
    """An int mod p whose operators Python's parser combines (precedence, brackets, associativity)."""
    p = 11

    def __init__(self, v):
        self.v = v % self.p

    def __add__(self, o): return ModP(self.v + o.v)
    def __sub__(self, o): return ModP(self.v - o.v)
    def __mul__(self, o): return ModP(self.v * o.v)
    def __truediv__(self, o): return ModP(self.v * pow(o.v, -1, self.p))


def py_eval(tokens, p):
    ModP.p = p
    src = " ".join(f"ModP({t})" if t.isdigit() else t for t in tokens)
    return eval(src, {"ModP": ModP}).v  # noqa: S307 -- our own generated tokens


@pytest.mark.parametrize("p,size", [(11, 1), (11, 4), (11, 7), (7, 5), (13, 3)])
def test_arithmetic_cot_agrees_with_python_mod_p(p, size):
    cfg = task("arithmetic", size, p=p)
    rng = np.random.default_rng(size * 100 + p)
    for _ in range(60):
        toks = cfg.sample(rng)
        steps = " ".join(toks).split(" = ")
        assert len(steps) == size + 1                          # one operator per step
        want = py_eval(steps[0].split(), p)
        for k, s in enumerate(steps):
            s = s.split()
            assert sum(t in arithmetic.OPS for t in s) == size - k
            assert py_eval(s, p) == want                       # every step keeps the value
        assert toks[-1] == str(want) and steps[-1] == str(want)


def test_arithmetic_worked_example_and_leftmost_handle():
    cfg = task("arithmetic", 4)
    got = cfg.solve("( 7 - 0 ) * 5 * 0 - 10 =".split())
    assert " ".join(got) == "( 7 - 0 ) * 5 * 0 - 10 = 7 * 5 * 0 - 10 = 2 * 0 - 10 = 0 - 10 = 1"
    assert " ".join(cfg.solve("2 + 3 * 4 - 6 / 3 =".split())) == "2 + 3 * 4 - 6 / 3 = 2 + 1 - 6 / 3 = 3 - 6 / 3 = 3 - 2 = 1"


def test_p_must_be_prime():
    with pytest.raises(ValueError, match="--p"):
        task("arithmetic", 3, p=12).check()


# ---- edit distance vs a brute force over alignment paths ---------------------------------------

def ed_brute(s1, s2, ins, dele, sub, edges):
    """Min over every monotone path (0,0) -> (|s1|,|s2|) of its cost, each move costed on its own."""
    best = [float("inf")]

    def walk(i, j, cost):
        if (i, j) == (len(s1), len(s2)):
            best[0] = min(best[0], cost)
            return
        if i < len(s1):                                        # down: delete s1[i]
            walk(i + 1, j, cost + ((1 if edges == "unit" else dele) if j == 0 else dele))
        if j < len(s2):                                        # right: insert s2[j]
            walk(i, j + 1, cost + ((1 if edges == "unit" else ins) if i == 0 else ins))
        if i < len(s1) and j < len(s2):                        # diagonal: keep or substitute
            walk(i + 1, j + 1, cost + (0 if s1[i] == s2[j] else sub))
    walk(0, 0, 0)
    return best[0]


@pytest.mark.parametrize("edges", ["unit", "costs"])
def test_edit_distance_table_agrees_with_brute_force(edges):
    rng = np.random.default_rng(3)
    for trial in range(40):
        ins, dele, sub = (int(x) for x in rng.integers(1, 5, size=3))
        cfg = task("ed", 4, ins_cost=ins, del_cost=dele, sub_cost=sub, ed_edges=edges)
        s1 = list(rng.choice(list("abc"), size=int(rng.integers(1, 5))))
        s2 = list(rng.choice(list("abc"), size=int(rng.integers(1, 5))))
        dp = edit_distance.table(cfg, s1, s2)
        for i, j in itertools.product(range(1, len(s1) + 1), range(1, len(s2) + 1)):
            assert dp[i][j] == ed_brute(s1[:i], s2[:j], ins, dele, sub, edges)
        toks = cfg.solve([*s1, "|", *s2, "<sep>"])
        assert toks[-1] == str(dp[-1][-1])


def test_edit_distance_reproduces_the_public_benchmark_line():
    toks = BENCH_ED.split()
    assert task("ed", 4).solve(toks[:toks.index("<sep>") + 1]) == toks


def test_ed_samples_are_well_formed():
    cfg = task("ed", 6)
    rng = np.random.default_rng(0)
    for _ in range(50):
        s1, s2 = edit_distance.split_prompt(cfg.sample(rng))
        assert len(s1) <= len(s2) and 3 <= len(s1) <= 8 and 3 <= len(s2) <= 8 and s1 != s2


def test_ed_equal_lengths_puts_every_entry_at_the_same_place():
    """ed_lengths = equal: |s1| = |s2| = size in every pair (ED and ED_Local), so every CoT has the same length
    and each table entry the same position; the default draws (vary) are unchanged by the option."""
    for name in ("ed", "ed_local"):
        cfg = task(name, 5, ed_lengths="equal")
        rng = np.random.default_rng(0)
        lines = [cfg.sample(rng) for _ in range(40)]
        assert len({len(t) for t in lines}) == 1
        for t in lines:
            s1, s2 = edit_distance.split_prompt(t)
            assert len(s1) == len(s2) == 5 and s1 != s2
            assert t[-1] == str(edit_distance.table(cfg, s1, s2)[-1][-1])
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    assert [task("ed", 6).sample(a) for _ in range(20)] == [task("ed", 6, ed_lengths="vary").sample(b) for _ in range(20)]
    with pytest.raises(ValueError, match="--ed-lengths: choose vary or equal"):
        task("ed", 4, ed_lengths="same").check()


@pytest.mark.parametrize("name", ["ed", "ed_local"])
def test_ed_sizes_below_4_need_equal_lengths(name):
    """Sizes 2-3 are valid with ed_lengths = equal (every pair n x n, answers from the DP table) and refused, naming
    --size and the way out, with vary, whose |s2| range size-3..size+2 would start below 1."""
    for n in (2, 3):
        cfg = task(name, n, ed_lengths="equal")
        cfg.check()
        rng = np.random.default_rng(n)
        for _ in range(30):
            t = cfg.sample(rng)
            s1, s2 = edit_distance.split_prompt(t)
            assert len(s1) == len(s2) == n and s1 != s2
            assert t[-1] == str(edit_distance.table(cfg, s1, s2)[-1][-1])
        with pytest.raises(ValueError, match="--size: .* need --ed-lengths equal"):
            task(name, n).check()
    with pytest.raises(ValueError, match="--size: .* must be in 2..64"):
        task(name, 1, ed_lengths="equal").check()


def test_ed_local_same_answers_and_local_blocks():
    rng = np.random.default_rng(1)
    ed, loc = task("ed", 5), task("ed_local", 5)
    for _ in range(30):
        a = ed.sample(rng)
        s1, s2 = edit_distance.split_prompt(a)
        b = loc.solve(a[:a.index("<sep>") + 1])
        assert b[-1] == a[-1]                                  # same problem, same answer
        blocks = " ".join(b[b.index("<sep>") + 1:-2]).split(" , ")
        dp = edit_distance.table(ed, s1, s2)
        assert len(blocks) == len(s1)
        for i, blk in enumerate(blocks, 1):                    # a_i..a_n | s2 : dp[i][1..]
            assert blk.replace(" ,", "").split() == [*s1[i - 1:], "|", *s2, ":", *map(str, dp[i][1:])]
            assert len(blk.split()) + 1 <= 3 * (ed.size + 2) + 4   # the stated reach m bounds every block


# ---- LIS vs brute force ------------------------------------------------------------------------

def test_lis_dp_agrees_with_brute_force_over_subsequences():
    rng = np.random.default_rng(2)
    cfg = task("lis", 9, value_range=12)
    for _ in range(40):
        toks = cfg.sample(rng)
        n = cfg.size
        a = [int(t) for t in toks[:n]]
        dp = [int(t) for t in toks[n + 1:2 * n + 1]]
        for i in range(n):
            best = max(len(c) for r in range(1, i + 2) for c in itertools.combinations(range(i + 1), r)
                       if c[-1] == i and all(a[x] < a[y] for x, y in zip(c, c[1:])))
            assert dp[i] == best
        assert toks[-1] == str(max(dp)) and toks[n] == toks[2 * n + 1] == "<sep>"


@pytest.mark.parametrize("name,lengths", [("ed", "vary"), ("ed", "equal"), ("ed_local", "vary"), ("ed_local", "equal")])
def test_ed_reads_point_at_the_tokens_the_recurrence_uses(name, lengths):
    """`reads` (where dp[i][j]'s recurrence reads) checked against the CoT `solve` writes: the listed position of
    every entry holds dp[i][j], and each read's position holds a_i, b_j or the neighbouring table value; ED_Local's
    letters are its own block's copies (after the row's last ',' or the prompt's <sep>)."""
    cfg = task(name, 5, ed_lengths=lengths, ins_cost=1, del_cost=2, sub_cost=3)
    mod, rng = cfg.module(), np.random.default_rng(7)
    for _ in range(40):
        t = cfg.sample(rng)
        s1, s2 = edit_distance.split_prompt(t)
        dp = edit_distance.table(cfg, s1, s2)
        entries = mod.reads(cfg, s1, s2)
        assert len(entries) == len(s1) * len(s2)
        for (pos, r), (i, j) in zip(entries, itertools.product(range(1, len(s1) + 1), range(1, len(s2) + 1))):
            assert t[pos] == str(dp[i][j])
            assert t[r["a_i"]] == s1[i - 1] and t[r["b_j"]] == s2[j - 1]
            for key, (di, dj) in {"dp[i][j-1]": (0, -1), "dp[i-1][j]": (-1, 0), "dp[i-1][j-1]": (-1, -1)}.items():
                assert (key in r) == (i + di >= 1 and j + dj >= 1)
                if key in r:
                    assert t[r[key]] == str(dp[i + di][j + dj]) and r[key] < pos
            if name == "ed_local":
                block = max(k for k in range(pos) if t[k] in (",", "<sep>"))
                assert block < r["a_i"] < r["b_j"] < pos
            else:
                assert r["a_i"] < r["b_j"] < t.index("<sep>")

