"""The device that plans and kernels are made for, as planning and lowering
see it: one record, made where work is planned, passed down the pipeline.

Public names: Target, device_profile, has_tf32_tensor_cores, math_f32_choice,
math_f64_choice, default_target, Device (the Array API's device object).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lazyarray.deferred import deferred

if TYPE_CHECKING:
    import pyopencl as cl

    import kernelcore as lp
else:
    # (OpenCL and kernelcore load with the first device operation)
    cl, lp = deferred("pyopencl"), deferred("kernelcore")


def device_profile(device: cl.Device) -> tuple[str, int]:
    """``("gpu" or "cpu", compute units)`` of a pyopencl *device*."""
    kind = "gpu" if device.type & cl.device_type.GPU else "cpu"
    return kind, device.max_compute_units


def has_tf32_tensor_cores(device: cl.Device) -> bool:
    """Whether *device* is an NVIDIA GPU of compute capability 8 or more (TF32
    ``mma.sync`` in inline PTX)."""
    if not device.type & cl.device_type.GPU or "NVIDIA" not in device.vendor.upper():
        return False
    try:
        return device.compute_capability_major_nv >= 8
    except (cl.Error, AttributeError):
        return False


def math_f32_choice(device: cl.Device) -> str:
    """kernelcore's ``math_f32`` for *device*: ``"branch_free"`` on PoCL's CPU
    devices, whose float32 trigonometric, hyperbolic and logarithmic functions
    are scalar calls (5-40 times slower than kernelcore's vectorized ones), else ``"builtin"``."""
    return "branch_free" if _pocl_cpu(device) else "builtin"


def math_f64_choice(device: cl.Device) -> str:
    """kernelcore's ``math_f64`` for *device*: ``"branch_free"`` on PoCL's CPU
    devices, whose float64 logarithms, ``pow``, ``exp2``, ``expm1``, ``sinh``,
    ``cosh``, ``tanh``, inverse trigonometric functions, ``cbrt`` and ``hypot``
    are scalar calls (up to 17 times slower than kernelcore's vectorized
    ones), else ``"builtin"``."""
    return "branch_free" if _pocl_cpu(device) else "builtin"


def _pocl_cpu(device: cl.Device) -> bool:
    return "Portable Computing Language" in device.platform.name \
        and bool(device.type & cl.device_type.CPU)


@dataclass(frozen=True)
class Target:
    """A device as the planner and the lowering see it: its *kind* (``"gpu"``
    or ``"cpu"``, which picks layouts and the recompute limit), its number
    of compute *units* (which sizes split reductions), and whether it has
    *tensor_cores* for TF32 products (see :mod:`lazyarray.precision`), and how
    kernels compute float32 trigonometric, hyperbolic and logarithmic
    functions (*math_f32*, kernelcore's ``OpenCLTarget`` option:
    :func:`math_f32_choice`) and float64 ones (*math_f64*:
    :func:`math_f64_choice`)."""

    kind: str
    units: int
    tensor_cores: bool = False
    math_f32: str = "builtin"
    math_f64: str = "builtin"

    @property
    def host_tier_elements(self) -> int:
        """The largest result (in elements) that the host tier computes with
        NumPy when the tier is chosen automatically. Below it an eagerly
        planned device step (planning, launches, a read back) costs more than
        NumPy's operations, on PoCL's CPU device and on an H200 alike (the
        script suite at 16x the textbook sizes: diffusion, Poisson and MLP
        steps 2.8-9.8x NumPy's time on the H200's device tier, see
        docs/performance.md); jitted steps are fast on the device at any size.
        On a CPU device twice that: the eager device steps of 2-D diffusion and
        convection on two PoCL cores cost 1.3-1.8x NumPy's time up to 362 x 362
        (131,044 elements) and met it at about 420 x 420. Beyond it, the host
        tier's broadcasts of small arrays are recorded for the device (where
        they fuse with the reduction that follows) and cold PDE graphs are
        compiled; host arrays themselves may be larger (:attr:`host_array_elements`)."""
        return 1 << 17 if self.kind == "cpu" else 1 << 16

    @property
    def host_array_elements(self) -> int:
        """The largest array (in elements) that the host tier keeps on the
        host when the tier is chosen automatically: on a GPU the
        :attr:`host_tier_elements`; on a CPU device 1,048,576 (8 MiB of
        float64), since the host tier's deferred arithmetic and native loops
        compute elementwise work faster than NumPy, where an eager device step
        on two PoCL cores costs about what NumPy's operations do (image filters
        on 512 x 512: 1.18 -> 0.75 of NumPy's time)."""
        return 1 << 20 if self.kind == "cpu" else self.host_tier_elements

    @classmethod
    def of(cls, device: cl.Device) -> Target:
        """The target of a pyopencl *device* (asked once per device: each
        eager evaluation needs it)."""
        key = (cls, device.int_ptr, device_profile)
        target = _TARGETS.get(key)
        if target is None:
            target = _TARGETS[key] = cls(*device_profile(device),
                                         tensor_cores=has_tf32_tensor_cores(device),
                                         math_f32=math_f32_choice(device),
                                         math_f64=math_f64_choice(device))
        return target


    @classmethod
    def of_queue(cls, queue: cl.CommandQueue) -> Target:
        """:meth:`of` the device of *queue*, remembered per queue (asked on
        every eager evaluation; ``queue.device`` makes a new object each time)."""
        key = (cls, queue, device_profile)
        target = _TARGETS.get(key)
        if target is None:
            target = _TARGETS[key] = cls.of(queue.device)
        return target


#: targets by device (or queue) and :func:`device_profile` (tests replace it)
_TARGETS: dict[tuple, Target] = {}


def default_target() -> Target:
    """The target of the device lazyarray computes on (kernelcore's default
    queue's)."""
    return Target.of(lp.default_queue().device)


class Device:
    """An OpenCL device, as the Array API's ``x.device``."""

    def __init__(self, cl_device):
        self.cl_device = cl_device

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.cl_device == self.cl_device

    def __hash__(self) -> int:
        return hash(self.cl_device.int_ptr)

    def __repr__(self) -> str:
        return f"Device({self.cl_device.name.strip()!r})"
