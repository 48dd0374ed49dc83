"""Issue 40: loopy semantics that kernelcore implements for loopy's own test-suite,
each checked against NumPy or the expected kernel structure."""

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.symbolic import get_dependencies


def test_rule_without_arguments_used_by_bare_name(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", """
        E := a[i]
        D:=E*E + 1
        b[i] = D
        """)
    rules = knl.default_entrypoint.substitutions
    assert set(rules) == {"D", "E"} and rules["E"].arguments == ()
    a = np.arange(10, dtype=np.float32)
    _, (b,) = knl(queue, a=a)
    np.testing.assert_allclose(b, a*a + 1)


def test_infer_types_keeps_rules():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "f(x) := 2*x\nb[i] = f(a[i])")
    typed = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    assert set(typed.default_entrypoint.substitutions) == {"f"}
    assert typed.default_entrypoint.arg_dict["b"].dtype == np.float32


def test_split_iname_rewrites_rule_bodies(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "E := a[i]\nf(i) := 3*i\nb[i] = E + f(1)")
    knl = lp.split_iname(knl, "i", 4)
    rules = knl.default_entrypoint.substitutions
    assert get_dependencies(rules["E"].expression) >= {"i_inner", "i_outer"}
    assert rules["f"].expression == knl.default_entrypoint.substitutions["f"].expression
    assert "i" in get_dependencies(rules["f"].expression)     # its own argument
    a = np.arange(10, dtype=np.float32)
    _, (b,) = knl(queue, a=a)
    np.testing.assert_allclose(b, a + 3)


def _segmented_sums(values, flags):
    out, acc = [], 0
    for v, f in zip(values, flags):
        acc = v if f else acc + v
        out.append(acc)
    return np.array(out)


@pytest.mark.parametrize("i_tag", ["for", "l.0"])
def test_segmented_scan(queue, i_tag):
    n = 13
    knl = lp.make_kernel(
        "{[i,j]: 0<=i<n and 0<=j<=i}",
        "out[i], <>flag = reduce(segmented(sum), j, arr[j], segflag[j])",
        [lp.GlobalArg("arr", np.float32, shape=("n",)),
         lp.GlobalArg("segflag", np.int32, shape=("n",)), "..."])
    assert "flag" in knl.default_entrypoint.temporary_variables
    knl = lp.fix_parameters(knl, n=n)
    knl = lp.tag_inames(knl, {"i": i_tag})
    knl = lp.realize_reduction(knl, force_scan=True)
    arr = np.arange(1, n + 1, dtype=np.float32)
    flags = np.zeros(n, np.int32)
    flags[[0, 4, 5, 11]] = 1
    _, (out,) = knl(queue, arr=arr, segflag=flags)
    np.testing.assert_allclose(out, _segmented_sums(arr, flags))


def test_segmented_flags_output(queue):
    knl = lp.make_kernel(
        "{[i,j]: 0<=i<n and 0<=j<=i}",
        "out[i], seen[i] = reduce(segmented(max), j, arr[j], segflag[j])")
    arr = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.float32)
    flags = np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int32)
    _, (out, seen) = knl(queue, arr=arr, segflag=flags)
    expected, acc = [], -np.inf
    for v, f in zip(arr, flags):
        acc = v if f else max(acc, v)
        expected.append(acc)
    np.testing.assert_allclose(out, expected)
    np.testing.assert_array_equal(seen, np.maximum.accumulate(flags))


def test_four_argument_reduce_must_be_segmented():
    with pytest.raises(lp.ParseError, match="segmented"):
        lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<=i}",
                       "out[i], f = reduce(sum, j, arr[j], segflag[j])")


@pytest.mark.parametrize(("lanes", "j_tag"), [(4, "vec"), (3, "unr"), (2, "vec")])
def test_vec_array_axis(queue, lanes, j_tag):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<lanes }", "out[i,j] = 2*a[i,j]",
                         [lp.GlobalArg("a", np.float32, shape=lp.auto),
                          lp.GlobalArg("out", np.float32, shape=lp.auto), "..."])
    knl = lp.fix_parameters(knl, lanes=lanes)
    knl = lp.tag_array_axes(knl, "out", "c,vec")
    assert knl.default_entrypoint.arg_dict["out"].strides == (lanes, 1)
    knl = lp.tag_inames(knl, {"j": j_tag})
    if j_tag == "vec":
        assert f"vstore{lanes}" in lp.generate_code_v2(knl).device_code()
    a = np.arange(10 * lanes, dtype=np.float32).reshape(10, lanes)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, 2*a)


def test_vec_axis_needs_vector_width():
    knl = lp.make_kernel("{ [i,j]: 0<=i<4 and 0<=j<5 }", "out[i,j] = 1",
                         [lp.GlobalArg("out", np.float32, shape=(4, 5))])
    with pytest.raises(lp.ParseError, match="vec"):
        lp.tag_array_axes(knl, "out", "c,vec")
    # a vector axis may be any one axis (its lanes contiguous)
    first = lp.tag_array_axes(knl, "out", "vec,c")
    assert first.default_entrypoint.arg_dict["out"].element_strides() == (1, 4)
    with pytest.raises(lp.ParseError, match="at most one"):
        lp.tag_array_axes(knl, "out", "vec,vec")


def test_dependency_cycle_error_class():
    from kernelcore.diagnostic import DependencyCycleFound
    knl = lp.make_kernel("{[i]: 0<=i<4}", """
        <float32> a = b + 1 {id=x, dep=y}
        <float32> b = a + 1 {id=y, dep=x}
        out[i] = a
        """, [lp.GlobalArg("out", np.float32, shape=4)])
    with pytest.raises(DependencyCycleFound, match="cycle"):
        lp.generate_code_v2(knl)
    assert issubclass(DependencyCycleFound, lp.SchedulingError)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_atomic_store(queue, dtype):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<100 }", "out[i % 4] = 7 + i % 4 {id=init, atomic=init}",
        [lp.GlobalArg("out", dtype, shape=lp.auto, for_atomic=True), "..."],
        silenced_warnings=["write_race(init)"])
    knl = lp.split_iname(knl, "i", 4, inner_tag="l.0", outer_tag="g.0")
    assert "kc_atomic_store" in lp.generate_code_v2(knl).device_code()
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(out, np.arange(7, 11, dtype=dtype))


@pytest.mark.parametrize(("option", "expected"), [
    ("trace_assignments", ["foo[0]", "foo[1]", "foo[2]"]),
    ("trace_assignment_values", ["foo[0] = 0", "foo[1] = 1.5", "foo[2] = 3"])])
def test_trace_assignments(capfd, option, expected):
    knl = lp.make_kernel("{[i]: 0<=i<3}", "foo[i] = 1.5*i", target=lp.ExecutableCTarget())
    knl = lp.set_options(knl, **{option: True})
    _, (foo,) = knl()
    np.testing.assert_allclose(foo, [0, 1.5, 3])
    assert capfd.readouterr().out.split("\n")[:3] == expected


def test_simul_reduce_and_reduction_over_no_inames(queue):
    knl = lp.make_kernel("{[i,j]: 0<=i,j<4}", """
        a = 1.5 + simul_reduce(sum, (i,j), i*j)
        b = reduce(any, [], 5)
        """)
    insns = knl.default_entrypoint.instructions
    assert [insn.expression.children[1].allow_simultaneous for insn in insns[:1]] == [True]
    _, (a, b) = knl(queue)
    assert a == 1.5 + 36 and b == 5


def test_realize_reduction_filter_list():
    knl = lp.make_kernel("{[i, j, k]: 0<=i,j,k<10}", """
        a = sum(i, 8*i)    {id=w_a}
        b = sum(j, j*j)    {id=w_b}
        c = sum(k, 3*k) {id=w_c}
        """)
    done = lp.realize_reduction(knl, insn_id_filter=["w_a", "w_b"]).default_entrypoint
    assert [done.id_to_insn[i].reduction_inames() for i in ("w_a", "w_b", "w_c")] == [
        frozenset(), frozenset(), frozenset({"k"})]
    with pytest.raises(lp.KernelcoreError, match="'nope'"):
        lp.realize_reduction(knl, insn_id_filter=["w_a", "nope"])
