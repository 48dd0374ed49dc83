#!/usr/bin/env python3
"""Single-precision matrix multiply: kernelcore's tiled kernel against a
hand-written tiled OpenCL kernel and the device's BLAS, in one run.

Workload: ``c[i, j] = sum(k, a[i, k]*b[k, j])`` with square float32 matrices of
order N. Every variant is checked against NumPy (float64 product; max abs error
relative to max |c| <= 1e-3) before it is timed; a variant that fails to build or
gives a wrong result is recorded with its error text and not timed.

GFLOP/s = 2 N^3 / (median time) / 1e9. Times come from OpenCL profiling events
(primary; for CuPy from CUDA events) and from the wall clock around one launch
plus ``queue.finish()``. The BLAS of the device is NumPy's ``a @ b`` (host BLAS)
on a CPU and ``cupy.matmul`` on a GPU (when CuPy imports; TF32 off).

Usage (see benchmarks/README.md)::

    python benchmarks/bench_matmul.py [--device gpu] [--sizes 1024 2048]
        [--repeat 5] [--json PATH] [--markdown PATH] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

common.ensure_repo_on_path()

PRIMARY = "kernelcore-tiled"
REFERENCE = "hand-written"
QUICK_SIZES = (64,)
TILE = 16
CHECK_RTOL = 1e-3           # max |c - c_ref| / max |c_ref|

WORKLOAD = "c[i, j] = sum(k, a[i, k]*b[k, j])"


# {{{ command line

def parse_size(text: str) -> int:
    text = text.strip().replace("_", "")
    for op in ("**", "^"):
        if op in text:
            base, exp = text.split(op, 1)
            value = int(base) ** int(exp)
            break
    else:
        value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return value


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=f"float32 matmul '{WORKLOAD}': kernelcore vs hand-written OpenCL "
                    "vs BLAS.")
    p.add_argument("--device", default=None,
                   help="device for kernelcore's selection (sets KERNELCORE_DEVICE): "
                        "cpu, gpu, P:D, or a name substring; default: its usual choice")
    p.add_argument("--sizes", nargs="+", type=parse_size, default=None,
                   help="matrix orders N (default: 1024 2048 on a CPU, 2048 4096 on a GPU)")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed launches per variant and size (default 5 on a CPU, 10 on "
                        "a GPU; 3 with --quick)")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed launches per variant and size first (default 1)")
    p.add_argument("--quick", action="store_true",
                   help="N=64 and 3 repeats (for the smoke test)")
    p.add_argument("--json", type=Path, default=None,
                   help="JSON output (default benchmarks/results/matmul-<kind>.json; "
                        "with --quick under benchmarks/results/tmp/)")
    p.add_argument("--markdown", type=Path, default=None,
                   help="Markdown output (default next to the JSON)")
    p.add_argument("--variants", nargs="+", default=None, metavar="NAME",
                   help="measure only these variants (default: all)")
    p.add_argument("--no-cupy", action="store_true", help="do not try CuPy")
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
    code: str | None = None         # device source, when there is one
    error: str | None = None        # build error
    # make_launch(queue, data) -> launch() -> event-like | None; launch.result()
    # (optional) gives the product, else data["c"] holds it
    make_launch: Callable | None = None
    blas: bool = False
    extra: dict = field(default_factory=dict)


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip()


# {{{ kernelcore

def _kc_base(lp):
    return lp.make_kernel("{[i,j,k]: 0<=i,j,k<n}", "c[i, j] = sum(k, a[i, k]*b[k, j])")


def _kc_tiled(lp):
    knl = _kc_base(lp)
    knl = lp.split_iname(knl, "i", TILE, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", TILE, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "k", TILE)
    knl = lp.add_prefetch(knl, "a", ["k_inner", "i_inner"], default_tag="l.auto")
    knl = lp.add_prefetch(knl, "b", ["j_inner", "k_inner"], default_tag="l.auto")
    return knl


def _kc_naive(lp):
    knl = _kc_base(lp)
    knl = lp.split_iname(knl, "i", TILE, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", TILE, outer_tag="g.0", inner_tag="l.0")
    return knl


def _kc_regblock(bi: int, bj: int, tag: str, prefetch: bool = True):
    """16x16 work-items per group, each computing a bi x bj block (inner `tag`),
    so a group computes (16*bi) x (16*bj) of c; a and b tiles prefetched unless
    *prefetch* is false (then k is not split either)."""
    def f(lp):
        knl = _kc_base(lp)
        a_sweep, b_sweep = ["k_inner"], ["k_inner"]
        if bi > 1:
            knl = lp.split_iname(knl, "i", TILE * bi, outer_tag="g.1")
            knl = lp.split_iname(knl, "i_inner", bi, outer_tag="l.1", inner_tag=tag)
            a_sweep += ["i_inner_outer", "i_inner_inner"]
        else:
            knl = lp.split_iname(knl, "i", TILE, outer_tag="g.1", inner_tag="l.1")
            a_sweep += ["i_inner"]
        if bj > 1:
            knl = lp.split_iname(knl, "j", TILE * bj, outer_tag="g.0")
            knl = lp.split_iname(knl, "j_inner", bj, outer_tag="l.0", inner_tag=tag)
            b_sweep += ["j_inner_outer", "j_inner_inner"]
        else:
            knl = lp.split_iname(knl, "j", TILE, outer_tag="g.0", inner_tag="l.0")
            b_sweep += ["j_inner"]
        if not prefetch:
            return knl
        knl = lp.split_iname(knl, "k", TILE)
        knl = lp.add_prefetch(knl, "a", a_sweep, default_tag="l.auto")
        knl = lp.add_prefetch(knl, "b", b_sweep, default_tag="l.auto")
        return knl
    return f


def _kernelcore_variants() -> list[Variant]:
    import kernelcore as lp

    specs = [
        (PRIMARY, _kc_tiled,
         f"split i by {TILE} (g.1/l.1), j by {TILE} (g.0/l.0), k by {TILE}; "
         "add_prefetch(a, [k_inner, i_inner]) and add_prefetch(b, [j_inner, k_inner]) "
         "with default_tag='l.auto' (16x16 local-memory tiles)"),
        ("kernelcore-naive", _kc_naive,
         f"split i by {TILE} (g.1/l.1), j by {TILE} (g.0/l.0); no prefetch (a, b read "
         "from global memory)"),
        ("kernelcore-reg4x4-ilp", _kc_regblock(4, 4, "ilp"),
         "register blocking: i split by 64 (g.1) then 4 (l.1 / ilp), j likewise (g.0, "
         "l.0 / ilp), k by 16; a and b tiles prefetched (64x16, 16x64): 4x4 outputs "
         "per work item, 64x64 per group"),
        ("kernelcore-reg1x4-ilp", _kc_regblock(1, 4, "ilp"),
         "register blocking: i split by 16 (g.1/l.1), j by 64 (g.0) then 4 (l.0 / ilp), "
         "k by 16; tiles prefetched: 1x4 outputs per work item, 16x64 per group"),
        ("kernelcore-reg1x4-unr", _kc_regblock(1, 4, "unr"),
         "as kernelcore-reg1x4-ilp with the inner j iname tagged 'unr' instead of 'ilp'"),
        ("kernelcore-reg4x4-noprefetch", _kc_regblock(4, 4, "ilp", prefetch=False),
         "register blocking as kernelcore-reg4x4-ilp (4x4 outputs per work item, "
         "64x64 per group) without prefetch and without splitting k: a, b read from "
         "global memory"),
    ]
    result = []
    for name, transform, desc in specs:
        v = Variant(name, "kernelcore: " + desc)
        try:
            knl = lp.add_dtypes(transform(lp), {"a": np.float32, "b": np.float32})
            v.code = lp.generate_code_v2(knl).device_code()
        except Exception as e:
            v.error = _error_text(e)
            result.append(v)
            continue

        def factory(queue, d, knl=knl):
            a, b, c = d["a"], d["b"], d["c"]

            def launch():
                evt, _ = knl(queue, a=a, b=b, c=c)
                return evt
            return launch
        v.make_launch = factory
        result.append(v)
    return result

# }}}


# {{{ hand-written OpenCL

HAND_WRITTEN_SOURCE = r"""
/* Classic local-memory tiling: a TS x TS work-group computes a TS x TS block of c,
   walking k in steps of TS; each step stages one tile of a and one of b. */
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void matmul_tiled(__global const float *restrict a, __global const float *restrict b,
                  __global float *restrict c, const int n)
{
  __local float ta[TS][TS];
  __local float tb[TS][TS];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int col = get_group_id(0) * TS + lx;
  const int row = get_group_id(1) * TS + ly;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TS)
  {
    ta[ly][lx] = (row < n && k0 + lx < n) ? a[row * n + k0 + lx] : 0.0f;
    tb[ly][lx] = (k0 + ly < n && col < n) ? b[(k0 + ly) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TS; ++kk)
      acc += ta[ly][kk] * tb[kk][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < n && col < n)
    c[row * n + col] = acc;
}
"""


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _hand_written_variants(ctx) -> list[Variant]:
    import pyopencl as cl

    source = f"#define TS {TILE}\n" + HAND_WRITTEN_SOURCE
    v = Variant(REFERENCE, f"hand-written OpenCL: classic {TILE}x{TILE} local-memory "
                "tiling, one output per work item — the reference", code=source)
    try:
        prg = cl.Program(ctx, source).build()
    except Exception as e:
        v.error = _error_text(e)
        return [v]
    kernel = prg.matmul_tiled

    def factory(queue, d):
        n = d["n"]
        g = _round_up(n, TILE)
        args = (d["a"].data, d["b"].data, d["c"].data, np.int32(n))

        def launch():
            kernel.set_args(*args)
            return cl.enqueue_nd_range_kernel(queue, kernel, (g, g), (TILE, TILE))
        return launch
    v.make_launch = factory
    return [v]

# }}}


# {{{ BLAS

def _numpy_variant(blas_of_device: bool) -> Variant:
    v = Variant("numpy-host",
                "NumPy `np.matmul(a, b, out=c)` on the host (CPU BLAS)"
                + (" — the BLAS of this device" if blas_of_device else ""),
                blas=blas_of_device)

    def factory(queue, d):
        a, b = d["a_host"], d["b_host"]
        c = np.empty_like(a)

        def launch():
            np.matmul(a, b, out=c)
            return None
        launch.result = lambda: c
        return launch
    v.make_launch = factory
    return v


class _CudaSpan:
    """Event-like object for common.event_seconds: CUDA elapsed time."""

    def __init__(self, seconds: float):
        self.profile = SimpleNamespace(start=0, end=int(round(seconds * 1e9)))


def _cupy_variant() -> tuple[Variant, dict]:
    info: dict = {}
    v = Variant("cupy", "CuPy `cupy.matmul(a, b, out=c)` (cuBLAS, float32, TF32 off) — "
                "the BLAS of this device; times from CUDA events", blas=True)
    try:
        os.environ.setdefault("CUPY_TF32", "0")
        if os.environ["CUPY_TF32"] != "0":
            raise RuntimeError(f"CUPY_TF32={os.environ['CUPY_TF32']!r}: TF32 would be "
                               "used; unset it or set it to 0")
        import cupy as cp
        cp.cuda.set_allocator(cp.cuda.MemoryPool().malloc)   # CuPy's default pool
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        name = props["name"]
        info = {"cupy": cp.__version__, "cuda_device": name.decode() if
                isinstance(name, bytes) else str(name),
                "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
                "CUPY_TF32": os.environ.get("CUPY_TF32")}
    except Exception as e:
        v.error = _error_text(e)
        return v, {"error": v.error}

    def factory(queue, d):
        a = cp.asarray(d["a_host"])
        b = cp.asarray(d["b_host"])
        c = cp.empty_like(a)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        assert a.dtype == np.float32

        def launch():
            start.record()
            cp.matmul(a, b, out=c)
            end.record()
            end.synchronize()
            return _CudaSpan(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        launch.result = lambda: cp.asnumpy(c)
        return launch
    v.make_launch = factory
    return v, info

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
    if args.sizes:
        sizes = list(args.sizes)
    elif args.quick:
        sizes = list(QUICK_SIZES)
    elif kind == "gpu":
        sizes = [2048, 4096]
    else:
        sizes = [1024, 2048]
    repeat = args.repeat or (3 if args.quick else (10 if kind == "gpu" else 5))
    warmup = args.warmup if args.warmup is not None else 1

    env = common.environment(queue)
    print(f"device: {env['device']['name']} [{env['platform']['name']}] ({kind}), "
          f"driver {env['device']['driver_version']}, pyopencl {env['pyopencl']}")
    print(f"workload: {WORKLOAD}, float32, sizes {sizes}, repeat {repeat}, "
          f"warm-up {warmup}")

    variants = _kernelcore_variants() + _hand_written_variants(ctx)
    variants.append(_numpy_variant(blas_of_device=(kind != "gpu")))
    cupy_info = None
    if kind == "gpu" and not args.no_cupy:
        cv, cupy_info = _cupy_variant()
        variants.append(cv)
    if args.variants:
        unknown = set(args.variants) - {v.name for v in variants}
        if unknown:
            raise SystemExit(f"unknown variant(s) {sorted(unknown)}; known: "
                             + ", ".join(v.name for v in variants))
        variants = [v for v in variants if v.name in args.variants]
    blas_name = next((v.name for v in variants if v.blas), None)
    core = {PRIMARY, REFERENCE} & {v.name for v in variants}
    core_ok = all(v.error is None for v in variants if v.name in core)
    for v in variants:
        if v.error:
            print(f"  [{v.name}] not built: {v.error}")

    rng = np.random.default_rng(args.seed)
    per_size = []
    for n in sizes:
        flops = 2 * n**3
        entry: dict = {"n": n, "flop": flops, "variants": {}}
        per_size.append(entry)
        if 3 * n * n * 4 > 0.9 * dev.global_mem_size or n * n * 4 > dev.max_mem_alloc_size:
            entry["skipped"] = f"three {n}x{n} float32 matrices do not fit the device"
            print(f"n={n}: skipped: {entry['skipped']}")
            core_ok = False
            continue
        a_host = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b_host = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        t0 = time.perf_counter()
        ref = a_host.astype(np.float64) @ b_host.astype(np.float64)
        scale = float(np.abs(ref).max())
        print(f"n={n}: float64 reference in {time.perf_counter() - t0:.2f} s")
        data = {"n": n, "a_host": a_host, "b_host": b_host,
                "a": cla.to_device(queue, a_host), "b": cla.to_device(queue, b_host),
                "c": cla.empty(queue, (n, n), np.float32)}

        launches = {}
        for v in variants:
            rec: dict = {"description": v.description}
            entry["variants"][v.name] = rec
            if v.error:
                rec["error"] = v.error
                continue
            try:
                launch = v.make_launch(queue, data)
                data["c"].fill(np.float32(np.nan), queue=queue)
                launch()
                queue.finish()
                getter = getattr(launch, "result", None)
                got = getter() if getter else data["c"].get(queue=queue)
                err = float(np.nanmax(np.abs(got - ref))) / scale if scale else 0.0
                if np.isnan(got).any():
                    err = float("nan")
                rec["max_rel_error"] = err
                if not err <= CHECK_RTOL:
                    bad = ~(np.abs(got - ref) <= CHECK_RTOL * scale)
                    first = np.unravel_index(int(np.argmax(bad)), bad.shape)
                    raise AssertionError(
                        f"result differs from NumPy: max |c - ref| / max |ref| = {err:.3g} "
                        f"> {CHECK_RTOL}; {int(bad.sum())} of {n * n} elements off "
                        f"(first at {tuple(int(x) for x in first)}: got "
                        f"{got[first]!r}, want {ref[first]!r})")
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
            summ = s.summary(0)
            for k in ("event", "wall"):
                summ.pop(f"{k}_gbps", None)
                med = summ.get(f"{k}_median_s")
                summ[f"{k}_gflops"] = flops / med / 1e9 if med else None
            # the headline figure: device time where there is one, else wall clock
            summ["gflops"] = summ["event_gflops"] or summ["wall_gflops"]
            summ["gflops_basis"] = "event" if summ["event_gflops"] else "wall"
            rec.update(summ)
        blas = entry["variants"].get(blas_name, {}) if blas_name else {}
        ref_rec = entry["variants"].get(REFERENCE, {})
        for rec in entry["variants"].values():
            g = rec.get("gflops")
            rec["vs_blas"] = g / blas["gflops"] if g and blas.get("gflops") else None
            w = rec.get("wall_gflops")
            rec["vs_blas_wall"] = (w / blas["wall_gflops"]
                                   if w and blas.get("wall_gflops") else None)
            rec["vs_hand_written"] = (g / ref_rec["gflops"]
                                      if g and ref_rec.get("gflops") else None)
        pr = entry["variants"].get(PRIMARY, {})
        entry["ratio_vs_blas"] = pr.get("vs_blas")
        entry["ratio_vs_hand_written"] = pr.get("vs_hand_written")
        for name in core:
            if not entry["variants"].get(name, {}).get("gflops"):
                core_ok = False
        del data, launches, samples

    result = {
        "benchmark": "matmul",
        "workload": WORKLOAD,
        "dtype": "float32",
        "tile": TILE,
        "sizes": sizes,
        "repeat": repeat,
        "warmup": warmup,
        "timing": "rounds: each variant launched once per round, in a shuffled (seeded) "
                  "order; one launch + queue.finish() per sample; medians",
        "quick": bool(args.quick),
        "check": f"max |c - c_ref| / max |c_ref| <= {CHECK_RTOL}, c_ref = float64 NumPy "
                 "product of the same float32 inputs (uniform in [-1, 1))",
        "flops_formula": "2 N^3 / median time; GFLOP = 1e9 flop. 'gflops' uses the "
                         "device (event) time where there is one, else the wall clock",
        "blas_variant": blas_name,
        "cupy": cupy_info,
        "environment": env,
        "variants": {v.name: {"description": v.description, "build_error": v.error,
                              "blas": v.blas, "code": v.code, **v.extra}
                     for v in variants},
        "results": per_size,
    }
    result["summary"] = {
        "blas_variant": blas_name,
        "gflops_by_n": {str(e["n"]): {name: rec.get("gflops")
                                      for name, rec in e["variants"].items()}
                        for e in per_size},
        "kernelcore_vs_blas_by_n": {str(e["n"]): e.get("ratio_vs_blas") for e in per_size},
        "kernelcore_vs_hand_written_by_n": {str(e["n"]): e.get("ratio_vs_hand_written")
                                            for e in per_size},
        "core_variants_ok": core_ok,
    }
    return result, core_ok

# }}}


# {{{ reporting

HEADER = ["N", "variant", "event ms", "wall ms", "GFLOP/s", "vs BLAS", "vs BLAS (wall)",
          "vs hand", "max rel err"]


def _rows(result: dict) -> list[list[str]]:
    rows = []
    for entry in result["results"]:
        n = entry["n"]
        if entry.get("skipped"):
            rows.append([str(n), "(all)", "skipped"] + ["-"] * 6)
            continue
        for name, rec in entry["variants"].items():
            if rec.get("error"):
                rows.append([str(n), name, "FAILED"] + ["-"] * 5
                            + [common.fmt(rec.get("max_rel_error"), ".1e")])
                continue
            ev, wall = rec.get("event_median_s"), rec.get("wall_median_s")
            g = rec.get("gflops")
            rows.append([
                str(n), name,
                common.fmt(ev and ev * 1e3, ".2f"),
                common.fmt(wall and wall * 1e3, ".2f"),
                common.fmt(g, ".1f") + ("" if rec.get("gflops_basis") == "event"
                                        else " (wall)"),
                common.fmt(rec.get("vs_blas"), ".3f"),
                common.fmt(rec.get("vs_blas_wall"), ".3f"),
                common.fmt(rec.get("vs_hand_written"), ".3f"),
                common.fmt(rec.get("max_rel_error"), ".1e"),
            ])
    return rows


def text_report(result: dict) -> str:
    lines = [common.text_table(HEADER, _rows(result)), ""]
    for e in result["results"]:
        lines.append(f"N={e['n']}: {PRIMARY} / {result['blas_variant']} = "
                     f"{common.fmt(e.get('ratio_vs_blas'), '.3f')}, {PRIMARY} / "
                     f"{REFERENCE} = {common.fmt(e.get('ratio_vs_hand_written'), '.3f')}")
    return "\n".join(lines)


def _failures(result: dict) -> list[str]:
    errors = []
    for name, v in result["variants"].items():
        if v.get("build_error"):
            errors.append(f"- `{name}` (build): `{v['build_error']}`")
    for e in result["results"]:
        if e.get("skipped"):
            errors.append(f"- N={e['n']}: skipped: {e['skipped']}")
        for name, rec in e.get("variants", {}).items():
            if rec.get("error") and rec["error"] != result["variants"][name]["build_error"]:
                errors.append(f"- `{name}` N={e['n']}: `{rec['error']}`")
    return errors


def _env_lines(result: dict) -> list[str]:
    env = result["environment"]
    dev, plat = env["device"], env["platform"]
    out = [f"Device: **{dev['name']}** ({dev['kind']}; {dev['max_compute_units']} compute "
           f"units), platform {plat['name']} {plat['version']}, driver "
           f"{dev['driver_version']}.", "", "Produced by:", "", "```", env["command"],
           "```", "",
           f"- time (UTC): {env['timestamp_utc']}, host {env['hostname']} "
           f"({env['host_cpu_count']} CPUs), {env['os']}",
           f"- python {env['python']}, numpy {env['numpy']}, pyopencl {env['pyopencl']}, "
           f"kernelcore {env['kernelcore']}, git {env['git_commit'] or '-'}"
           f"{' (dirty)' if env['git_dirty'] else ''}"]
    if env["env"]:
        out.append("- environment: " + ", ".join(f"`{k}={v}`"
                                                 for k, v in env["env"].items()))
    return out


def markdown_report(result: dict) -> str:
    out = [f"# Matrix multiply: `{result['workload']}` (float32)", ""]
    w = out.append
    out.extend(_env_lines(result))
    if result.get("cupy"):
        w("- CuPy: " + ", ".join(f"{k} {v}" for k, v in result["cupy"].items()))
    w(f"- {result['repeat']} timed launches per variant and size (rounds over all "
      f"variants, shuffled order) after {result['warmup']} warm-up launch(es); medians")
    w(f"- {result['flops_formula']}")
    w(f"- check before timing: {result['check']}")
    w("")
    w(f"## {PRIMARY} against the BLAS of the device (`{result['blas_variant']}`)")
    w("")
    rows = []
    for e in result["results"]:
        vs = e.get("variants", {})
        rows.append([str(e["n"]),
                     common.fmt(vs.get(PRIMARY, {}).get("gflops"), ".1f"),
                     common.fmt(vs.get(REFERENCE, {}).get("gflops"), ".1f"),
                     common.fmt(vs.get(result["blas_variant"], {}).get("gflops"), ".1f"),
                     common.fmt(e.get("ratio_vs_blas"), ".3f"),
                     common.fmt(e.get("ratio_vs_hand_written"), ".3f")])
    w(common.markdown_table(["N", f"{PRIMARY} GFLOP/s", f"{REFERENCE} GFLOP/s",
                             "BLAS GFLOP/s", "kernelcore / BLAS",
                             "kernelcore / hand-written"], rows))
    w("")
    w("## All variants")
    w("")
    w(common.markdown_table(HEADER, _rows(result)))
    w("")
    w("`event`: OpenCL profiling event (CUDA events for CuPy). `wall`: one launch plus "
      "`queue.finish()` on the host clock. GFLOP/s marked `(wall)` come from the wall "
      "clock (host code). `vs BLAS`: GFLOP/s over the BLAS variant's.")
    w("")
    w("## Variants")
    w("")
    for name, v in result["variants"].items():
        w(f"- `{name}`: {v['description']}")
    errors = _failures(result)
    out.extend(common.failures_and_code(
        errors, result["variants"].get(PRIMARY, {}).get("code"),
        f"Generated code of `{PRIMARY}`"))
    w("")
    return "\n".join(out)

# }}}


def main(argv=None) -> int:
    args = parse_args(argv)
    result, ok = run(args)
    return common.write_reports(args, result, ok, "matmul", text_report,
                                markdown_report,
                                f"'{PRIMARY}' or '{REFERENCE}' failed (see above)")


if __name__ == "__main__":
    sys.exit(main())
