"""Reductions rewritten as loopy's tests do: ``make_reduction_inames_unique``
(later reductions over an iname get a copy of it), ``reduction_arg_to_subst_rule``
(the reduced expression becomes a substitution rule), precomputing a rule over
a loop of parametric length into global memory (with loopy's global barrier
``<rule>_barrier``), and the refusal of a reduction over an iname its
instruction runs in."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim
import pytest

import kernelcore as lp
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.instruction import BarrierInstruction
from kernelcore.transform.data import reduction_arg_to_subst_rule
from tests.helpers import host


def test_make_reduction_inames_unique_copies_later_inames(queue):
    knl = lp.make_kernel("{[i,j]: 0<=i,j<n}",
                         ["a = sum((i,j), i*j)", "b = sum(i, sum(j, i*j))"],
                         assumptions="n>=1")
    knl = lp.make_reduction_inames_unique(knl)
    entry = knl.default_entrypoint
    assert set(entry.all_inames()) == {"i", "j", "i_0", "j_0"}
    n = 20
    _evt, (a, b) = knl(queue, n=n)
    ref = sum(i * j for i in range(n) for j in range(n))
    assert int(host(a)) == ref
    assert int(host(b)) == ref


def test_make_reduction_inames_unique_only_given_inames():
    knl = lp.make_kernel("{[i,j]: 0<=i,j<4}",
                         ["a = sum((i,j), i*j)", "b = sum(i, sum(j, i*j))"])
    knl = lp.make_reduction_inames_unique(knl, inames="j")
    assert set(knl.default_entrypoint.all_inames()) == {"i", "j", "j_0"}


def test_reduction_arg_to_subst_rule_makes_a_rule(queue):
    knl = lp.make_kernel("{[i,j]: 0<=i<8 and 0<=j<5}",
                         "out[i] = sum(j, a[i, j] * 2)")
    knl = lp.add_dtypes(knl, {"a": np.float64})
    knl = reduction_arg_to_subst_rule(knl, "j")
    entry = knl.default_entrypoint
    rule = entry.substitutions["red_j_arg"]
    assert rule.arguments == ("j",)
    assert "red_j_arg(j)" in str(entry.instructions[0].expression)
    a = np.random.default_rng(0).random((8, 5))
    _evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), (2 * a).sum(axis=1))


def test_precompute_global_of_parametric_length(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}",
                         """
                         f(i) := 2*a[i]
                         out[i] = f(i) + 1
                         """, [lp.GlobalArg("a", np.float64, shape="n"), "..."])
    knl = lp.precompute(knl, "f", "i", temporary_address_space=lp.AddressSpace.GLOBAL,
                        default_tag=None)
    entry = knl.default_entrypoint
    assert "i_0" in entry.all_inames()           # named after the rule's argument
    barrier = entry.id_to_insn["f_barrier"]
    assert isinstance(barrier, BarrierInstruction)
    assert barrier.synchronization_kind == "global"
    assert "f_barrier" in entry.id_to_insn["insn"].depends_on
    a = np.arange(37.0)
    _evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), 2 * a + 1)


def test_precompute_private_of_parametric_length_is_variable_length():
    """A private footprint whose length depends on the parameters is a
    variable-length array (as loopy declares it)."""
    knl = lp.make_kernel("{[i]: 0<=i<n}",
                         """
                         f(i) := 2*a[i]
                         out[i] = f(i) + 1
                         """, [lp.GlobalArg("a", np.float64, shape="n"), "..."])
    knl = lp.precompute(knl, "f", "i", temporary_address_space=lp.AddressSpace.PRIVATE,
                        default_tag=None)
    (temp,) = knl.default_entrypoint.temporary_variables.values()
    assert temp.shape == (prim.Variable("n"),)
    assert f"double {temp.name}[n];" in lp.generate_code_v2(knl).device_code()


def test_reduction_over_an_iname_of_its_own_instruction_is_refused():
    knl = lp.make_kernel("{[i]: 0<=i<100}", "a[i] = sum(i, 2)",
                         [lp.GlobalArg("a", np.float32, shape=(100,))])
    with pytest.raises(KernelcoreError, match="also runs in"):
        lp.preprocess_kernel(knl)


# (as loopy, kernelcore warns of a write race: the partial sum is stored by
# the work-items of the group, all holding the same value)
@pytest.mark.filterwarnings("ignore::kernelcore.diagnostic.WriteRaceConditionWarning")
@pytest.mark.parametrize("n", [1, 37, 200])
def test_two_stage_sum_through_a_global_rule(queue, n):
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "z[0] = sum(i, a[i])")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    knl = lp.split_iname(knl, "i", 16 * 4)
    knl = lp.split_iname(knl, "i_inner", 16, inner_tag="l.0")
    knl = lp.split_reduction_outward(knl, "i_outer")
    knl = lp.split_reduction_inward(knl, "i_inner_outer")
    knl = reduction_arg_to_subst_rule(knl, "i_outer")
    knl = lp.precompute(knl, "red_i_outer_arg", "i_outer",
                        temporary_address_space=lp.AddressSpace.GLOBAL, default_tag="l.auto")
    knl = lp.realize_reduction(knl)
    knl = lp.tag_inames(knl, "i_outer_0:g.0")
    entry = knl.default_entrypoint
    # the partial sums' inner loops are bounded by the storage index
    fetch = next(i for i in entry.instructions if "red_i_outer_arg_0[" in str(i.assignee))
    assert "i_outer" not in str(fetch.expression).replace("i_outer_0", "")
    a = np.random.default_rng(n).random(n, dtype=np.float32)
    _, (z,) = knl(queue, a=a)
    np.testing.assert_allclose(host(z)[0], a.sum(), rtol=1e-5)
