"""Statistics keys as loopy prints and filters them (issue 20): ``repr``
gives loopy's current form (kernel name included), ``str`` and a printed map
the tutorial's; ``filter_by`` works on every field of every key kind."""

import numpy as np

import kernelcore as lp
from kernelcore.statistics import CountGranularity as CG


def _knl():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i] + a[i]*a[i]", name="poly")
    knl = lp.add_dtypes(knl, {"a": np.float32})
    return lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")


def test_op_key_printing():
    op = lp.Op(np.float32, "mul", CG.SUBGROUP, "poly")
    assert repr(op) == "Op(np:dtype('float32'), mul, subgroup, \"poly\")"
    assert str(op) == "Op(np:dtype('float32'), mul, subgroup)"
    assert repr(lp.Op(np.float32, "mul", CG.SUBGROUP)) == \
        "Op(np:dtype('float32'), mul, subgroup)"


def test_mem_access_key_printing():
    m = lp.MemAccess("global", np.float32, {0: 1}, {0: 16}, "load", "a", CG.WORKITEM,
                     kernel_name="poly")
    assert repr(m) == ("MemAccess(global, np:dtype('float32'), {0: 1}, {0: 16}, load, a, "
                       "None, workitem, 'poly')")
    assert str(m) == ("MemAccess(global, np:dtype('float32'), {0: 1}, {0: 16}, load, a, "
                      "workitem)")
    tagged = m.copy(variable_tags=frozenset({"hot"}))
    assert "frozenset({'hot'}), workitem, 'poly')" in repr(tagged)


def test_sync_key_printing():
    s = lp.Sync("kernel_launch", "poly")
    assert repr(s) == "Sync(kernel_launch, poly)"


def test_counted_keys_carry_the_kernel_name():
    ops = lp.get_op_map(_knl(), subgroup_size=32)
    assert all(k.kernel_name == "poly" for k in ops)
    assert any(repr(k).endswith(', "poly")') for k in ops)
    # printing a map shows the tutorial's keys
    assert "Op(np:dtype('float32'), mul, subgroup) : " in str(ops)
    mem = lp.get_mem_access_map(_knl(), subgroup_size=32)
    assert all(repr(k).endswith("'poly')") for k in mem)


def test_filter_by_on_every_key_kind():
    knl = _knl()
    ops = lp.get_op_map(knl, subgroup_size=32)
    params = {"n": 64}
    assert ops.filter_by(name="mul", dtype=np.float32,
                         kernel_name="poly").eval_and_sum(params) == 2 * 4
    assert ops.filter_by(kernel_name="other").eval_and_sum(params) == 0
    assert ops.filter_by(dtype=[np.float32, np.int32], count_granularity=CG.SUBGROUP) \
        .eval_and_sum(params) == ops.eval_and_sum(params)
    mem = lp.get_mem_access_map(knl, subgroup_size=32)
    loads = mem.filter_by(mtype="global", direction="load", variable="a",
                          kernel_name="poly")
    assert loads.eval_and_sum(params) > 0
    assert mem.filter_by(variable_tags=None).eval_and_sum(params) == \
        mem.eval_and_sum(params)
    sync = lp.get_synchronization_map(knl)
    assert sync.filter_by(kind="kernel_launch").eval_and_sum(params) == 1
    assert sync.filter_by(kernel_name="poly").eval_and_sum(params) == \
        sync.eval_and_sum(params)
    assert set(ops.group_by("kernel_name").keys()) == {lp.Op(kernel_name="poly")}
