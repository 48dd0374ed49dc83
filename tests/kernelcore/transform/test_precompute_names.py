"""loopy's keyword names for precompute: ``precompute_outer_inames`` (the
loops the precomputation runs inside) is kernelcore's ``fetch_outer_inames``; a
prefetch of a given footprint (``add_prefetch(knl, "a[f, :, :]")``)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.diagnostic import VariableAccessNotOrdered
from tests.helpers import host


def _diff_kernel():
    knl = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<5}",
        """
        D(i) := a[i+1] - a[i]
        b[i, j] = D(j) * i
        """)
    return lp.add_and_infer_dtypes(knl, {"a": np.float32})


def test_precompute_outer_inames_is_fetch_outer_inames(queue):
    knl = lp.split_iname(_diff_kernel(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "D", sweep_inames="j",
                        precompute_outer_inames="i_inner, i_outer", default_tag=None)
    fetch = [insn for insn in knl.default_entrypoint.instructions
             if "D" in str(insn.assignee)]
    assert fetch and {"i_inner", "i_outer"} <= fetch[0].within_inames
    a = np.arange(6, dtype=np.float32) ** 2
    _, (b,) = knl(queue, a=a, n=20)
    expected = np.outer(np.arange(20), np.diff(a)).astype(np.float32)
    np.testing.assert_allclose(host(b), expected)


def test_both_names_refused():
    with pytest.raises(lp.LoopyError, match="not both"):
        lp.precompute(_diff_kernel(), "D", "j", fetch_outer_inames="i",
                      precompute_outer_inames="i")


def _two_matrices(k_extent: str):
    knl = lp.make_kernel(
        f"{{[e,i,j,k]: 0<=e<E and 0<=i,j<n and 0<=k<{k_extent}}}",
        """
        r1[e, i] = sum(j, D1[i, j]*u[e, j])
        r2[e, i] = sum(k, D2[i, k]*v[e, k])
        """)
    knl = lp.add_and_infer_dtypes(knl, {"u,v,D1,D2": np.float32})
    knl = lp.fix_parameters(knl, n=5)
    knl = lp.extract_subst(knl, "D1_subst", "D1[ii,jj]", parameters="ii,jj")
    knl = lp.extract_subst(knl, "D2_subst", "D2[ii,jj]", parameters="ii,jj")
    return lp.precompute(knl, "D1_subst", "i,j", default_tag="for", precompute_inames="ii,jj")


def test_precompute_reuses_existing_inames_of_equal_range(queue):
    knl = lp.precompute(_two_matrices("n"), "D2_subst", "i,k", default_tag="for",
                        precompute_inames="ii,jj")
    rng = np.random.default_rng(3)
    d1, d2 = rng.random((5, 5), np.float32), rng.random((5, 5), np.float32)
    u, v = rng.random((3, 5), np.float32), rng.random((3, 5), np.float32)
    _, (r1, r2) = knl(queue, D1=d1, D2=d2, u=u, v=v)
    np.testing.assert_allclose(host(r1), u @ d1.T, rtol=1e-5)
    np.testing.assert_allclose(host(r2), v @ d2.T, rtol=1e-5)


def test_precompute_refuses_existing_inames_of_another_range():
    # the second footprint needs jj up to 2*n - 1, the existing jj stops at n - 1
    with pytest.raises(lp.LoopyError, match="existing loop"):
        lp.precompute(_two_matrices("2*n"), "D2_subst", "i,k", default_tag="for",
                      precompute_inames="ii,jj")


def _shared_fetch_kernel(extra_dependencies: bool):
    knl = lp.make_kernel(
        "{[i0, i1, j0, j1]: 0<=i0<7 and 0<=i1<6 and 0<=j0, j1<4}",
        """
        y0[i0] = sum(j0, A[j0] * x0[i0, j0])
        y1[i1] = sum(j1, A[j1] * x1[i1, j1])
        """)
    knl = lp.add_dtypes(knl, {"A,x0,x1": np.float64})
    knl = lp.add_prefetch(knl, "A", sweep_inames=["j0"], within="iname:i0",
                          temporary_name="A_fetch", prefetch_insn_id="first_fetch")
    knl = lp.add_prefetch(knl, "A", sweep_inames=["j1"], within="iname:i1",
                          temporary_name="A_fetch", prefetch_insn_id="second_fetch")
    if extra_dependencies:
        # the second fetch first: no loop over i0 may open before both fetches ran
        knl = lp.add_dependency(knl, "writes:y1 or writes:y0",
                                "id:second_fetch or id:first_fetch")
        knl = lp.add_dependency(knl, "id:first_fetch", "id:second_fetch")
    return knl


def test_two_prefetches_fill_one_temporary(queue):
    knl = _shared_fetch_kernel(True)
    entry = knl.default_entrypoint
    assert [t for t in entry.temporary_variables if t.startswith("A")] == ["A_fetch"]
    rng = np.random.default_rng(7)
    a, x0, x1 = rng.random(4), rng.random((7, 4)), rng.random((6, 4))
    _, (y0, y1) = knl(queue, A=a, x0=x0, x1=x1)
    np.testing.assert_allclose(host(y0), x0 @ a)
    np.testing.assert_allclose(host(y1), x1 @ a)


def test_two_prefetches_into_one_temporary_need_an_order():
    """Without dependencies between them, one fetch may overwrite the other's
    values before they are read: loopy's access-ordering check refuses it."""
    knl = _shared_fetch_kernel(False)
    with pytest.raises(VariableAccessNotOrdered, match="'A_fetch'"):
        lp.generate_code_v2(knl)


def test_prefetch_into_a_temporary_of_another_shape_is_refused():
    knl = lp.make_kernel("{[i, j]: 0<=i<5 and 0<=j<3}", "y[i] = sum(j, A[j]*x[i, j])",
                         [lp.TemporaryVariable("A_fetch", np.float64, shape=(7,)), ...])
    knl = lp.add_dtypes(knl, {"A,x": np.float64})
    with pytest.raises(lp.LoopyError, match="already in use"):
        lp.add_prefetch(knl, "A", sweep_inames=["j"], temporary_name="A_fetch")


def test_prefetch_of_a_given_footprint(queue):
    # 'a[:, :]': the whole array, whatever the uses read
    knl = lp.make_kernel("{[i, j]: 0<=i, j<8}", "out[i, j] = a[i, j] + a[j, i]",
                         [lp.GlobalArg("a", np.float32, shape=(8, 8)), ...])
    whole = lp.add_prefetch(knl, "a[:, :]", default_tag=None)
    fetch = whole["loopy_kernel"].temporary_variables["a_fetch"]
    assert fetch.shape == (8, 8)
    a = np.random.default_rng(1).random((8, 8)).astype(np.float32)
    np.testing.assert_allclose(host(whole(queue, a=a)[1][0]), a + a.T)
    # 'a[f, :, :]': one slab per value of the outer iname f
    knl = lp.make_kernel("{[f, i, j]: 0<=f<3 and 0<=i, j<8}", "out[f, i, j] = 2*a[f, j, i]",
                         [lp.GlobalArg("a", np.float32, shape=(3, 8, 8)), ...])
    slab = lp.add_prefetch(knl, "a[f, :, :]", default_tag=None)
    assert slab["loopy_kernel"].temporary_variables["a_fetch"].shape == (8, 8)
    a = np.random.default_rng(2).random((3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(host(slab(queue, a=a)[1][0]), 2 * a.transpose(0, 2, 1))
    with pytest.raises(lp.LoopyError, match="2 indices, the uses 3"):
        lp.add_prefetch(knl, "a[:, :]", default_tag=None)


def test_swept_iname_named_among_the_outer_ones_is_swept(queue):
    # loopy's test_rank_one: 'j_inner' both swept and in fetch_outer_inames
    knl = lp.make_kernel("{[i, j]: 0<=i, j<n}", "c[i, j] = a[i]*b[j]",
                         [lp.GlobalArg("a, b", np.float32, shape=("n",)), ...],
                         assumptions="n >= 16",
                         # (each work-item of a column fetches the same values)
                         silenced_warnings=["write_race_local*"])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.1", inner_tag="l.1")
    for name, iname in (("a", "i_inner"), ("b", "j_inner")):
        knl = lp.add_prefetch(knl, name, [iname],
                              fetch_outer_inames="i_outer, j_outer, j_inner",
                              temporary_address_space=lp.AddressSpace.LOCAL,
                              default_tag="l.auto")
    assert knl["loopy_kernel"].temporary_variables["b_fetch"].shape == (16,)
    rng = np.random.default_rng(5)
    a, b = rng.random(48, dtype=np.float32), rng.random(48, dtype=np.float32)
    _, (c,) = knl(queue, a=a, b=b)
    np.testing.assert_allclose(host(c), np.outer(a, b), rtol=1e-6)


def test_storage_axes_avoid_the_local_axes_the_fetch_runs_in(queue):
    # loopy's test_precompute_confusing_subst_arguments: 'j' swept and outer
    knl = lp.make_kernel("{[i, j]: 0<=i<n and 0<=j<5}",
                         """
                         D(i) := a[i+1] - a[i]
                         b[i, j] = D(j)
                         """)
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    knl = lp.tag_inames(knl, {"j": "g.1"})
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "D", sweep_inames="j",
                        precompute_outer_inames="j, i_inner, i_outer", default_tag="l.auto")
    storage = [n for n in knl["loopy_kernel"].all_inames() if n.startswith("D")]
    assert all(knl["loopy_kernel"].iname_tags[n] is None for n in storage)
    a = np.random.default_rng(6).random(6, dtype=np.float32)
    _, (b,) = knl(queue, a=a, n=39)
    np.testing.assert_allclose(host(b), np.tile(a[1:6] - a[:5], (39, 1)), rtol=1e-6)


def test_prefetch_from_a_temporary(queue):
    """add_prefetch also fetches from a temporary (here one prefetch of
    another)."""
    knl = lp.make_kernel(
        "{[k,i,j]: 0<=k<4 and 0<=i<5 and 0<=j<6}",
        "result[i,k] = sum(j, mat[i, j] * vec[j, k])",
        [lp.GlobalArg("result", np.float32, shape=(5, 4)),
         lp.GlobalArg("mat", np.float32, shape=(5, 6)),
         lp.GlobalArg("vec", np.float32, shape=(6, 4))])
    knl = lp.prioritize_loops(knl, "i,k,j")
    knl = lp.add_prefetch(knl, "mat", "i, j", temporary_name="s_mat", default_tag="for")
    knl = lp.add_prefetch(knl, "s_mat", "j", temporary_name="p_mat", default_tag="for")
    temps = knl.default_entrypoint.temporary_variables
    assert temps["p_mat"].shape == (6,)
    rng = np.random.default_rng(3)
    mat, vec = rng.random((5, 6), np.float32), rng.random((6, 4), np.float32)
    _, (result,) = knl(queue, mat=mat, vec=vec)
    np.testing.assert_allclose(host(result), mat @ vec, rtol=1e-5)


def test_precompute_of_a_rule_using_swept_inames_itself(queue):
    """A rule whose body uses the swept iname itself (here through another
    rule) gets a storage axis for it, and runs inside the loops its body uses."""
    knl = lp.make_kernel("{[i]: 0<=i<n}", """
        E := a[i]
        D := E*E
        b[i] = D
        """)
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "D", "i_inner", default_tag="l.auto")
    k = knl.default_entrypoint
    compute = k.id_to_insn["D"]
    assert "i_outer" in compute.within_inames and "i_inner" not in compute.within_inames
    assert k.temporary_variables["D_0"].shape == (16,)
    # E is called as a copy in the storage iname; the rules left unused are gone
    assert set(k.substitutions) == {"E"}
    assert "i_inner_0" in str(k.substitutions["E"].expression)
    a = np.linspace(0, 1, 40, dtype=np.float32)
    _, (b,) = knl(queue, a=a)
    np.testing.assert_allclose(host(b), a * a, rtol=1e-6)
