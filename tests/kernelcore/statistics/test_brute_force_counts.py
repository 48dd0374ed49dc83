"""Statistics cross-checked against brute force.

Hypothesis draws a kernel ``out[i, j, ...] = <expression>`` over a random
affine loop domain (``strategies.py``); the expected counts come from
enumerating the domain's points in Python and counting, per point, the
operations and array references of the expression tree:

* each ``+`` or ``-`` is one addition, each ``*`` one multiplication (negation
  is free); an operation involving an array read is float32, one on literals
  only float64;
* each array reference is one global load per point; the assignment is one
  store per point.

Counts are exact (``exact_counts=True``, not loopy's estimate without barvinok).
The kernels are sequential (one work-item), so the sub-group and work-item
granularities give the same numbers.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st

import kernelcore as lp
from tests import strategies as S


def _floatify(expr):
    """The tree with every literal a float (so no integer arithmetic)."""
    if isinstance(expr, S.Const):
        return S.Const(float(expr.value) + 0.5)
    if isinstance(expr, S.Bin):
        return S.Bin(expr.op, _floatify(expr.left), _floatify(expr.right))
    if isinstance(expr, S.Neg):
        return S.Neg(_floatify(expr.operand))
    return expr


def _ops(expr, counts):
    """Fill *counts[(name, dtype)]*; return whether *expr* involves a read."""
    if isinstance(expr, S.Read):
        return True
    if isinstance(expr, S.Neg):
        return _ops(expr.operand, counts)
    if isinstance(expr, S.Bin):
        has_read = _ops(expr.left, counts) | _ops(expr.right, counts)
        key = ("mul" if expr.op == "*" else "add",
               "float32" if has_read else "float64")
        counts[key] = counts.get(key, 0) + 1
        return has_read
    return False


@st.composite
def stat_kernels(draw):
    dom = draw(S.domains())
    points = dom.box_points()
    expr = draw(S.expr_trees(dom.inames, dom.params_used(), float_consts=True,
                             var_leaves=False))
    expr = S.fit_reads(_floatify(expr), points)
    out = S.fit_reads(S.Read("out", tuple(S.Affine.make(**{x: 1})
                                          for x in dom.inames)), points)
    shapes = S.footprint_shapes([(expr, points), (out, points)])
    return dom, expr, out, shapes


@settings(max_examples=80)
@given(stat_kernels(), st.data())
def test_counts_match_brute_force(kernel, data):
    dom, expr, out, shapes = kernel
    params = dom.params_used()
    args = [lp.GlobalArg(name, np.float32, shape=shape)
            for name, shape in sorted(shapes.items())]
    knl = lp.make_kernel(dom.render(), f"{out.render()} = {expr.render()}",
                         args + [lp.ValueArg(p, np.int32) for p in params],
                         assumptions=S.box_assumptions(params))
    values = {p: data.draw(st.integers(0, S.PMAX), label=p) for p in params}
    npoints = len(dom.points(values))
    note(f"{dom.render()}: {out.render()} = {expr.render()}; {values}; "
         f"{npoints} points")

    expected_ops: dict = {}
    _ops(expr, expected_ops)
    ops = lp.get_op_map(knl, subgroup_size=32, count_within_subscripts=False,
                        exact_counts=True)
    got_ops = {}
    for key, count in ops.items():
        n = count.eval_with_dict(values)
        if n:
            got_ops[(key.name, str(np.dtype(key.dtype.numpy_dtype)
                                   if hasattr(key.dtype, "numpy_dtype")
                                   else np.dtype(key.dtype)))] = n
    assert got_ops == {k: v * npoints for k, v in expected_ops.items() if npoints}

    mem = lp.get_mem_access_map(knl, subgroup_size=32, exact_counts=True)
    for name in shapes:
        reads = sum(1 for r in S.reads_in(expr) if r.array == name)
        loads = mem.filter_by(mtype=["global"], direction=["load"],
                              variable=[name]).eval_and_sum(values)
        assert loads == reads * npoints, name
    stores = mem.filter_by(mtype=["global"], direction=["store"],
                           variable=["out"]).eval_and_sum(values)
    assert stores == npoints
