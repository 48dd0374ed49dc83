"""Calls without results (``f()``, ``f(sum(i, x[i]))``, loopy's
``CallInstruction((), call)``), the preambles a kernel brings (``preambles=``,
``preamble_generators=``, also those of called and inlined kernels), and
``iname_slab_increments``, loopy's name of ``iname_slabs``."""

import numpy as np
import pymbolic.primitives as prim
import pytest

import kernelcore as lp
from kernelcore.callables import NumpyType, ScalarCallable
from kernelcore.ir.instruction import Assignment, CallInstruction


class _Note(ScalarCallable):
    """``note(x)``: a C function of one float that returns nothing."""

    def with_types(self, arg_id_to_dtype, callables):
        if set(arg_id_to_dtype) - {0}:
            raise RuntimeError("note takes one argument and returns nothing")
        if 0 not in arg_id_to_dtype:
            return self, callables
        return self.copy(arg_id_to_dtype={0: NumpyType(np.float32)},
                         name_in_target="note"), callables

    def with_descrs(self, arg_id_to_descr, callables):
        return self.copy(arg_id_to_descr=arg_id_to_descr), callables

    def generate_preambles(self, target):
        yield ("10_note", "void note(float x) { (void) x; }")


def test_parsed_call_without_results():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "note(sum(i, x[i])) {id=call}")
    insn = knl.default_entrypoint.id_to_insn["call"]
    assert isinstance(insn, CallInstruction)
    assert insn.assignee is None and insn.assignees == () and not insn.assignee_names()
    assert str(insn).startswith("note(")
    assert insn.within_inames == frozenset()


def test_call_without_results_after_a_reduction(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "note(sum(i, x[i]))")
    knl = lp.register_callable(knl, "note", _Note("note"))
    knl = lp.add_and_infer_dtypes(knl, {"x": np.float32})
    pre = lp.preprocess_kernel(knl)["loopy_kernel"]
    # the accumulator's initialization and update, then the call
    assert len(pre.instructions) == 3
    assert sum(isinstance(i, Assignment) and i.assignee is not None
               for i in pre.instructions) == 2
    code = lp.generate_code_v2(knl).device_code()
    assert "void note(float x)" in code
    assert "note(acc_i);" in code
    knl(queue, x=np.arange(5, dtype=np.float32))


def test_loopy_call_instruction_without_assignees(queue):
    knl = lp.make_kernel("{:}", [CallInstruction((), prim.Call(prim.Variable("note"),
                                                                (1.5,)))])
    knl = lp.register_callable(knl, "note", _Note("note"))
    assert "note(1.5f);" in lp.generate_code_v2(knl).device_code()
    knl(queue)


def _twice_by_macro(**kwargs):
    return lp.make_kernel(
        "{[i]: 0<=i<n}",
        [lp.CInstruction("i", "out[i] = TWICE(a[i]);", read_variables={"a"},
                         assignees="out[i]")],
        [lp.GlobalArg("a, out", np.float32, shape="n"), lp.ValueArg("n", np.int32)],
        **kwargs)


def test_kernel_preambles(queue):
    knl = _twice_by_macro(preambles=[("10_twice", "#define TWICE(x) (2*(x))")])
    a = np.arange(6, dtype=np.float32)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, 2 * a)


def test_preamble_generators_see_the_kernel(queue):
    seen = []

    def generator(info):
        seen.append(info.kernel.name)
        yield ("10_twice", "#define TWICE(x) ((x) + (x))")

    knl = _twice_by_macro(preamble_generators=[generator], name="gen_twice")
    a = np.arange(6, dtype=np.float32)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, 2 * a)
    assert "gen_twice" in seen


@pytest.mark.parametrize("inline", [False, True])
def test_preambles_of_called_kernels(queue, inline):
    callee = lp.make_function(
        "{[i]: 0<=i<4}", "y[i] = x[i] + 3",
        [lp.GlobalArg("x, y", np.float32, shape=(4,))],
        preambles=[("10_shift", "#define SHIFT_BY 3")],
        preamble_generators=[lambda info: [("11_offset", f"#define FROM_{info.kernel.name}")]],
        name="shift")
    caller = lp.make_kernel("{[k]: 0<=k<4}", "[k]: out[k] = shift([k]: a[k])",
                            [lp.GlobalArg("a, out", np.float32, shape=(4,))])
    knl = lp.merge([caller, callee])
    if inline:
        knl = lp.inline_callable_kernel(knl, "shift")
        assert knl.default_entrypoint.preambles == (("10_shift", "#define SHIFT_BY 3"),)
    code = lp.generate_code_v2(knl).device_code()
    assert "#define SHIFT_BY 3" in code
    # the generator is the callee's: told of the callee, or (inlined) of the caller
    assert ("#define FROM_loopy_kernel" if inline else "#define FROM_shift") in code
    a = np.arange(4, dtype=np.float32)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, a + 3)


def test_iname_slab_increments_is_iname_slabs():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]").default_entrypoint
    knl = knl.copy(iname_slab_increments={"i": (0, 1)})
    assert knl.iname_slabs == {"i": (0, 1)}
    assert knl.iname_slab_increments == {"i": (0, 1)}
