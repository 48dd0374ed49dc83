"""Issue 40: more of loopy's forms from its test_loopy.py, checked on kernelcore
(and against NumPy where a kernel runs)."""

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.match import ObjTagged
from kernelcore.symbolic import Reduction, parse
from tests.helpers import host


def test_fixed_parameter_makes_private_shape_constant(queue):
    # z's shape n+1 becomes 16 once n is fixed: a private array again
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        <> z[i] = a[i]            {id=w}
        z[i + 1] = 0              {id=w2, dep=w}
        out[i] = 2*z[i]           {dep=w2}
        """, [lp.GlobalArg("a, out", np.float64, shape=("n",)), ...])
    knl = lp.fix_parameters(knl, n=15)
    assert knl["loopy_kernel"].temporary_variables["z"].shape == (16,)
    a = np.arange(15.0)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), 2 * a)


def test_temporary_may_be_called_gid(queue):
    knl = lp.make_kernel("{[i]: 0<=i<8}", "<int32> gid = i // 4\nout[i] = gid",
                         seq_dependencies=True)
    knl = lp.tag_inames(knl, {"i": "l.0"})
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(host(out), np.arange(8) // 4)


def test_substitutions_given_when_making_the_kernel(queue):
    rule = lp.SubstitutionRule("foo", (), 3.0)
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = foo() * i",
                         substitutions={"foo": rule})
    _, (a,) = knl(queue)
    np.testing.assert_allclose(host(a), 3.0 * np.arange(4))
    scaled = lp.SubstitutionRule("scaled", ("x",), parse("2*x"))
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = scaled(i)",
                         substitutions={"scaled": scaled})
    np.testing.assert_array_equal(host(knl(queue)[1][0]), 2 * np.arange(4))
    with pytest.raises(lp.LoopyError, match="both"):
        lp.make_kernel("{[i]: 0<=i<4}", "foo := 5\na[i] = foo() * i",
                       substitutions={"foo": rule})


def test_obj_tagged_matches_instruction_tags():
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = i {tags=one}\nb[i] = i {tags=two}")
    found = lp.find_instructions(knl, ObjTagged("two"))
    assert [insn.assignee_names() for insn in found] == [frozenset({"b"})]
    assert ObjTagged("x") == ObjTagged("x")


def test_parse_gives_explicit_reductions():
    expr = parse("reduce(argmax, i, reduce(argmax, j, i, j))")
    assert isinstance(expr, Reduction) and expr.inames == ("i",)
    inner = expr.expr
    assert isinstance(inner, Reduction) and inner.operation == "argmax"
    assert inner.expr == (parse("i"), parse("j"))
    total = parse("simul_reduce(sum, (i, j), a[i, j])")
    assert total.inames == ("i", "j") and total.allow_simultaneous
    assert not isinstance(parse("f(i, j, k)"), Reduction)


def test_all_params_is_a_set():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m and i mod 2 = 0}", "")
    k = knl["loopy_kernel"]
    assert k.all_params() == {"n", "m"}
    assert k.ordered_params() == ("n", "m")


def test_nosync_scopes_parsed_and_printed():
    knl = lp.make_kernel(
        "{[i]: 0 <= i < 10}",
        """
        <>t = 1 {id=insn1,nosync=insn1}
        t = 3   {id=insn3,nosync=insn1@local:insn3@global}
        t = 4   {id=insn4,nosync_query=id:insn*@local}
        """)
    insns = knl["loopy_kernel"].id_to_insn
    assert insns["insn3"].no_sync_with == {("insn1", "local"), ("insn3", "global")}
    # a query leaves the instruction itself out
    assert insns["insn4"].no_sync_with == {("insn1", "local"), ("insn3", "local")}
    assert "id=insn3, no_sync_with=insn1@local:insn3@global" in str(knl)
    with pytest.raises(lp.LoopyError, match="scope"):
        lp.make_kernel("{[i]: 0 <= i < 10}", "<>t = 1 {id=a,nosync=a@nowhere}")
