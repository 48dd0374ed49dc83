"""Work done once per kernel while its code is made: the answers islpy gives
for a kernel (its 32-bit index checks, the domain of a set of inames) and the
type of each expression node are found once, however often the passes ask
(counted, not timed)."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
import kernelcore.codegen.bounds as bounds
import kernelcore.index_width as index_width
from kernelcore.codegen.kernel import generate_code_v2
from kernelcore.runtime.invoke import Executor
from kernelcore.types import ExprType, FixedTypeMapper, TypeInferenceMapper


def _typed_kernel() -> lp.LoopKernel:
    knl = lp.make_kernel("{ [i, j]: 0 <= i < n and 0 <= j < 16 }",
                         "out[i, j] = 2*a[i, j] + j", name="twice")
    knl = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    return lp.infer_types(lp.add_dtypes(knl, {"a": np.float32})).executable_kernel()


def test_index_checks_found_once_per_kernel(monkeypatch):
    """Preprocessing (64-bit indices?) and the invoker (checks of the
    parameters) ask the same kernel for its index overflows: islpy answers once."""
    calls = []
    find = index_width._find_overflows

    def counted(knl):
        calls.append(knl)
        return find(knl)

    monkeypatch.setattr(index_width, "_find_overflows", counted)
    knl = _typed_kernel()
    code = generate_code_v2(knl)
    ex = Executor(knl)
    assert ex.code.source == code.source
    assert calls == [knl]
    # the invoker still checks n: 16*n elements of 'out' beyond 2**31 - 1
    assert "raise_index_overflow" in ex.wrapper_source


def test_inames_domain_found_once():
    knl = _typed_kernel()
    first = knl.get_inames_domain({"i_outer", "i_inner", "j"})
    assert knl.get_inames_domain(["j", "i_inner", "i_outer"]) is first
    assert first == knl.get_inames_domain(frozenset({"i_outer", "i_inner", "j"}))
    assert not knl.get_inames_domain({"j"}).is_empty()


class _Counting(FixedTypeMapper):
    def __init__(self, *args):
        super().__init__(*args)
        self.sums = 0

    def map_sum(self, expr):
        self.sums += 1
        return super().map_sum(expr)


def test_type_of_each_node_found_once():
    """The C printer asks for the type of every node and of its children:
    a deep expression's nodes are typed once each."""
    x = prim.Variable("x")
    expr = x
    for k in range(12):
        # (each level reads the one below twice: 2**12 sums as a tree)
        expr = prim.If(prim.Comparison(x, "<", k), prim.Sum((expr, 1)), expr)
    dtypes = {"x": np.dtype(np.float32)}
    fixed = _Counting(dtypes, set())
    for _ in range(3):
        assert fixed(expr) == ExprType(np.dtype(np.float32))
    assert fixed.sums == 12
    assert TypeInferenceMapper(dtypes, set())(expr) == fixed(expr)


def test_loop_shape_found_once_per_loop(monkeypatch):
    """A loop inside an unrolled one gets bounds in every unrolled copy; what
    does not depend on the copy (the loop's hull, its bounds as functions of
    the outer inames) is found once per loop."""
    shapes: list[str] = []
    find = bounds._loop_shape

    def counted(knl, iname, *args):
        shapes.append(iname)
        return find(knl, iname, *args)

    monkeypatch.setattr(bounds, "_loop_shape", counted)
    knl = lp.make_kernel("{ [i, k]: 0 <= i < 8 and 0 <= k < n }",
                         "out[i] = sum(k, a[i, k])", name="rows")
    knl = lp.split_iname(knl, "i", 4, inner_tag="unr")
    knl = lp.infer_types(lp.add_dtypes(knl, {"a": np.float32}))
    code = generate_code_v2(knl).device_code()
    assert code.count("for (int k = 0; k <= -1 + n; ++k)") == 4    # once per copy
    assert sorted(shapes) == sorted(set(shapes))
    assert "k" in shapes
