"""Arithmetic mod p: evaluate an expression over the field Z_p, one operator per CoT step.

Numbers are 0..p-1; + - * are mod p, a / b = a * b^(p-2) mod p (the modular inverse, b != 0);
* and / bind tighter than + and -, all four are left-associative, brackets group.
size = the number of operators.  Worked example (p = 11, size 4):

    ( 7 - 0 ) * 5 * 0 - 10 = 7 * 5 * 0 - 10 = 2 * 0 - 10 = 0 - 10 = 1

The prompt ends at the first "="; each step evaluates the *leftmost handle* -- the leftmost
`a op b` whose neighbours let it go first (Yang et al., App. C) -- and drops brackets left
around a single number.  The last token is the answer.  Expressions are random binary trees
(the left subtree gets 0..size-1 of the operators, uniformly), operators and numbers uniform,
written with the brackets precedence and left-associativity need; trees that would divide by
zero anywhere are drawn again.
"""
from __future__ import annotations

SEP = "="
SIZES = (1, 32)
size_meaning = "operators"
OPS = ("+", "-", "*", "/")
PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def check(cfg) -> None:
    p = cfg.params.p
    if not (2 <= p <= 997 and all(p % d for d in range(2, int(p ** 0.5) + 1))):
        raise ValueError(f"--p: the modulus must be a prime in 2..997 (division needs inverses), got {p}")


def symbols(cfg) -> list[str]:
    return [*OPS, "(", ")", "="] + [str(i) for i in range(cfg.params.p)]


def apply(op: str, a: int, b: int, p: int) -> int:
    if op == "+":
        return (a + b) % p
    if op == "-":
        return (a - b) % p
    if op == "*":
        return (a * b) % p
    return (a * pow(b, -1, p)) % p     # b != 0: the generator never divides by zero


def _tree(n: int, p: int, rng):
    """A random expression tree with n operators: ('num', v) or (op, left, right)."""
    if n == 0:
        return ("num", int(rng.integers(p)))
    left = int(rng.integers(n))
    return (OPS[int(rng.integers(4))], _tree(left, p, rng), _tree(n - 1 - left, p, rng))


def _value(t, p: int) -> int | None:
    """The tree's value, or None if it divides by zero anywhere."""
    if t[0] == "num":
        return t[1]
    a, b = _value(t[1], p), _value(t[2], p)
    if a is None or b is None or (t[0] == "/" and b == 0):
        return None
    return apply(t[0], a, b, p)


def _write(t, out: list[str]) -> None:
    if t[0] == "num":
        out.append(str(t[1]))
        return
    for side, child in ((0, t[1]), (1, t[2])):
        if side == 1:
            out.append(t[0])
        # brackets where precedence or left-associativity would otherwise regroup the child
        br = child[0] != "num" and (PREC[child[0]] < PREC[t[0]] or (side == 1 and PREC[child[0]] == PREC[t[0]]))
        if br:
            out.append("(")
        _write(child, out)
        if br:
            out.append(")")


def _handle(e: list[str]) -> int:
    """Index of the leftmost a op b that may be evaluated first."""
    for i in range(len(e) - 2):
        a, op, b = e[i], e[i + 1], e[i + 2]
        if not (a.isdigit() and op in PREC and b.isdigit()):
            continue
        left = e[i - 1] if i > 0 else "("
        right = e[i + 3] if i + 3 < len(e) else ")"
        if (left == "(" or PREC[left] < PREC[op]) and (right == ")" or PREC[right] <= PREC[op]):
            return i
    raise ValueError(f"no evaluable operator in '{' '.join(e)}'")


def steps(expr: list[str], p: int) -> list[list[str]]:
    """The CoT: the expression after each single-operator step, ending with the answer alone."""
    out, e = [], list(expr)
    while len(e) > 1:
        i = _handle(e)
        a, b = int(e[i]), int(e[i + 2])
        if e[i + 1] == "/" and b == 0:
            raise ValueError("division by zero")
        e = e[:i] + [str(apply(e[i + 1], a, b, p))] + e[i + 3:]
        if 0 < i < len(e) - 1 and e[i - 1] == "(" and e[i + 1] == ")":
            e = e[:i - 1] + [e[i]] + e[i + 2:]        # ( r ) -> r in the same step
        out.append(e)
    return out


def solve(cfg, prompt: list[str]) -> list[str]:
    expr = prompt[:prompt.index(SEP)] if SEP in prompt else list(prompt)
    tokens = list(expr)
    for s in steps(expr, cfg.params.p):
        tokens += [SEP, *s]
    return tokens


def sample(cfg, rng) -> list[str]:
    while True:
        t = _tree(cfg.size, cfg.params.p, rng)
        if _value(t, cfg.params.p) is not None:
            break
    expr: list[str] = []
    _write(t, expr)
    return solve(cfg, expr)
