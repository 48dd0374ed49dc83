"""Call resolution as the function-interface text describes it (issue 20):
``resolve_callables`` turns the functions of calls into ``ResolvedFunction``
nodes naming entries of the callables table; a resolved unit prints, runs
and compiles as before."""

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore.symbolic import ResolvedFunction


def _calls(knl):
    found = []
    for insn in knl.instructions:
        for e in insn.expressions():
            stack = [e]
            while stack:
                x = stack.pop()
                if isinstance(x, prim.Call):
                    found.append(x.function)
                    stack.extend(x.parameters)
                elif isinstance(x, prim.ExpressionNode):
                    stack.extend(c for c in getattr(x, "children", ())
                                 if isinstance(c, prim.ExpressionNode))
    return found


def test_resolve_callables_makes_resolved_functions(queue):
    tu = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = atan2(a[i], 2) + sin(a[i])",
                        name="trig")
    resolved = lp.resolve_callables(tu)
    fns = _calls(resolved.default_entrypoint)
    assert fns and all(isinstance(f, ResolvedFunction) for f in fns)
    assert {f.name for f in fns} == {"atan2", "sin"} <= set(resolved.callables_table)
    assert str(resolved.default_entrypoint.instructions[0]) == \
        str(tu.default_entrypoint.instructions[0])
    a = np.linspace(0, 1, 9).astype(np.float32)
    _, (out,) = resolved(queue, a=a)
    np.testing.assert_allclose(out, np.arctan2(a, 2) + np.sin(a), rtol=1e-6)
    ops = lp.get_op_map(lp.add_dtypes(resolved, {"a": np.float32}), subgroup_size=32)
    assert ops.filter_by(name="func:sin").eval_and_sum({"n": 64}) == 64


def test_resolved_kernel_calls_run_and_rename(queue):
    child = lp.make_function(
        "{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
        [lp.GlobalArg("a", np.float32, shape=(4,)), lp.GlobalArg("b", np.float32, shape=(4,))],
        name="child")
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}", "[j]: out[i, j] = child([j]: x[i, j])",
        [lp.GlobalArg("x", np.float32, shape=("n", 4)),
         lp.GlobalArg("out", np.float32, shape=("n", 4)), ...], name="parent")
    tu = lp.resolve_callables(lp.merge([parent, child]))
    fn, = _calls(tu["parent"])
    assert isinstance(fn, ResolvedFunction) and fn.name == "child"
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _, (out,) = tu(queue, x=x)
    np.testing.assert_allclose(out, 2 * x + 1)
    renamed = lp.rename_callable(tu, "child", "kid")
    fn, = _calls(renamed["parent"])
    assert fn.name == "kid"
    np.testing.assert_allclose(renamed(queue, x=x)[1][0], 2 * x + 1)
    inlined = lp.inline_callable_kernel(tu, "child")
    np.testing.assert_allclose(inlined(queue, x=x)[1][0], 2 * x + 1)
