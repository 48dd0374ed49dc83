"""Kernel launchers (kernelcore.runtime.launchers): hand-written kernels through
each launcher class, profiling statistics, list ordering with copies,
parametrized/iterated arguments, errors, and ``lp.make_launcher`` replays of
kernelcore kernels checked against NumPy."""

import json
import logging
import subprocess
import sys
import threading
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

import kernelcore as lp
from kernelcore.runtime.launchers import (
    KernelStatistics,
    LauncherI,
    OpenClCopyLauncher,
    OpenClIterativeKernelLauncher,
    OpenClKernelLauncher,
    OpenClKernelListLauncher,
    OpenClKernelParameterYielder,
    OpenClParametrizedKernelLauncher,
)
from tests.helpers import ROOT

SOURCE = """
__kernel void axpb(__global float *out, __global const float *a, float alpha, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = alpha * a[i] + 1.0f;
}

__kernel void fill(__global int *out, int i, int j, int m)
{
    if (get_global_id(0) == 0)
        out[i * m + j] = 10 * i + j;
}

__kernel void twice(__global float *x, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = 2.0f * x[i];
}
"""

N = 100


class _Kernels:
    """The program built from SOURCE and one instance of each of its kernels
    (launchers make their own instances, so sharing these is harmless)."""

    def __init__(self, ctx):
        self.program = cl.Program(ctx, SOURCE).build()
        for k in self.program.all_kernels():
            setattr(self, k.function_name, k)


@pytest.fixture(scope="module")
def prg(ctx):
    return _Kernels(ctx)


@pytest.fixture(scope="module")
def queue(ctx):
    """Launcher statistics need a profiling queue."""
    import kernelcore
    q = kernelcore.profiling_queue()
    yield q
    q.finish()


@pytest.fixture
def arrays(queue, rng):
    a_host = rng.random(N, dtype=np.float32)
    return a_host, cla.to_device(queue, a_host), cla.zeros(queue, N, np.float32)


def _axpb(prg, queue, a, out, alpha=2.0, **kw):
    return OpenClKernelLauncher("axpb", prg.axpb,
                                (out, a, np.float32(alpha), np.int32(N)),
                                default_global_work_size=(N,), default_queue=queue, **kw)


# {{{ OpenClKernelLauncher

def test_kernel_launcher_runs_with_defaults(prg, queue, arrays):
    a_host, a, out = arrays
    launcher = _axpb(prg, queue, a, out)
    assert isinstance(launcher, LauncherI)
    assert launcher.name == "axpb"
    assert launcher.global_size_configured() and launcher.queue_configured()
    evt = launcher()
    assert isinstance(evt, cl.Event)
    evt.wait()
    np.testing.assert_allclose(out.get(), 2 * a_host + 1, rtol=1e-6)
    assert [i for i, _ in launcher.args_list] == [0, 1, 2, 3]


def test_kernel_launcher_index_pairs_and_overrides(prg, queue, arrays):
    a_host, a, out = arrays
    launcher = OpenClKernelLauncher(
        "axpb", prg.axpb, ((3, np.int32(N)), (0, out), (2, np.float32(-1)), (1, a)))
    assert not launcher.global_size_configured() and not launcher.queue_configured()
    launcher(queue, global_work_size=(N,), local_work_size=None).wait()
    np.testing.assert_allclose(out.get(), 1 - a_host, rtol=1e-6)
    # an oversized grid is fine: the kernel guards i < n
    launcher(queue, global_work_size=(128,), local_work_size=(32,)).wait()
    np.testing.assert_allclose(out.get(), 1 - a_host, rtol=1e-6)


def test_kernel_launcher_from_program_and_own_instances(ctx, prg, queue, arrays):
    a_host, a, out = arrays
    out2 = cla.zeros(queue, N, np.float32)
    # a program with several kernels: the launcher's name picks one
    l1 = OpenClKernelLauncher("axpb", prg.program, (out, a, np.float32(3), np.int32(N)),
                              default_global_work_size=(N,), default_queue=queue)
    # the same cl.Kernel object twice: each launcher binds its own arguments
    l2 = OpenClKernelLauncher("other", prg.axpb, (out2, a, np.float32(5), np.int32(N)),
                              default_global_work_size=(N,), default_queue=queue)
    l3 = OpenClKernelLauncher("again", l1.kernel, (out, a, np.float32(3), np.int32(N)),
                              default_global_work_size=(N,), default_queue=queue)
    assert l3.kernel is not l1.kernel
    l1()
    l2()
    queue.finish()
    np.testing.assert_allclose(out.get(), 3 * a_host + 1, rtol=1e-6)
    np.testing.assert_allclose(out2.get(), 5 * a_host + 1, rtol=1e-6)
    single = cl.Program(ctx, "__kernel void one(__global int *x) { x[0] = 7; }").build()
    x = cla.zeros(queue, 1, np.int32)
    OpenClKernelLauncher("whatever", single, (x,), default_global_work_size=(1,))(
        queue).wait()
    assert x.get()[0] == 7


def test_kernel_launcher_errors(prg, queue, arrays):
    a_host, a, out = arrays
    with pytest.raises(lp.InvocationError, match="no default queue"):
        OpenClKernelLauncher("axpb", prg.axpb, (out, a, np.float32(1), np.int32(N)),
                             default_global_work_size=(N,))()
    launcher = OpenClKernelLauncher("axpb", prg.axpb,
                                    (out, a, np.float32(1), np.int32(N)),
                                    default_queue=queue)
    with pytest.raises(lp.InvocationError, match="global work size"):
        launcher()
    with pytest.raises(lp.InvocationError, match="takes no parameters"):
        launcher(global_work_size=(N,), alpha=3)
    with pytest.raises(lp.InvocationError, match=r"misses argument\(s\) \[3\]"):
        OpenClKernelLauncher("axpb", prg.axpb, (out, a, np.float32(1)))
    with pytest.raises(lp.InvocationError, match="out of range"):
        OpenClKernelLauncher("axpb", prg.axpb, ((0, out), (1, a), (2, np.float32(1)),
                                                (3, np.int32(N)), (4, np.int32(0))))
    with pytest.raises(lp.InvocationError, match="given twice"):
        OpenClKernelLauncher("axpb", prg.axpb, ((0, out), (0, a)))
    with pytest.raises(lp.InvocationError, match="numpy scalar"):
        OpenClKernelLauncher("axpb", prg.axpb, (out, a, 1.0, np.int32(N)))
    with pytest.raises(lp.InvocationError, match="numpy array"):
        OpenClKernelLauncher("axpb", prg.axpb, (out, a_host, np.float32(1), np.int32(N)))
    with pytest.raises(lp.InvocationError, match="cannot set argument 2"):
        # a float64 where the kernel takes a float
        OpenClKernelLauncher("axpb", prg.axpb, (out, a, np.float64(1), np.int32(N)))
    with pytest.raises(lp.InvocationError, match="holds kernels"):
        OpenClKernelLauncher("nope", prg.program, ())
    with pytest.raises(lp.InvocationError, match="Kernel or Program"):
        OpenClKernelLauncher("nope", "axpb", ())
    with pytest.raises(lp.InvocationError, match="nonzero offset"):
        OpenClKernelLauncher("axpb", prg.axpb, (out, a[1:], np.float32(1), np.int32(N)))
    with pytest.raises(lp.InvocationError, match="non-empty name"):
        OpenClKernelLauncher("", prg.axpb, (out, a, np.float32(1), np.int32(N)))


def test_zero_global_size_enqueues_marker(prg, queue, arrays):
    _, a, out = arrays
    launcher = _axpb(prg, queue, a, out)
    evt = launcher(global_work_size=(0,))
    evt.wait()
    assert out.get().sum() == 0
    assert launcher.events == ()

# }}}


# {{{ statistics and tracing

def _check_stats(st: KernelStatistics, name: str, count: int):
    assert st.name == name
    assert st.count == count
    assert 0 < st.min <= st.mean <= st.max
    assert st.total == pytest.approx(st.mean * st.count)
    assert name in str(st)


def test_statistics_count_and_consumption(prg, queue, arrays):
    assert queue.properties & cl.command_queue_properties.PROFILING_ENABLE
    _, a, out = arrays
    launcher = _axpb(prg, queue, a, out)
    assert launcher.statistics == {}
    for _ in range(5):
        launcher()
    assert len(launcher.events) == 5
    queue.finish()
    stats = launcher.statistics
    assert set(stats) == {"axpb"}
    _check_stats(stats["axpb"], "axpb", 5)
    assert launcher.events == ()          # finished events were consumed
    for _ in range(3):
        launcher()
    queue.finish()
    _check_stats(launcher.statistics["axpb"], "axpb", 8)   # accumulated


def test_statistics_need_profiling(ctx, prg, arrays):
    plain = cl.CommandQueue(ctx)
    _, a, out = arrays
    launcher = _axpb(prg, plain, a, out)
    launcher()
    plain.finish()
    assert launcher.events == ()
    assert launcher.statistics == {}


def test_statistics_many_pending_events(prg, queue, arrays):
    # more launches than the pending-event bound: folded in along the way
    _, a, out = arrays
    launcher = _axpb(prg, queue, a, out)
    for _ in range(1000):
        launcher()
    queue.finish()      # the first 1000 are done when the bound is crossed below
    for _ in range(500):
        launcher()
    queue.finish()
    assert len(launcher.events) < 1500
    _check_stats(launcher.statistics["axpb"], "axpb", 1500)


def test_trace_logging(prg, queue, arrays, caplog):
    _, a, out = arrays
    launcher = _axpb(prg, queue, a, out)
    with caplog.at_level(logging.DEBUG, logger="kernelcore.launchers"):
        launcher()
        launcher(global_work_size=(64,))
    queue.finish()
    lines = [r.getMessage() for r in caplog.records if r.name == "kernelcore.launchers"]
    assert len(lines) == 2
    assert "axpb" in lines[0] and "(100,)" in lines[0] and "(64,)" in lines[1]

# }}}


# {{{ OpenClKernelListLauncher

def test_list_launcher_order_with_copies(prg, queue, rng):
    x_host = rng.random(N, dtype=np.float32)
    result = np.empty(N, np.float32)
    x = cla.zeros(queue, N, np.float32)
    y = cla.zeros(queue, N, np.float32)
    twice = OpenClKernelLauncher("twice", prg.twice, (x, np.int32(N)),
                                 default_global_work_size=(N,))
    axpb = OpenClKernelLauncher("axpb", prg.axpb, (y, x, np.float32(3), np.int32(N)),
                                default_global_work_size=(N,))
    lst = OpenClKernelListLauncher("pipeline", default_queue=queue)
    lst.push_copy_host_to_device("upload", x_host, x)
    lst.push_kernels(twice, None, twice)
    lst += axpb
    lst.push_copy_device_to_host("download", y, result)
    assert [launcher.name for launcher in lst.launchers] == \
        ["upload", "twice", "twice", "axpb", "download"]
    assert lst.global_size_configured()
    for _ in range(2):      # the upload resets x: replaying gives the same result
        evt = lst()
        evt.wait()
        np.testing.assert_allclose(result, 3 * (4 * x_host) + 1, rtol=1e-6)

    stats = lst.statistics
    assert set(stats) == {"upload", "twice", "axpb", "download"}
    assert stats["twice"].count == 4        # two pushes, two runs
    assert stats["axpb"].count == 2 and stats["upload"].count == 2
    for st in stats.values():
        assert st.min <= st.mean <= st.max
    assert lst.events == ()


def test_list_launcher_flattens_and_explicit_queue(prg, queue, rng):
    x_host = rng.random(N, dtype=np.float32)
    x = cla.to_device(queue, x_host)
    twice = OpenClKernelLauncher("twice", prg.twice, (x, np.int32(N)),
                                 default_global_work_size=(N,))
    inner = twice.as_list_launcher("inner")
    inner += twice
    outer = OpenClKernelListLauncher("outer", twice)
    outer += inner
    assert len(outer) == 3 and all(launcher is twice for launcher in outer.launchers)
    with pytest.raises(lp.InvocationError, match="no default queue"):
        outer()
    outer(queue).wait()
    np.testing.assert_allclose(x.get(), 8 * x_host, rtol=1e-6)
    # shared launchers are counted once in the aggregate
    queue.finish()
    assert outer.statistics["twice"].count == 3


def test_list_launcher_device_copies(queue):
    src = cla.to_device(queue, np.arange(10, dtype=np.int32))
    dst = cla.zeros(queue, 10, np.int32)
    lst = OpenClKernelListLauncher("copies", default_queue=queue)
    lst.push_copy_device_to_device("all", src, dst)
    lst.push_copy_device_to_device("part", src, dst, src_device_offset=32,
                                   dst_device_offset=0, byte_count=8)
    lst().wait()
    np.testing.assert_array_equal(dst.get(), [8, 9, 2, 3, 4, 5, 6, 7, 8, 9])
    # views: their offsets are part of the copy
    host = np.zeros(3, np.int32)
    OpenClKernelListLauncher("view", default_queue=queue) \
        .push_copy_device_to_host("d2h", src[4:7], host, blocking=True)()
    np.testing.assert_array_equal(host, [4, 5, 6])


def test_list_launcher_empty_and_errors(prg, queue, arrays):
    a_host, a, out = arrays
    empty = OpenClKernelListLauncher("empty")
    assert empty(queue) is None
    # an empty list waits for the given events itself (no event to return)
    user = cl.UserEvent(queue.context)
    waiter = threading.Timer(0.05, lambda: user.set_status(cl.command_execution_status.COMPLETE))
    waiter.start()
    assert empty(queue, wait_for=[user]) is None
    assert user.command_execution_status == cl.command_execution_status.COMPLETE
    waiter.join()
    assert empty.statistics == {}
    no_size = OpenClKernelLauncher("axpb", prg.axpb, (out, a, np.float32(1), np.int32(N)))
    with pytest.raises(lp.InvocationError, match="global work size"):
        empty.push_kernels(no_size)
    with pytest.raises(lp.InvocationError, match="cannot add"):
        empty += "kernel"
    with pytest.raises(lp.InvocationError, match="not host to device"):
        empty.push_copy_host_to_device("bad", a, a_host)
    with pytest.raises(lp.InvocationError, match="not device to device"):
        empty.push_copy_device_to_device("bad", a_host, a)
    with pytest.raises(lp.InvocationError, match="do not fit"):
        empty.push_copy_host_to_device("big", np.zeros(2 * N, np.float32), a)
    with pytest.raises(lp.InvocationError, match="exceed"):
        empty.push_copy_device_to_device("big", a, out, byte_count=8 * N)
    with pytest.raises(lp.InvocationError, match="both ends"):
        OpenClCopyLauncher("bad", a_host, a_host)
    with pytest.raises(lp.InvocationError, match="unknown parameter"):
        OpenClKernelListLauncher("l", _axpb(prg, queue, a, out))(queue, alpha=1)


def test_list_launcher_out_of_order_queue(ctx, prg, rng):
    try:
        ooo = cl.CommandQueue(ctx, properties=(
            cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
            | cl.command_queue_properties.PROFILING_ENABLE))
    except cl.Error:
        pytest.skip("no out-of-order queues on this device")
    x_host = rng.random(N, dtype=np.float32)
    x = cla.to_device(ooo, x_host)
    ooo.finish()
    twice = OpenClKernelLauncher("twice", prg.twice, (x, np.int32(N)),
                                 default_global_work_size=(N,))
    lst = OpenClKernelListLauncher("chain", *[twice] * 6, default_queue=ooo)
    lst().wait()
    np.testing.assert_allclose(x.get(ooo), 64 * x_host, rtol=1e-6)

# }}}


# {{{ parametrized and iterative launchers

def test_parametrized_launcher(prg, queue, arrays):
    a_host, a, out = arrays
    launcher = OpenClParametrizedKernelLauncher(
        {"alpha": (2, np.float32), "src": (1, cla.Array)},
        ((0, out), (3, np.int32(N))),
        name="axpb", kernel=prg.axpb, default_global_work_size=(N,), default_queue=queue)
    assert launcher.parameters == {"alpha": np.float32, "src": cla.Array}
    assert launcher.parameters_map["alpha"] == (2, np.float32)
    launcher(alpha=0.5, src=a).wait()
    np.testing.assert_allclose(out.get(), 0.5 * a_host + 1, rtol=1e-6)
    b = cla.to_device(queue, 2 * a_host)
    launcher(alpha=np.float64(-1), src=b).wait()     # converted to float32
    np.testing.assert_allclose(out.get(), 1 - 2 * a_host, rtol=1e-6)

    with pytest.raises(lp.InvocationError, match="missing parameter.*src"):
        launcher(alpha=1.0)
    with pytest.raises(lp.InvocationError, match="unknown parameter.*beta"):
        launcher(alpha=1.0, src=a, beta=2)
    with pytest.raises(lp.InvocationError, match="must be a number"):
        launcher(alpha=a, src=a)
    with pytest.raises(lp.InvocationError, match="must be a Array"):
        launcher(alpha=1.0, src=a_host)
    # through a list launcher: keywords are forwarded
    lst = OpenClKernelListLauncher("l", launcher, default_queue=queue)
    assert lst.parameters == {"alpha": (np.float32, frozenset({"axpb"})),
                              "src": (cla.Array, frozenset({"axpb"}))}
    lst(alpha=2.0, src=a).wait()
    np.testing.assert_allclose(out.get(), 2 * a_host + 1, rtol=1e-6)


def test_parametrized_launcher_errors(prg, queue, arrays):
    _, a, out = arrays
    kw = dict(name="axpb", kernel=prg.axpb, default_global_work_size=(N,))
    with pytest.raises(lp.InvocationError, match="both fixed and parameters"):
        OpenClParametrizedKernelLauncher({"alpha": (2, np.float32)},
                                         ((0, out), (1, a), (2, np.float32(1)),
                                          (3, np.int32(N))), **kw)
    with pytest.raises(lp.InvocationError, match="share"):
        OpenClParametrizedKernelLauncher({"x": (2, np.float32), "y": (2, np.float32)},
                                         ((0, out), (1, a), (3, np.int32(N))), **kw)
    with pytest.raises(lp.InvocationError, match=r"misses argument\(s\) \[1\]"):
        OpenClParametrizedKernelLauncher({"alpha": (2, np.float32)},
                                         ((0, out), (3, np.int32(N))), **kw)
    with pytest.raises(lp.InvocationError, match="expected \\(index, type\\)"):
        OpenClParametrizedKernelLauncher({"alpha": 2}, ((0, out),), **kw)


def test_iterative_launcher(prg, queue):
    m = 4
    out = cla.zeros(queue, 3 * m, np.int32)
    launcher = OpenClIterativeKernelLauncher(
        {"i": (1, np.int32), "j": (2, np.int32), "m": (3, np.int32)}, ((0, out),),
        {"i": OpenClKernelParameterYielder(lambda: range(3)),
         "j": lambda: iter(range(m))},
        name="fill", kernel=prg.fill, default_global_work_size=(1,), default_queue=queue)
    assert [tuple(d.values()) for d in launcher.iter_parameters()][:3] == \
        [(0, 0), (0, 1), (0, 2)]
    evt = launcher(m=m)
    evt.wait()
    expected = np.array([10 * i + j for i in range(3) for j in range(m)], np.int32)
    np.testing.assert_array_equal(out.get(), expected)
    queue.finish()
    _check_stats(launcher.statistics["fill"], "fill", 3 * m)   # one launch per combo
    # generators are fresh on every call
    out.fill(0)
    assert launcher(m=m, enqueue_barrier=False) is None
    queue.finish()
    np.testing.assert_array_equal(out.get(), expected)
    assert launcher.statistics["fill"].count == 6 * m

    with pytest.raises(lp.InvocationError, match="missing parameter.*m"):
        launcher()
    with pytest.raises(lp.InvocationError, match="unknown parameter.*i"):
        launcher(m=m, i=1)          # iterated parameters are not given per call
    with pytest.raises(lp.InvocationError, match="not in parameters_map"):
        OpenClIterativeKernelLauncher(
            {"i": (1, np.int32), "j": (2, np.int32), "m": (3, np.int32)}, ((0, out),),
            {"k": lambda: range(2)}, name="fill", kernel=prg.fill,
            default_global_work_size=(1,))
    with pytest.raises(lp.InvocationError, match="callable"):
        OpenClKernelParameterYielder(range(3))


def test_iterative_launcher_no_values(prg, queue):
    out = cla.zeros(queue, 4, np.int32)
    launcher = OpenClIterativeKernelLauncher(
        {"i": (1, np.int32), "j": (2, np.int32), "m": (3, np.int32)}, ((0, out),),
        {"i": lambda: [], "j": lambda: [0]},
        name="fill", kernel=prg.fill, default_global_work_size=(1,), default_queue=queue)
    evt = launcher(m=1)
    assert isinstance(evt, cl.Event)
    evt.wait()
    assert launcher.statistics == {}

# }}}


# {{{ make_launcher

def _add_kernel():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i] + b[i]", name="vadd")
    return lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")


def test_make_launcher_matches_numpy(queue, rng):
    n = 1000
    a_host, b_host = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a, b = cla.to_device(queue, a_host), cla.to_device(queue, b_host)
    out = cla.zeros(queue, n, np.float32)
    launcher = lp.make_launcher(_add_kernel(), queue, a=a, b=b, out=out)
    assert isinstance(launcher, lp.OpenClKernelListLauncher)
    assert [k.name for k in launcher.launchers] == ["vadd"]
    assert launcher.launchers[0].default_global_work_size == (1024,)
    launcher().wait()
    np.testing.assert_allclose(out.get(), a_host + b_host, rtol=1e-6)
    # replays see new contents of the bound arrays
    a.set(2 * a_host)
    launcher(queue).wait()
    np.testing.assert_allclose(out.get(), 2 * a_host + b_host, rtol=1e-6)
    queue.finish()
    _check_stats(launcher.statistics["vadd"], "vadd", 2)


def test_make_launcher_explicit_parameter_and_empty(queue):
    knl = _add_kernel()
    a = cla.zeros(queue, 0, np.float32)
    launcher = lp.make_launcher(knl, queue, a=a, b=a, out=a, n=0)
    launcher().wait()            # empty grid: a marker
    with pytest.raises(lp.InvocationError, match="shape"):
        x = cla.zeros(queue, 10, np.float32)
        lp.make_launcher(knl, queue, a=x, b=x, out=x, n=12)


def test_make_launcher_errors(queue):
    knl = _add_kernel()
    x = cla.zeros(queue, 10, np.float32)
    with pytest.raises(lp.InvocationError, match="numpy array.*device data"):
        lp.make_launcher(knl, queue, a=np.zeros(10, np.float32), b=x, out=x)
    with pytest.raises(lp.InvocationError, match="missing array 'out'"):
        lp.make_launcher(knl, queue, a=x, b=x)
    with pytest.raises(lp.InvocationError, match="no argument.*c"):
        lp.make_launcher(knl, queue, a=x, b=x, out=x, c=x)
    with pytest.raises(lp.InvocationError, match="must be a pyopencl array"):
        lp.make_launcher(knl, queue, a=[1.0] * 10, b=x, out=x)
    # a parameter that no array shape determines must be passed
    knl2 = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]",
                          [lp.GlobalArg("a", np.float32, shape=("m",)),
                           lp.GlobalArg("out", np.float32, shape=("m",)),
                           lp.ValueArg("n", np.int32), lp.ValueArg("m", np.int32)])
    with pytest.raises(lp.InvocationError, match="missing parameter 'n'"):
        lp.make_launcher(knl2, queue, a=x, out=x)
    with pytest.raises(lp.InvocationError, match="must be a number"):
        lp.make_launcher(knl2, queue, a=x, out=x, n=x)
    with pytest.raises(lp.InvocationError, match="dtype"):
        lp.make_launcher(knl2, queue, a=x, out=cla.zeros(queue, 10, np.int32), n=4)
    out = cla.zeros(queue, 10, np.float32)
    y = cla.to_device(queue, np.arange(10, dtype=np.float32))
    lp.make_launcher(knl2, queue, a=y, out=out, n=4)().wait()
    np.testing.assert_array_equal(out.get(), [0, 2, 4, 6, 0, 0, 0, 0, 0, 0])


def test_make_launcher_heat_time_loop(queue, rng):
    n, steps, c = 203, 50, np.float32(0.25)
    knl = lp.make_kernel(
        "{[i]: 0<=i<n-2}",      # interior point i+1
        "u_new[i+1] = u[i+1] + c*(u[i] - 2*u[i+1] + u[i+2])",
        [lp.GlobalArg("u", np.float32, shape=("n",)),
         lp.GlobalArg("u_new", np.float32, shape=("n",)),
         lp.ValueArg("c", np.float32), "..."],
        name="heat_step")
    knl = lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
    u0 = rng.random(n, dtype=np.float32)
    u, v = cla.to_device(queue, u0), cla.to_device(queue, u0)   # same boundaries
    forward = lp.make_launcher(knl, queue, u=u, u_new=v, c=c)
    backward = lp.make_launcher(knl, queue, u=v, u_new=u, c=c)
    step = lp.OpenClKernelListLauncher("two_steps", default_queue=queue)
    step += forward
    step += backward
    for _ in range(steps // 2):
        step()
    queue.finish()

    ref = u0.copy()
    for _ in range(steps):
        new = ref.copy()
        new[1:-1] = ref[1:-1] + c * (ref[:-2] - 2 * ref[1:-1] + ref[2:])
        ref = new
    np.testing.assert_allclose(u.get(), ref, rtol=1e-5, atol=1e-6)
    stats = step.statistics
    assert set(stats) == {"heat_step"}           # both launchers share the name
    _check_stats(stats["heat_step"], "heat_step", steps)


def _saved_rotate():
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
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(knl))
    knl = lp.save_and_reload_temporaries(knl)
    return lp.get_one_scheduled_kernel(knl)


def test_make_launcher_rotate_two_device_kernels(queue):
    knl = _saved_rotate()
    n = 48
    arr = cla.to_device(queue, np.arange(n, dtype=np.int32))
    launcher = lp.make_launcher(knl, queue, arr=arr)
    assert [k.name for k in launcher.launchers] == ["rotate_v2", "rotate_v2_0"]
    for k in launcher.launchers:
        assert k.default_global_work_size == (n,)
        assert k.default_local_work_size == (16,)
    launcher().wait()
    np.testing.assert_array_equal(arr.get(), np.roll(np.arange(n), 1))
    launcher()
    launcher().wait()
    np.testing.assert_array_equal(arr.get(), np.roll(np.arange(n), 3))
    queue.finish()
    stats = launcher.statistics
    assert stats["rotate_v2"].count == 3 and stats["rotate_v2_0"].count == 3
    # assumptions are checked
    with pytest.raises(lp.InvocationError, match="assumptions"):
        lp.make_launcher(knl, queue, arr=cla.zeros(queue, 20, np.int32))

# }}}


# {{{ benchmark smoke test

def test_bench_launch_overhead_quick(tmp_path):
    script = ROOT / "benchmarks" / \
        "bench_launch_overhead.py"
    json_path, md_path = tmp_path / "launch.json", tmp_path / "launch.md"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(script), "--quick", "--json",
                           str(json_path), "--markdown", str(md_path)],
                          capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert elapsed < 120, f"--quick took {elapsed:.1f} s"
    data = json.loads(json_path.read_text())
    assert data["quick"] is True
    assert data["environment"]["device"]["name"]
    names = {r["variant"] for r in data["results"]}
    assert {"launcher", "knl-call", "pyopencl-call", "enqueue-preset"} <= names
    for r in data["results"]:
        assert r["check"] == "ok"
        assert r["host_us_per_launch"] > 0 and r["total_us_per_launch"] > 0
    assert "launcher" in md_path.read_text()

# }}}


_SCALARS_SOURCE = """
__kernel void scalars(__global long *out, char a, short b, int c, long d,
                      unsigned int e, float f, double g, double2 h)
{
    out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e;
    out[5] = (long) (f * 4.0f); out[6] = (long) (g * 8.0);
    out[7] = (long) h.x; out[8] = (long) h.y;
}
"""


def test_set_kernel_argument_passes_each_scalar_type_and_buffers(ctx, queue):
    # the fast setter passes a NumPy scalar's bytes: each C type the kernel
    # declares reads the value that NumPy holds (and buffers go through set_arg)
    kernel = cl.Kernel(cl.Program(ctx, _SCALARS_SOURCE).build(), "scalars")
    out = cla.zeros(queue, 9, np.int64)
    for values in [(-3, -300, -70000, -2**40, 2**31 + 5, -1.25, 2.5, (-4.0, 9.0)),
                   (7, 12, 5, 3, 1, 0.75, -0.125, (1.0, -2.0))]:
        scalars = [np.int8(values[0]), np.int16(values[1]), np.int32(values[2]),
                   np.int64(values[3]), np.uint32(values[4]), np.float32(values[5]),
                   np.float64(values[6]), np.complex128(complex(*values[7]))]
        lp.set_kernel_argument(kernel, 0, out.base_data)
        for k, value in enumerate(scalars, start=1):
            lp.set_kernel_argument(kernel, k, value)
        cl.enqueue_nd_range_kernel(queue, kernel, (1,), None)
        expected = [*values[:5], int(values[5] * 4), int(values[6] * 8), *values[7]]
        assert out.get().tolist() == expected
