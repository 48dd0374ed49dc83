"""kernelcore's public namespace: every exported name resolves, the names
lazyarray builds on are the objects of their defining modules, loopy's module
paths re-export the IR's definitions, and the per-work-item totals count what
a kernel computes and moves."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from kernelcore import check_bounds, creation, ir, runtime, statistics, version
from kernelcore.kernel import data as loopy_data
from kernelcore.kernel import instruction as loopy_instruction


def test_every_exported_name_resolves():
    missing = [name for name in lp.__all__ if not hasattr(lp, name)]
    assert not missing


@pytest.mark.parametrize(("public", "defined"), [
    ("make_loop_kernel", creation.make_loop_kernel),
    ("check_array_bounds", check_bounds.check_bounds),
    ("get_dependencies", ir.expr.get_dependencies),
    ("substitute", ir.expr.substitute),
    ("parse_expression", lp.parse.parse_expression),
    ("compile_program", runtime.build.compile_program),
    ("get_executor", runtime.invoke.get_executor),
    ("KeyedLocks", runtime.once.KeyedLocks),
    ("DiskStore", runtime.store.DiskStore),
    ("reduction_identity", lp.transform.reduction.reduction_identity),
    ("tree_fingerprint", version.tree_fingerprint),
    ("get_work_item_totals", statistics.totals.get_work_item_totals),
])
def test_public_names_are_the_defining_modules_objects(public, defined):
    assert public in lp.__all__
    assert getattr(lp, public) is defined


def test_loopy_paths_reexport_the_ir():
    assert loopy_data.temp_var_scope is ir.data.AddressSpace
    assert loopy_data.LocalInameTag is ir.tags.LocalIndexTag
    assert loopy_instruction.make_assignment is ir.instruction.make_assignment
    assert loopy_instruction.AtomicUpdate is ir.instruction.AtomicUpdate


def test_work_item_totals_count_operations_and_bytes():
    n = 16
    knl = lp.make_kernel(
        "{[i]: 0<=i<16}", "out[i] = 2*a[i] + b[i]*a[i]",
        [lp.GlobalArg("a", np.float32, shape=(n,)), lp.GlobalArg("b", np.float32, shape=(n,)),
         lp.GlobalArg("out", np.float32, shape=(n,))])
    totals = lp.get_work_item_totals(knl)
    # two multiplications and one addition per element
    assert totals.flops_by_dtype == {"float32": 3 * n}
    assert totals.flops == 3 * n and totals.flop_dtype == "float32"
    # a is referenced twice, b once, out written once; 4 bytes each
    itemsize = np.dtype(np.float32).itemsize
    assert totals.bytes_by_access == {("a", "load"): 2 * n * itemsize,
                                      ("b", "load"): n * itemsize,
                                      ("out", "store"): n * itemsize}
    assert totals.bytes == 4 * n * itemsize


def test_work_item_totals_agree_with_the_op_and_memory_maps():
    knl = lp.make_kernel(
        "{[i, k]: 0<=i<8 and 0<=k<4}", "out[i] = sum(k, a[i, k]*a[i, k])",
        [lp.GlobalArg("a", np.float64, shape=(8, 4)),
         lp.GlobalArg("out", np.float64, shape=(8,))])
    totals = lp.get_work_item_totals(knl)
    ops = lp.get_op_map(knl, subgroup_size=1).filter_by(dtype=[np.float64])
    assert totals.flops == ops.eval_and_sum({})
    loads = lp.get_mem_access_map(knl, subgroup_size=1).filter_by(
        mtype=["global"], direction=["load"], variable=["a"])
    assert totals.bytes_by_access[("a", "load")] == 8 * loads.eval_and_sum({})


@pytest.mark.parametrize(("name", "entry"), [
    ("infer_types", lp.types.infer_types),
    ("inline_calls", lp.transform.inline.inline_calls),
    ("link_callees", lp.codegen.callee.link_callees),
    ("make_loop_kernel", creation.make_loop_kernel),
    ("schedule_lines", lp.schedule.items.schedule_lines),
    ("invoke", runtime.invoke.invoke),
    ("invoke_c", runtime.c_invoke.invoke),
])
def test_stages_the_ir_reaches_are_registered(name, entry):
    assert ir.stages.stage(name) is entry


def test_an_unregistered_stage_is_an_error():
    with pytest.raises(lp.KernelcoreError, match="not loaded"):
        ir.stages.stage("no such stage")


def test_compile_launches_names_each_argument_slot(queue):
    """The door for callers that set kernel arguments themselves: the source,
    each launch's grid and where each argument goes; launching by those slots
    gives the kernel's result."""
    import pyopencl as cl
    import pyopencl.array as cla

    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i] + s",
                         [lp.GlobalArg("a", np.float32, shape="n"),
                          lp.GlobalArg("out", np.float32, shape="n"),
                          lp.ValueArg("s", np.float32), lp.ValueArg("n", np.int32)])
    a = cla.to_device(queue, np.arange(100, dtype=np.float32))
    out = cla.empty(queue, 100, np.float32)
    arguments = {"a": a, "out": out, "s": np.float32(0.5), "n": np.int32(100)}
    compiled = lp.compile_launches(knl, queue, arguments)
    [launch] = compiled.launches
    assert launch.function_name in compiled.source
    kinds = {slot[0] for slot in launch.slots}
    assert ("array", "a") in launch.slots and ("array", "out") in launch.slots
    assert ("scalar", "s") in launch.slots and kinds <= {"array", "scalar", "value"}
    kernel = cl.Kernel(launch.program, launch.function_name)
    fresh = cla.zeros(queue, 100, np.float32)
    given = {"a": a, "out": fresh}
    for k, slot in enumerate(launch.slots):
        if slot[0] == "array":
            kernel.set_arg(k, given[slot[1]].base_data)
        elif slot[0] == "scalar":
            kernel.set_arg(k, arguments[slot[1]])
        else:
            kernel.set_arg(k, slot[1])
    cl.enqueue_nd_range_kernel(queue, kernel, launch.global_size, launch.local_size)
    np.testing.assert_array_equal(fresh.get(), 2 * np.arange(100, dtype=np.float32) + 0.5)
