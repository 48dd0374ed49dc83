"""Issue 20: behaviour loopy programs rely on: the SCHEDULE section of a
printed linearized kernel, grid sizes as loopy returns them, and the
transformations loopy users reach for."""

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def _rotate():
    knl = lp.make_kernel(
        "[n] -> {[i] : 0<=i<n}",
        """
        for i
           <>tmp = arr[i] {id=maketmp,dep=*}
           ... gbarrier {id=bar,dep=*maketmp}
           arr[(i + 1) % n] = tmp {id=rotate,dep=*bar}
        end
        """,
        [lp.GlobalArg("arr", shape=("n",), dtype=np.int32), "..."],
        name="rotate_v2", assumptions="n mod 16 = 0")
    return lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")


def test_printed_linearized_kernel_has_schedule_section():
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(_rotate()))
    text = str(knl)
    sched = text[text.index("SCHEDULE:"):].splitlines()
    assert sched[1] == "   0: CALL KERNEL rotate_v2(extra_args=[], extra_inames=[])"
    assert sched[2].startswith("   1:     tmp = arr[") and sched[2].endswith("{id=maketmp}")
    assert sched[3] == "   2: RETURN FROM KERNEL rotate_v2"
    assert sched[4].startswith("   3: ... gbarrier")
    assert sched[5] == "   4: CALL KERNEL rotate_v2_0(extra_args=[], extra_inames=[])"
    assert sched[6].endswith("= tmp  {id=rotate}")
    assert sched[7] == "   6: RETURN FROM KERNEL rotate_v2_0"

    knl = lp.get_one_scheduled_kernel(lp.save_and_reload_temporaries(knl))
    text = str(knl)
    sched = text[text.index("SCHEDULE:"):]
    assert "CALL KERNEL rotate_v2(extra_args=['tmp_save_slot'], extra_inames=[])" in sched
    assert "{id=tmp.save}" in sched


def test_schedule_nests_loops():
    knl = lp.make_kernel("{[i,j]: 0<=i,j<n}", "out[i] = sum(j, a[i,j])")
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(
        lp.add_dtypes(knl, {"a": np.float32})))
    text = str(knl)
    lines = text[text.index("SCHEDULE:"):].splitlines()
    assert any(line.endswith(": CALL KERNEL loopy_kernel(extra_args=[], extra_inames=[])")
               for line in lines)
    assert any(line.endswith("    for i") for line in lines)
    assert any(line.endswith("        for j") for line in lines)
    assert any(line.endswith("        end j") for line in lines)


def test_grid_size_upper_bounds_as_loopy():
    import islpy as isl
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    glob, loc = knl.get_grid_size_upper_bounds()
    assert all(isinstance(x, isl.PwAff) for x in glob + loc)
    assert str(glob[0]) == "[n] -> { [(floor((127 + n)/128))] }"
    assert str(loc[0]) == "[n] -> { [(128)] }"
    # loopy's signature: the callables table, ignore_auto, return_dict
    g2, l2 = knl.get_grid_size_upper_bounds(None, ignore_auto=True, return_dict=True)
    assert set(g2) == {0} and str(l2[0]) == str(loc[0])
    ge, le = knl.get_grid_size_upper_bounds_as_exprs()
    assert le == (128,)
    from pymbolic import evaluate
    assert evaluate(ge[0], {"n": 1000}) == 8


# {{{ transformations

def test_make_einsum_matvec_and_full_contraction(queue, rng):
    knl = lp.make_einsum("ij,j->i", ("a", "x"))
    assert {"Ni", "Nj"} <= set(knl.all_params())
    a = rng.standard_normal((5, 7)).astype(np.float32)
    x = rng.standard_normal(7).astype(np.float32)
    evt, (out,) = knl(queue, a=a, x=x)
    np.testing.assert_allclose(host(out), a @ x, rtol=1e-5)
    knl = lp.make_einsum("ij,jk->ik", ("a", "b"), name="matmul")
    assert knl.name == "matmul"
    b = rng.standard_normal((7, 3)).astype(np.float32)
    evt, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_allclose(host(out), a @ b, rtol=1e-5)
    with pytest.raises(lp.LoopyError):
        lp.make_einsum("ij,j", ("a", "x"))


def test_fuse_kernels_merges_inames_args_and_data_flow(queue):
    k1 = lp.make_kernel("{[i]: 0<=i<n}", "<> t = 2*a[i]\ntmp[i] = t", name="first")
    k2 = lp.make_kernel("{[i]: 0<=i<n}", "<> t = tmp[i] + 1\nout[i] = t", name="second")
    fused = lp.fuse_kernels([k1, k2], data_flow=[("tmp", 0, 1)])
    assert fused.all_inames() == ("i",)
    assert sorted(fused.temporary_variables) == ["t", "t_1"]
    ids = [i.id for i in fused.instructions]
    assert len(set(ids)) == len(ids)
    reader = next(i for i in fused.instructions if "tmp" in i.read_dependency_names())
    writer = next(i for i in fused.instructions if "tmp" in i.assignee_names())
    assert writer.id in reader.depends_on
    a = np.arange(10, dtype=np.float32)
    evt, res = lp.set_options(fused, return_dict=True)(queue, a=a)
    np.testing.assert_allclose(host(res["out"]), 2 * a + 1)
    np.testing.assert_allclose(host(res["tmp"]), 2 * a)


def test_realize_reduction_leaves_no_reduction():
    knl = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<m}", "out[i] = sum(j, a[i,j])")
    knl = lp.realize_reduction(lp.add_dtypes(knl, {"a": np.float32}))
    text = str(knl)
    assert "sum(" not in text and "acc_j" in knl.temporary_variables
    tu = lp.realize_reduction(lp.merge([lp.add_dtypes(lp.make_kernel(
        "{[i,j]: 0<=i<n and 0<=j<m}", "out[i] = max(j, a[i,j])"), {"a": np.float64})]))
    assert isinstance(tu, lp.TranslationUnit)
    assert "max(" not in str(tu.default_entrypoint.instructions)


def test_set_temporary_address_space():
    knl = lp.make_kernel("{[i]: 0<=i<16}", "<float32> t[i] = a[i]\nout[i] = t[i]")
    knl = lp.set_temporary_address_space(knl, "t", lp.AddressSpace.LOCAL)
    assert knl.temporary_variables["t"].address_space == lp.AddressSpace.LOCAL
    knl = lp.set_temporary_address_space(knl, ["t"], "private")
    assert knl.temporary_variables["t"].address_space == lp.AddressSpace.PRIVATE


def test_split_array_axis_keeps_layout(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]",
                         [lp.GlobalArg("a", np.float32, shape="n"),
                          lp.GlobalArg("out", np.float32, shape="n"), "..."])
    knl = lp.split_array_axis(knl, "a,out", 0, 4)
    assert knl.arg_dict["a"].shape[1] == 4
    assert "a[i // 4, i % 4]" in str(knl)
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    evt, (out,) = knl(queue, a=a, n=16)
    np.testing.assert_array_equal(host(out), 2 * a)


def test_constant_arg_and_approximate_value_arg(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = c[i] + 1",
                         [lp.ConstantArg("c", np.float32, shape="n"),
                          lp.GlobalArg("out", np.float32, shape="n"),
                          lp.ValueArg("n", np.int32, approximately=256)])
    assert knl.arg_dict["n"].approximately == 256
    assert "__constant float const *__restrict__ c" in \
        lp.generate_code_v2(knl).device_code()
    c = np.arange(8, dtype=np.float32)
    evt, (out,) = knl(queue, c=c)
    np.testing.assert_array_equal(host(out), c + 1)

# }}}


# {{{ statistics as loopy spells it

def _stats_kernel():
    knl = lp.make_kernel("{[i,k]: 0<=i<n and 0<=k<m}",
                         "c[i] = sum(k, a[i,k]*b[k])", name="matvec")
    return lp.add_dtypes(knl, {"a": np.float32, "b": np.float32})


def test_op_and_mem_access_keys_carry_kernel_name():
    CG = lp.CountGranularity
    op_map = lp.get_op_map(_stats_kernel(), subgroup_size=32)
    assert all(k.kernel_name == "matvec" for k in op_map)
    params = {"n": 10, "m": 20}
    with_name = op_map[lp.Op(np.float32, "mul", CG.SUBGROUP, "matvec")]
    without = op_map[lp.Op(np.float32, "mul", CG.SUBGROUP)]
    assert with_name.eval_with_dict(params) == without.eval_with_dict(params) > 0
    with pytest.raises(KeyError):
        op_map[lp.Op(np.float32, "mul", CG.SUBGROUP, "other")]
    assert len(op_map.filter_by(kernel_name=["matvec"])) == len(op_map)
    assert len(op_map.filter_by(kernel_name="other")) == 0

    mem_map = lp.get_mem_access_map(_stats_kernel(), subgroup_size=32)
    assert all(k.kernel_name == "matvec" for k in mem_map)
    loads = mem_map.filter_by(direction=["load"], kernel_name=["matvec"], variable=["a"])
    assert len(loads) == 1
    key = lp.MemAccess("global", np.float32, {}, {}, "load", "a", CG.SUBGROUP,
                       kernel_name="matvec")
    assert key in mem_map and lp.MemAccess(direction="load").kernel_name is None


def test_sync_keys_filter_by():
    knl = _stats_kernel()
    sync_map = lp.get_synchronization_map(knl)
    key, = sync_map.keys()
    assert isinstance(key, lp.Sync) and key.kind == "kernel_launch"
    assert key.kernel_name == "matvec"
    assert sync_map["kernel_launch"].eval_with_dict({"n": 3, "m": 4}) == 1
    assert sync_map[lp.Sync("kernel_launch", "matvec")].eval_with_dict({}) == 1
    assert len(sync_map.filter_by(kind=["kernel_launch"])) == 1
    assert len(sync_map.filter_by(kernel_name="nope")) == 0
    assert lp.stringify_stats_mapping(sync_map) == "kernel_launch : { 1 }\n"

# }}}
