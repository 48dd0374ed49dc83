"""The device that plans and kernels are made for, as planning and lowering
see it: one record, made where work is planned, passed down the pipeline.

Public names: Target, device_profile, default_target.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyopencl as cl


def device_profile(device: cl.Device) -> tuple[str, int]:
    """``("gpu" or "cpu", compute units)`` of a pyopencl *device*."""
    kind = "gpu" if device.type & cl.device_type.GPU else "cpu"
    return kind, device.max_compute_units


@dataclass(frozen=True)
class Target:
    """A device as the planner and the lowering see it: its *kind* (``"gpu"``
    or ``"cpu"``, which picks layouts and the recompute limit) and its number
    of compute *units* (which sizes split reductions)."""

    kind: str
    units: int

    @classmethod
    def of(cls, device: cl.Device) -> Target:
        """The target of a pyopencl *device* (asked once per device: each
        eager evaluation needs it)."""
        key = (cls, device.int_ptr, device_profile)
        target = _TARGETS.get(key)
        if target is None:
            target = _TARGETS[key] = cls(*device_profile(device))
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
    import kernelcore as lp
    return Target.of(lp.default_queue().device)
