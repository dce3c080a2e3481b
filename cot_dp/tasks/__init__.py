"""The chain-of-thought DP tasks, one file each, behind one interface.

Every task module provides
    SEP                      the token that ends the prompt (the loss starts after it)
    SIZES                    (lo, hi): the valid problem sizes
    size_meaning             what `size` counts, in words
    check(cfg)               raise ValueError for parameters the task cannot use
    symbols(cfg)             its vocabulary, in order (see cot_dp/tokenizer.py)
    sample(cfg, rng)         one random example: the full token list (prompt, CoT, answer)
    solve(cfg, prompt)       the full token list for a given prompt (the reference solver)
and lines look like the public CoT benchmark's (Feng et al. 2023): space-separated tokens, the
answer last.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import arithmetic, ed_local, edit_distance, lis

TASKS = {"arithmetic": arithmetic, "ed": edit_distance, "lis": lis, "ed_local": ed_local}


@dataclass(frozen=True)
class TaskParams:
    p: int = 11                # arithmetic: the prime modulus (numbers are 0..p-1, / is the modular inverse)
    ins_cost: int = 2          # ed: cost of inserting a character
    del_cost: int = 2          # ed: cost of deleting a character
    sub_cost: int = 3          # ed: cost of substituting a character
    ed_edges: str = "unit"     # ed: table edges dp[i][0], dp[0][j]: unit (i and j, as the public benchmark) or costs (i*del, j*ins)
    letters: int = 10          # ed: each example uses 3..letters distinct letters of a-z
    ed_lengths: str = "vary"   # ed: vary (|s2| in size-3..size+2, the benchmark's) or equal (|s1| = |s2| = size)
    value_range: int = 150     # lis: numbers are drawn from 0..value_range-1


@dataclass(frozen=True)
class TaskConfig:
    name: str = "arithmetic"   # arithmetic | ed | lis | ed_local
    size: int = 4              # operators (arithmetic), length of the first string (ed, ed_local), sequence length (lis)
    params: TaskParams = field(default_factory=TaskParams)   # the tasks' own parameters

    def module(self):
        return TASKS[self.name]

    def check(self) -> None:
        """Raise ValueError naming the option and its valid range."""
        if self.name not in TASKS:
            raise ValueError(f"--task: choose one of {', '.join(TASKS)}, got {self.name}")
        mod = self.module()
        lo, hi = mod.SIZES
        if not lo <= self.size <= hi:
            raise ValueError(f"--size: {self.name} sizes ({mod.size_meaning}) must be in {lo}..{hi}, got {self.size}")
        mod.check(self)

    def symbols(self) -> list[str]:
        return self.module().symbols(self)

    def sample(self, rng) -> list[str]:
        return self.module().sample(self, rng)

    def solve(self, prompt: list[str]) -> list[str]:
        return self.module().solve(self, prompt)

    @property
    def sep(self) -> str:
        return self.module().SEP

    def prompt_len(self, tokens: list[str]) -> int:
        """Tokens up to and including the first separator (the model is not trained on these)."""
        return tokens.index(self.sep) + 1
