"""Optional autotuning of work-group and tile sizes (``LAZYARRAY_TUNE=1``;
off by default).

On its first run, a kernel is built with each candidate *choice* of its
schedule's sizes, each version is timed on the run's own arguments, and the
fastest is kept. The choices never change a result:

- elementwise kernels try work-group sizes (on GPUs also elements per
  work-item) and, when they read an input transposed, tile sizes: every
  version computes each element with the same operations;
- matrix products try the blocking of the result and of *k*: every version
  accumulates each output over *k* in order, and a blocking is used only
  where the default blocking would be (the other reductions are not tuned:
  their layout decides the order of the additions).

The choice lives on in the kernel's disk recipe, so later processes reuse it
without timing again.

Public names: tuning_enabled, tune, candidates, CANDIDATES, Choice, NotApplicable.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

import numpy as np
import pyopencl as cl

import kernelcore as lp
from kernelcore import KernelcoreError
from lazyarray.lower.kernel import NotApplicable

logger = logging.getLogger(__name__)

#: one tuned size: (knob, value), see :data:`CANDIDATES`
Choice = tuple[str, tuple]


#: values tried per device kind and knob; each is passed on to the schedule
#: that uses the knob: ``group_size`` (elementwise work-items per group, and
#: elements per work-item of a long loop, see kernelcore's auto_parallelize),
#: ``transpose`` (GPU: tile edge and work-item rows; CPU: block edge),
#: ``contraction`` (GPU: work-group shape, outputs per work-item, k slice;
#: CPU: result rows and vectors per work-item)
CANDIDATES: dict[str, dict[str, tuple]] = {
    "cpu": {
        "group_size": ((32,), (64,), (128,), (256,)),
        "transpose": ((8,), (16,), (32,)),
        "contraction": ((8, 2), (4, 2), (4, 4), (6, 4), (12, 2), (8, 1)),
    },
    "gpu": {
        "group_size": ((64,), (128,), (256,), (512,), (256, 1), (256, 2), (256, 8)),
        "transpose": ((32, 8), (32, 4), (32, 16), (16, 8), (64, 8)),
        "contraction": (((16, 16), (8, 8), 16), ((16, 16), (8, 8), 8),
                        ((16, 16), (8, 8), 32), ((16, 16), (4, 8), 16),
                        ((16, 16), (4, 4), 16), ((8, 16), (8, 8), 16),
                        ((32, 8), (4, 16), 16)),
    },
}
#: the knobs tried for reductions (those that keep the order of the additions)
REDUCTION_KNOBS = ("contraction",)
#: timed runs per candidate (after one untimed run)
RUNS = 3


def tuning_enabled() -> bool:
    """Whether ``LAZYARRAY_TUNE`` asks for tuning (asked on every eager
    evaluation: an unset variable is seen in the environment's own table,
    without ``os.environ.get``'s encoding and KeyError)."""
    data = getattr(os.environ, "_data", None)
    if type(data) is dict and _TUNE_KEY is not None and _TUNE_KEY not in data:
        return False
    return os.environ.get("LAZYARRAY_TUNE", "").lower() in ("1", "true", "yes")


def _encoded_key(name: str):
    try:
        return os.environ.encodekey(name)        # type: ignore[attr-defined]
    except AttributeError:
        return None


_TUNE_KEY = _encoded_key("LAZYARRAY_TUNE")


def candidates(kind: str, reduction: bool) -> list[Choice]:
    """The choices tried on a device of *kind* for a reduction or an
    elementwise kernel."""
    return [(knob, value) for knob, values in CANDIDATES[kind].items()
            if (knob in REDUCTION_KNOBS) == reduction for value in values]


def _code(knl) -> str:
    return lp.generate_code_v2(knl).device_code()


def _label(choice: Choice | None) -> str:
    return "default" if choice is None else f"{choice[0]}={choice[1]}"


def tune(default: lp.LoopKernel, build: Callable[[Choice], lp.LoopKernel],
         choices: list[Choice], run: Callable[[lp.LoopKernel], None]
         ) -> tuple[lp.LoopKernel, dict[str, float]]:
    """The fastest of *default* (the untuned kernel) and the kernels
    ``build(choice)`` for *choices*, timed by ``run(knl)`` (which runs one
    kernel and waits for it); and the median timings by choice label
    (``"default"``, ``"group_size=(128,)"``, ...). Choices that build the
    default's code are not timed; those that fail to build or run are skipped."""
    versions: dict[Choice | None, lp.LoopKernel] = {None: default}
    codes = {_code(default)}
    for choice in choices:
        try:
            knl = build(choice)
            code = _code(knl)
        except (KernelcoreError, NotApplicable) as e:
            logger.info("tuning skips %s: %s", _label(choice), e)
            continue
        if code not in codes:       # the knob does not apply to this kernel
            versions[choice] = knl
            codes.add(code)
    if len(versions) == 1:
        return default, {}
    timings: dict[Choice | None, float] = {}
    for option, knl in versions.items():
        try:
            run(knl)
        except (cl.Error, KernelcoreError) as e:
            if option is None:          # the kernel itself fails: say so
                raise
            logger.info("tuning skips %s: %s", _label(option), e)
            continue
        samples = []
        for _ in range(RUNS):
            start = time.perf_counter()
            run(knl)
            samples.append(time.perf_counter() - start)
        timings[option] = float(np.median(samples))
    best = min(timings, key=lambda c: timings[c])
    logger.info("tuned kernel: %s (%s)", _label(best),
                ", ".join(f"{_label(c)}: {1e3 * t:.3f} ms" for c, t in timings.items()))
    return versions[best], {_label(c): t for c, t in timings.items()}
