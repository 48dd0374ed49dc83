#!/usr/bin/env python3
"""The benchmark suite: lazyarray on workloads W1-W9 against NumPy, numexpr,
hand-written OpenCL, the copy bandwidth, pyopencl.array, JAX, torch, tinygrad
and CuPy, in one run on one device (see benchmarks/README.md).

Every variant's result is checked against a float64 NumPy reference before it
is timed; a failure is recorded with its error text and the run goes on. The
exit status is 1 when a lazyarray variant fails.

Usage::

    python benchmarks/suite.py [--device cpu|gpu] [--quick] [--only W1,W3]
        [--repeat N] [--json PATH] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common
from workloads import Case, NotApplicable, Runner, Unavailable, check

logger = logging.getLogger("suite")

LAZY_JIT, LAZY_EAGER = "lazyarray-jit", "lazyarray-eager"
WORKLOADS = tuple(f"W{k}" for k in range(1, 10))
CHECK_CALLS = 3          # calls before timing; the first and the last are checked
BUDGET_S = 3.0           # timing per variant and case stops past this (>= 3 samples)
#: on a GPU each variant is first called for at least this long (its clocks
#: reach their working speed: a child process starts on an idle GPU)
WARMUP_S = 0.5

Builder = Callable[[Case, list[np.ndarray]], Runner]


# {{{ command line

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="lazyarray benchmark suite (W1-W9).")
    p.add_argument("--device", default=None,
                   help="cpu or gpu (sets KERNELCORE_DEVICE before kernelcore is "
                        "imported); default: kernelcore's usual choice")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes, 3 repeats, one W9 pair (the smoke test); outputs "
                        "default to benchmarks/results/tmp/")
    p.add_argument("--only", default=None, metavar="W1,W3",
                   help="comma-separated workloads to run (default: all)")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed samples per variant (default 20 on a CPU, 30 on a "
                        "GPU, 3 with --quick)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None,
                   help="JSON output (default benchmarks/results/suite-<kind>.json)")
    p.add_argument("--markdown", type=Path, default=None,
                   help="Markdown output (default next to the JSON)")
    p.add_argument("--isolated", action="store_true",
                   help="every workload's variants in processes of their own (the "
                        "default on a CPU; on a GPU only W8 without this)")
    p.add_argument("--variant", default=None,
                   help="run only this variant (W8 measures each variant this way, in "
                        "a process of its own)")
    args = p.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")
    args.only = (set(WORKLOADS) if args.only is None
                 else {w.strip().upper() for w in args.only.split(",") if w.strip()})
    if not args.only or not args.only <= set(WORKLOADS):
        p.error(f"--only takes workloads among {', '.join(WORKLOADS)}")
    return args

# }}}


# {{{ variants

def _lazyarray(queue, jitted: bool, case: Case, inputs: list[np.ndarray]) -> Runner:
    """la.jit on arguments already on the device, or the graph built anew each
    call on fresh lazy arrays (so that nothing computed before is reused)."""
    import pyopencl.array as cla
    from workloads import Ops, bind

    import lazyarray as la

    f = bind(case.fn, Ops(la))
    dev = [cla.to_device(queue, x) for x in inputs]
    if jitted:
        f = la.jit(f)
        held = [la.asarray(d) for d in dev]

    def launch():
        args = held if jitted else [la.asarray(d) for d in dev]
        return f(*args).compute()

    def call():
        out = launch()
        queue.finish()
        return out
    return Runner(call, launch=launch, wait=queue.finish)


def _copy(queue, case: Case, inputs: list[np.ndarray]) -> Runner:
    import handwritten
    if not case.bandwidth:
        raise NotApplicable(case.name)
    return handwritten.copy_runner(queue, case.largest(inputs))


def variant_builders(queue, setup) -> dict[str, Builder]:
    """Every variant by name, in report order."""
    import functools

    import handwritten
    import peers
    others = peers.builders(queue, setup)
    return {
        LAZY_JIT: functools.partial(_lazyarray, queue, True),
        LAZY_EAGER: functools.partial(_lazyarray, queue, False),
        "numpy": others.pop("numpy"),
        "numexpr": others.pop("numexpr"),
        "hand-written": functools.partial(handwritten.runner, queue),
        "copy": functools.partial(_copy, queue),
        **others,
    }

# }}}


# {{{ running a case

def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip()


def _checked(runner: Runner, expected: np.ndarray, rtol: float) -> float:
    """Run *runner* CHECK_CALLS times; the first and the last result must match
    (replays of recorded work, e.g. jit caches, are checked too). Returns the
    larger error."""
    if runner.expected is not None:
        expected, rtol = runner.expected.astype(np.float64), 0.0
    errors = []
    for k in range(CHECK_CALLS):
        out = runner.to_host(runner.call())
        if k in (0, CHECK_CALLS - 1):
            errors.append(check(out, expected, rtol))
    return max(errors)


def _prepare(name: str, build: Builder, case: Case, inputs: list[np.ndarray],
             expected: np.ndarray) -> tuple[dict, Runner | None]:
    """Build and check one variant: its record and, if it passed, its runner."""
    try:
        runner = build(case, inputs)
        error = _checked(runner, expected, case.rtol)
    except NotApplicable:
        raise
    except Unavailable as e:
        return {"status": e.status, "reason": str(e)}, None
    except Exception as e:
        logger.warning("  %s %s failed: %s", case.name, name,
                       _error_text(e).splitlines()[0])
        return {"status": "failed", "error": _error_text(e)}, None
    return {"status": "ok", "max_rel_error": error, "bytes": runner.nbytes}, runner


def run_case(case: Case, builders: dict[str, Builder], repeat: int, warmup: int,
             seed: int, warmup_s: float = 0.0) -> dict:
    """Check every applicable variant of *case*, time those that passed
    (interleaved rounds), and return the case's record."""
    inputs = case.inputs(seed)
    expected = case.reference(inputs)
    nbytes = case.nbytes(inputs, expected)
    record = {"name": case.name, "workload": case.workload, "expression": case.expression,
              "size": case.size, "unit": case.unit, "rtol": case.rtol, "bytes": nbytes,
              "flop": case.flop, "calls_per_sample": case.inner, "variants": {}}
    runners: dict[str, Runner] = {}
    for name, build in builders.items():
        if case.only is not None and name not in case.only:
            continue
        try:
            rec, runner = _prepare(name, build, case, inputs, expected)
        except NotApplicable:
            continue
        rec["bytes"] = rec.get("bytes") or nbytes
        record["variants"][name] = rec
        if runner is not None:
            runners[name] = runner
    if case.batched:
        for name in [n for n, r in runners.items() if r.launch is None]:
            del runners[name]
            record["variants"][name] = {"status": "not applicable",
                                        "reason": "no launch without waiting"}
        calls = {name: functools.partial(_batch, r, case.inner) for name, r in runners.items()}
        samples, errors = common.time_synchronous(calls, repeat, warmup, 1, seed, BUDGET_S,
                                                  settle=1, warmup_s=warmup_s)
        samples = {name: [v / case.inner for v in values] for name, values in samples.items()}
    else:
        samples, errors = common.time_synchronous(
            {name: r.call for name, r in runners.items()}, repeat, warmup, case.inner, seed,
            BUDGET_S, settle=1, warmup_s=warmup_s)
    for name, e in errors.items():
        record["variants"][name].update(status="failed",
                                        error="while timing: " + _error_text(e))
    for name, values in samples.items():
        if values and name not in errors:
            record["variants"][name].update(common.timing_summary(values))
    _add_rates(record, case)
    return record


#: workloads whose variants each run in a process of their own: per-call
#: overhead suffers from other libraries' idle worker threads (which spin for
#: a while after each call), so W8 measures every library alone; on a CPU
#: device (PoCL's threads share the few cores with XLA's and torch's) every
#: workload does, except in --quick runs
ISOLATED = ("W8",)


def isolated_workloads(kind: str, quick: bool, every: bool = False) -> set[str]:
    """The workloads whose variants run in processes of their own (all but W9
    with *every*)."""
    if not every and (kind == "gpu" or quick):
        return set(ISOLATED)
    return set(WORKLOADS) - {"W9"}


def isolated_cases(cases: list[Case], builders: dict[str, Builder], args, repeat: int
                   ) -> list[dict]:
    """The records of *cases* (of one workload), each variant measured by a
    child run of this script."""
    import subprocess
    import tempfile
    records: dict[str, dict] = {}
    names = [n for n in builders if any(c.only is None or n in c.only for c in cases)]
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "child.json"
            command = [sys.executable, str(Path(__file__).resolve()),
                       "--only", cases[0].workload, "--variant", name, "--repeat", str(repeat),
                       "--seed", str(args.seed), "--json", str(out),
                       "--markdown", str(Path(tmp) / "child.md")]
            command += (["--quick"] if args.quick else []) + (
                ["--isolated"] if args.isolated else []) + (
                ["--device", args.device] if args.device else [])
            done = subprocess.run(command, capture_output=True, text=True)
            if not out.exists():
                raise RuntimeError(f"{cases[0].workload} / {name}: the child run failed:\n"
                                   f"{done.stderr[-2000:]}")
            children = json.loads(out.read_text())["cases"]
        for child in children:
            record = records.setdefault(child["name"], dict(child, variants={}, isolated=True))
            if name in child["variants"]:       # absent: the variant has no such case
                record["variants"][name] = child["variants"][name]
    for case in cases:
        _add_rates(records[case.name], case)
    return [records[case.name] for case in cases]


def _batch(runner: Runner, count: int) -> None:
    """*count* launches of *runner*, then one wait."""
    for _ in range(count):
        runner.launch()
    runner.wait()


def _add_rates(record: dict, case: Case) -> None:
    """GB/s, fraction of the copy bandwidth, GFLOP/s and speed-ups (reference
    time / variant time) over NumPy and the hand-written kernel."""
    variants = record["variants"]

    def median(name):
        rec = variants.get(name, {})
        return rec.get("median_s")

    for rec in variants.values():
        t = rec.get("median_s")
        if t is None:
            continue
        if case.bandwidth:
            rec["gbps"] = rec["bytes"] / t / 1e9
        if case.flop:
            rec["gflops"] = case.flop / t / 1e9
        for key, ref in (("vs_numpy", "numpy"), ("vs_hand_written", "hand-written")):
            rec[key] = median(ref) / t if median(ref) else None
    copy = variants.get("copy", {}).get("gbps")
    record["copy_gbps"] = copy
    for rec in variants.values():
        if copy and "gbps" in rec:
            rec["of_copy"] = rec["gbps"] / copy

# }}}


# {{{ targets

@dataclass(frozen=True)
class Target:
    """A goal for a lazyarray variant on one case: *metric* (of the case
    record) at least *threshold*, or below it when *below*."""

    case: str
    text: str
    metric: Callable[[dict], float | None]
    threshold: float
    below: bool = False
    variant: str = LAZY_JIT
    unit: str = "x"


def _time(name: str, unit: str) -> Callable[[dict], float | None]:
    scale = {"us": 1e6, "ms": 1e3}[unit]

    def metric(record):
        t = record["variants"].get(name, {}).get("median_s")
        return None if t is None else t * scale
    return metric


def _speedup(variant: str, *refs: str) -> Callable[[dict], float | None]:
    """Fastest of *refs*' time / *variant*'s time."""
    def metric(record):
        v = record["variants"]
        t = v.get(variant, {}).get("median_s")
        ref = [v[r]["median_s"] for r in refs if v.get(r, {}).get("median_s")]
        return None if t is None or not ref else min(ref) / t
    return metric


def _of_copy(variant: str) -> Callable[[dict], float | None]:
    return lambda record: record["variants"].get(variant, {}).get("of_copy")


def targets(kind: str) -> list[Target]:
    """The goals for lazyarray on a *kind* (``gpu`` or else CPU) device."""
    j, e = LAZY_JIT, LAZY_EAGER
    if kind != "gpu":
        ratio = [("W1", "hand-written", 0.91), ("W2", "numpy", 15),
                 ("W3 dot", "numpy", 2), ("W3 cols", "numpy", 1), ("W4", "numpy", 2),
                 ("W5", "numpy", 5), ("W6", "numpy", 0.5), ("W7", "numpy", 8)]
        latency = [("W8 batched", j, "us", 20), ("W8 batched", e, "us", 150),
                   ("W9 cold", j, "ms", 600),
                   ("W9 warm", j, "ms", 150)]
        out = [Target(c, f">= {x:g}x {ref}", _speedup(j, ref), x) for c, ref, x in ratio]
    else:
        fractions = [("W1", 1.0), ("W3 dot", 0.95), ("W3 rows", 0.95), ("W3 cols", 0.95),
                     ("W4", 0.90), ("W5", 0.80), ("W7", 0.80)]
        # (issue 21: a synchronous warm jit call and eager a + b, the warm first call)
        latency = [("W8", j, "us", 15), ("W8", e, "us", 40), ("W8 batched", j, "us", 20),
                   ("W9 cold", j, "ms", 250), ("W9 warm", j, "ms", 35)]
        out = [Target(c, f">= {x:.2f} of copy bandwidth", _of_copy(j), x, unit=" of copy")
               for c, x in fractions]
        out += [Target("W2", ">= 0.9x fastest of jax, torch-compile",
                       _speedup(j, "jax", "torch-compile"), 0.9),
                Target("W6", ">= 0.75x cupy (cuBLAS FP32) GFLOP/s", _speedup(j, "cupy"),
                       0.75)]
    out += [Target(c, f"< {x:g} {unit}", _time(v, unit), x, below=True, variant=v,
                   unit=f" {unit}") for c, v, unit, x in latency]
    order = {c: k for k, c in enumerate(["W1", "W2", "W3 dot", "W3 rows", "W3 cols", "W4",
                                         "W5", "W6", "W7", "W8", "W8 batched", "W9 cold",
                                         "W9 warm"])}
    return sorted(out, key=lambda t: order[t.case])


def evaluate_targets(kind: str, records: list[dict]) -> list[dict]:
    """Each target of *kind* whose case ran: its value and whether it is met
    (None when the variant or its reference has no time)."""
    by_name = {r["name"]: r for r in records}
    out = []
    for t in targets(kind):
        if t.case not in by_name:
            continue
        value = t.metric(by_name[t.case])
        met = None if value is None else (value < t.threshold if t.below
                                          else value >= t.threshold)
        out.append({"case": t.case, "variant": t.variant, "target": t.text,
                    "value": value, "unit": t.unit, "met": met})
    return out

# }}}


def _setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def run(args: argparse.Namespace) -> tuple[dict, list[str]]:
    """Run the selected workloads: the result document and the lazyarray failures."""
    import latency
    import peers
    import workloads

    import kernelcore

    queue = kernelcore.default_queue()
    kind = common.device_kind(queue.device)
    repeat = args.repeat or (3 if args.quick else (30 if kind == "gpu" else 20))
    warmup = 1 if args.quick else 2
    setup = peers.Setup(kind, args.quick)
    env = common.environment(queue)
    logger.info("device: %s [%s] (%s); repeat %d, warm-up %d", env["device"]["name"],
                env["platform"]["name"], kind, repeat, warmup)
    result = {"suite": "lazyarray benchmark suite", "quick": args.quick,
              "settings": {"repeat": repeat, "warmup": warmup, "seed": args.seed,
                           "threads": peers.threads(), "workloads": sorted(args.only),
                           "check_calls": CHECK_CALLS},
              "environment": env, "peers": peers.versions(setup), "cases": []}
    builders = variant_builders(queue, setup)
    if args.variant is not None:
        if args.variant not in builders:
            raise SystemExit(f"--variant: unknown variant {args.variant!r} "
                             f"(known: {', '.join(builders)})")
        builders = {args.variant: builders[args.variant]}
    all_cases = [c for c in workloads.cases(kind, args.quick) if c.workload in args.only]
    isolated = isolated_workloads(kind, args.quick, args.isolated)
    measured_apart: set[str] = set()
    for case in all_cases:
        if case.workload in isolated and args.variant is None:
            if case.workload not in measured_apart:
                measured_apart.add(case.workload)
                same = [c for c in all_cases if c.workload == case.workload]
                logger.info("%s: each variant in a process of its own", case.workload)
                result["cases"] += isolated_cases(same, builders, args, repeat)
            continue
        logger.info("%s: %s (%s)", case.name, case.expression, case.size)
        result["cases"].append(run_case(case, builders, repeat, warmup, args.seed,
                                        WARMUP_S if kind == "gpu" and not args.quick else 0.0))
        gc.collect()
        setup.release()
    if "W9" in args.only:
        logger.info("W9: first call in fresh processes")
        result["cases"] += latency.run(kind, 1 if args.quick else 3)
    result["targets"] = evaluate_targets(kind, result["cases"])
    failed = [(c["name"], name, rec["error"]) for c in result["cases"]
              for name, rec in c["variants"].items() if rec["status"] == "failed"]
    result["failures"] = [f"{c} / {v}: {e}" for c, v, e in failed]
    lazy_failures = [f"{c} / {v}: {e}" for c, v, e in failed if v.startswith("lazyarray")]
    result["ok"] = not lazy_failures
    return result, lazy_failures


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.prepare_environment(args.device)
    _setup_logging()
    common.ensure_repo_on_path()
    import report
    result, lazy_failures = run(args)
    failure = "lazyarray failed: " + "; ".join(f.splitlines()[0] for f in lazy_failures)
    return common.write_reports(args, result, result["ok"], "suite", report.text_report,
                                report.markdown_report, failure=failure)


if __name__ == "__main__":
    sys.exit(main())
