"""Workloads W1-W8 of the benchmark suite (W9, first-call latency, is in
``latency.py``): what each computes, its inputs and sizes, the bytes it moves
and how its result is checked.

Each workload is written once, against :class:`Ops` (the few operations whose
spelling differs between array libraries), so that NumPy, lazyarray, JAX,
CuPy, torch and tinygrad all run the same code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

HEAT_STEPS = 10
HEAT_K = 0.2
W2_STEPS = 8


# {{{ what a variant hands to the suite

@dataclass
class Runner:
    """A variant ready to run one case. ``call()`` runs it once and returns only
    when the work is done (it synchronises); ``to_host`` turns what it returns
    into a NumPy array. *expected* (compared exactly) and *nbytes* replace the
    case's reference and traffic (the copy kernel uses them)."""

    call: Callable[[], Any]
    to_host: Callable[[Any], np.ndarray] = np.asarray
    expected: np.ndarray | None = None
    nbytes: int | None = None
    #: for batched cases: ``launch()`` starts one call without waiting for it,
    #: ``wait()`` returns once everything launched is done
    launch: Callable[[], Any] | None = None
    wait: Callable[[], None] | None = None


class NotApplicable(Exception):
    """The variant has no version of this workload (it is left out)."""


class Unavailable(Exception):
    """The variant cannot run here; *status* is ``not installed`` or ``skipped``."""

    def __init__(self, reason: str, status: str = "not installed"):
        super().__init__(reason)
        self.status = status

# }}}


# {{{ operations and workloads

class Ops:
    """The operations the workloads use, as the NumPy-like namespace *xp* spells
    them (libraries that spell them differently subclass this)."""

    def __init__(self, xp):
        self.xp = xp

    def sin(self, x):
        return self.xp.sin(x)

    def sqrt(self, x):
        return self.xp.sqrt(x)

    def exp(self, x):
        return self.xp.exp(x)

    def abs(self, x):
        return abs(x)

    def sum(self, x, axis=None, keepdims=False):
        return x.sum(axis=axis, keepdims=keepdims)

    def max(self, x, axis=None, keepdims=False):
        return x.max(axis=axis, keepdims=keepdims)

    def contiguous(self, x):
        """*x* materialized in C order (arrays that always are: *x*)."""
        return x

    def with_interior(self, u, interior):
        """*u* with ``u[1:-1, 1:-1]`` replaced by *interior* (by concatenation)."""
        middle = self.xp.concatenate([u[1:-1, :1], interior, u[1:-1, -1:]], axis=1)
        return self.xp.concatenate([u[:1, :], middle, u[-1:, :]], axis=0)


class SliceAssignOps(Ops):
    """NumPy and CuPy: the stencil copies the grid and assigns the interior."""

    def contiguous(self, x):
        return self.xp.ascontiguousarray(x)

    def with_interior(self, u, interior):
        v = u.copy()
        v[1:-1, 1:-1] = interior
        return v


NUMPY_OPS = SliceAssignOps(np)


def w1(o: Ops, a, b, c, d, e):
    return a * b + c * d - o.sin(e)


def w2(o: Ops, x):
    for _ in range(W2_STEPS):
        x = x * 0.999 + 0.5 * o.sqrt(o.abs(x) + 1)
    return x


def w3_dot(o: Ops, a, b):
    return o.sum(a * b)


def w3_rows(o: Ops, a):
    return o.sum(a, axis=1)


def w3_cols(o: Ops, a):
    return o.sum(a, axis=0)


def w4(o: Ops, x):
    e = o.exp(x - o.max(x, axis=1, keepdims=True))
    return e / o.sum(e, axis=1, keepdims=True)


def heat_step(o: Ops, u):
    """One explicit step of the 2-D heat equation; the boundary stays fixed."""
    c = u[1:-1, 1:-1]
    interior = c + HEAT_K * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                             - 4 * c)
    return o.with_interior(u, interior)


def w5(o: Ops, u):
    for _ in range(HEAT_STEPS):
        u = heat_step(o, u)
    return u


def w6(o: Ops, a, b):
    return a @ b


def w7(o: Ops, a):
    return o.contiguous(2 * a.T)


def w8(o: Ops, a, b):
    return a + b


def bind(fn: Callable, ops: Ops) -> Callable:
    """``fn(ops, ...)`` as a function of the arrays alone (with *fn*'s parameter
    names, which la.jit's fast path for positional calls needs), named like *fn*."""
    bound = functools.partial(fn, ops)
    bound.__name__ = bound.__qualname__ = fn.__name__
    return bound

# }}}


# {{{ cases

@dataclass
class Case:
    """One measured computation: workload *fn* on float32 inputs of *shapes*,
    uniform in *span*. *traffic* multiplies the bytes of inputs read once and
    output written once (W5: once per step); *rtol* bounds max |error| / max
    |float64 reference|. *inner* calls make one timing sample (W8); when
    *batched*, they are launched one after the other and waited for once (the
    dispatch cost per call). *only* restricts the variants run."""

    name: str
    workload: str
    expression: str
    fn: Callable
    shapes: tuple[tuple[int, ...], ...]
    span: tuple[float, float] = (0.0, 1.0)
    rtol: float = 1e-4
    traffic: int = 1
    flop: int | None = None
    unit: str = "ms"
    inner: int = 1
    only: tuple[str, ...] | None = None
    batched: bool = False

    @property
    def size(self) -> str:
        return ", ".join("x".join(str(n) for n in s) for s in dict.fromkeys(self.shapes))

    @property
    def bandwidth(self) -> bool:
        """Whether GB/s and the fraction of the copy bandwidth are reported."""
        return self.unit == "ms"

    def inputs(self, seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        lo, hi = self.span
        return [(lo + (hi - lo) * rng.random(s, dtype=np.float32)).astype(np.float32)
                for s in self.shapes]

    def reference(self, inputs: list[np.ndarray]) -> np.ndarray:
        """NumPy's result computed in float64 from the float32 inputs."""
        return np.asarray(self.fn(NUMPY_OPS, *(x.astype(np.float64) for x in inputs)))

    def nbytes(self, inputs: list[np.ndarray], output: np.ndarray) -> int:
        """Bytes moved: inputs read once and the output written once (float32),
        times *traffic*."""
        return self.traffic * 4 * (sum(x.size for x in inputs) + max(output.size, 1))

    def largest(self, inputs: list[np.ndarray]) -> int:
        """Elements of the largest array, the copy kernel's size (no workload's
        output is larger than its largest input)."""
        return max(x.size for x in inputs)


SIZES = {
    # elements of W1 and W2 vectors, order of W3/W5/W6/W7 matrices, W4's shape
    "cpu": {"w1": 2**21, "w2": 2**20, "w3": 2048, "w4": (2048, 1024), "w5": 768,
            "w6": 512, "w7": 1024},
    "gpu": {"w1": 2**26, "w2": 2**26, "w3": 16384, "w4": (16384, 16384), "w5": 8192,
            "w6": 4096, "w7": 8192},
    "quick": {"w1": 5000, "w2": 5000, "w3": 96, "w4": (64, 200), "w5": 64,
              "w6": 64, "w7": 100},
}
W8_SIZE = 1000
W8_VARIANTS = ("lazyarray-jit", "lazyarray-eager", "numpy", "hand-written",
               "pyopencl.array", "jax", "torch", "cupy")


def cases(kind: str, quick: bool) -> list[Case]:
    """The cases of W1-W8 at the default sizes of a *kind* device (``gpu`` or
    anything else: CPU sizes), tiny with *quick*."""
    s = SIZES["quick" if quick else ("gpu" if kind == "gpu" else "cpu")]
    n3, n5, n6, n7 = s["w3"], s["w5"], s["w6"], s["w7"]
    return [
        Case("W1", "W1", "a*b + c*d - sin(e)", w1, ((s["w1"],),) * 5),
        Case("W2", "W2", f"{W2_STEPS} x: x = x*0.999 + 0.5*sqrt(abs(x) + 1)", w2,
             ((s["w2"],),), span=(-1.0, 1.0)),
        Case("W3 dot", "W3", "sum(a*b)", w3_dot, ((n3 * n3,),) * 2),
        Case("W3 rows", "W3", "A.sum(axis=1)", w3_rows, ((n3, n3),)),
        Case("W3 cols", "W3", "A.sum(axis=0)", w3_cols, ((n3, n3),)),
        Case("W4", "W4", "softmax along rows: e = exp(x - x.max(1)); e / e.sum(1)", w4,
             (s["w4"],), span=(-4.0, 4.0), rtol=1e-3),
        Case("W5", "W5", f"{HEAT_STEPS} steps: u[1:-1,1:-1] + {HEAT_K}*(5-point "
             "Laplacian), boundary kept", w5, ((n5, n5),), traffic=HEAT_STEPS),
        Case("W6", "W6", "A @ B", w6, ((n6, n6),) * 2, span=(-1.0, 1.0), rtol=1e-3,
             flop=2 * n6**3),
        Case("W7", "W7", "2*a.T in C order", w7, ((n7, n7),)),
        Case("W8", "W8", f"a + b on {W8_SIZE} elements: time per call, each waited for",
             w8, ((W8_SIZE,),) * 2, unit="us", inner=20 if quick else 100,
             only=W8_VARIANTS),
        Case("W8 batched", "W8", f"a + b on {W8_SIZE} elements: time per call in batches "
             f"of {20 if quick else 100}, one wait per batch", w8, ((W8_SIZE,),) * 2,
             unit="us", inner=20 if quick else 100, only=W8_VARIANTS, batched=True),
    ]


def check(result: np.ndarray, expected: np.ndarray, rtol: float) -> float:
    """max |result - expected| / max |expected|; raises ValueError when the
    result is not float32, has the wrong shape, is not finite, or the error
    exceeds *rtol*."""
    result = np.asarray(result)
    if result.dtype != np.float32:
        raise ValueError(f"result dtype {result.dtype}, expected float32")
    if result.shape != expected.shape:
        raise ValueError(f"result shape {result.shape}, expected {expected.shape}")
    if not np.all(np.isfinite(result)):
        raise ValueError("result has non-finite values")
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    diff = np.abs(result.astype(np.float64) - expected)
    error = float(np.max(diff)) / scale if scale > 0 else float(np.max(diff, initial=0))
    if error > rtol:
        raise ValueError(f"wrong result: max |error| / max |expected| = {error:.3g} "
                         f"> {rtol:g}")
    return error

# }}}
