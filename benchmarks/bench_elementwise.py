#!/usr/bin/env python3
"""Bandwidth of kernelcore's split+tagged elementwise kernel against hand-written
OpenCL, in one run.

Workload: ``out[i] = alpha*a[i] + b[i]`` (``alpha`` a scalar argument). Every
variant is checked against NumPy before it is timed; a variant that fails to
build or gives a wrong result is recorded with its error text and not timed.

Effective bandwidth = (arrays touched) * n * itemsize / (median time): 3 arrays
for ``a*alpha+b``, 2 for the copy kernel. Times are taken from OpenCL profiling
events (primary) and from the wall clock around one launch plus
``queue.finish()`` (includes Python launch overhead).

Usage (see benchmarks/README.md)::

    python benchmarks/bench_elementwise.py [--device gpu] [--sizes 2**24 2**26]
        [--repeat 30] [--json PATH] [--markdown PATH] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

common.ensure_repo_on_path()

PRIMARY = "kernelcore"
REFERENCE = "hand-written"
TARGET_RATIO = 0.9          # the goal on the GPU
QUICK_SIZES = (4099, 2**16)  # 4099: not a multiple of the work-group size or of 4

WORKLOAD = "out[i] = alpha*a[i] + b[i]"


# {{{ command line

def parse_size(text: str) -> int:
    text = text.strip().replace("_", "")
    if "**" in text:
        base, exp = text.split("**", 1)
        value = int(base) ** int(exp)
    elif "^" in text:
        base, exp = text.split("^", 1)
        value = int(base) ** int(exp)
    else:
        value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return value


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=f"Bandwidth of '{WORKLOAD}': kernelcore vs hand-written OpenCL.")
    p.add_argument("--device", default=None,
                   help="device for kernelcore's selection (sets KERNELCORE_DEVICE): "
                        "cpu, gpu, P:D, or a name substring; default: its usual choice")
    p.add_argument("--sizes", nargs="+", type=parse_size, default=None,
                   help="numbers of elements, e.g. 2**24 2**26 (default: 2**20 2**24 on "
                        "a CPU, 2**24 2**26 2**28 on a GPU)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    p.add_argument("--repeat", type=int, default=None,
                   help="timed launches per variant and size (default 30; 3 with --quick)")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed launches per variant and size first (default 3)")
    p.add_argument("--wg", type=int, default=None,
                   help="work-group size (default 256 on a GPU, 128 otherwise)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes and 3 repeats (for the smoke test)")
    p.add_argument("--json", type=Path, default=None,
                   help="JSON output (default benchmarks/results/elementwise-<kind>.json; "
                        "with --quick under benchmarks/results/tmp/)")
    p.add_argument("--markdown", type=Path, default=None,
                   help="Markdown output (default next to the JSON default)")
    p.add_argument("--variants", nargs="+", default=None, metavar="NAME",
                   help=f"measure only these variants (default: all; the ratio needs "
                        f"'{PRIMARY}' and '{REFERENCE}')")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args

# }}}


# {{{ variants

@dataclass
class Variant:
    name: str
    description: str
    arrays: int = 3                 # arrays moved per element (for GB/s)
    code: str | None = None         # device source, when there is one
    error: str | None = None        # build error
    # make(ctx) -> launch factory: (queue, data) -> launch() -> event | None
    make_launch: Callable | None = None
    check: str = "axpy"             # "axpy" or "copy"
    extra: dict = field(default_factory=dict)


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip()


def _ctype(dtype: np.dtype) -> str:
    return {"float32": "float", "float64": "double"}[dtype.name]


# {{{ kernelcore

def _kernelcore_variants(dtype: np.dtype, wg: int) -> list[Variant]:
    import kernelcore as lp

    def base():
        return lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = alpha*a[i] + b[i]",
                              assumptions="n>=0")

    def plain(k):
        return lp.split_iname(k, "i", wg, outer_tag="g.0", inner_tag="l.0")

    def slabs(k):
        return lp.split_iname(k, "i", wg, outer_tag="g.0", inner_tag="l.0", slabs=(0, 1))

    def strided(tag):
        # i -> (g.0 block of 4*wg, `tag` over 4 sub-blocks, l.0 within): coalesced
        def f(k):
            k = lp.split_iname(k, "i", 4 * wg, outer_tag="g.0")
            return lp.split_iname(k, "i_inner", wg, outer_tag=tag, inner_tag="l.0")
        return f

    def contiguous(tag):
        # i -> (g.0, l.0, `tag` over 4 consecutive elements of one work item)
        def f(k):
            k = lp.split_iname(k, "i", 4 * wg, outer_tag="g.0")
            return lp.split_iname(k, "i_inner", 4, outer_tag="l.0", inner_tag=tag)
        return f

    specs = [
        (PRIMARY, plain,
         f"split_iname(i, {wg}, outer_tag='g.0', inner_tag='l.0')"),
        ("kernelcore-slabs", slabs,
         f"as '{PRIMARY}' with slabs=(0, 1)"),
        ("kernelcore-ilp4", strided("ilp"),
         f"split i by {4 * wg} (g.0), then i_inner by {wg}: outer 'ilp', inner 'l.0' "
         f"(4 elements per work item, {wg} apart)"),
        ("kernelcore-unr4", strided("unr"),
         f"split i by {4 * wg} (g.0), then i_inner by {wg}: outer 'unr', inner 'l.0' "
         f"(4 elements per work item, {wg} apart)"),
        ("kernelcore-l0-ilp4", contiguous("ilp"),
         f"split i by {4 * wg} (g.0), then i_inner by 4: outer 'l.0', inner 'ilp' "
         "(4 consecutive elements per work item)"),
        ("kernelcore-l0-unr4", contiguous("unr"),
         f"split i by {4 * wg} (g.0), then i_inner by 4: outer 'l.0', inner 'unr' "
         "(4 consecutive elements per work item)"),
    ]
    result = []
    primary_code = None
    for name, transform, desc in specs:
        v = Variant(name, "kernelcore: " + desc)
        try:
            knl = transform(base())
            knl = lp.add_dtypes(knl, {"a": dtype, "b": dtype, "alpha": dtype})
            v.code = lp.generate_code_v2(knl).device_code()
        except Exception as e:
            v.error = _error_text(e)
            result.append(v)
            continue
        if name == PRIMARY:
            primary_code = v.code
        elif primary_code is not None and v.code == primary_code:
            v.extra["same_code_as"] = PRIMARY

        def make(knl=knl):
            def factory(queue, d):
                alpha = d["alpha"]
                a, b, out = d["a"], d["b"], d["out"]

                def launch():
                    evt, _ = knl(queue, a=a, b=b, alpha=alpha, out=out)
                    return evt
                return launch
            return factory
        v.make_launch = make()
        result.append(v)
    return result

# }}}


# {{{ hand-written OpenCL

HAND_WRITTEN_SOURCE = r"""
#if IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void axpy(__global const T *restrict a, __global const T *restrict b,
          __global T *restrict out, const T alpha, const int n)
{
  const int i = get_global_id(0);
  if (i < n)
    out[i] = alpha * a[i] + b[i];
}

/* 4 elements per work item as one vector; work item n/4 does the tail. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void axpy_vec4(__global const T *restrict a, __global const T *restrict b,
               __global T *restrict out, const T alpha, const int n)
{
  const int i = get_global_id(0);
  const int n4 = n / 4;
  if (i < n4)
    ((__global T4 *) out)[i] = alpha * ((__global const T4 *) a)[i]
                               + ((__global const T4 *) b)[i];
  else if (i == n4)
    for (int k = 4 * n4; k < n; ++k)
      out[k] = alpha * a[k] + b[k];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void copy_vec4(__global const T *restrict src, __global T *restrict dst, const int n)
{
  const int i = get_global_id(0);
  const int n4 = n / 4;
  if (i < n4)
    ((__global T4 *) dst)[i] = ((__global const T4 *) src)[i];
  else if (i == n4)
    for (int k = 4 * n4; k < n; ++k)
      dst[k] = src[k];
}
"""


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _hand_written_variants(ctx, dtype: np.dtype, wg: int) -> list[Variant]:
    import pyopencl as cl

    ctype = _ctype(dtype)
    defines = (f"#define T {ctype}\n#define T4 {ctype}4\n#define WG {wg}\n"
               f"#define IS_DOUBLE {int(dtype.itemsize == 8)}\n")
    source = defines + HAND_WRITTEN_SOURCE
    specs = [
        (REFERENCE, "axpy", 3, "axpy",
         "hand-written OpenCL: one element per work item, guarded `if (i < n)`, "
         f"same work-group size ({wg}) — the reference"),
        ("hand-written-vec4", "axpy_vec4", 3, "axpy",
         f"hand-written OpenCL: {ctype}4 loads/stores, 4 elements per work item"),
        ("hand-written-copy-vec4", "copy_vec4", 2, "copy",
         f"hand-written OpenCL copy `out[i] = a[i]` with {ctype}4 (2 arrays moved): "
         "the copy bandwidth"),
    ]
    try:
        prg = cl.Program(ctx, source).build()
    except Exception as e:
        return [Variant(n, d, arrays=ar, check=c, code=source, error=_error_text(e))
                for n, _, ar, c, d in specs]

    result = []
    for name, kname, arrays, check, desc in specs:
        kernel = getattr(prg, kname)
        v = Variant(name, desc, arrays=arrays, check=check, code=source)

        def make(kernel=kernel, kname=kname):
            def factory(queue, d):
                n = d["n"]
                a, b, out, alpha = d["a"], d["b"], d["out"], d["alpha"]
                if kname == "axpy":
                    gsize = _round_up(n, wg)
                    args = (a.data, b.data, out.data, alpha, np.int32(n))
                elif kname == "axpy_vec4":
                    gsize = _round_up(n // 4 + 1, wg)
                    args = (a.data, b.data, out.data, alpha, np.int32(n))
                else:
                    gsize = _round_up(n // 4 + 1, wg)
                    args = (a.data, out.data, np.int32(n))

                def launch():
                    kernel.set_args(*args)
                    return cl.enqueue_nd_range_kernel(queue, kernel, (gsize,), (wg,))
                return launch
            return factory
        v.make_launch = make()
        result.append(v)
    return result

# }}}


# {{{ pyopencl peers and NumPy

def _peer_variants(ctx, dtype: np.dtype) -> list[Variant]:
    import pyopencl.array as cla
    import pyopencl.tools as cltools
    from pyopencl.elementwise import ElementwiseKernel

    ctype = _ctype(dtype)
    result = []

    v = Variant("pyopencl-elementwise",
                "pyopencl.elementwise.ElementwiseKernel with the same expression "
                "(its own work-group size and grid-stride loop)")
    try:
        ew = ElementwiseKernel(
            ctx, f"{ctype} alpha, {ctype} const *a, {ctype} const *b, {ctype} *out",
            "out[i] = alpha*a[i] + b[i]", name="bench_axpy")

        def ew_factory(queue, d, ew=ew):
            a, b, out, alpha = d["a"], d["b"], d["out"], d["alpha"]
            return lambda: ew(alpha, a, b, out, queue=queue)
        v.make_launch = ew_factory
    except Exception as e:
        v.error = _error_text(e)
    result.append(v)

    v = Variant("pyopencl-array",
                "pyopencl.array expression a.mul_add(alpha, b, 1): one kernel, result "
                "allocated per call from a memory pool")

    def arr_factory(queue, d):
        pool = d.setdefault("_pool", cltools.MemoryPool(cltools.ImmediateAllocator(queue)))
        a = cla.Array(queue, d["a"].shape, d["a"].dtype, data=d["a"].data, allocator=pool)
        b, alpha = d["b"], d["alpha"]
        holder = {}

        def launch():
            res = a.mul_add(alpha, b, 1, queue=queue)
            holder["out"] = res      # keeps the latest result for the check
            events = getattr(res, "events", None)
            return events[-1] if events else None
        launch.result = lambda: holder["out"]
        return launch
    v.make_launch = arr_factory
    result.append(v)

    v = Variant("numpy-host",
                "NumPy on the host: np.multiply(a, alpha, out=tmp); np.add(tmp, b, "
                "out=out) (two passes; GB/s counted as 3 arrays like the rest)")

    def np_factory(queue, d):
        a, b, alpha = d["a_host"], d["b_host"], d["alpha"]
        tmp = np.empty_like(a)
        out = np.empty_like(a)

        def launch():
            np.multiply(a, alpha, out=tmp)
            np.add(tmp, b, out=out)
            return None
        launch.result = lambda: out
        return launch
    v.make_launch = np_factory
    result.append(v)
    return result

# }}}

# }}}


# {{{ running

def run(args: argparse.Namespace) -> tuple[dict, bool]:
    if args.device:
        os.environ["KERNELCORE_DEVICE"] = args.device
    import pyopencl.array as cla

    import kernelcore as lp

    queue = lp.profiling_queue()      # event timings
    ctx = queue.context
    dev = queue.device
    kind = common.device_kind(dev)
    dtype = np.dtype(args.dtype)
    wg = args.wg or (256 if kind == "gpu" else 128)
    wg = min(wg, dev.max_work_group_size)
    if args.sizes:
        sizes = list(args.sizes)
    elif args.quick:
        sizes = list(QUICK_SIZES)
    elif kind == "gpu":
        sizes = [2**24, 2**26, 2**28]
    else:
        sizes = [2**20, 2**24]
    repeat = args.repeat or (3 if args.quick else 30)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)

    env = common.environment(queue)
    print(f"device: {env['device']['name']} [{env['platform']['name']}] ({kind}), "
          f"driver {env['device']['driver_version']}, pyopencl {env['pyopencl']}")
    print(f"workload: {WORKLOAD}, dtype {dtype.name}, work-group size {wg}, "
          f"sizes {sizes}, repeat {repeat}, warm-up {warmup}")

    variants = (_kernelcore_variants(dtype, wg) + _hand_written_variants(ctx, dtype, wg)
                + _peer_variants(ctx, dtype))
    if args.variants:
        unknown = set(args.variants) - {v.name for v in variants}
        if unknown:
            raise SystemExit(f"unknown variant(s) {sorted(unknown)}; known: "
                             + ", ".join(v.name for v in variants))
        variants = [v for v in variants if v.name in args.variants]
    core = {PRIMARY, REFERENCE} & {v.name for v in variants}
    for v in variants:
        if v.error:
            print(f"  [{v.name}] not built: {v.error}")

    rng = np.random.default_rng(args.seed)
    alpha = dtype.type(1.5)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    per_size = []
    core_ok = all(v.error is None for v in variants if v.name in core)

    for n in sizes:
        entry: dict = {"n": n, "bytes_axpy": 3 * n * dtype.itemsize, "variants": {}}
        per_size.append(entry)
        need = 4 * n * dtype.itemsize
        too_big = None
        if n >= 2**31:
            too_big = "n >= 2**31 does not fit the kernels' int index"
        elif n * dtype.itemsize > dev.max_mem_alloc_size:
            too_big = (f"one array ({n * dtype.itemsize} bytes) exceeds the device's "
                       f"max_mem_alloc_size ({dev.max_mem_alloc_size})")
        elif need > 0.9 * dev.global_mem_size:
            too_big = f"needs ~{need} bytes of device memory, the device has " \
                      f"{dev.global_mem_size}"
        if too_big:
            print(f"n={n}: skipped: {too_big}")
            entry["skipped"] = too_big
            core_ok = False
            continue

        a_host = rng.random(n, dtype=np.float64).astype(dtype)
        b_host = rng.random(n, dtype=np.float64).astype(dtype)
        expected = alpha * a_host + b_host
        data = {"n": n, "alpha": alpha, "a_host": a_host, "b_host": b_host,
                "a": cla.to_device(queue, a_host), "b": cla.to_device(queue, b_host),
                "out": cla.empty(queue, n, dtype)}

        launches = {}
        for v in variants:
            rec = {"description": v.description, "arrays": v.arrays,
                   "bytes": v.arrays * n * dtype.itemsize}
            entry["variants"][v.name] = rec
            if v.error:
                rec["error"] = v.error
                continue
            try:
                launch = v.make_launch(queue, data)
                data["out"].fill(np.nan if dtype.kind == "f" else 0, queue=queue)
                launch()
                queue.finish()
                getter = getattr(launch, "result", None)
                got = getter() if getter else data["out"]
                got = got.get(queue=queue) if isinstance(got, cla.Array) else got
                want = a_host if v.check == "copy" else expected
                if not np.allclose(got, want, rtol=rtol, atol=0):
                    bad = ~np.isclose(got, want, rtol=rtol, atol=0)
                    first = int(np.argmax(bad))
                    raise AssertionError(
                        f"result differs from NumPy at {int(bad.sum())} of {n} elements "
                        f"(first at {first}: got {got[first]!r}, want {want[first]!r})")
                rec["check"] = "ok"
                launches[v.name] = launch
            except Exception as e:
                rec["error"] = _error_text(e)
                rec["traceback"] = traceback.format_exc(limit=4)
                print(f"  [{v.name}] n={n}: {rec['error']}")
                if v.name in core:
                    core_ok = False

        samples = common.time_round_robin(queue, launches, repeat, warmup, seed=args.seed)
        for name, s in samples.items():
            rec = entry["variants"][name]
            rec.update(s.summary(rec["bytes"]))
            if name == "numpy-host":
                rec["event_gbps"] = None   # host code: no device event
        ref = entry["variants"].get(REFERENCE, {})
        for rec in entry["variants"].values():
            for k in ("event", "wall"):
                mine, theirs = rec.get(f"{k}_gbps"), ref.get(f"{k}_gbps")
                rec[f"{k}_vs_hand_written"] = (mine / theirs if mine and theirs
                                               else None)
        pr = entry["variants"].get(PRIMARY, {})
        entry["ratio_event"] = pr.get("event_vs_hand_written")
        entry["ratio_wall"] = pr.get("wall_vs_hand_written")
        for name in core:
            if not entry["variants"].get(name, {}).get("wall_gbps"):
                core_ok = False
        del data, launches, samples

    result = {
        "benchmark": "elementwise",
        "workload": WORKLOAD,
        "dtype": dtype.name,
        "alpha": float(alpha),
        "work_group_size": wg,
        "sizes": sizes,
        "repeat": repeat,
        "warmup": warmup,
        "timing": "rounds: each variant launched once per round, in a shuffled (seeded) "
                  "order; one launch + queue.finish() per sample; medians",
        "quick": bool(args.quick),
        "bandwidth_formula": "arrays * n * itemsize / median time (arrays = 3 for "
                             "a*alpha+b, 2 for the copy); GB = 1e9 bytes",
        "ratio_definition": f"'{PRIMARY}' GB/s / '{REFERENCE}' GB/s at the same n "
                            "(from event times; wall-clock ratio also given)",
        "target_ratio": TARGET_RATIO if kind == "gpu" else None,
        "environment": env,
        "variants": {v.name: {"description": v.description, "arrays": v.arrays,
                              "build_error": v.error, "code": v.code, **v.extra}
                     for v in variants},
        "results": per_size,
    }
    ratios = [e.get("ratio_event") for e in per_size if e.get("ratio_event")]
    result["summary"] = {
        "ratio_event_by_n": {str(e["n"]): e.get("ratio_event") for e in per_size},
        "ratio_wall_by_n": {str(e["n"]): e.get("ratio_wall") for e in per_size},
        "min_ratio_event": min(ratios) if ratios else None,
        "meets_target": (min(ratios) >= TARGET_RATIO if ratios else False)
        if kind == "gpu" else None,
        "core_variants_ok": core_ok,
    }
    return result, core_ok

# }}}


# {{{ reporting

def _rows(result: dict) -> list[list[str]]:
    rows = []
    for entry in result["results"]:
        n = entry["n"]
        if entry.get("skipped"):
            rows.append([str(n), "(all)", "skipped", "-", "-", "-", "-", "-"])
            continue
        for name, rec in entry["variants"].items():
            if rec.get("error"):
                rows.append([str(n), name, "FAILED", "-", "-", "-", "-", "-"])
                continue
            ev = rec.get("event_median_s")
            wall = rec.get("wall_median_s")
            rows.append([
                str(n), name,
                common.fmt(ev and ev * 1e6, ".1f"),
                common.fmt(rec.get("event_gbps"), ".2f"),
                common.fmt(wall and wall * 1e6, ".1f"),
                common.fmt(rec.get("wall_gbps"), ".2f"),
                common.fmt(rec.get("event_vs_hand_written"), ".3f"),
                common.fmt(rec.get("wall_vs_hand_written"), ".3f"),
            ])
    return rows


HEADER = ["n", "variant", "event us", "event GB/s", "wall us", "wall GB/s",
          "vs hand (event)", "vs hand (wall)"]


def text_report(result: dict) -> str:
    lines = [common.text_table(HEADER, _rows(result)), ""]
    for entry in result["results"]:
        r = entry.get("ratio_event")
        lines.append(f"n={entry['n']}: {PRIMARY} / {REFERENCE} = "
                     f"{common.fmt(r, '.3f')} (events), "
                     f"{common.fmt(entry.get('ratio_wall'), '.3f')} (wall)")
    t = result["target_ratio"]
    if t is not None:
        ok = result["summary"]["meets_target"]
        lines.append(f"GPU target: ratio >= {t} at every size: "
                     f"{'met' if ok else 'NOT met'}")
    return "\n".join(lines)


def markdown_report(result: dict) -> str:
    env = result["environment"]
    dev, plat = env["device"], env["platform"]
    out = []
    w = out.append
    w(f"# Elementwise bandwidth: `{result['workload']}` ({result['dtype']})")
    w("")
    w(f"Device: **{dev['name']}** ({dev['kind']}; {dev['max_compute_units']} compute "
      f"units), platform {plat['name']} {plat['version']}, driver "
      f"{dev['driver_version']}.")
    w("")
    w("Produced by:")
    w("")
    w("```")
    w(env["command"])
    w("```")
    w("")
    w(f"- time (UTC): {env['timestamp_utc']}, host {env['hostname']} "
      f"({env['host_cpu_count']} CPUs), {env['os']}")
    w(f"- python {env['python']}, numpy {env['numpy']}, pyopencl {env['pyopencl']}, "
      f"kernelcore {env['kernelcore']}, git {env['git_commit'] or '-'}"
      f"{' (dirty)' if env['git_dirty'] else ''}")
    if env["env"]:
        w("- environment: " + ", ".join(f"`{k}={v}`" for k, v in env["env"].items()))
    w(f"- work-group size {result['work_group_size']}, {result['repeat']} timed "
      f"launches per variant and size (rounds over all variants, shuffled order) after "
      f"{result['warmup']} warm-up launches; medians")
    w(f"- {result['bandwidth_formula']}")
    w("")
    w("## Ratio kernelcore / hand-written")
    w("")
    rows = []
    for e in result["results"]:
        vs = e.get("variants", {})
        rows.append([str(e["n"]),
                     common.fmt(vs.get(PRIMARY, {}).get("event_gbps"), ".2f"),
                     common.fmt(vs.get(REFERENCE, {}).get("event_gbps"), ".2f"),
                     common.fmt(e.get("ratio_event"), ".3f"),
                     common.fmt(e.get("ratio_wall"), ".3f")])
    w(common.markdown_table(["n", f"{PRIMARY} GB/s", f"{REFERENCE} GB/s",
                             "ratio (events)", "ratio (wall)"], rows))
    w("")
    if result["target_ratio"] is not None:
        ok = result["summary"]["meets_target"]
        w(f"Target (GPU): ratio >= {result['target_ratio']} at every size: "
          f"**{'met' if ok else 'not met'}**.")
        w("")
    w("## All variants")
    w("")
    w(common.markdown_table(HEADER, _rows(result)))
    w("")
    w("`event`: OpenCL profiling event (kernel execution only). `wall`: one launch "
      "plus `queue.finish()` on the host clock (includes Python launch overhead). "
      "`numpy-host` has no event time.")
    w("")
    w("## Variants")
    w("")
    for name, v in result["variants"].items():
        note = ""
        if v.get("same_code_as"):
            note = f" (generates the same code as `{v['same_code_as']}`)"
        w(f"- `{name}`: {v['description']}{note}")
    errors = []
    for name, v in result["variants"].items():
        if v.get("build_error"):
            errors.append(f"- `{name}` (build): `{v['build_error']}`")
    for e in result["results"]:
        if e.get("skipped"):
            errors.append(f"- n={e['n']}: skipped: {e['skipped']}")
        for name, rec in e.get("variants", {}).items():
            if rec.get("error") and rec["error"] != result["variants"][name]["build_error"]:
                errors.append(f"- `{name}` n={e['n']}: `{rec['error']}`")
    out.extend(common.failures_and_code(
        errors, result["variants"].get(PRIMARY, {}).get("code"),
        f"Generated code of `{PRIMARY}`"))
    w("")
    return "\n".join(out)

# }}}


def main(argv=None) -> int:
    args = parse_args(argv)
    result, ok = run(args)
    return common.write_reports(args, result, ok, "elementwise", text_report,
                                markdown_report,
                                f"'{PRIMARY}' or '{REFERENCE}' failed (see above)")


if __name__ == "__main__":
    sys.exit(main())
