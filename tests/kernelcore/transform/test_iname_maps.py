"""Iname maps (affine changes of variables, unique reduction inames, hardware
axes added to instructions), metadata tags on inames, and loopy's names and
dependencies of precompute's and buffer_array's instructions."""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest
from pymbolic import parse
from pytools.tag import Tag, UniqueTag

import kernelcore as lp
from kernelcore.kernel.data import LocalIndexTag, UnrollTag
from tests.helpers import host


class _Meta(Tag):
    pass


class _Unique(UniqueTag):
    pass


class _OtherUnique(_Unique):
    pass


def test_affine_map_inames_runs_as_before(queue):
    knl = lp.make_kernel(
        "{[i, n]: 0<=i,n<4}",
        "out[n+i, n] = a[i] * 10 + n")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float64})
    mapped = lp.affine_map_inames(knl, "i", "i0", "i0 = n+i")
    k = mapped.default_entrypoint
    assert "i" not in k.all_inames() and "i0" in k.all_inames()
    a = np.arange(4.0)
    _, (out,) = mapped(queue, a=a)
    got = host(out)
    for i in range(4):          # (the other elements are not written)
        for n in range(4):
            assert got[n + i, n] == a[i] * 10 + n


def test_affine_map_inames_refuses_used_name():
    knl = lp.make_kernel("{[i, j]: 0<=i,j<4}", "out[i, j] = i + j")
    with pytest.raises(lp.LoopyError, match="already in use"):
        lp.affine_map_inames(knl, "i", "j", "j = i + 1")


def test_make_reduction_inames_unique(queue):
    knl = lp.make_kernel(
        "{[i]: 0<=i<10}",
        "out[0] = sum(i, a[i]) * sum(i, 2*a[i]) {id=w}")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float64})
    knl = lp.tag_inames(knl, {"i": _Meta()})
    unique = lp.make_reduction_inames_unique(knl)
    k = unique.default_entrypoint
    assert k.id_to_insn["w"].reduction_inames() == {"i", "i_0"}
    assert k.inames["i_0"].tags_of_type(_Meta)
    a = np.linspace(0, 1, 10)
    _, (out,) = unique(queue, a=a)
    np.testing.assert_allclose(host(out)[0], a.sum() * (2 * a).sum())


def test_add_inames_for_unused_hw_axes():
    knl = lp.make_kernel(
        "{[i, j]: 0<=i,j<32}",
        """
        <> s = 2 {id=init}
        out[i, j] = s * a[i, j] {id=use}
        """)
    knl = lp.tag_inames(knl, {"i": "g.0", "j": "l.0"})
    knl = lp.add_inames_for_unused_hw_axes(knl)
    assert knl.default_entrypoint.id_to_insn["init"].within_inames == {"i", "j"}


def test_metadata_tags_next_to_implementation_tags():
    knl = lp.make_kernel("{[i, j]: 0<=i,j<4}", "out[i, j] = i + j").default_entrypoint
    knl = lp.tag_inames(knl, {"i": [_Meta(), _Unique()]})
    knl = lp.tag_inames(knl, {"i": "l.0", "j": _OtherUnique()})
    assert knl.iname_tags("i") == {_Meta(), _Unique(), LocalIndexTag(0)}
    assert knl.iname_tags["i"] == LocalIndexTag(0)
    assert knl.iname_tags_of_type("i", _Unique) == {_Unique()}
    # a unique tag replaces the one of its unique class
    knl = lp.tag_inames(knl, {"i": _OtherUnique()})
    assert knl.inames["i"].tags == {_Meta(), _OtherUnique(), LocalIndexTag(0)}
    assert str(next(iter(lp.tag_inames(knl, "j*:unr").inames["j"].tags_of_type(
        UnrollTag)))) == "unr"


def test_precompute_names_after_rule_and_keeps_length1_index():
    knl = lp.make_kernel(
        "{[e,i]: 0<=e<1 and 0<=i<10}",
        """
        v(e, i) := e + i
        out[e, i] = v(e, i)
        """)
    plain = lp.precompute(knl, "v", "i").default_entrypoint
    assert plain.id_to_insn["v"].expression == parse("0 + i_0")
    kept = lp.precompute(knl, "v", "i", _enable_mirgecom_workaround=True)
    assert kept.default_entrypoint.id_to_insn["v"].expression == parse("e + i_0")


def test_assignment_to_subst_then_precompute(queue):
    knl = lp.make_kernel(
        "{[i]: 0<=i<10}",
        """
        <> t0[i] = 2 * i
        <> t1[i] = 2 * t0[i]
        out[i] = 3*t1[i]
        """)
    knl = lp.assignment_to_subst(knl, "t1")
    assert "t1_subst" in knl.default_entrypoint.substitutions
    knl = lp.precompute(knl, "t1_subst")
    k = knl.default_entrypoint
    (fetch,) = [i for i in k.instructions if i.id.startswith("t1_subst")]
    writer = next(i for i in k.instructions if "t0" in i.assignee_names())
    assert writer.id in fetch.depends_on
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(host(out), 12 * np.arange(10))


def test_prefetch_and_buffer_after_global_barrier(queue):
    knl = lp.make_kernel(
        ["{[i0, j0]: 0<=i0<8 and 0<=j0<4}", "{[i1, j1]: 0<=i1<8 and 0<=j1<4}"],
        """
        out0[i0] = sum(j0, A[i0] * x[j0])
        ... gbarrier {id=gb}
        out1[i1] = sum(j1, A[i1] * x[j1])
        """, seq_dependencies=True)
    knl = lp.add_dtypes(knl, {"A": np.float64, "x": np.float64})
    fetched = lp.add_prefetch(knl, "x", sweep_inames=["j1"], within="writes:out1",
                              prefetch_insn_id="x_fetch", default_tag=None)
    assert "gb" in fetched.default_entrypoint.id_to_insn["x_fetch"].depends_on
    buffered = lp.buffer_array(knl, "out0", buffer_inames=["i0"], init_expression="0")
    k = buffered.default_entrypoint
    assert "init_out0" in k.id_to_insn and "store_out0" in k.id_to_insn
    assert "store_out0" in k.id_to_insn["gb"].depends_on
    A, x = np.arange(8.0), np.arange(4.0)
    for variant in (fetched, buffered):
        _, (out0, out1) = variant(queue, A=A, x=x)
        np.testing.assert_allclose(host(out0), A * x.sum())
        np.testing.assert_allclose(host(out1), A * x.sum())


def test_uniquify_instruction_ids():
    knl = lp.make_kernel("{[i]: 0<=i<3}", "out[i] = 1 {id=insn}").default_entrypoint
    extra = [lp.Assignment("out[0]", 2, id=None), lp.Assignment("out[1]", 3, id=None),
             lp.Assignment("out[2]", 4, id=lp.UniqueName("insn"))]
    knl = lp.uniquify_instruction_ids(knl.copy(instructions=[*knl.instructions, *extra]))
    ids = [i.id for i in knl.instructions]
    assert ids[0] == "insn" and len(set(ids)) == 4 and all(isinstance(i, str) for i in ids)


def test_simplify_indices_uses_the_domain(queue):
    knl = lp.make_kernel(
        "{[j]: 0<=j<10}",
        """
        <> b = z[0]  {id=b}
        y[j] = x[10*(j//10 + b) + j - 10*b] + x[(j + 10) % 10]  {dep=b}
        """, [lp.GlobalArg("x,y,z", shape=(10,), dtype=np.int32)])
    simple = lp.simplify_indices(knl)
    insn = [i for i in simple.default_entrypoint.instructions if i.id != "b"][0]
    assert str(insn.expression) == "x[j] + x[j]"
    x = np.arange(10, dtype=np.int32) * 3
    _, (y,) = simple(queue, x=x, z=np.ones(10, np.int32))
    np.testing.assert_array_equal(host(y), 2 * x)


def test_map_domain_splits_like_split_iname(queue):
    knl = lp.make_kernel("[n] -> {[x, t]: 0<=x<3 and 0<=t<n}", "a[x, t] = 10*x + t")
    m = isl.BasicMap("[n] -> {[t] -> [t_outer, t_inner]: 0 <= t_inner < 8 and "
                     "8*t_outer + t_inner = t}")
    mapped = lp.map_domain(knl, m)
    k = mapped.default_entrypoint
    assert {"t_outer", "t_inner"} <= set(k.all_inames()) and "t" not in k.all_inames()
    assert k.instructions[0].within_inames == {"x", "t_outer", "t_inner"}
    split = lp.split_iname(knl, "t", 8).default_entrypoint
    assert k.domains[0] == isl.align_spaces(split.domains[0], k.domains[0])
    _, (a,) = mapped(queue, n=21)
    np.testing.assert_array_equal(host(a), 10 * np.arange(3)[:, None] + np.arange(21))


def test_map_domain_refusals():
    knl = lp.make_kernel("{[i, j]: 0<=i,j<4}", """
        <> s = i {id=s}
        out[i, j] = s + j {dep=s}
        """)
    with pytest.raises(lp.LoopyError, match="bijective"):
        lp.map_domain(knl, isl.BasicMap("{[i, j] -> [k]: k = i}"))
    with pytest.raises(lp.LoopyError, match="not applicable to any domain"):
        lp.map_domain(knl, isl.BasicMap("{[q] -> [r]: r = q}"))
    with pytest.raises(lp.LoopyError, match="all or none of the mapped inames"):
        lp.map_domain(knl, isl.BasicMap("{[i, j] -> [a, b]: a = i + j and b = i}"))
    with pytest.raises(ValueError, match="Loop priority"):
        lp.map_domain(lp.prioritize_loops(knl, "i, j"), isl.BasicMap("{[i] -> [a]: a = i}"))


def test_instruction_groups_and_add_nosync():
    knl = lp.make_kernel("{[i]: 0<=i<8}", """
        <> t[i] = 0 {id=w1, groups=g1:g2}
        t[i] = 1 {id=w2, conflicts=g1}
        out[i] = 2 {id=w3}
        """)
    k = knl.default_entrypoint
    assert k.id_to_insn["w1"].groups == {"g1", "g2"}
    assert k.id_to_insn["w2"].conflicts_with_groups == {"g1"}
    # no dependency, but conflicting groups: the nosync is added
    synced = lp.add_nosync(knl, "local", "w1", "w2").default_entrypoint
    assert synced.id_to_insn["w2"].no_sync_with == {("w1", "local")}
    unrelated = lp.add_nosync(knl, "local", "w1", "w3", empty_ok=True).default_entrypoint
    assert unrelated.id_to_insn["w3"].no_sync_with == frozenset()
