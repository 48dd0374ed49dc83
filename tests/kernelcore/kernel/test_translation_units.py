"""Translation units and callables as loopy has them: make_kernel returns a
TranslationUnit, transformations take and return either kind, a unit's
kernels by name, its default entry point, printing, copy, executor and the
members of its kernel it answers when it has one entry point; calls are
resolved into the callables table (``resolve_callables`` turns the functions
of calls into ``ResolvedFunction`` nodes; a resolved unit prints, runs and
compiles as before), InKernelCallable's methods."""

import numpy as np
import pymbolic.primitives as prim
import pytest

import kernelcore as lp
from kernelcore.kernel.function_interface import (
    ArrayArgDescriptor,
    CallableKernel,
    FixedStrideArrayDimTag,
    InKernelCallable,
    ScalarCallable,
    ValueArgDescriptor,
)
from kernelcore.symbolic import ResolvedFunction
from kernelcore.translation_unit import TranslationUnit, for_each_kernel


def _scale():
    return lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*sin(a[i]) + max(a[i], 0.5f)",
                          name="scale")


# {{{ make_kernel and the unit's members

def test_make_kernel_returns_a_translation_unit():
    tu = _scale()
    assert isinstance(tu, lp.TranslationUnit)
    assert tu.entrypoints == frozenset({"scale"})
    knl = tu.default_entrypoint
    assert isinstance(knl, lp.LoopKernel)
    assert tu["scale"] is knl
    assert isinstance(tu.callables_table["scale"], CallableKernel)
    assert tu.callables_table["scale"].subkernel is knl
    assert tu.state == lp.KernelState.INITIAL


def test_builtins_enter_the_callables_table():
    tu = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = atan2(a[i], b[i]) + sin(a[i])")
    assert {"atan2", "sin"} <= set(tu.callables_table)
    sin = tu.callables_table["sin"]
    assert isinstance(sin, ScalarCallable) and isinstance(sin, InKernelCallable)
    assert tu["sin"] is sin                 # a callable that is not a kernel
    assert not sin.is_type_specialized()
    typed, table = sin.with_types({0: lp.NumpyType(np.float32)}, tu.callables_table)
    assert table is tu.callables_table
    assert typed.is_type_specialized()
    assert typed.arg_id_to_dtype[-1] == lp.NumpyType(np.float32)
    assert typed.name_in_target == "sin"
    typed, _ = tu.callables_table["atan2"].with_types(
        {0: lp.NumpyType(np.int32), 1: lp.NumpyType(np.float32)}, tu.callables_table)
    assert typed.arg_id_to_dtype[-1].numpy_dtype == np.float64
    # not enough types yet: unchanged
    same, _ = tu.callables_table["atan2"].with_types({0: lp.NumpyType(np.float32)}, {})
    assert same is tu.callables_table["atan2"]
    assert lp.resolve_callables(tu).callables_table.keys() == tu.callables_table.keys()


def test_in_kernel_callable_method_set():
    sin = _scale().callables_table["sin"]
    assert sin.with_name("mysin").name == "mysin"
    assert sin.get_called_callables({}) == frozenset()
    assert sin.get_used_hw_axes({}) == (frozenset(), frozenset())
    assert sin.get_hw_axes_sizes({}, None, {}) == ({}, {})
    assert sin.with_descrs({0: ValueArgDescriptor()}, {})[0].arg_id_to_descr == {
        0: ValueArgDescriptor()}


def test_unknown_entrypoint_and_callable_errors():
    tu = _scale()
    with pytest.raises(KeyError, match="no kernel named 'other'"):
        _ = tu["other"]
    two = lp.merge([_scale(), lp.make_kernel("{[i]: 0<=i<n}", "b[i] = a[i]",
                                             name="copy")])
    assert two.entrypoints == frozenset({"scale", "copy"})
    with pytest.raises(ValueError, match="2 entry points"):
        _ = two.default_entrypoint
    one = two.with_entrypoints("copy")
    assert one.default_entrypoint.name == "copy"
    with pytest.raises(TypeError, match="unknown field"):
        tu.copy(instructions=())


def test_printing_a_unit_prints_its_kernels():
    tu = _scale()
    assert str(tu) == str(tu.default_entrypoint)
    assert "KERNEL: scale" in str(tu)

# }}}


# {{{ transformations take either kind

def test_transformations_return_the_kind_they_are_given():
    tu = _scale()
    split = lp.split_iname(tu, "i", 16, outer_tag="g.0", inner_tag="l.0")
    assert isinstance(split, lp.TranslationUnit)
    assert "i_inner" in split.default_entrypoint.all_inames()
    knl = lp.split_iname(tu.default_entrypoint, "i", 16)
    assert isinstance(knl, lp.LoopKernel)
    typed = lp.add_dtypes(split, {"a": np.float32})
    assert typed.default_entrypoint.arg_dict["a"].dtype == np.float32
    pre = lp.preprocess_kernel(typed)
    assert isinstance(pre, lp.TranslationUnit)
    assert pre.state == lp.KernelState.PREPROCESSED
    lin = lp.linearize(pre)
    assert lin.state == lp.KernelState.LINEARIZED
    assert lp.get_one_linearized_kernel(pre.default_entrypoint,
                                        pre.callables_table).linearization
    assert isinstance(lp.set_options(tu, write_code=False), lp.TranslationUnit)


def test_with_kernel_replaces_or_adds():
    tu = _scale()
    knl = lp.tag_inames(tu.default_entrypoint, {"i": "g.0"})
    tu2 = tu.with_kernel(knl)
    assert tu2.default_entrypoint.iname_tags["i"] is not None
    assert tu.default_entrypoint.iname_tags["i"] is None     # immutable
    extra = lp.make_kernel("{[j]: 0<=j<4}", "b[j] = 1", name="extra").default_entrypoint
    tu3 = tu.with_kernel(extra)
    assert set(tu3.kernel_names()) == {"scale", "extra"}
    assert tu3.entrypoints == frozenset({"scale"})


def test_for_each_kernel_decorator():
    @for_each_kernel
    def rename_all(knl, suffix):
        return lp.rename_iname(knl, knl.all_inames()[0], "x" + suffix)

    tu = lp.merge([_scale(), lp.make_kernel("{[j]: 0<=j<4}", "b[j] = 1", name="ones")])
    out = rename_all(tu, "_0")
    assert out["scale"].all_inames() == ("x_0",)
    assert out["ones"].all_inames() == ("x_0",)
    assert rename_all(_scale().default_entrypoint, "_1").all_inames() == ("x_1",)


def test_rename_callable():
    tu = lp.rename_callable(_scale(), "scale", "twice_sin")
    assert tu.entrypoints == frozenset({"twice_sin"})
    assert tu.default_entrypoint.name == "twice_sin"

# }}}


# {{{ running, code, statistics

def test_unit_runs_generates_code_and_counts(queue):
    tu = lp.split_iname(_scale(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    a = np.linspace(-1, 1, 40).astype(np.float32)
    _, (out,) = tu(queue, a=a)
    np.testing.assert_allclose(out, 2 * np.sin(a) + np.maximum(a, 0.5), rtol=1e-5)
    _, (out2,) = tu(queue, a=a, entrypoint="scale")
    np.testing.assert_allclose(out2, out)
    typed = lp.add_dtypes(tu, {"a": np.float32})
    code = lp.generate_code_v2(typed).device_code()
    assert "__kernel" in code and "scale(" in code
    ops = lp.get_op_map(typed, subgroup_size=32)
    assert ops.filter_by(name="func:sin").eval_and_sum({"n": 40}) == 3   # sub-groups
    glob, loc = typed.default_entrypoint.get_grid_size_upper_bounds(typed.callables_table)
    assert len(glob) == 1 and len(loc) == 1


def test_executor_is_reused_for_a_unit(queue):
    tu = _scale()
    a = np.ones(8, np.float32)
    tu(queue, a=a)
    assert tu.executable_kernel() is tu.executable_kernel()

# }}}


# {{{ merged units and kernel callables

def _twice():
    return lp.make_function(
        "{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
        [lp.GlobalArg("a", np.float32, shape=(4,)),
         lp.GlobalArg("b", np.float32, shape=(4,))], name="twice")


def _caller():
    return lp.make_kernel(
        "{[i]: 0<=i<n}", "[i]: y[i, :] = twice(x[i, :])",
        [lp.GlobalArg("x", np.float32, shape=("n", 4)),
         lp.GlobalArg("y", np.float32, shape=("n", 4)), ...])


def test_make_function_has_no_entry_point():
    fn = _twice()
    assert fn.entrypoints == frozenset()
    assert fn["twice"].name == "twice"


def test_transforming_after_a_merge(queue):
    tu = lp.merge([_caller(), _twice()])
    # 'i' exists only in the caller: the callee is left as it is
    tu = lp.split_iname(tu, "i", 2, outer_tag="g.0", inner_tag="l.0")
    assert "i_inner" in tu["loopy_kernel"].all_inames()
    assert tu["twice"].all_inames() == ("j",)
    with pytest.raises(lp.UnknownNameError):
        lp.split_iname(tu, "nope", 2)
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    _, (y,) = tu(queue, x=x)
    np.testing.assert_allclose(y, 2 * x + 1)


def test_callable_kernel_methods():
    tu = lp.merge([_caller(), _twice()])
    ck = tu.callables_table["twice"]
    assert isinstance(ck, CallableKernel)
    assert ck.name == "twice"
    assert ck.is_type_specialized()
    caller_ck = tu.callables_table["loopy_kernel"]
    assert caller_ck.get_called_callables(tu.callables_table) == frozenset({"twice"})
    assert ck.get_called_callables(tu.callables_table) == frozenset()
    assert ck.with_name("thrice").subkernel.name == "thrice"
    tagged = tu.with_kernel(lp.tag_inames(tu["twice"], {"j": "l.0"}))
    assert tagged.callables_table["twice"].get_used_hw_axes(
        tagged.callables_table) == (frozenset(), frozenset({0}))
    descr = ArrayArgDescriptor((4,), lp.AddressSpace.GLOBAL, (FixedStrideArrayDimTag(1),))
    ck2, _ = ck.with_descrs({0: descr, -1: descr}, tu.callables_table)
    assert ck2.arg_id_to_descr[0] == descr
    bad = ArrayArgDescriptor((5,), lp.AddressSpace.GLOBAL, (FixedStrideArrayDimTag(1),))
    with pytest.raises(lp.KernelcoreError, match="shape"):
        ck.with_descrs({0: bad}, tu.callables_table)


def test_callable_kernel_with_types_fills_untyped_arguments():
    callee = lp.make_function("{[j]: 0<=j<4}", "b[j] = 2*a[j]",
                              [lp.GlobalArg("a", shape=(4,)), lp.GlobalArg("b", shape=(4,))],
                              name="dbl")
    ck = callee.callables_table["dbl"]
    assert not ck.is_type_specialized()
    typed, _ = ck.with_types({0: lp.NumpyType(np.float64)}, callee.callables_table)
    assert typed.is_type_specialized()
    assert typed.arg_id_to_dtype[-1].numpy_dtype == np.float64
    with pytest.raises(lp.KernelcoreError, match="passes"):
        typed.with_types({0: lp.NumpyType(np.int32)}, {})


def test_array_arg_descriptor_map_expr_and_depends_on():
    import pymbolic.primitives as prim
    n = prim.Variable("n")
    d = ArrayArgDescriptor((n, 4), lp.AddressSpace.GLOBAL,
                           (FixedStrideArrayDimTag(4), FixedStrideArrayDimTag(1)))
    assert d.depends_on() == frozenset({"n"})
    m = d.map_expr(lambda e: 2 * e)
    assert m.shape[1] == 8 and m.dim_tags[0].stride == 8
    assert d.map_expr(lambda e: 3).depends_on() == frozenset()


def test_register_callable_on_a_unit_enters_the_table():
    class Cube(lp.ScalarCallable):
        def with_types(self, arg_id_to_dtype, callables_table):
            t = arg_id_to_dtype.get(0)
            if t is None:
                return self, callables_table
            return (self.copy(name_in_target="cube", arg_id_to_dtype={0: t, -1: t}),
                    callables_table)

    tu = lp.register_callable(lp.make_kernel("{[i]: 0<=i<n}", "out[i] = cube(a[i])"),
                              "cube", Cube(name="cube"))
    assert isinstance(tu, TranslationUnit)
    assert isinstance(tu.callables_table["cube"], Cube)

# }}}


# {{{ loopy's array-valued call syntax

def _child():
    return lp.make_function(
        "{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
        [lp.GlobalArg("a", np.float32, shape=(4,)),
         lp.GlobalArg("b", np.float32, shape=(4,))], name="child")


def test_sub_array_reference_call_runs(queue):
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}",
        "[j]: out[i, j] = child([j]: x[i, j])",
        [lp.GlobalArg("x", np.float32, shape=("n", 4)),
         lp.GlobalArg("out", np.float32, shape=("n", 4)), ...])
    insn, = parent.default_entrypoint.instructions
    assert insn.within_inames == frozenset({"i"})
    tu = lp.merge([parent, _child()])
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    _, (out,) = tu(queue, x=x)
    np.testing.assert_allclose(out, 2 * x + 1)
    inlined = lp.inline_callable_kernel(tu, "child")
    assert set(inlined.callables_table) == {"loopy_kernel"}


def test_sub_array_reference_over_a_column(queue):
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}",
        "[j]: out[j, i] = child([j]: x[j, i])",
        [lp.GlobalArg("x", np.float32, shape=(4, "n")),
         lp.GlobalArg("out", np.float32, shape=(4, "n")), ...])
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    _, (out,) = lp.merge([parent, _child()])(queue, x=x)
    np.testing.assert_allclose(out, 2 * x + 1)


def test_sub_array_reference_limits_are_reported():
    # no slices, over parametric ranges (over constant ones, they are passed
    # through temporaries: test_sub_array_packing)
    with pytest.raises(lp.ParseError, match=r"must be c\*j \+ d"):
        lp.make_kernel("{[i, j]: 0<=i<n and 0<=j<m}",
                       "[j]: out[i, j] = child([j]: x[i, j // 2])")
    with pytest.raises(lp.ParseError, match="order of the axes"):
        lp.make_kernel("{[j, k]: 0<=j, k<n}",
                       "[j, k]: out[j, k] = child([j, k]: x[k, j])")

# }}}


# {{{ several outputs

def _sumdiff():
    return lp.make_function(
        "{:}", """
        s = x + y
        d = x - y
        """,
        [lp.ValueArg("x", np.float32), lp.ValueArg("y", np.float32),
         lp.GlobalArg("s", np.float32, shape=()), lp.GlobalArg("d", np.float32, shape=())],
        name="sumdiff")


def test_call_with_several_outputs(queue):
    parent = lp.make_kernel("{[i]: 0<=i<n}", "a[i], b[i] = sumdiff(x[i], y[i])")
    insn, = parent.default_entrypoint.instructions
    assert isinstance(insn, lp.CallInstruction)
    assert str(insn).startswith("a[i], b[i] = sumdiff(x[i], y[i])")
    assert insn.assignee_names() == frozenset({"a", "b"})
    tu = lp.merge([parent, _sumdiff()])
    x = np.arange(6, dtype=np.float32)
    y = np.full(6, 2, np.float32)
    _, (a, b) = tu(queue, x=x, y=y)
    np.testing.assert_allclose(a, x + y)
    np.testing.assert_allclose(b, x - y)


def test_several_sub_array_outputs(queue):
    split = lp.make_function(
        "{[j]: 0<=j<3}", """
        lo[j] = min(v[j], 0)
        hi[j] = max(v[j], 0)
        """,
        [lp.GlobalArg("v", np.float64, shape=(3,)), lp.GlobalArg("lo", np.float64, shape=(3,)),
         lp.GlobalArg("hi", np.float64, shape=(3,))], name="split")
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<3}",
        "[j]: neg[i, j], [j]: pos[i, j] = split([j]: v[i, j])",
        [lp.GlobalArg("v", np.float64, shape=("n", 3)),
         lp.GlobalArg("neg", np.float64, shape=("n", 3)),
         lp.GlobalArg("pos", np.float64, shape=("n", 3)), ...])
    v = np.random.default_rng(4).standard_normal((5, 3))
    _, (neg, pos) = lp.merge([parent, split])(queue, v=v)
    np.testing.assert_allclose(neg, np.minimum(v, 0))
    np.testing.assert_allclose(pos, np.maximum(v, 0))


def test_several_assignees_need_a_call():
    with pytest.raises(lp.ParseError, match="function call"):
        lp.make_kernel("{[i]: 0<=i<n}", "a[i], b[i] = x[i] + 1")

# }}}


def test_two_output_argmax(queue):
    knl = lp.make_kernel("{[i, k]: 0<=i<n and 0<=k<m}",
                         "mx[i], idx[i] = argmax(k, a[i, k], k)  {id=best}")
    ids = [i.id for i in knl.default_entrypoint.instructions]
    assert ids == ["best", "best_index"]
    knl = lp.set_options(knl, return_dict=True)
    a = np.random.default_rng(5).random((4, 7)).astype(np.float32)
    _, out = knl(queue, a=a)
    np.testing.assert_array_equal(out["mx"], a.max(axis=1))
    np.testing.assert_array_equal(out["idx"], a.argmax(axis=1))
    # any index expression: its value at the largest element (loopy's form)
    knl = lp.set_options(lp.make_kernel("{[i, k]: 0<=i<n and 0<=k<m}",
                                        "mx[i], idx[i] = argmax(k, a[i, k], 2*k)"),
                         return_dict=True)
    _, out = knl(queue, a=a)
    np.testing.assert_array_equal(out["idx"], 2 * a.argmax(axis=1))


def test_types_flow_from_callee_outputs_into_the_caller():
    child = lp.make_function("{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
                             [lp.GlobalArg("a", shape=(4,)), lp.GlobalArg("b", shape=(4,))],
                             name="child")
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}", "[j]: out[i, j] = child([j]: x[i, j])",
        [lp.GlobalArg("x", shape=("n", 4)), lp.GlobalArg("out", shape=("n", 4)), ...])
    tu = lp.add_and_infer_dtypes(lp.merge([parent, child]), {"x": np.float32})
    assert isinstance(tu, lp.TranslationUnit)
    assert tu["loopy_kernel"].arg_dict["out"].dtype == np.float32
    assert "child" in tu.callables_table


def _unit():
    return lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]", name="twice")


def _pair():
    return lp.merge([_unit(), lp.make_kernel("{[i]: 0<=i<n}", "b[i] = a[i] + 1",
                                             name="inc")])


def test_default_entrypoint_and_items():
    tu = _unit()
    knl = tu.default_entrypoint
    assert [a.name for a in knl.args] == ["a", "n", "out"]
    assert tu["twice"] is knl
    with pytest.raises(KeyError):
        _ = tu["nope"]
    with pytest.raises(ValueError):
        _ = _pair().default_entrypoint
    with pytest.raises(ValueError):
        _ = lp.make_function("{[i]: 0<=i<4}", "b[i] = 1", name="f").default_entrypoint


def test_printing_a_unit_prints_every_kernel():
    tu = _pair()
    text = str(tu)
    assert "KERNEL: twice" in text and "KERNEL: inc" in text
    assert text == "\n".join(str(tu[n]) for n in tu.kernel_names())


def test_copy_and_with_entrypoints():
    tu = _pair()
    one = tu.with_entrypoints("inc")
    assert one.entrypoints == frozenset({"inc"})
    assert one.copy(entrypoints=frozenset({"twice"})).default_entrypoint.name == "twice"
    c_unit = tu.copy(target=lp.CTarget())
    assert isinstance(c_unit.target, lp.CTarget)
    assert all(isinstance(c_unit[n].target, lp.CTarget) for n in c_unit.kernel_names())
    assert tu.copy() == tu


def test_members_of_the_kernel_need_one_entrypoint():
    tu = _unit()
    assert tu.args == tu.default_entrypoint.args
    assert tu.name == "twice"
    pair = _pair()
    assert not hasattr(pair, "args")            # AttributeError, as in loopy
    with pytest.raises(AttributeError):
        _ = tu.no_such_member


def test_executor(queue):
    tu = _pair()
    a = np.arange(5, dtype=np.float32)
    run = tu.executor(queue.context, entrypoint="inc")
    _, (b,) = run(queue, a=a)
    np.testing.assert_allclose(b, a + 1)
    _, (out,) = _unit().executor(queue.context)(queue, a=a)
    np.testing.assert_allclose(out, 2 * a)
    with pytest.raises(lp.KernelcoreError, match="not an entry point"):
        tu.executor(queue.context, entrypoint="nope")
    with pytest.raises(ValueError, match="no entry points"):
        lp.make_function("{[i]: 0<=i<4}", "b[i] = 1", name="f").executor(queue.context)


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
