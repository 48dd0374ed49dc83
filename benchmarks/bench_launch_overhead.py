#!/usr/bin/env python3
"""Host-side cost of one kernel launch on the warm path, four ways, in one run.

Workload: ``out[i] = a[i] + b[i]`` on small device arrays (1000 elements), so
that the device work is tiny and the host's launch path dominates. Variants:

- ``launcher``: replaying ``lp.make_launcher(knl, queue, a=, b=, out=)``
- ``knl-call``: ``knl(queue, a=, b=, out=)`` with device arrays (warm executor)
- ``pyopencl-call``: ``Kernel.__call__(queue, gsize, lsize, *args)`` of the same
  compiled kernel (sets arguments and enqueues)
- ``enqueue-preset``: ``cl.enqueue_nd_range_kernel`` with arguments set once
- ``lazyarray-jit``: a ``@la.jit`` function ``a + b`` called with the device
  arrays (signature lookup, output allocation, one launch)

Each sample enqueues many launches back to back and calls ``queue.finish()``
once at the end. ``host us/launch`` is the time of the enqueue loop divided by
the number of launches (the host overhead); ``total us/launch`` includes the
final finish (throughput, bounded below by the device's time per kernel).
Variants are interleaved in shuffled (seeded) rounds; medians are reported.

Usage::

    python benchmarks/bench_launch_overhead.py [--device cpu] [--n 1000]
        [--launches 2000] [--repeat 7] [--profiling-queue] [--json PATH]
        [--markdown PATH] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

common.ensure_repo_on_path()

PRIMARY = "launcher"
WORKLOAD = "out[i] = a[i] + b[i]"
TARGET_US = 15.0     # launcher replay, host microseconds per kernel


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Per-launch host overhead of kernel "
                                            "launch paths.")
    p.add_argument("--device", default=None,
                   help="device for kernelcore's selection (sets KERNELCORE_DEVICE)")
    p.add_argument("--n", type=int, default=1000, help="elements (default 1000)")
    p.add_argument("--launches", type=int, default=None,
                   help="launches per sample (default 2000; 200 with --quick)")
    p.add_argument("--repeat", type=int, default=None,
                   help="samples per variant (default 7; 3 with --quick)")
    p.add_argument("--wg", type=int, default=128, help="work-group size (default 128)")
    p.add_argument("--profiling-queue", action="store_true",
                   help="use a queue with profiling enabled (default: kernelcore's default "
                        "queue, which has profiling off)")
    p.add_argument("--quick", action="store_true",
                   help="few launches and samples (for the smoke test)")
    p.add_argument("--json", type=Path, default=None,
                   help="JSON output (default benchmarks/results/launch-overhead-KIND"
                        ".json, with --quick under benchmarks/results/tmp/)")
    p.add_argument("--markdown", type=Path, default=None,
                   help="Markdown output (default: next to the JSON)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def _variants(queue, n: int, wg: int) -> tuple[dict, dict[str, tuple]]:
    """Arrays and ``{name: (description, loop(count)[, result()])}``; without
    *result* the variant writes its result into ``data["out"]``."""
    import pyopencl as cl
    import pyopencl.array as cla

    import kernelcore as lp
    from kernelcore.runtime.invoke import get_executor

    knl = lp.make_kernel("{[i]: 0<=i<n}", WORKLOAD, name="vadd")
    knl = lp.split_iname(knl, "i", wg, outer_tag="g.0", inner_tag="l.0")
    rng = np.random.default_rng(0)
    a_host = rng.random(n, dtype=np.float32)
    b_host = rng.random(n, dtype=np.float32)
    a, b = cla.to_device(queue, a_host), cla.to_device(queue, b_host)
    out = cla.zeros(queue, n, np.float32)
    data = {"a": a_host, "b": b_host, "out": out}

    launcher = lp.make_launcher(knl, queue, a=a, b=b, out=out)
    ex = get_executor(knl, {"a": a, "b": b, "out": out})
    compiled = ex.cl_kernels(queue.context)[0]
    gsize = ((n + wg - 1) // wg * wg,)
    lsize = (wg,)
    # argument order of the generated kernel: knl.args
    args = {"a": a.data, "b": b.data, "n": np.int32(n), "out": out.data}
    ordered = [args[arg.name] for arg in ex.knl.args]
    call_kernel = cl.Kernel(compiled.program, compiled.function_name)
    preset = cl.Kernel(compiled.program, compiled.function_name)
    preset.set_args(*ordered)
    enqueue = cl.enqueue_nd_range_kernel

    def loop_launcher(count):
        for _ in range(count):
            launcher()

    def loop_knl(count):
        for _ in range(count):
            knl(queue, a=a, b=b, out=out)

    def loop_pyopencl(count):
        for _ in range(count):
            call_kernel(queue, gsize, lsize, *ordered)

    def loop_preset(count):
        for _ in range(count):
            enqueue(queue, preset, gsize, lsize)

    import lazyarray as la
    jitted = la.jit(lambda x, y: x + y)

    last = []

    def loop_jit(count):
        for _ in range(count):
            res = jitted(a, b)
        last[:] = [res]

    def jit_result():
        return last[0].get()

    return data, {
        "launcher": ("lp.make_launcher(...) replay (arguments bound once)",
                     loop_launcher),
        "knl-call": ("knl(queue, a=, b=, out=) with device arrays, warm", loop_knl),
        "pyopencl-call": ("pyopencl Kernel.__call__(queue, gsize, lsize, *args)",
                          loop_pyopencl),
        "enqueue-preset": ("cl.enqueue_nd_range_kernel, arguments set once",
                           loop_preset),
        "lazyarray-jit": ("@la.jit function a + b, warm (new output per call)",
                          loop_jit, jit_result),
    }


def run(args: argparse.Namespace) -> tuple[dict, bool]:
    if args.device:
        os.environ["KERNELCORE_DEVICE"] = args.device
    import pyopencl as cl

    import kernelcore as lp

    queue = lp.profiling_queue() if args.profiling_queue else lp.default_queue()
    dev = queue.device
    kind = common.device_kind(dev)
    wg = min(args.wg, dev.max_work_group_size)
    launches = args.launches or (200 if args.quick else 2000)
    repeat = args.repeat or (3 if args.quick else 7)
    env = common.environment(queue)
    profiling = bool(queue.properties & cl.command_queue_properties.PROFILING_ENABLE)
    print(f"device: {env['device']['name']} [{env['platform']['name']}] ({kind}), "
          f"pyopencl {env['pyopencl']}")
    print(f"workload: {WORKLOAD}, n={args.n}, {launches} launches per sample, "
          f"{repeat} samples, profiling queue: {profiling}")

    data, variants = _variants(queue, args.n, wg)
    out = data["out"]
    expected = data["a"] + data["b"]
    checks = {}
    for name, (_, loop, *result) in variants.items():
        out.fill(0)
        loop(1)
        queue.finish()
        got = result[0]() if result else out.get()
        ok = np.allclose(got, expected, rtol=1e-6)
        checks[name] = "ok" if ok else "wrong result"
        loop(max(10, launches // 10))            # warm-up
        queue.finish()

    host: dict[str, list[float]] = {name: [] for name in variants}
    total: dict[str, list[float]] = {name: [] for name in variants}
    order = list(variants)
    rng = random.Random(args.seed)
    for _ in range(repeat):
        rng.shuffle(order)
        for name in order:
            loop = variants[name][1]
            queue.finish()
            t0 = time.perf_counter()
            loop(launches)
            t1 = time.perf_counter()
            queue.finish()
            t2 = time.perf_counter()
            host[name].append((t1 - t0) / launches * 1e6)
            total[name].append((t2 - t0) / launches * 1e6)

    results = []
    for name, (description, *_) in variants.items():
        results.append({
            "variant": name,
            "description": description,
            "check": checks[name],
            "host_us_per_launch": statistics.median(host[name]),
            "host_us_min": min(host[name]),
            "total_us_per_launch": statistics.median(total[name]),
            "total_us_min": min(total[name]),
            "samples_host_us": host[name],
        })
    primary = next(r for r in results if r["variant"] == PRIMARY)
    ok = all(c == "ok" for c in checks.values())
    result = {
        "benchmark": "launch-overhead",
        "workload": WORKLOAD,
        "n": args.n,
        "work_group_size": wg,
        "launches_per_sample": launches,
        "repeat": repeat,
        "quick": bool(args.quick),
        "profiling_queue": profiling,
        "timing": "per sample: queue.finish(); N launches back to back; queue.finish(). "
                  "host = enqueue loop / N, total = loop + final finish / N; rounds "
                  "over the variants in shuffled (seeded) order; medians",
        "target_us": TARGET_US,
        "environment": env,
        "results": results,
        "summary": {
            "launcher_host_us": primary["host_us_per_launch"],
            "meets_target": primary["host_us_per_launch"] < TARGET_US,
            "checks_ok": ok,
        },
    }
    return result, ok


HEADER = ["variant", "host us/launch", "host min", "total us/launch", "total min",
          "check"]


def _rows(result: dict) -> list[list[str]]:
    return [[r["variant"], common.fmt(r["host_us_per_launch"], ".2f"),
             common.fmt(r["host_us_min"], ".2f"),
             common.fmt(r["total_us_per_launch"], ".2f"),
             common.fmt(r["total_us_min"], ".2f"), r["check"]]
            for r in result["results"]]


def text_report(result: dict) -> str:
    s = result["summary"]
    return "\n".join([
        common.text_table(HEADER, _rows(result)), "",
        f"launcher replay: {s['launcher_host_us']:.2f} us/launch on the host; target "
        f"< {result['target_us']:.0f} us: {'met' if s['meets_target'] else 'NOT met'}"])


def markdown_report(result: dict) -> str:
    env = result["environment"]
    dev, plat = env["device"], env["platform"]
    s = result["summary"]
    out = [
        f"# Kernel launch overhead: `{result['workload']}`, n={result['n']}", "",
        f"Device: **{dev['name']}** ({dev['kind']}), platform {plat['name']} "
        f"{plat['version']}, driver {dev['driver_version']}.", "",
        "Produced by:", "", "```", env["command"], "```", "",
        f"- time (UTC): {env['timestamp_utc']}, host {env['hostname']} "
        f"({env['host_cpu_count']} CPUs), {env['os']}",
        f"- python {env['python']}, numpy {env['numpy']}, pyopencl {env['pyopencl']}, "
        f"kernelcore {env['kernelcore']}, git {env['git_commit'] or '-'}"
        f"{' (dirty)' if env['git_dirty'] else ''}",
        f"- {result['launches_per_sample']} launches per sample, {result['repeat']} "
        f"samples per variant, work-group size {result['work_group_size']}, profiling "
        f"queue: {result['profiling_queue']}",
        f"- {result['timing']}", "",
        common.markdown_table(HEADER, _rows(result)), "",
        f"Launcher replay: **{s['launcher_host_us']:.2f} us** per launch on the host "
        f"(target < {result['target_us']:.0f} us: "
        f"**{'met' if s['meets_target'] else 'not met'}**).", "",
        "## Variants", ""]
    out += [f"- `{r['variant']}`: {r['description']}" for r in result["results"]]
    out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    args = parse_args(argv)
    result, ok = run(args)
    return common.write_reports(args, result, ok, "launch-overhead", text_report,
                                markdown_report,
                                'a variant gave a wrong result (see above)')


if __name__ == "__main__":
    sys.exit(main())
