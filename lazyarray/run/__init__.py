"""Running planned kernels: steps and their kernels (``steps``), bound
launches (``launch``), disk recipes (``cache``), tuning (``tune``), the device
(``device``), evaluation (``evaluation``) and the progress line of long
kernel builds (``progress``).

The package loads its submodules when a name is first read from it
(``from lazyarray import run as _run`` ... ``_run.evaluate(node)``): they need
OpenCL and kernelcore, which a program computing only on the host tier never
imports (see ``tests/lazyarray/run/test_cold_start.py``).

Public names (re-exported): evaluate, contiguous_part, plan, run_step, Step, STATS, default_queue,
adopt, synchronize, round_trip, using_queue, queue_of, to_device, DEVICE_LOCK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lazyarray.deferred import submodule_getattr

if TYPE_CHECKING:
    from lazyarray.run.device import (
        DEVICE_LOCK,
        adopt,
        default_queue,
        queue_of,
        round_trip,
        synchronize,
        to_device,
        using_queue,
    )
    from lazyarray.run.evaluation import contiguous_part, evaluate
    from lazyarray.run.steps import STATS, Step, plan, run_step

__all__ = ["DEVICE_LOCK", "STATS", "Step", "adopt", "contiguous_part", "default_queue",
           "evaluate", "plan",
           "queue_of", "round_trip", "run_step", "synchronize", "to_device", "using_queue"]

_HOMES = {"DEVICE_LOCK": "device", "adopt": "device", "default_queue": "device",
          "queue_of": "device", "round_trip": "device", "synchronize": "device",
          "to_device": "device",
          "using_queue": "device", "evaluate": "evaluation", "contiguous_part": "evaluation",
          "STATS": "steps", "Step": "steps", "plan": "steps", "run_step": "steps"}
_load = submodule_getattr(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    """A public name or a submodule, imported on first use. The runtime
    (device, evaluation, steps) loads as one, with the first public name
    read: the first device operation, so that later ones import nothing."""
    if name in _HOMES:
        importlib.import_module(f"{__name__}.evaluation")
    return _load(name)
