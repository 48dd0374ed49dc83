"""The suite's peers: NumPy, numexpr, pyopencl.array, JAX, torch (eager and
``torch.compile``), tinygrad and CuPy, each as a function making a
:class:`~workloads.Runner` for a case.

A peer that is not installed, or cannot run on this kind of device (JAX, torch
and CuPy run on CUDA when the suite measures a GPU), raises
:class:`~workloads.Unavailable`; one that has no version of a workload raises
:class:`~workloads.NotApplicable`. Each peer's result is made ready (a sync)
inside ``call()``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import os
from collections.abc import Callable

import numpy as np
from workloads import (
    NUMPY_OPS,
    W2_STEPS,
    Case,
    NotApplicable,
    Ops,
    Runner,
    SliceAssignOps,
    Unavailable,
    bind,
)

Builder = Callable[[Case, list[np.ndarray]], Runner]


def threads() -> int:
    """CPU cores this process may use (the thread count given to the peers)."""
    return len(os.sched_getaffinity(0))


# {{{ importing, once per process

class Setup:
    """Imports the peers' modules, set up for the device *kind* being measured
    (each once per process; an import failure is remembered too)."""

    def __init__(self, kind: str, quick: bool):
        self.kind = kind
        self.quick = quick
        self._modules: dict[str, object] = {}

    def module(self, name: str):
        """The set-up module *name*, or raises Unavailable."""
        if name not in self._modules:
            try:
                self._modules[name] = getattr(self, "_" + name)()
            except ImportError as e:
                self._modules[name] = Unavailable(str(e))
            except Unavailable as e:
                self._modules[name] = e
        found = self._modules[name]
        if isinstance(found, Unavailable):
            raise found
        return found

    def release(self) -> None:
        """Hand the device memory cached by CuPy's and torch's pools back
        (between cases, so that one case's arrays do not crowd the next)."""
        cupy, torch = self._modules.get("cupy"), self._modules.get("torch")
        if cupy is not None and not isinstance(cupy, Unavailable):
            cupy.get_default_memory_pool().free_all_blocks()
        if torch is not None and not isinstance(torch, Unavailable) \
                and self.kind == "gpu":
            torch.cuda.empty_cache()

    def _numexpr(self):
        import numexpr
        numexpr.set_num_threads(threads())
        return numexpr

    def _jax(self):
        if self.kind == "gpu":
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        else:
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        jax.config.update("jax_default_matmul_precision", "highest")   # no TF32
        if self.kind == "gpu" and jax.default_backend() != "gpu":
            raise Unavailable(f"JAX has no GPU backend here ({jax.default_backend()})",
                              "skipped")
        return jax

    def _torch(self):
        import torch
        if self.kind == "gpu":
            if not torch.cuda.is_available():
                raise Unavailable("torch has no CUDA device here", "skipped")
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        else:
            torch.set_num_threads(threads())
        torch.set_float32_matmul_precision("highest")
        return torch

    def _tinygrad(self):
        import tinygrad
        return tinygrad

    def _cupy(self):
        if self.kind != "gpu":
            raise Unavailable("CuPy runs on CUDA GPUs; this run measures a CPU",
                              "skipped")
        os.environ.setdefault("CUPY_TF32", "0")
        import cupy
        return cupy


def _version(mod) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return getattr(mod, "__version__", None) or version(mod.__name__)
    except PackageNotFoundError:
        return "?"

# }}}


# {{{ operation tables of the libraries that spell things differently

class JaxOps(Ops):
    def with_interior(self, u, interior):
        return u.at[1:-1, 1:-1].set(interior)


class TorchOps(Ops):
    def sum(self, x, axis=None, keepdims=False):
        return x.sum() if axis is None else x.sum(dim=axis, keepdim=keepdims)

    def max(self, x, axis=None, keepdims=False):
        return x.amax() if axis is None else x.amax(dim=axis, keepdim=keepdims)

    def contiguous(self, x):
        return x.contiguous()

    def with_interior(self, u, interior):
        v = u.clone()
        v[1:-1, 1:-1] = interior
        return v


class TinygradOps(Ops):
    def sin(self, x):
        return x.sin()

    def sqrt(self, x):
        return x.sqrt()

    def exp(self, x):
        return x.exp()

    def abs(self, x):
        return x.abs()

    def sum(self, x, axis=None, keepdims=False):
        return x.sum(axis=axis, keepdim=keepdims)

    def max(self, x, axis=None, keepdims=False):
        return x.max(axis=axis, keepdim=keepdims)

    def contiguous(self, x):
        return x.contiguous()

    def with_interior(self, u, interior):
        # contiguous(): a buffer per step, else the ten steps fuse into one
        # kernel that recomputes each earlier step five times per read
        middle = u[1:-1, :1].cat(interior, u[1:-1, -1:], dim=1)
        return u[:1, :].cat(middle, u[-1:, :], dim=0).contiguous()


class PyOpenCLOps(Ops):
    def __init__(self):
        import pyopencl.clmath as clmath
        super().__init__(clmath)

# }}}


# {{{ runners

def _numpy(case: Case, inputs: list[np.ndarray]) -> Runner:
    f = bind(case.fn, NUMPY_OPS)
    # NumPy is done when a call returns: nothing to wait for
    return Runner(lambda: f(*inputs), launch=lambda: f(*inputs), wait=lambda: None)


_NUMEXPR = {
    "W1": ("a*b + c*d - sin(e)", 1),
    "W2": ("x*k + h*sqrt(abs(x) + one)", W2_STEPS),      # one evaluate per step
    "W3 dot": ("sum(a*b)", 1),
}


def _numexpr(setup: Setup, case: Case, inputs: list[np.ndarray]) -> Runner:
    if case.name not in _NUMEXPR:
        raise NotApplicable(case.name)
    ne = setup.module("numexpr")
    expr, steps = _NUMEXPR[case.name]
    names = "x" if len(inputs) == 1 else "abcde"
    # float32 constants: Python floats would make numexpr compute in float64
    consts = {"k": np.float32(0.999), "h": np.float32(0.5), "one": np.float32(1)}

    def call():
        env = dict(zip(names, inputs), **consts)
        for _ in range(steps):
            env["x"] = ne.evaluate(expr, local_dict=env)
        return env["x"]
    return Runner(call)


def _pyopencl(queue, case: Case, inputs: list[np.ndarray]) -> Runner:
    if case.name not in ("W1", "W2", "W3 dot") and case.workload != "W8":
        raise NotApplicable(case.name)
    import pyopencl.array as cla
    import pyopencl.tools as cl_tools
    pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))
    dev = [cla.to_device(queue, x, allocator=pool) for x in inputs]
    f = cla.dot if case.name == "W3 dot" else bind(case.fn, PyOpenCLOps())

    def call():
        out = f(*dev)
        queue.finish()
        return out
    try:
        call()          # dot needs Mako: say so as "not installed"
    except ImportError as e:
        raise Unavailable(str(e).splitlines()[0]) from None
    return Runner(call, to_host=lambda r: r.get(), launch=lambda: f(*dev), wait=queue.finish)


def _jax(setup: Setup, case: Case, inputs: list[np.ndarray]) -> Runner:
    jax = setup.module("jax")
    f = jax.jit(bind(case.fn, JaxOps(jax.numpy)))
    args = [jax.device_put(x) for x in inputs]
    last = []

    def launch():
        last[:] = [f(*args)]

    # JAX runs one device's computations in order: the last result is the last done
    return Runner(lambda: f(*args).block_until_ready(), launch=launch,
                  wait=lambda: last[0].block_until_ready())


def _torch(setup: Setup, case: Case, inputs: list[np.ndarray], compiled: bool
           ) -> Runner:
    torch = setup.module("torch")
    f = bind(case.fn, TorchOps(torch))
    if compiled:
        if setup.kind != "gpu" and setup.quick:
            raise Unavailable("with --quick on a CPU (inductor compiles C++ for "
                              "seconds per workload)", "skipped")
        torch._dynamo.reset()
        f = torch.compile(f, dynamic=False)
    device = "cuda" if setup.kind == "gpu" else "cpu"
    args = [torch.from_numpy(x).to(device) for x in inputs]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def call():
        out = f(*args)
        sync()
        return out
    return Runner(call, to_host=lambda r: r.detach().cpu().numpy(), launch=lambda: f(*args),
                  wait=sync)


class _KeepCudaContext:
    """Makes the CUDA context that was current before a block current again
    after it: tinygrad's CUDA backend makes a context of its own current, in
    which CuPy's kernels are invalid handles and others switch back per call."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.saved = ctypes.c_void_p()

    def __enter__(self):
        self.cuda.cuCtxGetCurrent(ctypes.byref(self.saved))

    def __exit__(self, *exc):
        self.cuda.cuCtxSetCurrent(self.saved)


def _tinygrad(setup: Setup, case: Case, inputs: list[np.ndarray]) -> Runner:
    setup.module("tinygrad")
    from tinygrad import Device, Tensor, TinyJit
    keep = (_KeepCudaContext() if Device.DEFAULT in ("CUDA", "NV")
            else contextlib.nullcontext())
    with keep:
        f = TinyJit(bind(case.fn, TinygradOps(None)))
        args = [Tensor(x).realize() for x in inputs]

    def call():
        with keep:
            out = f(*args)
            Device[out.device].synchronize()
        return out

    def to_host(out):
        with keep:
            return out.numpy()
    return Runner(call, to_host)


def _cupy(setup: Setup, case: Case, inputs: list[np.ndarray]) -> Runner:
    cp = setup.module("cupy")
    f = bind(case.fn, SliceAssignOps(cp))
    args = [cp.asarray(x) for x in inputs]

    def call():
        out = f(*args)
        cp.cuda.get_current_stream().synchronize()
        return out
    return Runner(call, to_host=cp.asnumpy, launch=lambda: f(*args),
                  wait=lambda: cp.cuda.get_current_stream().synchronize())

# }}}


def builders(queue, setup: Setup) -> dict[str, Builder]:
    """The peers by variant name (JAX, torch and CuPy on CUDA when *setup* is
    for a GPU); pyopencl.array runs on *queue*."""
    return {
        "numpy": _numpy,
        "numexpr": functools.partial(_numexpr, setup),
        "pyopencl.array": functools.partial(_pyopencl, queue),
        "jax": functools.partial(_jax, setup),
        "torch": functools.partial(_torch, setup, compiled=False),
        "torch-compile": functools.partial(_torch, setup, compiled=True),
        "tinygrad": functools.partial(_tinygrad, setup),
        "cupy": functools.partial(_cupy, setup),
    }


def versions(setup: Setup) -> dict[str, str]:
    """Version of each optional peer (or why it is unavailable), with the
    device JAX or tinygrad computes on; imports them."""
    out = {}
    for name in ("numexpr", "jax", "torch", "tinygrad", "cupy"):
        try:
            mod = setup.module(name)
        except Unavailable as e:
            out[name] = f"{e.status} ({e})"
            continue
        out[name] = _version(mod)
        if name == "jax":
            out[name] += f" ({mod.default_backend()})"
        elif name == "tinygrad":
            out[name] += f" (device {importlib.import_module('tinygrad').Device.DEFAULT})"
    return out
