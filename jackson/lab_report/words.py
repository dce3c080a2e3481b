"""Text cut for the first screen without cutting a formula: `short` (and the `OPERATORS` it will not cut beside)."""
from __future__ import annotations


OPERATORS = set("=<>+-*/^~≈≤≥×→∘≠±·|")


def _joins(a: str, b: str) -> bool:
    """Whether a space between the words a and b lies inside a formula (m_h >= r, a / m_h^gamma + b): an operator
    on either side of it."""
    return bool(a) and bool(b) and (a[-1] in OPERATORS or b[0] in OPERATORS)


def short(text: str, n: int = 90, ellipsis: str = " …") -> str:
    """text cut to at most n characters, with an ellipsis when cut, only where a cut leaves every formula whole: at
    a space outside parentheses and brackets and not beside an operator (never "m_h^-(2 ..." or "m_h >= ...").
    A text with no such place within n characters is kept whole."""
    if len(text) <= n:
        return text
    words, depth, pos, cut = text.split(" "), 0, 0, None
    for a, b in zip(words, words[1:]):
        depth += sum(a.count(o) for o in "([{") - sum(a.count(c) for c in ")]}")
        pos += len(a)
        if pos > n:
            break
        if depth <= 0 and not _joins(a, b):
            cut = pos
        pos += 1
    return text if cut is None else text[:cut].rstrip(",;:") + ellipsis
