"""Running planned kernels: steps and their kernels (``steps``), bound
launches (``launch``), disk recipes (``cache``), tuning (``tune``), the device
(``device``) and evaluation (``evaluate``).

Public names (re-exported): evaluate, plan, run_step, Step, STATS, default_queue,
adopt, synchronize, using_queue, DEVICE_LOCK.
"""

from lazyarray.run.device import DEVICE_LOCK, adopt, default_queue, synchronize, using_queue
from lazyarray.run.evaluate import evaluate
from lazyarray.run.steps import STATS, Step, plan, run_step

__all__ = ["DEVICE_LOCK", "STATS", "Step", "adopt", "default_queue", "evaluate", "plan",
           "run_step", "synchronize", "using_queue"]
