"""Issue 20: the items of hysop's launcher spec that were missing:
HostLauncherI, OpenClKernelLauncherI.check_kernel_arg, profile_kernel,
should_profile_kernel, trace_kernel, should_trace_kernel,
push_copy_host_device, and the profiler= / **kwds constructor arguments."""

import logging

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

import kernelcore as lp
from kernelcore.runtime.launchers import (
    HostLauncherI,
    LauncherI,
    OpenClCopyLauncher,
    OpenClKernelLauncher,
    OpenClKernelLauncherI,
    OpenClKernelListLauncher,
    profile_kernel,
    should_profile_kernel,
    should_trace_kernel,
    trace_kernel,
)

SOURCE = """
__kernel void twice(__global float *x, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = 2.0f * x[i];
}
"""


@pytest.fixture(scope="module")
def twice(ctx):
    return cl.Program(ctx, SOURCE).build().twice


@pytest.fixture(scope="module")
def pqueue(ctx):
    return cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)


def test_host_launcher_interface():
    calls = []

    class Hello(HostLauncherI):
        def __call__(self, queue=None, wait_for=None, **kwds):
            calls.append(self.name)

    h = Hello("hello")
    assert isinstance(h, LauncherI) and h.global_size_configured()
    assert h.parameters() == {}
    h()
    assert calls == ["hello"]
    with pytest.raises(TypeError, match="bogus"):
        Hello("x", bogus=1)


def test_check_kernel_arg(twice):
    launcher = OpenClKernelLauncher("twice", twice, [None, np.int32(4)],
                                    default_global_work_size=(4,))
    assert isinstance(launcher, OpenClKernelLauncherI)
    launcher.check_kernel_arg(np.int32(3), 1, "n", np.int32)
    with pytest.raises(lp.InvocationError, match="'n'"):
        launcher.check_kernel_arg(3, 1, "n", np.int32)
    with pytest.raises(lp.InvocationError, match="int32"):
        launcher.check_kernel_arg(np.int64(3), 1, "n", np.int32)
    launcher.check_kernel_arg(cl.LocalMemory(16), 0, "x", cl.LocalMemory)
    with pytest.raises(lp.InvocationError):
        launcher.check_kernel_arg(np.float32(1), 0, "x", cl.MemoryObjectHolder)


def test_profiler_argument_collects_timings(twice, pqueue):
    x = cla.to_device(pqueue, np.ones(64, np.float32))
    timings = {}
    launcher = OpenClKernelLauncher("twice", twice, [x, np.int32(64)],
                                    default_global_work_size=(64,), default_queue=pqueue,
                                    profiler=timings)
    launcher().wait()
    launcher().wait()
    assert set(timings) == {"twice"} and timings["twice"] >= 0
    seen = []
    lst = OpenClKernelListLauncher("list", profiler=lambda name, s: seen.append(name))
    assert lst.profiler is not None
    np.testing.assert_array_equal(x.get(), 4 * np.ones(64, np.float32))


def test_profile_kernel_function(twice, pqueue):
    x = cla.to_device(pqueue, np.ones(8, np.float32))
    twice.set_args(x.data, np.int32(8))
    evt = cl.enqueue_nd_range_kernel(pqueue, twice, (8,), None)
    record = {}
    seconds = profile_kernel(twice, evt, fprofiler=record)
    assert seconds is not None and record == {"twice": seconds}
    got = []
    profile_kernel(None, evt, "named", lambda name, s: got.append((name, s)))
    assert got[0][0] == "named"


def test_should_profile_and_trace(monkeypatch, caplog):
    monkeypatch.delenv("KERNELCORE_PROFILE", raising=False)
    monkeypatch.delenv("KERNELCORE_TRACE", raising=False)
    assert not should_profile_kernel("k") and not should_trace_kernel("k")
    monkeypatch.setenv("KERNELCORE_PROFILE", "1")
    assert should_profile_kernel("anything")
    monkeypatch.setenv("KERNELCORE_TRACE", "^tw")
    assert should_trace_kernel("twice") and not should_trace_kernel("other")
    with caplog.at_level(logging.INFO, logger="kernelcore.launchers"):
        trace_kernel("twice")
    assert "twice" in caplog.text


def test_push_copy_host_device_picks_direction(queue):
    host = np.arange(8, dtype=np.float32)
    dev = cla.empty(queue, 8, np.float32)
    back = np.zeros(8, np.float32)
    lst = OpenClKernelListLauncher("copies", default_queue=queue)
    lst.push_copy_host_device("up", host, dev)
    lst.push_copy_host_device("down", dev, back)
    assert [c.direction for c in lst.launchers] == ["host_to_device", "device_to_host"]
    lst().wait()
    np.testing.assert_array_equal(back, host)


def test_kwds_reach_the_base_class(queue):
    host = np.arange(4, dtype=np.float32)
    dev = cla.empty(queue, 4, np.float32)
    copy = OpenClCopyLauncher("up", host, dev, profiler={})
    assert copy.profiler == {}
    with pytest.raises(TypeError):
        OpenClCopyLauncher("up", host, dev, unknown_option=True)
