"""Loop fusion inside a kernel: which candidate loops
``get_kennedy_unweighted_fusion_candidates`` fuses, which it must keep apart
(nesting, different enclosing loops, different bounds, dependencies through
other statements, accesses whose order fusion would reverse), and that the
fused kernels compute what NumPy does."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def fuse(t_unit, candidates):
    knl = t_unit.default_entrypoint
    mapping = lp.get_kennedy_unweighted_fusion_candidates(knl, frozenset(candidates))
    return t_unit.with_kernel(lp.rename_inames_in_batch(knl, mapping)), mapping


def test_side_by_side_loops_fuse_and_compute_the_same(queue):
    t_unit = lp.make_kernel(
        "{[j0, j1]: 0 <= j0, j1 < 12}",
        """
        a[j0] = 3*x[j0]           {id=wa}
        b[j1] = a[j1] + x[j1]**2  {id=wb}
        """, seq_dependencies=True)
    fused, mapping = fuse(t_unit, ["j0", "j1"])
    assert set(mapping) == {"j0", "j1"} and len(set(mapping.values())) == 1
    knl = fused.default_entrypoint
    assert len(knl.all_inames()) == 1
    x = np.linspace(0, 1, 12)
    _, (a, b) = fused(queue, x=x)
    np.testing.assert_allclose(host(a), 3*x)
    np.testing.assert_allclose(host(b), 3*x + x**2)


def test_nested_candidates_raise():
    t_unit = lp.make_kernel("{[i, j]: 0<=i, j<4}", "a[i, j] = i + j")
    with pytest.raises(lp.LoopyError, match="nested within one another"):
        lp.get_kennedy_unweighted_fusion_candidates(t_unit.default_entrypoint, {"i", "j"})


def test_different_enclosing_loops_stay_apart():
    t_unit = lp.make_kernel(
        "{[i, j0, j1]: 0 <= i, j0, j1 < 5}",
        """
        a[i] = 1
        b[i, j0] = 2 {id=wb}
        c[j1] = 3 {id=wc}
        """)
    _, mapping = fuse(t_unit, ["j0", "j1"])
    assert mapping == {}


def test_different_bounds_stay_apart():
    t_unit = lp.make_kernel(
        "{[j0, j1]: 0 <= j0 < 5 and 0 <= j1 < 6}",
        """
        a[j0] = 1
        c[j1] = 3
        """)
    _, mapping = fuse(t_unit, ["j0", "j1"])
    assert mapping == {}


@pytest.mark.parametrize("shift, fused_expected", [(-1, True), (1, False)])
def test_order_of_element_accesses_decides(queue, shift, fused_expected):
    # the second loop overwrites x[i1 + shift]: fusion is legal only if no
    # element is written by the first loop in a later iteration
    t_unit = lp.make_kernel(
        "{[i0, i1]: 1 <= i0, i1 < 9}",
        f"""
        x[i0] = i0             {{id=first}}
        x[i1 + {shift}] = i1**2  {{id=second}}
        """, [lp.GlobalArg("x", np.int32, shape=(10,))], seq_dependencies=True)
    fused, mapping = fuse(t_unit, ["i0", "i1"])
    assert bool(mapping) == fused_expected
    x_ref = np.full(10, -1, np.int32)
    for i in range(1, 9):
        x_ref[i] = i
    for i in range(1, 9):
        x_ref[i + shift] = i**2
    out = np.full(10, -1, np.int32)
    _, (res,) = fused(queue, x=out)
    np.testing.assert_array_equal(host(res), x_ref)


def test_path_through_another_statement_prevents_fusion(queue):
    t_unit = lp.make_kernel(
        "{[j0, j1]: 0 <= j0, j1 < 8}",
        """
        a[j0] = j0          {id=wa}
        s = a[3] + 1        {id=ws}
        c[j1] = s * a[j1]   {id=wc}
        """, [lp.GlobalArg("a,c", np.float64, shape=(8,)),
              lp.GlobalArg("s", np.float64, shape=())], seq_dependencies=True)
    fused, mapping = fuse(t_unit, ["j0", "j1"])
    assert mapping == {}
    _, (a, c, s) = fused(queue)
    np.testing.assert_allclose(host(c), 4 * np.arange(8))


def test_reduction_loops_fuse(queue):
    t_unit = lp.make_kernel(
        "{[i, j0, j1]: 0 <= i < 4 and 0 <= j0, j1 < 6}",
        """
        y0[i] = sum(j0, 2*A[i, j0])
        y1[i] = sum(j1, 3*A[i, j1])
        out = sum(j0, A[0, j0]) + sum(j1, A[1, j1]*A[1, j1])
        """, [lp.GlobalArg("A", np.float64, shape=(4, 6)), ...])
    knl = t_unit.default_entrypoint
    mapping = lp.get_kennedy_unweighted_fusion_candidates(knl, {"j0", "j1"})
    fused = t_unit.with_kernel(lp.rename_inames_in_batch(knl, mapping))
    new = fused.default_entrypoint
    assert new.id_to_insn["insn"].reduction_inames() \
        == new.id_to_insn["insn_0"].reduction_inames()
    A = np.random.default_rng(3).random((4, 6))
    _, (out, y0, y1) = fused(queue, A=A)
    np.testing.assert_allclose(host(y0), 2*A.sum(axis=1))
    np.testing.assert_allclose(host(y1), 3*A.sum(axis=1))
    np.testing.assert_allclose(host(out), A[0].sum() + (A[1]**2).sum())


def test_rename_inames_in_batch_renames_and_merges():
    t_unit = lp.make_kernel("{[i, j, k]: 0 <= i, j, k < 3}",
                            ["a[i] = 1", "b[j] = 2", "c[k] = 3"])
    knl = lp.rename_inames_in_batch(t_unit.default_entrypoint,
                                    {"i": "ii", "j": "ii", "k": "kk"})
    assert set(knl.all_inames()) == {"ii", "kk"}
