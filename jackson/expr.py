"""Safe arithmetic expressions of named arrays, for kernels and functions given on the command line.

A user's string ("1 + 2*sin(2*pi*u)*sin(2*pi*v)") is parsed by Python's `ast` (mode="eval") and
evaluated by walking a whitelist of node types here: nothing is ever passed to `eval`, `exec` or
`compile`-and-run, so no string can reach builtins, attributes, imports or the file system.

The grammar (everything else is refused with a one-line `UsageError` that names the piece):

    expr     := number | name | expr OP expr | (+|-) expr | FUNC(expr[, expr]) | ( expr )
    OP       := +  -  *  /  **  %
    number   := a finite int or float literal (1, 0.5, 2e-3); no complex, bool or string literals
    name     := a variable the caller declares (e.g. u, v or x) | the constants pi, e
    FUNC     := one argument: sin cos tan arcsin arccos arctan sinh cosh tanh exp log log10 sqrt abs sign
                two arguments: minimum maximum arctan2     (numpy ufuncs, called by bare name)

Limits: at most MAX_LENGTH characters and MAX_DEPTH levels of nesting.  Evaluation runs on float64
numpy arrays under np.errstate(divide, over, invalid = "raise") and the result is checked: a division by
zero, an overflow, a log of a negative number or any non-finite value is a one-line UsageError
("... is not finite on the grid ..."), never a silent nan or inf.  (Underflow to 0 is allowed.)

Example:

    >>> import numpy as np
    >>> k = Expression("1 + 2*sin(2*pi*u)*sin(2*pi*v)", variables=("u", "v"), name="--kernel")
    >>> k(u=np.array([0.25]), v=np.array([[0.25], [0.75]])).tolist()     # broadcast like numpy
    [[3.0], [-1.0]]
    >>> Expression("u.__class__", variables=("u",))
    Traceback (most recent call last):
    jackson.config.UsageError: expression: attribute access is not allowed: 'u.__class__'
"""
from __future__ import annotations

import ast
import math

import numpy as np

from .config import UsageError

MAX_LENGTH = 500     # characters; a kernel or F/f is a line, not a program
MAX_DEPTH = 100      # nesting levels of the parsed tree (also keeps the evaluator's recursion shallow)

CONSTANTS = {"pi": math.pi, "e": math.e}
FUNCTIONS = {name: (getattr(np, name), 1) for name in
             ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
              "exp", "log", "log10", "sqrt", "abs", "sign")}
FUNCTIONS |= {name: (getattr(np, name), 2) for name in ("minimum", "maximum", "arctan2")}
BINARY = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
          ast.Pow: np.power, ast.Mod: np.mod}
UNARY = {ast.UAdd: np.positive, ast.USub: np.negative}

# what a refused node is called in the message (anything else: its ast class name)
_WHAT = {ast.Attribute: "attribute access", ast.Lambda: "lambda", ast.Subscript: "subscript",
         ast.ListComp: "comprehension", ast.SetComp: "comprehension", ast.DictComp: "comprehension",
         ast.GeneratorExp: "comprehension", ast.Compare: "comparison", ast.BoolOp: "and/or",
         ast.IfExp: "if-else", ast.NamedExpr: "assignment (:=)", ast.Starred: "*-unpacking",
         ast.JoinedStr: "f-string", ast.Tuple: "tuple", ast.List: "list", ast.Dict: "dict", ast.Set: "set",
         ast.Slice: "slice", ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield"}


class Expression:
    """A parsed, checked expression in the declared `variables`; call it with arrays to evaluate.

    Expression(text, variables=("u", "v"), name="--kernel")(u=U, v=V) (or positionally, in the order
    of `variables`) returns a float64 ndarray of the inputs' broadcast shape.  `name` prefixes every
    error message (the option the text came from).  Pickles as its text (re-parsed when loaded), so it
    can be sent to Dask workers.
    """

    def __init__(self, text: str, variables: tuple[str, ...] = ("x",), name: str = "expression"):
        self.text, self.variables, self.name = text, tuple(variables), name
        for v in self.variables:
            if not v.isidentifier() or v in CONSTANTS or v in FUNCTIONS:
                raise ValueError(f"variable name {v!r} is not an identifier or clashes with a constant/function")
        if not isinstance(text, str):
            raise UsageError(f"{name}: give the expression as text")
        self._need(len(text) <= MAX_LENGTH, f"longer than {MAX_LENGTH} characters ({len(text)})")
        self._need(text.strip() != "", "empty")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as e:
            raise UsageError(f"{name}: not an expression: {text!r} ({e.msg})") from None
        except (RecursionError, MemoryError, ValueError):   # pathological nesting / NUL bytes
            raise UsageError(f"{name}: cannot parse {text!r}") from None
        self._src = text.strip()
        self._check(tree.body, 1)
        self._tree = tree.body

    # ---- the whitelist --------------------------------------------------------------------
    def _need(self, ok: bool, message: str) -> None:
        if not ok:
            raise UsageError(f"{self.name}: {message}")

    def _piece(self, node: ast.AST) -> str:
        seg = ast.get_source_segment(self._src, node) or type(node).__name__
        return repr(seg if len(seg) <= 60 else seg[:57] + "...")

    def _refuse(self, what: str, node: ast.AST):
        raise UsageError(f"{self.name}: {what} is not allowed: {self._piece(node)}")

    def _check(self, node: ast.AST, depth: int) -> None:
        self._need(depth <= MAX_DEPTH, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self._refuse("a string literal" if isinstance(v, (str, bytes)) else f"the literal {v!r}", node)
            try:
                ok = math.isfinite(float(v))
            except OverflowError:
                ok = False
            self._need(ok, f"the number {self._piece(node)} is not a finite float")
        elif isinstance(node, ast.Name):
            if node.id not in self.variables and node.id not in CONSTANTS:
                if node.id in FUNCTIONS:
                    self._refuse("a function without its call", node)
                known = ", ".join((*self.variables, *CONSTANTS))
                raise UsageError(f"{self.name}: unknown name {node.id!r} (use {known} and the functions "
                                 f"{', '.join(FUNCTIONS)})")
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in BINARY:
                self._refuse(f"the operator {type(node.op).__name__}", node)
            self._check(node.left, depth + 1)
            self._check(node.right, depth + 1)
        elif isinstance(node, ast.UnaryOp):
            if type(node.op) not in UNARY:
                self._refuse(f"the operator {type(node.op).__name__}", node)
            self._check(node.operand, depth + 1)
        elif isinstance(node, ast.Call):
            f = node.func
            if not isinstance(f, ast.Name):
                self._refuse("calling a computed value", node)
            if f.id not in FUNCTIONS:
                raise UsageError(f"{self.name}: unknown function {f.id!r} in {self._piece(node)} "
                                 f"(use {', '.join(FUNCTIONS)})")
            if node.keywords:
                self._refuse("a keyword argument", node)
            arity = FUNCTIONS[f.id][1]
            self._need(len(node.args) == arity,
                       f"{f.id} takes {arity} argument{'s' * (arity > 1)}, got {len(node.args)}: {self._piece(node)}")
            for a in node.args:
                self._check(a, depth + 1)
        else:
            self._refuse(_WHAT.get(type(node), type(node).__name__), node)

    # ---- evaluation -----------------------------------------------------------------------
    def _eval(self, node: ast.AST, env: dict):
        if isinstance(node, ast.Constant):
            return np.float64(node.value)
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else np.float64(CONSTANTS[node.id])
        if isinstance(node, ast.BinOp):
            return BINARY[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if isinstance(node, ast.UnaryOp):
            return UNARY[type(node.op)](self._eval(node.operand, env))
        fn = FUNCTIONS[node.func.id][0]       # ast.Call, checked in __init__
        return fn(*(self._eval(a, env) for a in node.args))

    def __call__(self, *args, **kwargs) -> np.ndarray:
        if len(args) > len(self.variables):
            raise TypeError(f"{self.name}: takes {len(self.variables)} arrays, got {len(args)}")
        given = dict(zip(self.variables, args))
        for k, a in kwargs.items():
            if k not in self.variables or k in given:
                raise TypeError(f"{self.name}: unexpected or repeated variable {k!r}")
            given[k] = a
        missing = [v for v in self.variables if v not in given]
        if missing:
            raise TypeError(f"{self.name}: missing variable(s) {', '.join(missing)}")
        env = {k: np.asarray(a, dtype=np.float64) for k, a in given.items()}
        for k, a in env.items():
            if not np.all(np.isfinite(a)):
                raise UsageError(f"{self.name}: the input {k} is not finite")
        shape = np.broadcast_shapes(*(a.shape for a in env.values()))
        try:
            with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"):
                out = self._eval(self._tree, env)
        except (FloatingPointError, ZeroDivisionError, OverflowError) as e:
            raise UsageError(f"{self.name}: {self.text!r} is not finite on the grid ({e})") from None
        out = np.array(np.broadcast_to(out, shape), dtype=np.float64)
        if not np.all(np.isfinite(out)):     # a guard: the errstate above should have caught it
            raise UsageError(f"{self.name}: {self.text!r} is not finite on the grid")
        return out

    # ---- plumbing -------------------------------------------------------------------------
    def __reduce__(self):
        return (type(self), (self.text, self.variables, self.name))   # re-parsed (and re-checked) on load

    def __repr__(self) -> str:
        return f"Expression({self.text!r}, variables={self.variables!r})"
