"""Raw C instructions (``lp.CInstruction``) and declarations of several
names at once (``lp.GlobalArg("a, b", ...)``, ``lp.ValueArg("n, m")``), as
loopy has them (issue 20)."""

import numpy as np

import kernelcore as lp
from kernelcore.kernel.instruction import CInstruction


def _square_plus_index():
    return lp.make_kernel(
        "{[i]: 0<=i<n}", [
            lp.CInstruction("i", """
                t = a[i] * a[i];
                t += (float) i;
                """, read_variables={"a"}, assignees="t", id="c"),
            "out[i] = 2*t  {dep=c}"],
        [lp.GlobalArg("a, out", np.float32, shape="n"), lp.TemporaryVariable("t", np.float32),
         lp.ValueArg("n", np.int32)], name="cinsn")


def test_c_instruction_fields():
    insn = CInstruction("i, j", "x = 1;", assignees="x; y[i]", read_variables={"a"},
                        id="raw")
    assert insn is not None and lp.CInstruction is CInstruction
    assert [n for n, _ in insn.iname_exprs] == ["i", "j"]
    assert insn.assignee_names() == frozenset({"x", "y"})
    assert insn.read_dependency_names() == frozenset({"a", "i", "j"})
    assert str(insn).startswith("x, y[i] <- CODE(a|i=i, j=j)  {id=raw}\n    x = 1;")
    moved = insn.copy(id="other")
    assert moved.id == "other" and moved.iname_exprs == insn.iname_exprs


def test_c_instruction_runs(queue):
    tu = _square_plus_index()
    insn = tu.default_entrypoint.id_to_insn["c"]
    assert insn.within_inames == frozenset({"i"})       # from its iname expressions
    a = np.arange(6, dtype=np.float32)
    _, (out,) = tu(queue, a=a)
    np.testing.assert_allclose(out, 2 * (a * a + np.arange(6)))


def test_c_instruction_sees_transformed_inames(queue):
    tu = lp.split_iname(_square_plus_index(), "i", 4, outer_tag="g.0", inner_tag="l.0")
    code = lp.generate_code_v2(tu).device_code()
    assert "int const i = lid(0) + gid(0) * 4;" in code
    assert "t += (float) i;" in code
    a = np.arange(10, dtype=np.float32)
    _, (out,) = tu(queue, a=a)
    np.testing.assert_allclose(out, 2 * (a * a + np.arange(10)))


def test_several_names_in_one_declaration():
    tu = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<m}", "c[i, j] = a[i, j] + b[i, j]",
        [lp.GlobalArg("a, b,c", np.float64, shape="n, m"), lp.ValueArg("n, m", np.int32)])
    knl = tu.default_entrypoint
    assert [a.name for a in knl.args] == ["a", "b", "c", "n", "m"]
    assert all(knl.arg_dict[x].shape == knl.arg_dict["a"].shape for x in "bc")
    assert knl.arg_dict["m"].dtype == np.int32
    temps = lp.make_kernel(
        "{[i]: 0<=i<4}", "t[i] = 1\nu[i] = t[i]\nout[i] = u[i]",
        [lp.TemporaryVariable("t,u", np.float32, shape=(4,)), ...]).default_entrypoint
    assert set(temps.temporary_variables) == {"t", "u"}


def test_c_instruction_iname_given_twice_is_defined_once():
    insn = CInstruction(("i", "i"), "break;", id="brk")
    assert [n for n, _ in insn.iname_exprs] == ["i"]
