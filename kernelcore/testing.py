"""Testing a transformed kernel against a reference version of it.

:func:`auto_test_vs_ref` runs an untransformed (reference) kernel, preferably on
a CPU device, and a transformed (test) kernel on a given context with the same
randomly generated inputs, compares every array the kernels write, and then
times the test kernel.

How arguments are made:

* input arrays get deterministic random data of their declared dtype, with
  shapes found by evaluating the declared shapes at ``parameters``;
* arrays that are only written start out filled with a *sentinel* (NaN for
  inexact types, the largest representable value for integers, True for
  booleans), so that entries a kernel forgets to write show up; with
  ``fills_entire_output=False`` they start out with (identical) random data
  instead;
* scalar arguments take their values from ``parameters``.

Both kernels receive the same logical data; when a test kernel lays an array
out differently (another order or explicit strides), the data is placed in its
layout, and results are compared element by element in logical order.

Public names: auto_test_vs_ref, AutomaticTestFailure.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl

from kernelcore.diagnostic import AutomaticTestFailure, KernelcoreError, TypeInferenceFailure
from kernelcore.runtime.invoke import get_executor
from kernelcore.testing_args import RANDOM_SEED, ArgData, is_sentinel, make_args, make_ref_args
from kernelcore.translation_unit import TranslationUnit, as_kernel
from kernelcore.types import infer_types

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel
    from kernelcore.translation_unit import TranslationUnit

logger = logging.getLogger(__name__)

_RULE = 75 * "-"


# {{{ tolerances and result checking

def _tolerance(dtype: np.dtype) -> float:
    """Allowed error relative to the largest reference magnitude."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        return 0.0
    real = np.finfo(dtype).dtype  # the real type of a complex type
    if real.itemsize <= 2:
        return 1e-3
    if real.itemsize <= 4:
        return 1e-5
    return 1e-12


def default_check_result(result: np.ndarray, ref_result: np.ndarray) -> tuple[bool, str]:
    """Compare *result* to *ref_result* (both flat): exactly for integer and
    boolean data; for floating-point data up to a relative tolerance (1e-5 for
    32-bit, 1e-12 for 64-bit types) of the largest reference magnitude, with
    NaN only where the reference has NaN."""
    result = np.asarray(result)
    ref_result = np.asarray(ref_result)
    if result.shape != ref_result.shape:
        return False, (f"shape {result.shape} differs from the reference's "
                       f"{ref_result.shape}")
    if result.size == 0:
        return True, "empty"
    dtype = np.result_type(result.dtype, ref_result.dtype)

    if dtype.kind not in "fc":
        bad = result != ref_result
        nbad = int(np.count_nonzero(bad))
        if not nbad:
            return True, "exact match"
        first = int(np.flatnonzero(bad)[0])
        max_err = _max_abs_diff(result[bad], ref_result[bad])
        return False, (f"{nbad} of {result.size} entries differ (max error {max_err}; "
                       f"first at flat index {first}: got {result[first]}, "
                       f"expected {ref_result[first]})")

    res_nan = np.isnan(result)
    ref_nan = np.isnan(ref_result)
    if (res_nan != ref_nan).any():
        where = np.flatnonzero(res_nan != ref_nan)
        return False, (f"{where.size} of {result.size} entries are NaN in only one of "
                       f"result and reference (first at flat index {int(where[0])}: got "
                       f"{result[where[0]]}, expected {ref_result[where[0]]})")
    finite = ~ref_nan
    res_f = result[finite].astype(dtype)
    ref_f = ref_result[finite].astype(dtype)
    if res_f.size == 0:
        return True, "all NaN in both"
    scale = float(np.max(np.abs(ref_f)))
    if not np.isfinite(scale):
        inf_mismatch = (res_f != ref_f) & ~np.isfinite(ref_f)
        if inf_mismatch.any():
            return False, "infinite reference values not matched"
        keep = np.isfinite(ref_f)
        res_f, ref_f = res_f[keep], ref_f[keep]
        scale = float(np.max(np.abs(ref_f))) if ref_f.size else 0.0
    diff = np.abs(res_f - ref_f)
    max_err = float(np.max(diff)) if diff.size else 0.0
    rel_err = max_err / scale if scale > 0 else max_err
    tol = _tolerance(dtype)
    ok = bool(np.allclose(res_f, ref_f, rtol=0, atol=tol * scale)) if scale > 0 \
        else max_err == 0
    msg = (f"max error {max_err:g} (relative to the largest reference magnitude "
           f"{scale:g}: {rel_err:g}, tolerance {tol:g})")
    if not ok:
        worst = int(np.argmax(diff))
        msg += f"; worst: got {res_f[worst]}, expected {ref_f[worst]}"
    return ok, msg


def _max_abs_diff(a: np.ndarray, b: np.ndarray):
    if a.dtype.kind == "b":
        return 1
    return np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))

# }}}


# {{{ devices

def _enumerate_ref_devices(blacklist_ref_vendors: Sequence[str]):
    """Devices for the reference run: CPUs first, then the rest, skipping
    platforms whose vendor or name contains a blacklisted string."""
    black = [b.lower() for b in blacklist_ref_vendors]
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    cpus: list
    others: list
    cpus, others = [], []
    for p in platforms:
        label = f"{p.vendor} {p.name}".lower()
        if any(b in label for b in black):
            continue
        try:
            devices = p.get_devices()
        except cl.Error:
            continue
        for d in devices:
            (cpus if d.type & cl.device_type.CPU else others).append(d)
    return cpus + others


_REF_CONTEXTS: dict[int, cl.Context] = {}


def _context_for(dev: cl.Device, ctx: cl.Context) -> cl.Context:
    if any(d.int_ptr == dev.int_ptr for d in ctx.devices) and len(ctx.devices) == 1:
        return ctx
    if dev.int_ptr not in _REF_CONTEXTS:
        _REF_CONTEXTS[dev.int_ptr] = cl.Context([dev])
    return _REF_CONTEXTS[dev.int_ptr]


def _make_queue(ctx: cl.Context) -> tuple[cl.CommandQueue, bool]:
    try:
        return cl.CommandQueue(
            ctx, properties=cl.command_queue_properties.PROFILING_ENABLE), True
    except cl.Error:
        return cl.CommandQueue(ctx), False

# }}}


# {{{ helpers

def _prepare(knl: LoopKernel | TranslationUnit, role: str, entrypoint: str | None
             ) -> LoopKernel:
    """*knl* with every type known, or a clear error."""

    if isinstance(knl, TranslationUnit):
        if entrypoint is not None and entrypoint not in knl.entrypoints:
            raise KernelcoreError(
                f"auto_test_vs_ref: the entry points of the {role} translation unit are "
                f"{', '.join(sorted(knl.entrypoints))}, not '{entrypoint}'")
        knl = as_kernel(knl, entrypoint)
    if entrypoint is not None and entrypoint != knl.name:
        raise KernelcoreError(f"auto_test_vs_ref: the {role} kernel is named "
                              f"'{knl.name}', not '{entrypoint}'")
    written = knl.get_written_variables()
    params = set(knl.all_params())
    untyped = [a.name for a in knl.args if a.dtype is None and a.name not in written
               and a.name not in params]
    if untyped:
        raise TypeInferenceFailure(
            f"auto_test_vs_ref: the {role} kernel '{knl.name}' does not declare the "
            f"type of argument(s) {', '.join(repr(n) for n in untyped)}; declare them "
            "first, e.g. lp.add_dtypes(knl, {" + ", ".join(
                f"{n!r}: np.float32" for n in untyped) + "})")
    try:
        return infer_types(knl)
    except TypeInferenceFailure as e:
        raise TypeInferenceFailure(f"auto_test_vs_ref ({role} kernel '{knl.name}'): "
                                   f"{e}") from None


def _check_same_args(ref_knl, test_knl) -> None:
    """The two kernels must take the same arguments (by name; order may differ)."""
    ref_args, test_args = ref_knl.arg_dict, test_knl.arg_dict
    if set(ref_args) != set(test_args):
        only_ref = sorted(set(ref_args) - set(test_args))
        only_test = sorted(set(test_args) - set(ref_args))
        raise KernelcoreError(
            "auto_test_vs_ref: the reference and test kernels take different arguments"
            + (f"; only the reference has {', '.join(only_ref)}" if only_ref else "")
            + (f"; only the test kernel has {', '.join(only_test)}" if only_test else ""))
    for name, r in ref_args.items():
        t = test_args[name]
        if type(r) is not type(t) or r.dtype != t.dtype:
            raise KernelcoreError(
                f"auto_test_vs_ref: argument '{name}' differs between the reference "
                f"kernel ({r}) and the test kernel ({t})")


def _fmt(v) -> str:
    return "<unavailable>" if v is None else f"{v:g}"


def _profile_seconds(start_evt, end_evt, start_attr="start", end_attr="end"):
    try:
        return 1e-9 * (getattr(end_evt.profile, end_attr)
                       - getattr(start_evt.profile, start_attr))
    except (cl.Error, AttributeError):
        return None


def _compare(arg_data: list[ArgData], check_result: Callable, fills_entire_output: bool,
             test_name: str, reference_may_skip: bool) -> None:
    for desc in arg_data:
        if not desc.needs_checking:
            continue
        assert desc.ref is not None and desc.test is not None
        ref = desc.ref.logical().reshape(-1)
        res = desc.test.logical().reshape(-1)
        n = min(ref.size, res.size)
        ref, res = ref[:n], res[:n]
        if fills_entire_output and desc.sentinel_filled:
            ref_unwritten = is_sentinel(ref)
            test_unwritten = is_sentinel(res)
            checks = [(f"test kernel '{test_name}' left", test_unwritten & ~ref_unwritten),
                      (f"test kernel '{test_name}' wrote", ~test_unwritten & ref_unwritten)]
            if not reference_may_skip:
                checks.append(("reference kernel left", ref_unwritten))
            for what, wrong in checks:
                count = int(np.count_nonzero(wrong))
                if count:
                    first = int(np.flatnonzero(wrong)[0])
                    raise AutomaticTestFailure(
                        f"output '{desc.name}': the {what} {count} of {n} entries "
                        + ("unwritten" if "left" in what else "the reference left unwritten")
                        + f" (first at flat index {first}); pass fills_entire_output=False "
                        "if outputs are meant to be partial")
            ref, res = ref[~ref_unwritten], res[~ref_unwritten]
        ok, message = check_result(res, ref)
        if not ok:
            raise AutomaticTestFailure(
                f"output '{desc.name}' of test kernel '{test_name}' differs from the "
                f"reference: {message}")
        logger.info("%s: output '%s' matches the reference: %s", test_name, desc.name,
                    message)

# }}}


def auto_test_vs_ref(ref_knl: LoopKernel | TranslationUnit, ctx: cl.Context,
                     test_knl: LoopKernel | TranslationUnit | None = None,
                     op_count: Sequence[float] = (), op_label: Sequence[str] = (),
                     parameters: dict | None = None, print_ref_code: bool = False,
                     print_code: bool = True, warmup_rounds: int = 2,
                     dump_binary: bool = False, fills_entire_output: bool | None = None,
                     do_check: bool = True, check_result: Callable | None = None,
                     max_test_kernel_count: int = 1, quiet: bool = False,
                     blacklist_ref_vendors: Sequence[str] = (),
                     ref_entrypoint: str | None = None,
                     test_entrypoint: str | None = None, *,
                     timing_budget: float = 0.5, max_timing_rounds: int = 1 << 14,
                     seed: int = RANDOM_SEED) -> dict[str, Any]:
    """Check *test_knl* (a transformed version of *ref_knl*) against *ref_knl*,
    then time it.

    The reference kernel runs on a CPU device when there is one (platforms whose
    vendor or name contains a string of *blacklist_ref_vendors* are skipped), the
    test kernel on *ctx*'s device, both with the same random inputs (see the
    module docs; *parameters* gives the values of the kernels' parameters and
    scalar arguments). Every array the kernels write is compared after the test
    kernel's first run, by ``check_result(result, ref_result) -> (ok, message)``
    on flat numpy arrays (default: exact for integers, up to 1e-5 (float32) /
    1e-12 (float64) of the largest reference magnitude for floating point).
    A mismatch, or (unless *fills_entire_output* is False) an output entry the
    test kernel leaves unwritten or writes where the reference did not, raises
    :class:`AutomaticTestFailure`; with *fills_entire_output* True so does an
    entry the reference leaves unwritten (by default, as in loopy, outputs the
    reference writes in part are compared where it writes them).

    Without *test_knl*, *ref_knl* is only timed (no check). Argument types must be
    known beforehand (:func:`kernelcore.add_dtypes`); output types may be left to
    inference.

    Timing: *warmup_rounds* runs, then batches of 1, 2, 4, ... runs until a
    batch takes longer than *timing_budget* seconds (or has *max_timing_rounds*
    runs); times per run from the last batch are returned. For each pair of
    *op_count* / *op_label* (e.g. ``[2*n/1e9]``, ``["GFlops"]``) a rate
    ``count / elapsed_wall`` is reported.

    Returns a dict with ``elapsed_wall``, ``elapsed_event`` (from profiling
    events; None without profiling), ``elapsed_event_marker`` (between markers
    enqueued around the batch; None where unsupported), ``timing_rounds``,
    ``rates`` (``{"GFlops/s": ...}``), and with a check ``ref_elapsed_wall``,
    ``ref_elapsed_event`` and ``ref_rates``.

    kernelcore finds one linearization per kernel, so at most one test kernel
    is tried whatever *max_test_kernel_count* (>= 1) says; *ref_entrypoint* /
    *test_entrypoint*, when given, must be the kernels' names.
    """

    if parameters is None:
        parameters = {}
    parameters = dict(parameters)
    if test_knl is None:
        test_knl = ref_knl
        do_check = False
    if isinstance(op_count, (int, float)):
        warnings.warn("op_count should be a sequence", stacklevel=2)
        op_count = [op_count]
    if isinstance(op_label, str):
        warnings.warn("op_label should be a sequence", stacklevel=2)
        op_label = [op_label]
    op_count, op_label = list(op_count), list(op_label)
    if len(op_count) != len(op_label):
        raise KernelcoreError("auto_test_vs_ref: op_count and op_label must have the same "
                              "length")
    if max_test_kernel_count < 1:
        raise KernelcoreError("auto_test_vs_ref: max_test_kernel_count must be >= 1")
    if warmup_rounds < 0:
        raise KernelcoreError("auto_test_vs_ref: warmup_rounds must be >= 0")
    if check_result is None:
        check_result = default_check_result
    fills = fills_entire_output is None or bool(fills_entire_output)

    ref_knl = _prepare(ref_knl, "reference", ref_entrypoint)
    test_knl = _prepare(test_knl, "test", test_entrypoint)
    _check_same_args(ref_knl, test_knl)

    result: dict[str, Any] = {}

    # {{{ reference run

    devices = _enumerate_ref_devices(blacklist_ref_vendors)
    if do_check and not devices:
        raise KernelcoreError(
            "auto_test_vs_ref: found no device for the reference computation"
            + (f" (blacklisted vendors: {', '.join(blacklist_ref_vendors)})"
               if blacklist_ref_vendors else ""))

    ref_ex = get_executor(ref_knl, {})
    if not quiet and print_ref_code:
        print(_RULE)
        print("Reference code:")
        print(_RULE)
        print(ref_ex.code.device_code())
        print(_RULE)

    if do_check:
        ref_dev = devices[0]
        ref_ctx = _context_for(ref_dev, ctx)
        ref_queue, ref_profiling = _make_queue(ref_ctx)
        logger.info("%s (ref): using %s", ref_knl.name, ref_dev.name.strip())
        ref_args, arg_data = make_ref_args(ref_knl, ref_queue, parameters,
                                           fills_entire_output=fills, seed=seed)
        ref_ex.cl_kernels(ref_ctx)  # build outside the timed region
        ref_queue.finish()
        start = time.perf_counter()
        ref_evt, _ = ref_ex(ref_queue, dict(ref_args))
        ref_queue.finish()
        ref_elapsed_wall = time.perf_counter() - start
        ref_elapsed_event = _profile_seconds(ref_evt, ref_evt) if ref_profiling else None
        result["ref_elapsed_wall"] = ref_elapsed_wall
        result["ref_elapsed_event"] = ref_elapsed_event
        ref_time = ref_elapsed_event if ref_elapsed_event else ref_elapsed_wall
        result["ref_rates"] = {f"{lbl}/s": cnt / ref_time
                               for cnt, lbl in zip(op_count, op_label)} if ref_time \
            else {}
        result["ref_device"] = ref_dev.name.strip()
    else:
        # data only: make it on the test context
        arg_data = None

    # }}}

    # {{{ test runs

    queue, profiling = _make_queue(ctx)
    if arg_data is None:
        _, arg_data = make_ref_args(ref_knl, queue, parameters,
                                    fills_entire_output=fills, seed=seed)
    args = make_args(test_knl, queue, arg_data, parameters)
    ex = get_executor(test_knl, {})
    cl_kernels = ex.cl_kernels(ctx)

    if not quiet:
        print(_RULE)
        print(f"Kernel #0 ({test_knl.name}):")
        print(_RULE)
        if print_code:
            print(ex.code.device_code())
            print(_RULE)
        if dump_binary:
            for k in cl_kernels:
                prg = k.get_info(cl.kernel_info.PROGRAM)
                print(type(prg).__name__)
                binaries = getattr(prg, "binaries", None)
                if binaries:
                    print(binaries[0])
            print(_RULE)

    def run_once():
        evt, _ = ex(queue, dict(args))
        return evt

    logger.info("%s: first run", test_knl.name)
    run_once()
    queue.finish()
    if do_check:
        _compare(arg_data, check_result, fills, test_knl.name,
                 reference_may_skip=fills_entire_output is None)
    for _ in range(max(0, warmup_rounds - 1)):
        run_once()
    queue.finish()

    logger.info("%s: timing", test_knl.name)
    timing_rounds = 1
    while True:
        events = []
        queue.finish()
        start = time.perf_counter()
        marker_start = cl.enqueue_marker(queue)
        for _ in range(timing_rounds):
            events.append(run_once())
        marker_end = cl.enqueue_marker(queue)
        queue.finish()
        total = time.perf_counter() - start
        if total >= timing_budget or timing_rounds >= max_timing_rounds:
            break
        timing_rounds *= 2

    elapsed_wall = total / timing_rounds
    elapsed_event = elapsed_event_marker = None
    if profiling:
        span = _profile_seconds(events[0], events[-1])
        elapsed_event = None if span is None else span / timing_rounds
        span = _profile_seconds(marker_start, marker_end, "start", "start")
        if span is not None and span > 0:
            elapsed_event_marker = span / timing_rounds

    rates = {f"{lbl}/s": cnt / elapsed_wall for cnt, lbl in zip(op_count, op_label)} \
        if elapsed_wall > 0 else {}
    if not quiet:
        rate_str = "".join(f" {v:g} {k}" for k, v in rates.items())
        print(f"elapsed: {_fmt(elapsed_event)} s event, {_fmt(elapsed_event_marker)} s "
              f"marker-event, {_fmt(elapsed_wall)} s wall ({timing_rounds} rounds)"
              f"{rate_str}")
        if do_check:
            ref_rate_str = "".join(f" {v:g} {k}" for k, v in result["ref_rates"].items())
            print(f"ref: elapsed: {_fmt(result['ref_elapsed_event'])} s event, "
                  f"{_fmt(result['ref_elapsed_wall'])} s wall{ref_rate_str}")

    # }}}

    result.update(elapsed_wall=elapsed_wall, elapsed_event=elapsed_event,
                  elapsed_event_marker=elapsed_event_marker, timing_rounds=timing_rounds,
                  rates=rates, checked=bool(do_check))
    return result


__all__ = ["auto_test_vs_ref", "AutomaticTestFailure"]
