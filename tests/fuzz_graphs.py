"""Differential fuzzer: random expression DAGs built with NumPy and with lazyarray.

A *program* is Python source text in which ``m`` stands for ``np`` or ``la``::

    a0 = np.array([200, 7, 0], dtype=np.uint8)      # inputs: plain NumPy
    x0 = m.asarray(a0)
    v1 = x0 + x0
    v2 = v1.sum(axis=0)
    out = v2

The generator writes it one statement at a time and evaluates each statement
with NumPy as it goes (so it only keeps statements NumPy defines: float to
integer casts of NaN, infinities or out-of-range values are never written).
The same text is then run with ``m = la`` and the result compared with
NumPy's: dtype and shape exactly; values exactly where NumPy is exact (integers,
bools, correctly rounded float operations, data movement), else within an
error bound the generator carries along with every value (see ``_Val.err``).
When NumPy raises, lazyarray must raise too (any exception). A mismatch is
localized to the first statement whose value differs and reported with a
reproducer holding just that statement and what it needs.

Error bounds: every value carries ``err``, an array of absolute error bounds
(float64, broadcast to the value's shape; None when the value is exact). An
element with an infinite bound is not checked ("don't care"). Elementwise
operations propagate bounds by evaluating the operation at the corners
``operand +- err`` (and with the signs of zeros flipped, so that the sign of
a zero is never relied upon, except in the deliberate ``signbit`` probes);
integer and bool results of uncertain operands are don't-care. Operations that
are not correctly rounded (``sin``, ``**`` on floats, ...) add ``ULPS`` units
in the last place; sums and products add a bound growing with the square
root of the number of terms, scaled by the sum of absolute values.

Command line::

    python -m tests.fuzz_graphs --seed 1 --n 200 [--verbose] [--no-localize]

Public names: run_fuzz, generate, check_program, Program, Mismatch, run_program.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

# {{{ dtypes, values, scalars

DTYPES = [np.dtype(t) for t in (
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float32", "float64", "complex64", "complex128")]
INTS = [d for d in DTYPES if d.kind in "iu"]
FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
COMPLEXES = [np.dtype(np.complex64), np.dtype(np.complex128)]

#: units in the last place allowed for operations that are not correctly rounded
ULPS = 16

#: ufuncs lazyarray documents as taking complex operands (others raise
#: DTypeError there, a documented limitation; the generator avoids them)
COMPLEX_OK = frozenset([
    "add", "subtract", "multiply", "true_divide", "divide", "negative", "positive",
    "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "equal",
    "not_equal", "absolute", "square", "conjugate", "reciprocal", "sign", "isnan",
    "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor"])


def dtype_text(dt) -> str:
    dt = np.dtype(dt)
    return "np.bool_" if dt.kind == "b" else f"np.{dt.name}"


def _float_text(v: float) -> str:
    v = float(v)
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def value_text(v, dt) -> str:
    """Python source of one element *v* of dtype *dt*."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return repr(bool(v))
    if dt.kind in "iu":
        return str(int(v))
    if dt.kind == "f":
        return _float_text(v)
    v = complex(v)
    return f"complex({_float_text(v.real)}, {_float_text(v.imag)})"


def array_text(arr: np.ndarray) -> str:
    """Source text rebuilding the small array *arr* exactly."""
    dt = dtype_text(arr.dtype)
    if arr.ndim == 0:
        return f"np.array({value_text(arr[()], arr.dtype)}, dtype={dt})"
    if arr.size == 0:
        return f"np.zeros({arr.shape!r}, dtype={dt})"
    flat = ", ".join(value_text(v, arr.dtype) for v in arr.ravel())
    text = f"np.array([{flat}], dtype={dt})"
    if arr.ndim != 1:
        text += f".reshape{arr.shape!r}"
    return text


def special_floats(dt) -> list[float]:
    fi = np.finfo(dt)
    return [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, float(fi.max),
            -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal) * 3,
            float(fi.max) / 3, 2.0 ** (fi.nmant + 1), 1e-3]


def special_ints(dt) -> list[int]:
    ii = np.iinfo(dt)
    vals = [ii.min, ii.max, ii.min + 1, ii.max - 1, 0, 1, 2, ii.max // 2, ii.max // 2 + 1, 7]
    if ii.min < 0:
        vals += [-1, -2, -7]
    return vals


def _draw_values(rng, dt, n: int, kind: str, p_special: float) -> np.ndarray:
    """*n* values of dtype *dt* of the given *kind*, some replaced by special values."""
    if dt.kind == "b":
        return rng.random(n) < rng.choice([0.1, 0.5, 0.9])
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        if kind == "full":
            out = rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)
        elif kind == "byte":
            out = rng.integers(0, 256, n).astype(dt)
        else:
            lo = 0 if dt.kind == "u" else -6
            out = rng.integers(lo, 7, n).astype(dt)
        pool = special_ints(dt)
        mask = rng.random(n) < p_special
        out[mask] = np.array([pool[i] for i in rng.integers(0, len(pool), mask.sum())],
                             dtype=dt)
        return out
    real = np.dtype(np.float32) if dt in (np.float32, np.complex64) else np.dtype(np.float64)

    def one():
        if kind == "int":
            v = rng.integers(-8, 9, n).astype(np.float64)
        elif kind == "unit":
            v = rng.uniform(-1, 1, n)
        elif kind == "pos":
            v = rng.uniform(0, 20, n)
        elif kind == "wide":
            top = 30 if real == np.float32 else 300
            v = np.sign(rng.standard_normal(n)) * 10.0 ** rng.uniform(-top, top, n)
        else:
            v = rng.standard_normal(n) * rng.choice([1.0, 100.0])
        pool = special_floats(real)
        mask = rng.random(n) < p_special
        v[mask] = [pool[i] for i in rng.integers(0, len(pool), mask.sum())]
        return v.astype(real)

    if dt.kind == "c":
        out = np.empty(n, dt)
        out.real = one()
        out.imag = 0 if rng.random() < 0.3 else one()
        return out
    return one()


def big_input_text(rng, name: str, dt, shape, kind: str, p_special: float) -> list[str]:
    """Source lines making the large input *name* from a seeded generator."""
    seed = int(rng.integers(0, 2 ** 31))
    sh = repr(tuple(shape))
    dts = dtype_text(dt)
    lines = [f"_r = np.random.default_rng({seed})"]
    if dt.kind == "b":
        lines.append(f"{name} = _r.random({sh}) < {rng.choice([0.03, 0.5, 0.97])}")
    elif dt.kind in "iu":
        ii = np.iinfo(dt)
        if kind == "full":
            lines.append(f"{name} = _r.integers({ii.min}, {ii.max}, {sh}, dtype={dts}, "
                         "endpoint=True)")
        elif kind == "byte":
            lines.append(f"{name} = _r.integers(0, 256, {sh}).astype({dts})")
        else:
            lines.append(f"{name} = _r.integers({0 if dt.kind == 'u' else -6}, 7, {sh})"
                         f".astype({dts})")
    else:
        real = "np.float32" if dt in (np.float32, np.complex64) else "np.float64"
        top = 30 if real == "np.float32" else 300
        gen = {"int": f"_r.integers(-8, 9, {sh})",
               "unit": f"_r.uniform(-1, 1, {sh})",
               "pos": f"_r.uniform(0, 20, {sh})",
               "wide": f"np.sign(_r.standard_normal({sh})) * 10.0 ** _r.uniform("
                       f"-{top}, {top}, {sh})"}.get(kind, f"_r.standard_normal({sh})")
        if dt.kind == "c":
            lines.append(f"{name} = ({gen} + 1j * {gen}).astype({dts})")
        else:
            lines.append(f"{name} = ({gen}).astype({dts})")
    if p_special > 0 and dt.kind != "b":
        pool = special_ints(dt) if dt.kind in "iu" else special_floats(
            np.float32 if dt in (np.float32, np.complex64) else np.float64)
        size = int(np.prod(shape))
        for _ in range(int(rng.integers(1, 4))):
            v = pool[int(rng.integers(0, len(pool)))]
            start = int(rng.integers(0, max(size, 1)))
            step = int(rng.integers(7, 400))
            vt = value_text(v, dt if dt.kind != "c" else np.float64)
            lines.append(f"{name}.flat[{start}::{step}] = {vt}")
    return lines


#: Python and NumPy scalars used as operands (a moderate pool: each distinct
#: constant makes a new kernel)
PY_INTS = [0, 1, 2, 3, -1, -2, 5, 7, 100, 127, 128, 255, 256, -129, 2 ** 31 - 1, 2 ** 31,
           2 ** 32, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 1000]
PY_FLOATS = ["0.5", "-1.5", "2.0", "0.0", "-0.0", "3.0", "1e10", "1e-10", "3.4e+38",
             "1e300", "np.nan", "np.inf", "-np.inf", "0.1", "-7.25"]
PY_COMPLEX = ["1j", "(1.5-2j)", "(2+0j)"]
NP_SCALARS = ["np.int8(-3)", "np.uint8(200)", "np.int16(300)", "np.uint16(7)",
              "np.int32(-5)", "np.uint32(4000000000)", "np.int64(9)", "np.uint64(2**63)",
              "np.float32(0.1)", "np.float32(-2.5)", "np.float64(2.5)", "np.float32(np.nan)",
              "np.complex64(1+1j)", "np.bool_(True)", "np.float64(-0.0)", "np.int64(-1)"]

# }}}

# {{{ program representation


@dataclass
class _Val:
    """A value of the program: its variable name, NumPy's result, error bound."""
    name: str
    value: object            # NumPy's result (ndarray or NumPy scalar)
    err: np.ndarray | None   # absolute error bound (float64), None: exact
    line: int                # index of the defining statement in Program.lines
    tag: str = "input"
    zs: bool = True          # the signs of its zeros are NumPy's exactly (else flipped in bounds)

    @property
    def arr(self) -> np.ndarray:
        return np.asarray(self.value)

    @property
    def dtype(self) -> np.dtype:
        return self.arr.dtype

    @property
    def shape(self) -> tuple:
        return self.arr.shape

    @property
    def ndim(self) -> int:
        return self.arr.ndim

    @property
    def exact(self) -> bool:
        return self.err is None


@dataclass
class Program:
    seed: int
    index: int
    input_lines: list[str] = field(default_factory=list)   # NumPy arrays a0, a1, ...
    lines: list[str] = field(default_factory=list)         # statements using m
    deps: list[set] = field(default_factory=list)          # per statement: statement indices
    tags: list[str] = field(default_factory=list)
    input_of_line: list[set] = field(default_factory=list)  # per statement: input names
    out_line: int = -1
    expect_error: str | None = None      # NumPy's exception (the last statement raises)
    expect_float16: bool = False         # NumPy's result is float16: lazyarray refuses
    vals: list[_Val] = field(default_factory=list)         # per statement (None: error)
    inputs: dict = field(default_factory=dict)             # name -> NumPy array

    def closure(self, line: int) -> list[int]:
        todo, seen = [line], set()
        while todo:
            i = todo.pop()
            if i not in seen:
                seen.add(i)
                todo.extend(self.deps[i])
        return sorted(seen)

    def source(self, line: int | None = None, with_header: bool = True) -> str:
        """The reproducer: inputs and statements needed by statement *line*."""
        line = self.out_line if line is None else line
        keep = self.closure(line)
        names = set().union(*(self.input_of_line[i] for i in keep))
        out = []
        if with_header:
            out += ["import numpy as np", "import lazyarray as la", "m = la  # or np"]
        for name, text in self.input_lines:
            if name in names:
                out.extend(text)
        out += [self.lines[i] for i in keep]
        out.append(f"out = {self.lines[line].split(' = ', 1)[0]}")
        return "\n".join(out)


@dataclass
class Mismatch:
    seed: int
    index: int
    kind: str          # value | dtype | shape | la_raised | la_no_error | float16 | unsupported
    tag: str           # the operation of the failing statement
    signature: str     # tag, operand dtypes and result dtype, for grouping
    reproducer: str
    expected: str
    got: str
    detail: str = ""

    def __str__(self):
        return (f"--- seed={self.seed} graph={self.index} {self.kind} {self.signature}\n"
                f"{self.reproducer}\n# expected: {self.expected}\n# got:      {self.got}\n"
                + (f"# {self.detail}\n" if self.detail else ""))

# }}}

# {{{ error-bound arithmetic


def _eps(dt) -> float:
    dt = np.dtype(dt)
    if dt.kind == "c":
        dt = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    return float(np.finfo(dt).eps) if dt.kind == "f" else 0.0


def _fmax(dt) -> float:
    dt = np.dtype(dt)
    if dt.kind == "c":
        dt = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    return float(np.finfo(dt).max)


def _tiny(dt) -> float:
    dt = np.dtype(dt)
    if dt.kind == "c":
        dt = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    return float(np.finfo(dt).tiny)


def _absdiff(a, b) -> np.ndarray:
    """|a - b| elementwise in float64, NaN-aware: equal infinities and two
    NaNs (for complex: both with a NaN part) give 0, one NaN gives inf."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(all="ignore"):
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            a, b = a.astype(np.complex128), b.astype(np.complex128)
            na = np.isnan(a.real) | np.isnan(a.imag)
            nb = np.isnan(b.real) | np.isnan(b.imag)
            same = (a.real == b.real) & (a.imag == b.imag)
            d = np.abs(a - b)
        else:
            a, b = a.astype(np.float64), b.astype(np.float64)
            na, nb = np.isnan(a), np.isnan(b)
            same = a == b
            d = np.abs(a - b)
        d = np.where(same | (na & nb), 0.0, d)
        d = np.where(na != nb, np.inf, d)
        return np.where(np.isnan(d), np.inf, d)


def _mag(x) -> np.ndarray:
    """|x| as float64 (NaN counted as 0: it gives no scale)."""
    with np.errstate(all="ignore"):
        m = np.abs(np.asarray(x)).astype(np.float64)
    return np.where(np.isnan(m), 0.0, m)


def _flip_zero_signs(x: np.ndarray) -> np.ndarray | None:
    """*x* with the sign of each (real or imaginary) zero flipped, None when it has none."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        z = x == 0
        if not z.any():
            return None
        return np.where(z, -x, x).astype(x.dtype)
    if x.dtype.kind == "c":
        zr, zi = x.real == 0, x.imag == 0
        if not (zr.any() or zi.any()):
            return None
        out = x.copy()
        out.real = np.where(zr, -x.real, x.real)
        out.imag = np.where(zi, -x.imag, x.imag)
        return out
    return None


def _as_err(v: _Val, shape=None) -> np.ndarray:
    e = np.zeros(v.shape) if v.err is None else v.err
    return e if shape is None else np.broadcast_to(e, shape)


def _clean(err, dt) -> np.ndarray | None:
    """Normalize a bound: NaN is unbounded; integer/bool values are exact or don't-care."""
    err = np.asarray(err, dtype=np.float64)
    err = np.where(np.isnan(err), np.inf, err)
    if np.dtype(dt).kind in "biu":
        err = np.where(err > 0, np.inf, 0.0)
    if not err.any():
        return None
    return err

# }}}

# {{{ the generator


class _Reject(Exception):
    """The candidate statement is not used (NumPy leaves it undefined, or it
    does not fit)."""


#: shapes (a moderate pool: each distinct shape makes new kernels)
SHAPES = {
    "tiny": [(1,), (3,), (5,), (8,), (2, 3), (3, 1), (1, 3), (4, 5), (2, 3, 4), (2, 1, 4),
             (3, 4, 2)],
    "edge": [(), (0,), (0, 3), (3, 0), (1, 1), (2, 0, 3), (1,)],
    "rows": [(70, 130), (65, 70), (64, 200), (300, 3), (2000, 2), (3, 500), (9, 1100),
             (5, 66, 70), (66, 4, 65)],
    "big": [(70000,), (270, 260), (3, 23000), (20000, 4)],
}
SHAPE_WEIGHTS = {"tiny": 0.5, "edge": 0.17, "rows": 0.23, "big": 0.1}

UNARY_EXACT = ["negative", "absolute", "square", "floor", "ceil", "trunc", "rint", "sign",
               "reciprocal", "conjugate", "isnan", "isinf", "isfinite", "signbit",
               "logical_not", "invert", "fabs", "sqrt", "positive"]
UNARY_INEXACT = ["exp", "log", "log2", "log10", "expm1", "log1p", "sin", "cos", "tan",
                 "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                 "arccosh", "arctanh", "cbrt", "exp2", "deg2rad", "rad2deg"]
BINARY_OPS = {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide",
              "//": "floor_divide", "%": "remainder", "**": "power", "&": "bitwise_and",
              "|": "bitwise_or", "^": "bitwise_xor", "<<": "left_shift",
              ">>": "right_shift", "<": "less", "<=": "less_equal", ">": "greater",
              ">=": "greater_equal", "==": "equal", "!=": "not_equal"}
BINARY_FUNCS_EXACT = ["maximum", "minimum", "fmax", "fmin", "copysign", "fmod",
                      "logical_and", "logical_or", "logical_xor", "heaviside", "add",
                      "subtract", "multiply", "floor_divide", "remainder", "bitwise_and"]
BINARY_FUNCS_INEXACT = ["arctan2", "hypot", "logaddexp", "logaddexp2", "power",
                        "float_power"]
#: ufuncs whose float results are correctly rounded (so NumPy's are the bits)
EXACT_UFUNCS = frozenset(UNARY_EXACT + BINARY_FUNCS_EXACT + [
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "less",
    "less_equal", "greater", "greater_equal", "equal", "not_equal", "where", "clip",
    "astype", "nan_to_num"])


class _Builder:
    def __init__(self, seed: int, index: int, max_ops: int | None = None):
        self.rng = np.random.default_rng([seed, index])
        self.prog = Program(seed, index)
        self.ns = {"np": np, "m": np}
        self.nodes: list[_Val] = []
        self.n_inputs = 0
        self.max_ops = max_ops

    # {{{ helpers

    def choice(self, seq):
        return seq[int(self.rng.integers(0, len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def new_input(self, dt, shape, kind: str | None = None) -> _Val:
        rng = self.rng
        dt = np.dtype(dt).newbyteorder("=")
        name = f"a{self.n_inputs}"
        self.n_inputs += 1
        if kind is None:
            kind = (self.choice(["small", "small", "full", "extreme", "byte"]) if dt.kind in "iu"
                    else self.choice(["normal", "normal", "int", "int", "unit", "pos", "wide"]))
        p_special = 0.0 if self.chance(0.35) else float(self.choice([0.05, 0.15, 0.4]))
        if kind == "extreme":
            kind, p_special = "small", 0.7
        size = int(np.prod(shape))
        if size <= 64:
            vals = _draw_values(rng, dt, size, kind, p_special)
            text = [f"{name} = {array_text(np.asarray(vals, dtype=dt).reshape(shape))}"]
        else:
            text = big_input_text(rng, name, dt, shape, kind, p_special)
        r = self.rng.random()
        if r < 0.04 and dt.itemsize > 1:
            text.append(f"{name} = {name}.astype({name}.dtype.newbyteorder('>'))  # big-endian")
        elif r < 0.08 and len(shape) >= 2:
            text.append(f"{name} = np.asfortranarray({name})")
        elif r < 0.12 and len(shape) >= 1:
            # the same values, negative strides
            flip = "[::-1]" if len(shape) == 1 else "[::-1, ::-1]"
            text.append(f"{name} = {name}{flip}.copy(){flip}")
        env = {"np": np}
        exec("\n".join(text), env)
        arr = env[name]
        assert arr.dtype.newbyteorder("=") == dt and arr.shape == tuple(shape), \
            (text, arr.dtype, arr.shape)
        self.prog.input_lines.append((name, text))
        self.prog.inputs[name] = arr
        xname = f"x{len(self.prog.lines)}"
        stmt = f"{xname} = m.asarray({name})"
        return self._add(stmt, [], arr, None, "input", inputs={name})

    def _add(self, stmt, operands, value, err, tag, inputs=(), zs=True) -> _Val:
        line = len(self.prog.lines)
        self.prog.lines.append(stmt)
        self.prog.deps.append({o.line for o in operands})
        self.prog.tags.append(tag)
        self.prog.input_of_line.append(set(inputs))
        name = stmt.split(" = ", 1)[0]
        v = _Val(name, value, err, line, tag, zs)
        self.ns[name] = value
        self.prog.vals.append(v)
        self.nodes.append(v)
        return v

    def pick(self, pred=None, recent: float = 0.6) -> _Val:
        cands = [v for v in self.nodes if pred is None or pred(v)]
        if not cands:
            raise _Reject("no operand")
        if self.chance(recent):
            return cands[-1]
        return self.choice(cands)

    def scalar_text(self, like: _Val | None = None) -> str:
        r = self.rng.random()
        kind = like.dtype.kind if like is not None else "f"
        if r < 0.2:
            return self.choice(NP_SCALARS)
        if r < 0.25:
            return self.choice(PY_COMPLEX)
        if r < 0.3:
            return self.choice(["True", "False"])
        if kind in "iub" and r < 0.8 or r < 0.4:
            return str(self.choice(PY_INTS))
        return self.choice(PY_FLOATS)

    def operand_text(self, v) -> str:
        return v.name if isinstance(v, _Val) else v

    # }}}

    # {{{ evaluating a candidate statement

    def emit(self, expr: str, operands: list[_Val], tag: str, rule: tuple,
             allow_error: bool, post: str | None = None) -> _Val | None:
        """Evaluate ``expr`` with NumPy; on success add it as a statement with
        its error bound. Raise _Reject when it is unusable."""
        name = f"v{len(self.prog.lines)}"
        seen = set()
        operands = [o for o in operands if not (o.name in seen or seen.add(o.name))]
        stmt = f"{name} = {expr}" + (f"\n{post.format(name=name)}" if post else "")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if post:
                    env = dict(self.ns)
                    exec(stmt, env)
                    value = env[name]
                else:
                    value = eval(expr, self.ns)
            except Exception as e:    # NumPy refuses: an expected error
                if not allow_error:
                    raise _Reject(f"numpy raised {e}") from None
                self._add(stmt, operands, None, None, tag)
                self.prog.expect_error = f"{type(e).__name__}: {e}"
                self.prog.vals[-1] = None
                return None
        for w in caught:
            if "invalid value encountered in cast" in str(w.message):
                raise _Reject("undefined cast")
        if post and any("cast" in str(w.message) or "overflow" in str(w.message) for w in caught):
            raise _Reject("assignment NumPy leaves to the platform")
        if tag.startswith("error:") and not (
                isinstance(value, np.ndarray | np.generic)
                and np.asarray(value).dtype == np.float16):
            raise _Reject("NumPy accepts it")
        if isinstance(value, (tuple, list)) or not isinstance(value, (np.ndarray, np.generic)):
            raise _Reject(f"result type {type(value)}")
        arr = np.asarray(value)
        if arr.dtype == np.float16:
            if not allow_error:
                raise _Reject("float16")
            self._add(stmt, operands, value, None, tag)
            self.prog.expect_float16 = True
            return None
        if arr.dtype.newbyteorder("=") not in DTYPES:
            raise _Reject(f"dtype {arr.dtype}")
        if arr.size > 3_000_000:
            raise _Reject("too big")
        involved = [o for o in operands] + [arr]
        if any(np.asarray(o.value if isinstance(o, _Val) else o).dtype.kind == "c"
               for o in involved) and rule[0] == "elem" and \
                rule[2] not in COMPLEX_OK | {"where", "astype"}:
            raise _Reject("complex op lazyarray documents as unsupported")
        err = self.bound(expr, operands, arr, rule)
        zs = all(o.zs for o in operands)
        if rule[0] == "elem":
            zs = zs and rule[2] not in ("maximum", "minimum", "fmax", "fmin", "clip", "sign")
        elif rule[0] != "view":
            zs = False
        return self._add(stmt, operands, value, err, tag, zs=zs)

    def _eval_with(self, expr, subst: dict):
        ns = dict(self.ns)
        ns.update(subst)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(expr, ns)

    def bound(self, expr, operands, out: np.ndarray, rule) -> np.ndarray | None:
        kind = rule[0]
        dt = out.dtype
        if kind == "elem":
            return self._bound_elem(expr, operands, out, rule)
        if kind == "setitem":
            if all(o.exact for o in operands):
                return None
            raise _Reject("setitem of inexact values")
        if all(o.exact for o in operands) and kind not in ("sum", "scan_sum", "prod",
                                                           "scan_prod", "bilinear", "mean",
                                                           "var", "pattern"):
            return None
        with np.errstate(all="ignore"):
            if kind == "view":
                subst = {o.name: _as_err(o) for o in operands if o.name in rule[1]}
                e = np.asarray(self._eval_with(expr, subst), dtype=np.float64)
                return _clean(e, dt)
            if kind in ("max", "arg", "any"):
                (o,) = operands
                e = _as_err(o)
                if kind == "any" and o.dtype.kind in "fc":
                    e = np.where(e >= _mag(o.arr), np.inf, 0.0)
                if kind == "arg":
                    e = np.where(e > 0, np.inf, 0.0)
                axis, keepdims = rule[1], rule[2]
                if e.size == 0:
                    return None
                r = np.max(e, axis=axis, keepdims=keepdims)
                return _clean(r, dt)
            if kind in ("sum", "mean", "scan_sum"):
                return self._bound_sum(operands[0], out, rule)
            if kind in ("prod", "scan_prod"):
                return self._bound_prod(operands[0], out, rule)
            if kind == "bilinear":
                return self._bound_bilinear(expr, operands, out)
            if kind == "var":
                return self._bound_var(operands[0], out, rule)
            if kind == "pattern":
                return self._bound_pattern(expr, operands[0], out)
        raise AssertionError(kind)

    def _bound_elem(self, expr, operands, out, rule):
        _, ulps, ufunc = rule[:3]
        shape = out.shape
        dt = out.dtype
        err = np.zeros(shape)
        with np.errstate(all="ignore"):
            for o in operands:
                if o.err is not None:
                    # don't-care operand elements (and uncertain integers) make
                    # don't-care results, whatever the corners give
                    lost = np.isinf(o.err) | ((o.err > 0) if o.dtype.kind in "biu" else False)
                    # corners say nothing about periodic (or sawtooth) functions
                    # of operands known only to more than a fraction of a period
                    if ufunc in ("sin", "cos", "tan") or (
                            o.dtype.kind == "c" and ufunc in ("exp", "sinh", "cosh", "tanh")):
                        lost = lost | (o.err > 0.1)
                    if ufunc in ("remainder", "fmod"):
                        lost = lost | (o.err > 0)
                    err = np.maximum(err, np.broadcast_to(np.where(lost, np.inf, 0.0), shape))
            dirs = []
            for o in operands:
                if o.dtype.kind not in "fc":
                    continue
                ds = []
                if o.err is not None:
                    ds += [1, -1] + ([1j, -1j] if o.dtype.kind == "c" else [])
                if (rule[3] if len(rule) > 3 else True) and not o.zs:
                    # NumPy's sign of this zero is not certain: not relied on
                    if _flip_zero_signs(o.arr) is not None:
                        ds.append("flip")
                if ds:
                    dirs.append((o, [0] + ds))
            if dirs:
                for combo in itertools.product(*(d for _, d in dirs)):
                    if all(c == 0 for c in combo):
                        continue
                    subst = {}
                    for (o, _), c in zip(dirs, combo):
                        if c == 0:
                            continue
                        if c == "flip":
                            subst[o.name] = _flip_zero_signs(o.arr)
                        else:
                            p = np.asarray(o.arr + c * np.broadcast_to(o.err, o.shape))
                            subst[o.name] = p.astype(o.dtype)
                    r = self._eval_with(expr, subst)
                    r = np.asarray(r)
                    if r.shape != shape:
                        err = np.full(shape, np.inf)
                        break
                    err = np.maximum(err, 2 * _absdiff(r, out))
            if dt.kind in "fc":
                inexact = ulps > 0
                if inexact or err.any():
                    u = max(ulps, 1)
                    scale = _mag(out)
                    scale = np.where(np.isfinite(scale), scale, 0.0)
                    if len(rule) > 4 and rule[4] is not None:
                        scale = np.maximum(scale, np.broadcast_to(rule[4], shape))
                    slack = u * _eps(dt) * scale + u * _tiny(dt)
                    err = err + np.where(err > 0, slack, slack if inexact else 0.0)
                if inexact:
                    # complex operands with an infinite or NaN part: C99's special
                    # cases are not all followed alike (NumPy's own are not)
                    for o in operands:
                        if o.dtype.kind == "c":
                            err = np.where(np.broadcast_to(~np.isfinite(o.arr), shape),
                                           np.inf, err)
                    # a not correctly rounded result that overflows (or gives NaN)
                    # from finite operands may differ: don't care
                    fin = np.ones(shape, bool)
                    for o in operands:
                        if o.dtype.kind in "fc":
                            fin &= np.broadcast_to(np.isfinite(o.arr), shape)
                    bad = fin & ~np.isfinite(out)
                    err = np.where(bad, np.inf, err)
                    if dt.kind in "fc":
                        # near the largest finite value, infinity is within the bound
                        near = _mag(out) > _fmax(dt) / (1 + 4 * u * _eps(dt))
                        err = np.where(fin & near, np.inf, err)
            if len(rule) > 5 and rule[5] is not None:
                err = np.where(np.broadcast_to(rule[5], shape), np.inf, err)
        return _clean(err, dt)

    def _bound_sum(self, o: _Val, out, rule):
        kind, axis, keepdims = rule[0], rule[1], rule[2]
        x = o.arr
        dt = out.dtype
        if dt.kind not in "fc" and o.exact:
            return None
        e = _as_err(o)
        ax = axis
        if kind == "scan_sum":
            red = (lambda a: np.cumsum(a.ravel())) if axis is None else \
                (lambda a: np.cumsum(a, axis=axis))
        else:
            red = lambda a: np.sum(a, axis=ax, keepdims=keepdims)  # noqa: E731
        n_terms = red(np.ones(x.shape))
        err = red(e)
        if dt.kind in "fc":
            mag = _mag(x) if x.dtype.kind in "fc" else np.abs(x.astype(np.float64))
            absum = red(mag)
            # conversions of the terms into the result type round once each
            err = err + _eps(dt) * (8 + 2 * np.sqrt(n_terms)) * absum + _tiny(dt) * n_terms
            fx = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
            parts = [fx.real, fx.imag] if x.dtype.kind == "c" else [fx]
            for p in parts:
                pos = red(np.where(p > 0, p, 0.0))
                neg = red(np.where(p < 0, -p, 0.0))
                over = (pos > _fmax(dt) / 2) | (neg > _fmax(dt) / 2)
                err = np.where(over, np.inf, err)
            # any infinity or NaN term: the result is NaN/inf, exactly, unless both signs
            if kind == "mean":
                err = err / np.maximum(n_terms, 1)
                err = err + 2 * _eps(dt) * _mag(out)
        return _clean(err, dt)

    def _bound_prod(self, o: _Val, out, rule):
        kind, axis, keepdims = rule[0], rule[1], rule[2]
        x = o.arr
        dt = out.dtype
        if dt.kind not in "fc" and o.exact:
            return None
        if kind == "scan_prod":
            red = (lambda a: np.cumprod(a.ravel())) if axis is None else \
                (lambda a: np.cumprod(a, axis=axis))
            add = (lambda a: np.cumsum(a.ravel())) if axis is None else \
                (lambda a: np.cumsum(a, axis=axis))
        else:
            red = lambda a: np.prod(a, axis=axis, keepdims=keepdims)  # noqa: E731
            add = lambda a: np.sum(a, axis=axis, keepdims=keepdims)   # noqa: E731
        e = _as_err(o)
        if dt.kind not in "fc":
            return _clean(add(e), dt)
        mag = _mag(x)
        hi = red(mag + e)
        n_terms = add(np.ones(x.shape))
        err = hi - red(mag) + _eps(dt) * (8 + 2 * n_terms) * hi
        # a partial product that may overflow or fall below the normal range
        # in some order of multiplication: don't care
        with np.errstate(divide="ignore"):
            lg = np.log2(np.where(mag > 0, mag, 1.0))
        lg = np.where(np.isfinite(lg), lg, 0.0)
        up = add(np.where(lg > 0, lg, 0.0))
        down = add(np.where(lg < 0, lg, 0.0))
        risky = (up > math.log2(_fmax(dt)) - 1) | (down < math.log2(_tiny(dt)) + 1)
        err = np.where(risky, np.inf, err)
        return _clean(err, dt)

    def _bound_bilinear(self, expr, operands, out):
        dt = out.dtype
        if len(operands) != 2:
            raise _Reject("bilinear arity")
        a, b = operands
        if a.name == b.name:
            raise _Reject("bilinear on one value twice")
        if dt.kind not in "fc" and a.exact and b.exact:
            return None
        big = 1e300
        ea = np.where(np.isinf(_as_err(a)), big, _as_err(a))
        eb = np.where(np.isinf(_as_err(b)), big, _as_err(b))
        ma, mb = _mag(a.arr), _mag(b.arr)
        # inf/nan operands: keep them out of the magnitude products
        ma_f = np.where(np.isfinite(ma), ma, 0.0)
        mb_f = np.where(np.isfinite(mb), mb, 0.0)

        def B(x, y):
            return np.asarray(self._eval_with(expr, {a.name: x, b.name: y}), dtype=np.float64)
        err = B(ma_f, eb) + B(ea, mb_f) + B(ea, eb)
        if dt.kind == "c":
            # products of complex values with infinite or NaN parts: don't care
            nfa = (~np.isfinite(a.arr)).astype(np.float64)
            nfb = (~np.isfinite(b.arr)).astype(np.float64)
            err = np.where(B(nfa, np.ones(b.shape)) + B(np.ones(a.shape), nfb) > 0, np.inf, err)
        if dt.kind in "fc":
            terms = B(np.ones(a.shape), np.ones(b.shape))
            absprod = B(ma_f, mb_f)
            err = err + _eps(dt) * (8 + 2 * np.sqrt(terms)) * absprod + _tiny(dt) * terms
            err = np.where(absprod > _fmax(dt) / 4, np.inf, err)
        err = np.where(err > 1e250, np.inf, err)
        return _clean(err, dt)

    def _bound_pattern(self, expr, o: _Val, out):
        """A composite of one reduction and elementwise work on an exact input:
        bound by evaluating it with the reduction perturbed (every reduction
        in the text gets a relative error of a few hundred ulps)."""
        dt = out.dtype
        if dt.kind not in "fc":
            return None
        x = o.arr
        n = max(x.size, 1)
        rel = _eps(dt) * (16 + 4 * math.sqrt(n))
        worst = np.zeros(out.shape)
        outs = []
        # rows of a sum whose finite terms of one sign could overflow: the
        # result depends on the order of the additions (inf, -inf or NaN)
        overflowing: list[np.ndarray] = []
        for f in (1 - rel, 1 + rel):
            class _Scaled(np.ndarray):
                pass
            def scale_red(name, f=f):
                def g(*a, **k):
                    if name in ("sum", "mean") and a[0].dtype.kind == "f":
                        p = np.asarray(a[0], dtype=np.float64)
                        p = np.where(np.isfinite(p), p, 0.0)
                        for part in (np.maximum(p, 0.0), np.maximum(-p, 0.0)):
                            overflowing.append(np.sum(part, *a[1:], **k) > _fmax(a[0].dtype) / 2)
                    r = getattr(np.ndarray, name)(*a, **k)
                    if np.asarray(r).dtype.kind in "fc":
                        with np.errstate(all="ignore"):
                            r = np.asarray(r * np.asarray(f, dtype=r.dtype)).astype(r.dtype)
                    return np.asarray(r).view(_Scaled)
                return g
            for name in ("sum", "mean", "max", "min"):
                setattr(_Scaled, name, scale_red(name))
            outs.append(np.asarray(self._eval_with(expr, {o.name: x.view(_Scaled)})))
        with np.errstate(all="ignore"):
            for r in outs:
                worst = np.maximum(worst, 2 * _absdiff(np.asarray(r), out))
            for mask in overflowing:
                try:
                    worst = np.where(np.broadcast_to(mask, out.shape), np.inf, worst)
                except ValueError:
                    worst = np.where(mask.any(), np.inf, worst)
            scale = _mag(out)
            scale = np.where(np.isfinite(scale), scale, 0.0)
            worst = worst + ULPS * _eps(dt) * scale + ULPS * _tiny(dt)
        return _clean(worst, dt)

    def _bound_var(self, o: _Val, out, rule):
        _, axis, keepdims, is_std = rule
        x = o.arr
        dt = out.dtype
        e = _as_err(o)
        mag = _mag(x)
        with np.errstate(all="ignore"):
            n = np.sum(np.ones(x.shape), axis=axis, keepdims=keepdims)
            m2 = np.sum(mag * mag, axis=axis, keepdims=keepdims) / np.maximum(n, 1)
            me = np.sum(mag * e, axis=axis, keepdims=keepdims) / np.maximum(n, 1)
            ee = np.sum(e, axis=axis, keepdims=keepdims) / np.maximum(n, 1)
            err = 8 * me + 4 * ee * ee + _eps(dt) * (16 + 4 * np.sqrt(n)) * m2 + _tiny(dt)
            if is_std:
                var = _mag(out) ** 2
                err = (np.sqrt(var + err) - np.sqrt(np.maximum(var - err, 0))
                       + 4 * _eps(dt) * _mag(out))
            err = np.where(m2 > _fmax(dt) / 4, np.inf, err)
        return _clean(err, dt)

    # }}}

    # {{{ operation generators: each returns (expr, operands, tag, rule) or raises _Reject

    def op_unary(self):
        x = self.pick()
        if x.exact and self.chance(0.5) or not x.exact and self.chance(0.3):
            f = self.choice(UNARY_EXACT)
            ulps = 0
            if f == "sqrt" and x.dtype.kind == "c":
                ulps = ULPS
        else:
            f = self.choice(UNARY_INEXACT)
            ulps = 4 if f in ("deg2rad", "rad2deg") else ULPS
        if f == "reciprocal" and x.dtype.kind == "c":
            ulps = ULPS
        if f in ("absolute", "sign", "square") and x.dtype.kind == "c":
            ulps = ULPS     # (complex square is a complex product: a*a - b*b, 2*a*b)
        spell = self.rng.random()
        if f == "negative" and spell < 0.5:
            expr = f"-{x.name}"
        elif f == "absolute" and spell < 0.5:
            expr = f"abs({x.name})"
        elif f == "invert" and spell < 0.5:
            expr = f"~{x.name}"
        else:
            expr = f"m.{f}({x.name})"
        mask = None
        if f == "signbit" and x.dtype.kind == "f":
            mask = np.isnan(x.arr)     # the sign of a NaN is the platform's
        return expr, [x], f, ("elem", ulps, f, True, None, mask)

    def _binary_operands(self):
        x = self.pick()
        r = self.rng.random()
        if r < 0.35:
            y = self.scalar_text(x)
        elif r < 0.5:
            y = x
        else:
            y = self.pick(recent=0.2)
        if self.chance(0.3):
            x, y = y, x
        if not isinstance(x, _Val) and not isinstance(y, _Val):
            raise _Reject("two scalars")
        return x, y

    def op_binary(self):
        x, y = self._binary_operands()
        ops = [o for o in (x, y) if isinstance(o, _Val)]
        xt, yt = self.operand_text(x), self.operand_text(y)
        if self.chance(0.6):
            sym = self.choice(list(BINARY_OPS))
            f = BINARY_OPS[sym]
            expr = f"{xt} {sym} {yt}"
        else:
            f = self.choice(BINARY_FUNCS_EXACT + BINARY_FUNCS_INEXACT)
            expr = f"m.{f}({xt}, {yt})"
        ulps = 0 if f in EXACT_UFUNCS else ULPS
        dts = {o.dtype.kind for o in ops}
        scale = None
        if "c" in dts or any(isinstance(o, str) and "j" in o for o in (x, y)):
            if f == "power":
                raise _Reject("complex power")     # documented unsupported
            if f in ("multiply", "true_divide"):
                ulps = ULPS
                ma = _mag(np.asarray(self._eval_with(xt, {})))
                mb = _mag(np.asarray(self._eval_with(yt, {})))
                try:
                    with np.errstate(all="ignore"):
                        scale = ma * mb if f == "multiply" else ma / np.where(mb > 0, mb, np.inf)
                except ValueError:
                    raise _Reject("shapes") from None
        if f == "power":
            ulps = ULPS
        if f in ("floor_divide", "remainder") and dts & {"f"}:
            # NumPy's float // and % (fmod, then a correction) are deterministic:
            # compared exactly
            ulps = 0
        mask = None
        if f == "copysign":
            with np.errstate(all="ignore"):
                yv = np.asarray(self._eval_with(yt, {}))
            if yv.dtype.kind in "fc":
                mask = np.isnan(yv)    # the sign of a NaN is the platform's
        return expr, ops, f, ("elem", ulps, f, True, scale, mask)

    def op_compare_chain(self):
        """A comparison feeding a where (a common pattern: masks)."""
        x = self.pick(lambda v: v.dtype.kind != "c")
        y = self.scalar_text(x) if self.chance(0.6) else self.pick(lambda v: v.dtype.kind != "c")
        sym = self.choice(["<", "<=", ">", ">=", "==", "!="])
        other = self.scalar_text(x) if self.chance(0.5) else self.pick(recent=0.3).name
        expr = f"m.where({x.name} {sym} {self.operand_text(y)}, {x.name}, {other})"
        ops = [x] + ([y] if isinstance(y, _Val) else []) + \
            [v for v in self.nodes if v.name == other]
        return expr, ops, "where+compare", ("elem", 0, "where")

    def op_where(self):
        c = self.pick(recent=0.3)
        x = self.pick() if self.chance(0.6) else self.scalar_text()
        y = self.pick(recent=0.2) if self.chance(0.5) else self.scalar_text()
        ops = [o for o in (c, x, y) if isinstance(o, _Val)]
        expr = f"m.where({c.name}, {self.operand_text(x)}, {self.operand_text(y)})"
        if c.dtype.kind == "c":
            raise _Reject("complex condition")
        return expr, ops, "where", ("elem", 0, "where")

    def op_clip(self):
        x = self.pick(lambda v: v.dtype.kind != "c")
        lo = self.scalar_text(x) if self.chance(0.7) else "None"
        hi = self.scalar_text(x) if self.chance(0.7) else "None"
        if lo == "None" and hi == "None":
            hi = "0"
        if "j" in lo + hi:
            raise _Reject("complex bound")
        if lo != "None" and hi != "None":
            # (as Python numbers: a uint64 bound against an int beyond int64
            # raises OverflowError as NumPy scalars)
            lv, hv = (v.item() if isinstance(v, np.generic) else v
                      for v in (self._eval_with(lo, {}), self._eval_with(hi, {})))
            if not lv <= hv:
                # NumPy is not consistent there (np.clip(int8, np.uint8(200), 127)
                # gives 200 where its documentation says 127)
                raise _Reject("clip bounds crossed")
        expr = f"m.clip({x.name}, {lo}, {hi})" if self.chance(0.5) else f"{x.name}.clip({lo}, {hi})"
        return expr, [x], "clip", ("elem", 0, "clip")

    def op_astype(self):
        x = self.pick()
        dt = self.choice(DTYPES)
        if x.dtype.kind == "c" and dt.kind != "c":
            pass
        if x.dtype.kind in "fc" and dt.kind in "iu":
            # C leaves out-of-range conversions undefined; NumPy's result is the
            # platform's: only in-range values
            xr = x.arr.real.astype(np.float64)
            ii = np.iinfo(dt)
            ok = np.isfinite(xr) & (xr > float(ii.min) - 1) & (xr < float(ii.max) + 1)
            if dt.itemsize == 8:
                ok &= (xr >= -2.0 ** 63 if dt.kind == "i" else xr > -1) & \
                    (xr < 2.0 ** 63 if dt.kind == "i" else xr < 2.0 ** 64)
            if not ok.all():
                raise _Reject("out-of-range float to int")
        expr = f"{x.name}.astype({dtype_text(dt)})"
        return expr, [x], "astype", ("elem", 0, "astype")

    def op_misc(self):
        x = self.pick()
        r = self.rng.random()
        if r < 0.3 and x.dtype.kind == "f":
            args = self.choice(["", ", nan=-1.0", ", posinf=7.0, neginf=-7.0",
                                ", nan=0.5, posinf=1e6"])
            return f"m.nan_to_num({x.name}{args})", [x], "nan_to_num", ("elem", 0, "nan_to_num")
        if r < 0.5 and x.dtype.kind in "fc":
            d = self.choice([0, 0, 1, 2, -1])
            return (f"m.round({x.name}, {d})" if d else f"m.round({x.name})", [x],
                    "round", ("elem", 0 if d == 0 else 4, "rint"))
        if r < 0.65:
            y = self.pick(recent=0.3)
            args = self.choice(["", ", equal_nan=True", ", rtol=0.0, atol=0.5"])
            if "c" in (x.dtype.kind, y.dtype.kind):
                raise _Reject("complex isclose")
            return (f"m.isclose({x.name}, {y.name}{args})", [x, y], "isclose",
                    ("elem", 0, "isclose"))
        if r < 0.8 and x.ndim >= 1:
            ax = int(self.rng.integers(-x.ndim, x.ndim))
            if not x.exact:
                raise _Reject("diff of inexact")
            return f"m.diff({x.name}, axis={ax})", [x], "diff", ("view", ())
        if x.ndim >= 1:
            axis = self._axis(x, allow_tuple=True, allow_none=True)
            kd = self.chance(0.3)
            return (f"m.count_nonzero({x.name}, axis={axis!r}"
                    + (", keepdims=True)" if kd else ")"),
                    [x], "count_nonzero", ("any", axis, kd))
        raise _Reject("misc")

    def _axis(self, x: _Val, allow_tuple=True, allow_none=True):
        nd = x.ndim
        r = self.rng.random()
        if nd == 0 or (allow_none and r < 0.25):
            return None
        if allow_tuple and nd >= 2 and r < 0.5:
            k = int(self.rng.integers(1, nd + 1))
            axes = sorted(self.rng.choice(nd, k, replace=False).tolist())
            return tuple(int(a) - nd if self.chance(0.3) else int(a) for a in axes)
        a = int(self.rng.integers(0, nd))
        return a - nd if self.chance(0.3) else a

    def op_reduce(self):
        x = self.pick(lambda v: v.ndim >= 1, recent=0.7) if self.chance(0.9) else self.pick()
        f = self.choice(["sum", "sum", "prod", "max", "min", "any", "all", "argmax", "argmin",
                         "mean", "sum", "max", "var", "std"])
        is_arg = f in ("argmax", "argmin")
        axis = self._axis(x, allow_tuple=not is_arg)
        if self.chance(0.05) and not is_arg:
            axis = ()
        kd = self.chance(0.3)
        args = []
        if axis is not None or self.chance(0.5):
            args.append(f"axis={axis!r}")
        if kd:
            args.append("keepdims=True")
        if f == "sum" and self.chance(0.1):
            args.append(f"dtype={dtype_text(self.choice(DTYPES))}")
        argtext = ", ".join(args)
        if self.chance(0.3) and f not in ("var", "std"):
            expr = f"m.{f}({x.name}{', ' if argtext else ''}{argtext})"
        else:
            expr = f"{x.name}.{f}({argtext})"
        norm_axis = axis
        if isinstance(axis, tuple) and axis == ():
            norm_axis = ()
        rule = {"sum": ("sum", norm_axis, kd), "mean": ("mean", norm_axis, kd),
                "prod": ("prod", norm_axis, kd), "max": ("max", norm_axis, kd),
                "min": ("max", norm_axis, kd), "any": ("any", norm_axis, kd),
                "all": ("any", norm_axis, kd), "argmax": ("arg", norm_axis, kd),
                "argmin": ("arg", norm_axis, kd), "var": ("var", norm_axis, kd, False),
                "std": ("var", norm_axis, kd, True)}[f]
        if f in ("var", "std", "mean") and x.dtype.kind == "c":
            raise _Reject("complex var")
        if f in ("max", "min", "argmax", "argmin") and x.dtype.kind == "c":
            raise _Reject("complex ordering")
        if any(a.startswith("dtype=") for a in args):
            sumdt = np.dtype(eval(args[-1].split("=", 1)[1], {"np": np}))
            if x.dtype.kind in "fc" and sumdt.kind in "iub":
                raise _Reject("float sum into ints")
            if x.dtype.kind == "c" and sumdt.kind != "c":
                raise _Reject("complex sum into reals")
            if sumdt.kind in "iub" and not x.exact:
                raise _Reject("inexact sum into ints")
        return expr, [x], f"reduce:{f}", rule

    def op_rows_reduce(self):
        # a small value broadcast down many rows and reduced over them: the
        # column layouts' loops over rows whose elements do not vary along them
        x = self.pick(lambda v: v.ndim == 1 and 0 < math.prod(v.shape) <= 2000)
        f = self.choice(["sum", "prod", "max", "min", "any", "mean"])
        if x.dtype.kind == "c" and f in ("max", "min", "mean"):
            raise _Reject("complex ordering")
        rows = int(self.choice([70, 300, 300]))
        b = self.emit(f"m.broadcast_to({x.name}, {(rows, *x.shape)!r})", [x],
                      "view:broadcast_to", ("view", (x.name,)), False)
        if b is None:
            raise _Reject("no broadcast")
        rule = {"sum": ("sum", 0, False), "mean": ("mean", 0, False),
                "prod": ("prod", 0, False), "max": ("max", 0, False),
                "min": ("max", 0, False), "any": ("any", 0, False)}[f]
        return f"{b.name}.{f}(axis=0)", [b], f"reduce:{f}", rule

    def op_scan(self):
        x = self.pick(lambda v: v.ndim >= 1, recent=0.7)
        f = self.choice(["cumsum", "cumsum", "cumprod"])
        axis = None if self.chance(0.3) else int(self.rng.integers(-x.ndim, x.ndim))
        if self.chance(0.4):
            expr = f"m.{f}({x.name}" + (f", axis={axis})" if axis is not None else ")")
        else:
            expr = f"{x.name}.{f}(" + (f"axis={axis})" if axis is not None else ")")
        rule = ("scan_sum" if f == "cumsum" else "scan_prod", axis, False)
        return expr, [x], f"scan:{f}", rule

    def _slice_text(self, n: int) -> str:
        r = self.rng.random()
        if r < 0.15:
            return ":"
        if r < 0.25:
            return "::-1"
        step = self.choice([1, 1, 2, 3, -1, -2, None])
        def bound():
            if self.chance(0.3):
                return ""
            return str(int(self.rng.integers(-n - 2, n + 3)))
        text = f"{bound()}:{bound()}"
        if step is not None:
            text += f":{step}"
        return text

    def op_view(self):
        x = self.pick(recent=0.7)
        nd = x.ndim
        r = self.rng.random()
        sub = (x.name,)
        if r < 0.3 and nd >= 1:
            parts = []
            for n in x.shape:
                rr = self.rng.random()
                if rr < 0.1 and n > 0:
                    parts.append(str(int(self.rng.integers(-n, n))))
                elif rr < 0.15:
                    parts.append("None")
                else:
                    parts.append(self._slice_text(n))
            if self.chance(0.3):
                k = int(self.rng.integers(0, len(parts) + 1))
                parts = parts[:k] + (["..."] if self.chance(0.5) else [])
            key = ", ".join(parts) if parts else "..."
            return f"{x.name}[{key}]", [x], "view:slice", ("view", sub)
        if r < 0.4 and nd >= 1:
            axis = self.choice([None, 0, -1, (0,) if nd else None])
            if nd >= 2 and self.chance(0.3):
                axis = (0, nd - 1)
            return f"m.flip({x.name}, axis={axis!r})", [x], "view:flip", ("view", sub)
        if r < 0.5 and nd >= 1:
            shift = self.choice([1, -1, 2, 7, -13, 100])
            axis = self.choice([None, 0, -1])
            if nd >= 2 and self.chance(0.3):
                axis = (0, 1)
                shift = (shift, 1)
            return (f"m.roll({x.name}, {shift!r}, axis={axis!r})", [x], "view:roll",
                    ("view", sub))
        if r < 0.6:
            return self._reshape(x)
        if r < 0.68 and nd >= 2:
            perm = self.rng.permutation(nd).tolist()
            if self.chance(0.4):
                return f"{x.name}.T", [x], "view:T", ("view", sub)
            return f"m.transpose({x.name}, {tuple(perm)!r})", [x], "view:transpose", ("view", sub)
        if r < 0.78 and nd >= 1:
            # concatenate / stack with a partner of a compatible shape
            axis = int(self.rng.integers(-nd, nd))
            ax = axis % nd
            same = [v for v in self.nodes if v.ndim == nd and all(
                (i == ax) or v.shape[i] == x.shape[i] for i in range(nd))]
            stack = self.chance(0.35)
            if stack:
                same = [v for v in same if v.shape == x.shape]
            y = self.choice(same) if same and self.chance(0.7) else None
            if y is None:
                shape = list(x.shape)
                if not stack:
                    shape[ax] = self.choice([0, 1, 2, 5])
                dt = x.dtype if self.chance(0.7) else self.choice(DTYPES)
                y = self.new_input(dt, tuple(shape))
            items = [x, y] if self.chance(0.5) else [y, x]
            if self.chance(0.2):
                items.append(x)
            names = ", ".join(v.name for v in items)
            f = "stack" if stack else "concatenate"
            return (f"m.{f}([{names}], axis={axis})", items, f"view:{f}",
                    ("view", tuple(v.name for v in items)))
        if r < 0.88 and nd >= 1:
            # integer array indexing
            ax = int(self.rng.integers(0, nd))
            n = x.shape[ax]
            k = int(self.rng.integers(0, 6))
            lo, hi = (-n, n) if n else (0, 1)
            if n == 0 and not self.chance(0.1):
                raise _Reject("index into empty")
            idx = self.rng.integers(lo, hi, k).tolist() if n else [0]
            if self.chance(0.3):
                return (f"m.take({x.name}, np.array({idx!r}, dtype=np.int64), axis={ax})", [x],
                        "view:take", ("view", sub))
            key = ", ".join([":"] * ax + [f"np.array({idx!r}, dtype=np.int64)" if k else
                                          "np.array([], dtype=np.int64)"])
            return f"{x.name}[{key}]", [x], "view:gather", ("view", sub)
        if r < 0.92:
            # boolean mask (exact masks only: the result's shape depends on it)
            masks = [v for v in self.nodes if v.dtype.kind == "b" and v.exact and
                     v.ndim >= 1 and v.shape == x.shape[:v.ndim]]
            if not masks:
                raise _Reject("no mask")
            mk = self.choice(masks)
            return f"{x.name}[{mk.name}]", [x, mk], "view:mask", ("view", (x.name,))
        if r < 0.96:
            # (many equal rows now and then: column reductions of values the
            # same down the rows)
            rows = int(self.rng.integers(1, 4)) if math.prod(x.shape) > 2000 or self.chance(0.7) \
                else int(self.choice([70, 300]))
            target = tuple([rows] + list(x.shape))
            if self.chance(0.5) and nd >= 1:
                target = tuple(3 if (s == 1 and self.chance(0.7)) else s for s in x.shape)
            return (f"m.broadcast_to({x.name}, {target!r})", [x], "view:broadcast_to",
                    ("view", sub))
        if nd >= 1:
            r2 = self.rng.random()
            if r2 < 0.3:
                ax = int(self.rng.integers(0, nd + 1))
                return f"m.expand_dims({x.name}, {ax})", [x], "view:expand_dims", ("view", sub)
            if r2 < 0.5:
                reps = self.choice([2, (2, 1), 3])
                return f"m.tile({x.name}, {reps!r})", [x], "view:tile", ("view", sub)
            if r2 < 0.7:
                reps, ax = self.choice([2, 3]), self.choice([None, 0, -1])
                return (f"m.repeat({x.name}, {reps}, axis={ax})",
                        [x], "view:repeat", ("view", sub))
            mode = self.choice(["constant", "edge", "wrap"])
            if mode == "constant":
                return f"m.pad({x.name}, 1)", [x], "view:pad", ("view", sub)
            return f"m.pad({x.name}, 2, mode={mode!r})", [x], "view:pad", ("view", sub)
        return f"{x.name}[None]", [x], "view:newaxis", ("view", sub)

    def _reshape(self, x: _Val):
        size = x.arr.size
        shape = list(x.shape)
        r = self.rng.random()
        if r < 0.3:
            target = (-1,)
        elif r < 0.6 and size > 0:
            # split the size into factors
            fs = []
            n = size
            for p in (2, 3, 5, 7, 13):
                while n % p == 0:
                    fs.append(p)
                    n //= p
            if n > 1:
                fs.append(n)
            self.rng.shuffle(fs)
            k = int(self.rng.integers(1, min(3, len(fs)) + 1)) if fs else 1
            groups = [1] * k
            for f in fs:
                groups[int(self.rng.integers(0, k))] *= f
            if self.chance(0.3) and len(groups) > 1:
                groups[int(self.rng.integers(0, k))] = -1
            target = tuple(groups)
        elif r < 0.8:
            target = tuple(shape[::-1])
        else:
            target = tuple(shape + [1])
        spell = self.rng.random()
        if spell < 0.5:
            expr = f"{x.name}.reshape({target!r})"
        elif spell < 0.8:
            expr = f"m.reshape({x.name}, {target!r})"
        else:
            expr = f"{x.name}.ravel()" if self.chance(0.5) else f"m.ravel({x.name})"
        return expr, [x], "view:reshape", ("view", (x.name,))

    def op_contract(self):
        x = self.pick(lambda v: v.ndim >= 1, recent=0.6)
        r = self.rng.random()
        nd = x.ndim
        k = x.shape[-1]
        dt = x.dtype if self.chance(0.7) else self.choice(DTYPES)
        if r < 0.5:
            # x @ y with y (k, n) or (k,)
            n = self.choice([1, 3, 16, 33, 65])
            yshape = (k,) if self.chance(0.2) else (k, n)
            cands = [v for v in self.nodes if v.shape == yshape and v.name != x.name]
            y = self.choice(cands) if cands and self.chance(0.5) else self.new_input(dt, yshape)
            spell = self.choice(["{0} @ {1}", "m.matmul({0}, {1})", "m.dot({0}, {1})"])
            if nd > 2 and "dot" in spell:
                spell = "{0} @ {1}"
            return spell.format(x.name, y.name), [x, y], "contract:matmul", ("bilinear",)
        if r < 0.75:
            # (a * b).sum(axis): two statements are the fuzzer's business; one here
            cands = [v for v in self.nodes if v.shape == x.shape and v.name != x.name]
            y = self.choice(cands) if cands and self.chance(0.5) else self.new_input(dt, x.shape)
            axis = self._axis(x, allow_tuple=True, allow_none=True)
            expr = f"({x.name} * {y.name}).sum(axis={axis!r})"
            return expr, [x, y], "contract:mulsum", ("bilinear",)
        if r < 0.85 and nd == 2:
            n = self.choice([3, 16, 65])
            y = self.new_input(dt, (k, n))
            return (f"m.einsum('ij,jk->ik', {x.name}, {y.name})", [x, y], "contract:einsum",
                    ("bilinear",))
        if r < 0.92:
            y = self.new_input(dt, (self.choice([1, 3, 5]),))
            return f"m.outer({x.name}, {y.name})", [x, y], "contract:outer", ("bilinear",)
        y = self.new_input(dt, x.shape)
        if nd == 1:
            return f"m.vdot({x.name}, {y.name})", [x, y], "contract:vdot", ("bilinear",)
        return (f"m.tensordot({x.name}, {y.name}, axes={nd})", [x, y], "contract:tensordot",
                ("bilinear",))

    def op_pattern(self):
        """Reductions used per element (row kernels: softmax, centering, ...)."""
        x = self.pick(lambda v: v.ndim >= 1 and v.dtype.kind != "c", recent=0.7)
        nd = x.ndim
        ax = self.choice([-1, -1, 0, nd - 1]) if nd else None
        xs = x.name
        pats = [
            ("softmax", f"m.exp({xs} - {xs}.max(axis={ax}, keepdims=True))"),
            ("center", f"{xs} - {xs}.mean(axis={ax}, keepdims=True)"),
            ("normalize", f"{xs} / {xs}.sum(axis={ax}, keepdims=True)"),
            ("maxscale", f"{xs} * {xs}.max(axis={ax}, keepdims=True)"),
            ("minshift", f"{xs} - {xs}.min(axis={ax}, keepdims=True)"),
            ("above_mean", f"m.where({xs} > {xs}.mean(axis={ax}, keepdims=True), {xs}, 0)"),
            ("count_rows", f"({xs} > 0).sum(axis={ax}, keepdims=True) + {xs}"),
            ("anyrow", f"m.where(({xs} != 0).any(axis={ax}, keepdims=True), {xs}, 1)"),
        ]
        name, expr = self.choice(pats)
        if name == "softmax" and self.chance(0.5):
            expr = f"(lambda e: e / e.sum(axis={ax}, keepdims=True))({expr})"
        if not x.exact:
            raise _Reject("pattern on an inexact value")
        return expr, [x], f"pattern:{name}", ("pattern",)

    def op_setitem(self):
        """``v = x.astype(x.dtype); v[key] = value`` (x exact)."""
        x = self.pick(lambda v: v.ndim >= 1 and v.exact and v.arr.size > 0, recent=0.6)
        nd = x.ndim
        r = self.rng.random()
        if r < 0.5:
            parts = [self._slice_text(n) if self.chance(0.7) else
                     str(int(self.rng.integers(-n, n))) for n in x.shape]
            key = ", ".join(parts[:int(self.rng.integers(1, nd + 1))])
        elif r < 0.7:
            n = x.shape[0]
            idx = self.rng.integers(-n, n, int(self.rng.integers(1, 5))).tolist()
            key = f"np.array({idx!r}, dtype=np.int64)"
        else:
            masks = [v for v in self.nodes if v.dtype.kind == "b" and v.exact and
                     v.shape == x.shape]
            if not masks:
                key = f"{x.name} != {x.name}" if x.dtype.kind != "c" else "..."
                if self.chance(0.5) and x.dtype.kind in "iuf":
                    key = f"{x.name} > 0"
            else:
                key = self.choice(masks).name
        ops = [x] + [v for v in self.nodes if v.name == key]
        if self.chance(0.6):
            val = self.scalar_text(x)
        else:
            cands = [v for v in self.nodes if v.exact and v.ndim <= 1 and v.name != x.name]
            if not cands:
                raise _Reject("no value")
            v = self.choice(cands)
            val = v.name
            ops.append(v)
        if "j" in val and x.dtype.kind != "c":
            raise _Reject("complex into real")
        if x.dtype.kind in "iu":
            vv = np.asarray(self._eval_with(val, {}))
            if vv.dtype.kind in "fc":
                # float to int: NaN, infinities and out-of-range values are the
                # platform's (NumPy casts NumPy scalars silently, Python floats raise)
                vr = vv.real.astype(np.float64)
                ii = np.iinfo(x.dtype)
                if not (np.isfinite(vr) & (vr > float(ii.min) - 1)
                        & (vr < float(ii.max) + 1)).all() or x.dtype.itemsize == 8:
                    raise _Reject("undefined float to int assignment")
        expr = f"{x.name}.astype({dtype_text(x.dtype)})"
        post = "{name}[" + key + "] = " + val
        return expr, ops, "setitem", ("setitem",), post

    def op_signprobe(self):
        """The sign of a zero, tested deliberately: signbit of one IEEE operation
        on inputs (whose signs are known exactly)."""
        leaves = [v for v in self.nodes if v.tag == "input" and v.dtype.kind == "f"]
        if not leaves:
            raise _Reject("no float inputs")
        x = self.choice(leaves)
        f = self.choice(["-{0}", "{0} * 0.0", "{0} * -1.0", "m.sqrt({0})", "m.floor({0})",
                         "m.ceil({0})", "m.trunc({0})", "m.rint({0})", "{0} - {0}",
                         "m.copysign(0.0, {0})", "m.fmod({0}, 1.0)", "{0} % -1.0",
                         "{0} % 1.0", "abs({0})", "{0} + -0.0", "{0} - 0.0",
                         "m.where({0} > 0, -0.0, {0})", "{0}.astype(np.float32)",
                         "{0} / np.inf", "m.round({0})", "{0} // 1.0"])
        inner = f.format(x.name)
        with np.errstate(all="ignore"):
            mask = np.isnan(np.asarray(self._eval_with(inner, {})))
        return (f"m.signbit({inner})", [x], "signprobe:" + f.format("x"),
                ("elem", 0, "signbit", False, None, mask))

    def op_error(self):
        """A statement NumPy refuses (or computes in float16, which lazyarray refuses)."""
        x = self.pick()
        k = x.dtype.kind
        nd = x.ndim
        xs = x.name
        cands = []
        if k in "iu":
            ii = np.iinfo(x.dtype)
            cands += [f"{xs} + {ii.max + 1}", f"{ii.min - 1} - {xs}", f"m.maximum({xs}, 2**70)",
                      f"{xs} ** -2", f"{xs} ** ({xs} * 0 - 1)", f"{xs} & 1.5",
                      f"{xs} * {ii.max + 1000}"]
            if x.dtype.itemsize == 1:
                cands += [f"m.sin({xs})", f"m.sqrt({xs})"]
        if k == "b":
            cands += [f"{xs} - {xs}", f"-{xs}", f"m.sin({xs})", f"m.negative({xs})"]
        if k in "fc":
            cands += [f"{xs} & 1", f"{xs} << 1", f"~{xs}", f"m.bitwise_or({xs}, {xs})"]
        if k == "c":
            cands += [f"{xs} // 2", f"{xs} % 2", f"m.floor({xs})"]
        cands += [f"{xs}.astype(np.float16)", f"{xs}.sum(axis={nd})",
                  f"{xs}.reshape(({x.arr.size + 1},))",
                  f"m.transpose({xs}, {tuple([0] * nd)!r})" if nd >= 2 else
                  f"{xs}.sum(axis=-{nd + 1})"]
        if nd >= 1:
            n = x.shape[0]
            cands += [f"{xs}[{n}]", f"{xs}[np.array([0, {n}], dtype=np.int64)]",
                      f"{xs}[:, 0]" if nd == 1 else f"{xs}[0, 0, 0, 0]",
                      f"m.flip({xs}, axis={nd})", f"m.roll({xs}, 1, axis={nd})",
                      f"m.concatenate([{xs}, {xs}], axis={nd})"]
            if x.arr.size == 0:
                cands += [f"{xs}.max()", f"{xs}.argmin()", f"m.min({xs})"]
        expr = self.choice(cands)
        ops = [x]
        if self.chance(0.25):
            # incompatible shapes
            bad = tuple(s + 1 for s in x.shape) if nd else (2,)
            if nd == 1:
                bad = (x.shape[0] + 2,)
            y = self.new_input(self.choice(DTYPES), bad if nd else (2, 3))
            expr = self.choice([f"{xs} + {y.name}", f"m.where({xs}, {xs}, {y.name})",
                                f"m.concatenate([{xs}, {y.name}], axis=0)",
                                f"m.stack([{xs}, {y.name}])", f"{xs} @ {y.name}"])
            ops.append(y)
        return expr, ops, "error:" + expr.replace(xs, "x"), ("elem", 0, "error")

    # }}}

    OPS = [("op_binary", 28), ("op_unary", 18), ("op_reduce", 16), ("op_view", 15),
           ("op_astype", 5), ("op_where", 3), ("op_compare_chain", 3), ("op_clip", 2),
           ("op_scan", 3), ("op_contract", 4), ("op_misc", 3), ("op_signprobe", 1),
           ("op_pattern", 4), ("op_setitem", 3), ("op_rows_reduce", 4)]

    def build(self) -> Program:
        rng = self.rng
        primary = self.choice(DTYPES)
        cls = self.choice([c for c, w in SHAPE_WEIGHTS.items()
                           for _ in range(int(w * 100))])
        base = self.choice(SHAPES[cls])
        n_in = int(rng.choice([1, 1, 2, 2, 2, 3]))
        for i in range(n_in):
            dt = primary if i == 0 or self.chance(0.6) else self.choice(DTYPES)
            shape = base
            if i > 0:
                rr = self.rng.random()
                if rr < 0.3 and len(base) >= 1:
                    shape = tuple(1 if self.chance(0.5) else s for s in base)
                elif rr < 0.45 and len(base) >= 1:
                    shape = base[int(self.rng.integers(0, len(base) + 1)):]
                elif rr < 0.55:
                    shape = ()
                elif rr < 0.58:
                    shape = self.choice(SHAPES[self.choice(list(SHAPES))])
            self.new_input(dt, shape)
        n_ops = self.max_ops or int(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 9]))
        allow_error_graph = self.chance(0.1)
        names = [n for n, w in self.OPS for _ in range(w)]
        done = 0
        attempts = 0
        while done < n_ops and attempts < 60:
            attempts += 1
            last = done == n_ops - 1
            allow_error = allow_error_graph and last
            op = self.choice(names)
            if allow_error and attempts < 40 and self.chance(0.7):
                op = "op_error"
            try:
                spec = getattr(self, op)()
                v = self.emit(*spec[:4], allow_error, *spec[4:])
            except _Reject:
                # a partner input added for a rejected statement stays (harmless)
                continue
            done += 1
            if v is None:       # an expected error, or float16: the end
                break
        # the output: the last statement
        self.prog.out_line = len(self.prog.lines) - 1
        return self.prog


def generate(seed: int, index: int, max_ops: int | None = None) -> Program:
    """The program of graph *index* of *seed* (deterministic)."""
    with np.errstate(all="ignore"):
        return _Builder(seed, index, max_ops).build()

# }}}

# {{{ running with lazyarray and comparing


def _summ(x, limit: int = 6) -> str:
    if isinstance(x, BaseException):
        return f"{type(x).__name__}: {str(x)[:300]}"
    a = np.asarray(x)
    with np.printoptions(threshold=12, edgeitems=3, precision=9):
        s = repr(a) if a.size <= 12 else f"array(shape={a.shape}, dtype={a.dtype}, ...)"
    return s


def run_program(prog: Program, line: int | None = None, la=None):
    """Run statement *line* (default: the output) of *prog* with lazyarray;
    return its computed NumPy result, or the exception it raised."""
    if la is None:
        import lazyarray as la
    line = prog.out_line if line is None else line
    keep = prog.closure(line)
    ns = {"np": np, "m": la}
    ns.update(prog.inputs)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in keep:
                exec(prog.lines[i], ns)
            out = ns[prog.lines[line].split(" = ", 1)[0]]
            if isinstance(out, la.LazyArray):
                out = out.get()
            return np.asarray(out)
    except Exception as e:
        return e


def compare(want: _Val, got) -> tuple[str, str] | None:
    """None when *got* agrees with *want*; else (kind, detail)."""
    w = want.arr
    if isinstance(got, BaseException):
        msg = str(got)
        unsup = "not supported" in msg or "does not support" in msg
        return ("unsupported" if unsup else "la_raised",
                "".join(traceback.format_exception_only(type(got), got)).strip()[-400:])
    g = np.asarray(got)
    if g.shape != w.shape:
        return "shape", f"shape {g.shape} != {w.shape}"
    if g.dtype.newbyteorder("=") != w.dtype.newbyteorder("="):
        return "dtype", f"dtype {g.dtype} != {w.dtype}"
    if w.size == 0:
        return None
    if g.dtype.kind == "b" and (np.ascontiguousarray(g).view(np.uint8) > 1).any():
        n = int((np.ascontiguousarray(g).view(np.uint8) > 1).sum())
        return "value", f"{n} bool elements are stored as bytes other than 0 and 1"
    err = np.zeros(w.shape) if want.err is None else np.broadcast_to(want.err, w.shape)
    care = np.isfinite(err)
    with np.errstate(all="ignore"):
        if w.dtype.kind in "biu":
            bad = care & (g != w)
        else:
            exact = care & (err == 0)
            approx = care & (err > 0)
            d_exact = _absdiff(g, w)
            bad = exact & (d_exact != 0)
            if approx.any():
                fm = _fmax(w.dtype)
                if w.dtype.kind == "c":
                    wf = w.astype(np.complex128)
                    gf = g.astype(np.complex128)
                    def clipc(z):
                        return np.clip(z.real, -fm, fm) + 1j * np.clip(z.imag, -fm, fm)
                    wc, gc = clipc(wf), clipc(gf)
                    nanw = np.isnan(wf.real) | np.isnan(wf.imag)
                    nang = np.isnan(gf.real) | np.isnan(gf.imag)
                else:
                    wc = np.clip(w.astype(np.float64), -fm, fm)
                    gc = np.clip(g.astype(np.float64), -fm, fm)
                    nanw, nang = np.isnan(wc), np.isnan(gc)
                d = np.abs(wc - gc)
                ok = (nanw & nang) | (~nanw & ~nang & (d <= err))
                bad |= approx & ~ok
    if not bad.any():
        return None
    idx = np.argwhere(bad)
    n = len(idx)
    shown = []
    for i in idx[:4]:
        t = tuple(int(j) for j in i)
        e = err[t]
        shown.append(f"at {t}: want {w[t]!r} got {g[t]!r}" + (f" (bound {e:.3g})" if e else ""))
    return "value", f"{n} of {w.size} elements differ; " + "; ".join(shown)


def _signature(prog: Program, line: int) -> str:
    tag = prog.tags[line]
    ops = sorted(prog.deps[line])
    dts = ",".join(str(prog.vals[i].dtype) if prog.vals[i] is not None else "?" for i in ops)
    v = prog.vals[line]
    out = str(v.dtype) if v is not None else "error"
    return f"{tag}({dts})->{out}"


def _numpy_tier(la) -> bool:
    """Whether *la* (lazyarray, else a NumPy stand-in) has NumPy compute
    small work: its tier in force is not the device's."""
    if la is None:
        import lazyarray as la
    get_tier = getattr(la, "get_tier", None)
    return get_tier is not None and get_tier() != "device"


def check_program(prog: Program, localize: bool = True, la=None) -> Mismatch | None:
    """Run *prog* with lazyarray; a Mismatch (localized to the first failing
    statement when *localize*) or None."""
    got = run_program(prog, la=la)
    # (NumPy on lazyarray's host tier computes in float16, as NumPy does)
    float16_by_numpy = prog.expect_float16 and not isinstance(got, BaseException) \
        and _numpy_tier(la)
    if (prog.expect_error is not None or prog.expect_float16) and not float16_by_numpy:
        if isinstance(got, BaseException):
            if prog.expect_float16 and "float16" not in str(got) and \
                    compare(prog.vals[0], got)[0] != "unsupported":
                return Mismatch(prog.seed, prog.index, "float16", prog.tags[prog.out_line],
                                _signature(prog, prog.out_line), prog.source(),
                                "an error naming float16", _summ(got),
                                "lazyarray's error does not say float16")
            return None
        # lazyarray gave a result where NumPy raised (or gave float16)
        expected = prog.expect_error or "DTypeError (NumPy's result is float16)"
        line = prog.out_line
        # documented in docs/lazyarray.md: integer powers with an array
        # exponent are not checked for negative exponents (NumPy checks each
        # element when it computes)
        documented = "negative integer powers" in str(prog.expect_error)
        return Mismatch(prog.seed, prog.index,
                        "unsupported" if documented else
                        "la_no_error" if prog.expect_error else "float16",
                        prog.tags[line], _signature(prog, line), prog.source(), expected,
                        _summ(got))
    want = prog.vals[prog.out_line]
    res = compare(want, got)
    if res is None:
        return None
    line = prog.out_line
    kind, detail = res
    if localize:
        for i in range(len(prog.lines)):
            if i == prog.out_line or prog.tags[i] == "input" or i not in prog.closure(line):
                continue
            g = run_program(prog, i, la=la)
            r = compare(prog.vals[i], g)
            if r is not None:
                line, (kind, detail), got, want = i, r, g, prog.vals[i]
                break
    return Mismatch(prog.seed, prog.index, kind, prog.tags[line], _signature(prog, line),
                    prog.source(line), _summ(want.value), _summ(got), detail)


def run_fuzz(seed: int, n_graphs: int, start: int = 0, localize: bool = True,
             include_unsupported: bool = False, verbose: bool = False,
             max_ops: int | None = None, stats: dict | None = None) -> list[Mismatch]:
    """Generate and check graphs ``start .. start + n_graphs - 1`` of *seed*;
    the mismatches found (documented-unsupported errors left out unless
    *include_unsupported*). *stats* (a dict) receives counts and timings."""
    import lazyarray as la
    out = []
    t0 = time.perf_counter()
    n_unsup = 0
    n_err = 0
    for index in range(start, start + n_graphs):
        try:
            prog = generate(seed, index, max_ops)
        except Exception as e:     # a generator bug: report it, keep going
            out.append(Mismatch(seed, index, "generator", "", "generator", "",
                                "", _summ(e), traceback.format_exc()[-1500:]))
            continue
        if prog.expect_error or prog.expect_float16:
            n_err += 1
        mm = check_program(prog, localize=localize, la=la)
        if mm is not None and mm.kind == "unsupported":
            n_unsup += 1
            if not include_unsupported:
                mm = None
        if mm is not None:
            out.append(mm)
            if verbose:
                print(mm, flush=True)
        elif verbose and (index - start) % 50 == 49:
            print(f"# {index - start + 1} graphs, {len(out)} mismatches, "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
    if stats is not None:
        stats.update(graphs=n_graphs, seconds=time.perf_counter() - t0,
                     mismatches=len(out), unsupported=n_unsup, expected_errors=n_err)
    return out

# }}}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--max-ops", type=int, default=None)
    p.add_argument("--no-localize", action="store_true")
    p.add_argument("--unsupported", action="store_true",
                   help="also report documented-unsupported errors")
    p.add_argument("--show", type=int, default=None, metavar="INDEX",
                   help="print the program of graph INDEX and exit")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.show is not None:
        prog = generate(args.seed, args.show, args.max_ops)
        print(prog.source())
        v = prog.vals[prog.out_line]
        print("# numpy:", prog.expect_error or _summ(v.value))
        return 0
    stats = {}
    mms = run_fuzz(args.seed, args.n, args.start, localize=not args.no_localize,
                   include_unsupported=args.unsupported, verbose=not args.quiet,
                   max_ops=args.max_ops, stats=stats)
    if args.quiet:
        for mm in mms:
            print(mm)
    print(f"# seed {args.seed}: {stats['graphs']} graphs in {stats['seconds']:.1f} s "
          f"({stats['graphs'] / max(stats['seconds'], 1e-9):.2f}/s), "
          f"{stats['mismatches']} mismatches, {stats['unsupported']} unsupported, "
          f"{stats['expected_errors']} expected errors")
    by = {}
    for mm in mms:
        by.setdefault(f"{mm.kind} {mm.signature}", []).append(mm.index)
    for k, v in sorted(by.items()):
        print(f"#   {k}: graphs {v[:10]}")
    return 1 if mms else 0


if __name__ == "__main__":
    sys.exit(main())
