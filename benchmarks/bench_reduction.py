#!/usr/bin/env python3
"""Sum of n float32 values: kernelcore's two-stage reduction against a
hand-written two-stage OpenCL reduction, pyopencl and NumPy, in one run, with a
float4 copy kernel as the bandwidth yardstick.

Stage 1 (kernelcore's language): G work-groups of WG work-items; the flat index
is decomposed as ``i = l + WG*(s + S*g)`` (``l``: ``l.0``, ``g``: ``g.0``, ``s``
sequential) and ``partial[g] = sum((s, l), a[...])``; stage 2 sums the G
partials in one work-group. Every variant is checked against NumPy (float64
sum; relative error <= 1e-4) before it is timed; a variant that fails to build
or gives a wrong result is recorded with its error text and not timed.

Effective bandwidth = bytes / median time: 4n for the sums, 8n for the copy.
Times come from OpenCL profiling events (for two launches: start of the first
to end of the second) and from the wall clock around one launch plus
``queue.finish()``. The headline figure is each variant's fraction of the copy
kernel's bandwidth (target on the GPU: >= 0.8 for kernelcore-two-stage).

Usage (see benchmarks/README.md)::

    python benchmarks/bench_reduction.py [--device gpu] [--sizes 2**24 2**26]
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
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

common.ensure_repo_on_path()

PRIMARY = "kernelcore-two-stage"
REFERENCE = "hand-written"
COPY = "hand-written-copy-vec4"
TARGET_FRACTION = 0.8       # of the copy bandwidth, on the GPU
QUICK_SIZES = (2**12,)
CHECK_RTOL = 1e-4

WORKLOAD = "out = sum(a)  (float32)"


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
        description="float32 sum: kernelcore two-stage reduction vs hand-written OpenCL, "
                    "pyopencl, NumPy and the copy bandwidth.")
    p.add_argument("--device", default=None,
                   help="device for kernelcore's selection (sets KERNELCORE_DEVICE): "
                        "cpu, gpu, P:D, or a name substring; default: its usual choice")
    p.add_argument("--sizes", nargs="+", type=parse_size, default=None,
                   help="numbers of elements (default: 2**24 on a CPU, 2**26 on a GPU)")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed launches per variant and size (default 30; 3 with --quick)")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed launches per variant and size first (default 3)")
    p.add_argument("--wg", type=int, default=None,
                   help="work-group size WG (default 256 on a GPU, 64 otherwise)")
    p.add_argument("--groups", type=int, default=None,
                   help="number of work-groups G of stage 1 (default 1024 on a GPU, "
                        "4 x compute units otherwise; lowered so that none is empty)")
    p.add_argument("--quick", action="store_true",
                   help="n = 2**12 and 3 repeats (for the smoke test)")
    p.add_argument("--json", type=Path, default=None,
                   help="JSON output (default benchmarks/results/reduction-<kind>.json; "
                        "with --quick under benchmarks/results/tmp/)")
    p.add_argument("--markdown", type=Path, default=None,
                   help="Markdown output (default next to the JSON)")
    p.add_argument("--variants", nargs="+", default=None, metavar="NAME",
                   help="measure only these variants (default: all)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args

# }}}


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip()


class _Span:
    """Event-like object for common.event_seconds covering several launches:
    from the start of the first to the end of the last."""

    def __init__(self, first, last):
        self._first, self._last = first, last

    @property
    def profile(self):
        return SimpleNamespace(start=self._first.profile.start, end=self._last.profile.end)


@dataclass
class Geometry:
    wg: int        # work-items per group
    groups: int    # G
    steps: int     # S: sequential steps per work-item
    stage2_local: bool   # stage 2's g tagged l.0 (else a sequential loop)

    @classmethod
    def choose(cls, n: int, wg: int, groups: int, max_wg: int) -> Geometry:
        steps = -(-n // (wg * groups))
        groups = -(-n // (wg * steps))          # no empty group
        return cls(wg, groups, steps, groups <= max_wg)

    def as_dict(self) -> dict:
        return {"WG": self.wg, "G": self.groups, "S": self.steps,
                "stage2_g_tag": "l.0" if self.stage2_local else None}


@dataclass
class Variant:
    name: str
    description: str
    bytes_per_elem: int = 4
    # build(geom) -> (code, factory); factory(queue, data) -> launch() -> event | None
    # with launch.result() -> the sum (or the copy) as NumPy
    build: Callable | None = None
    check: str = "sum"          # "sum" or "copy"
    extra: dict = field(default_factory=dict)


# {{{ kernelcore

def _kc_stage1_domains(lp, geom: Geometry):
    """partial[g] = sum((s, l), a[l + WG*(s + S*g)]) with separate domains."""
    wg, G, S = geom.wg, geom.groups, geom.steps
    knl = lp.make_kernel(
        [f"{{[g]: 0<=g<{G}}}", f"{{[l]: 0<=l<{wg}}}",
         f"{{[s]: 0<=s<{S} and l + {wg}*(s + {S}*g) < n}}"],
        f"partial[g] = sum((s, l), a[l + {wg}*(s + {S}*g)])",
        [lp.GlobalArg("a", np.float32, shape=("n",)),
         lp.GlobalArg("partial", np.float32, shape=(G,)), "..."],
        name="sum_stage1_kernelcore")
    return lp.tag_inames(knl, {"g": "g.0", "l": "l.0"})


def _kc_stage1_split(lp, geom: Geometry):
    """partial[g] = sum(t, a[t + T*g]) over a block of T = WG*S, then t split by WG
    (inner l.0)."""
    wg, G, S = geom.wg, geom.groups, geom.steps
    T = wg * S
    knl = lp.make_kernel(
        f"{{[g, t]: 0<=g<{G} and 0<=t<{T} and t + {T}*g < n}}",
        f"partial[g] = sum(t, a[t + {T}*g])",
        [lp.GlobalArg("a", np.float32, shape=("n",)),
         lp.GlobalArg("partial", np.float32, shape=(G,)), "..."],
        name="sum_stage1_split_kernelcore")
    knl = lp.split_iname(knl, "t", wg, inner_tag="l.0")
    return lp.tag_inames(knl, {"g": "g.0"})


def _kc_stage2(lp, geom: Geometry):
    G = geom.groups
    knl = lp.make_kernel(f"{{[g]: 0<=g<{G}}}", "out[0] = sum(g, partial[g])",
                         [lp.GlobalArg("partial", np.float32, shape=(G,)),
                          lp.GlobalArg("out", np.float32, shape=(1,))],
                         name="sum_stage2_kernelcore")
    if geom.stage2_local:
        knl = lp.tag_inames(knl, {"g": "l.0"})
    return knl


def _kc_fused(lp, geom: Geometry, silence: bool = True):
    wg, G, S = geom.wg, geom.groups, geom.steps
    knl = lp.make_kernel(
        [f"{{[g]: 0<=g<{G}}}", f"{{[l]: 0<=l<{wg}}}",
         f"{{[s]: 0<=s<{S} and l + {wg}*(s + {S}*g) < n}}", f"{{[g2]: 0<=g2<{G}}}"],
        f"""
        partial[g] = sum((s, l), a[l + {wg}*(s + {S}*g)])  {{id=stage1}}
        ... gbarrier  {{id=gb, dep=stage1}}
        out[0] = sum(g2, partial[g2])  {{id=stage2, dep=gb}}
        """,
        [lp.TemporaryVariable("partial", np.float32, shape=(G,)),
         lp.GlobalArg("a", np.float32, shape=("n",)),
         lp.GlobalArg("out", np.float32, shape=(1,)), "..."],
        name="sum_fused_kernelcore",
        silenced_warnings=["write_race(stage2)"] if silence else None)
    knl = lp.tag_inames(knl, {"g": "g.0", "l": "l.0"})
    if geom.stage2_local:
        knl = lp.tag_inames(knl, {"g2": "l.0"})
    return lp.set_temporary_scope(knl, "partial", "global")


def _kc_split_full(lp, geom: Geometry):
    """One reduction over all of i, split i -> (g.0, s, l.0): needs a reduction across
    work-groups."""
    T = geom.wg * geom.steps
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[0] = sum(i, a[i])",
                         [lp.GlobalArg("a", np.float32, shape=("n",)),
                          lp.GlobalArg("out", np.float32, shape=(1,)), "..."],
                         name="sum_split_full_kernelcore")
    knl = lp.split_iname(knl, "i", T, outer_tag="g.0")
    return lp.split_iname(knl, "i_inner", geom.wg, inner_tag="l.0")


def _two_kernel_factory(k1, k2, geom: Geometry):
    import pyopencl.array as cla

    def factory(queue, d):
        a, n = d["a"], d["n"]
        partial = cla.empty(queue, geom.groups, np.float32)
        out = cla.empty(queue, 1, np.float32)

        def launch():
            e1, _ = k1(queue, a=a, partial=partial, n=n)
            e2, _ = k2(queue, partial=partial, out=out)
            return _Span(e1, e2)
        launch.result = lambda: out.get(queue=queue)[0]
        return launch
    return factory


def _kernelcore_variants() -> list[Variant]:
    import kernelcore as lp

    def code_of(*knls):
        return "\n\n".join(lp.generate_code_v2(k).device_code() for k in knls)

    def two_stage(stage1):
        def build(geom):
            k1, k2 = stage1(lp, geom), _kc_stage2(lp, geom)
            return code_of(k1, k2), _two_kernel_factory(k1, k2, geom)
        return build

    def fused_build(geom):
        try:
            code_of(_kc_fused(lp, geom, silence=False))
            unsilenced = None
        except Exception as e:
            unsilenced = _error_text(e)
        knl = _kc_fused(lp, geom)
        code = code_of(knl)

        def factory(queue, d):
            import pyopencl.array as cla
            a, n = d["a"], d["n"]
            out = cla.empty(queue, 1, np.float32)

            def launch():
                knl(queue, a=a, out=out, n=n)
                return None      # its event is the last device kernel's only
            launch.result = lambda: out.get(queue=queue)[0]
            return launch
        factory.note = unsilenced
        return code, factory

    def split_full_build(geom):
        knl = _kc_split_full(lp, geom)
        code = code_of(knl)
        # several device kernels: the returned event is the last one's only
        multi = code.count("__kernel") > 1

        def factory(queue, d):
            import pyopencl.array as cla
            out = cla.empty(queue, 1, np.float32)

            def launch():
                evt, _ = knl(queue, a=d["a"], out=out, n=d["n"])
                return None if multi else evt
            launch.result = lambda: out.get(queue=queue)[0]
            return launch
        return code, factory

    return [
        Variant(PRIMARY,
                "kernelcore, two kernels: stage 1 `partial[g] = sum((s, l), "
                "a[l + WG*(s + S*g)])` on domains {[g]: 0<=g<G}, {[l]: 0<=l<WG}, "
                "{[s]: 0<=s<S and l + WG*(s + S*g) < n} (G, WG, S literals; g: g.0, "
                "l: l.0, s sequential); stage 2 `out[0] = sum(g, partial[g])` (g: l.0) "
                "— event time from the start of stage 1 to the end of stage 2",
                build=two_stage(_kc_stage1_domains)),
        Variant("kernelcore-split",
                "kernelcore, two kernels: stage 1 `partial[g] = sum(t, a[t + T*g])` on "
                "{[g, t]: 0<=g<G and 0<=t<T and t + T*g < n}, T = WG*S, with "
                "split_iname(t, WG, inner_tag='l.0') and g: g.0; stage 2 as "
                f"'{PRIMARY}'",
                build=two_stage(_kc_stage1_split)),
        Variant("kernelcore-gbarrier",
                "kernelcore, one program: stage 1 and `out[0] = sum(g2, partial[g2])` "
                "(g2: l.0) separated by `... gbarrier`, `partial` a temporary with "
                "set_temporary_scope(..., 'global') (allocated by the invoker per call); "
                "needs silenced_warnings=['write_race(stage2)']; wall clock only (the "
                "returned event is the last device kernel's)",
                build=fused_build),
        Variant("kernelcore-split-full",
                "kernelcore, one kernel: `out[0] = sum(i, a[i])` with i split by WG*S "
                "(outer g.0) and the rest by WG (inner l.0): a reduction across "
                "work-groups (wall clock only if kernelcore makes several device "
                "kernels of it)",
                build=split_full_build),
    ]

# }}}


# {{{ hand-written OpenCL

HAND_WRITTEN_SOURCE = r"""
/* Stage 1: G groups; each work-item sums a grid-stride sequence (coalesced), then a
   local-memory tree sums the group. Stage 2: one group does the same over the G
   partials. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sum_stage1(__global const float *restrict a, __global float *restrict partial,
                const int n)
{
  __local float buf[WG];
  const int l = get_local_id(0);
  const int stride = get_num_groups(0) * WG;
  float acc = 0.0f;
  for (int i = get_group_id(0) * WG + l; i < n; i += stride)
    acc += a[i];
  buf[l] = acc;
  for (int width = WG / 2; width > 0; width >>= 1)
  {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < width)
      buf[l] += buf[l + width];
  }
  if (l == 0)
    partial[get_group_id(0)] = buf[0];
}

/* The same with float4 loads; group 0 also takes the n % 4 tail. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sum_stage1_vec4(__global const float *restrict a, __global float *restrict partial,
                     const int n)
{
  __local float buf[WG];
  const int l = get_local_id(0);
  const int stride = get_num_groups(0) * WG;
  const int n4 = n / 4;
  float4 acc4 = (float4)(0.0f);
  for (int i = get_group_id(0) * WG + l; i < n4; i += stride)
    acc4 += ((__global const float4 *) a)[i];
  float acc = (acc4.x + acc4.y) + (acc4.z + acc4.w);
  if (get_group_id(0) == 0)
    for (int i = 4 * n4 + l; i < n; i += WG)
      acc += a[i];
  buf[l] = acc;
  for (int width = WG / 2; width > 0; width >>= 1)
  {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < width)
      buf[l] += buf[l + width];
  }
  if (l == 0)
    partial[get_group_id(0)] = buf[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sum_stage2(__global const float *restrict partial, __global float *restrict out,
                const int m)
{
  __local float buf[WG];
  const int l = get_local_id(0);
  float acc = 0.0f;
  for (int i = l; i < m; i += WG)
    acc += partial[i];
  buf[l] = acc;
  for (int width = WG / 2; width > 0; width >>= 1)
  {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < width)
      buf[l] += buf[l + width];
  }
  if (l == 0)
    out[0] = buf[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void copy_vec4(__global const float *restrict src, __global float *restrict dst,
               const int n)
{
  const int i = get_global_id(0);
  const int n4 = n / 4;
  if (i < n4)
    ((__global float4 *) dst)[i] = ((__global const float4 *) src)[i];
  else if (i == n4)
    for (int k = 4 * n4; k < n; ++k)
      dst[k] = src[k];
}
"""


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _hand_written_variants(ctx) -> list[Variant]:
    import pyopencl as cl
    import pyopencl.array as cla

    programs: dict[int, SimpleNamespace] = {}

    def program(wg):
        """The kernels for work-group size *wg*, built and retrieved once."""
        if wg not in programs:
            prg = cl.Program(ctx, f"#define WG {wg}\n" + HAND_WRITTEN_SOURCE).build()
            programs[wg] = SimpleNamespace(**{k.function_name: k
                                              for k in prg.all_kernels()})
        return programs[wg]

    def two_stage(kname):
        def build(geom):
            prg = program(geom.wg)
            k1, k2 = getattr(prg, kname), prg.sum_stage2

            def factory(queue, d):
                n = d["n"]
                partial = cla.empty(queue, geom.groups, np.float32)
                out = cla.empty(queue, 1, np.float32)
                args1 = (d["a"].data, partial.data, np.int32(n))
                args2 = (partial.data, out.data, np.int32(geom.groups))

                def launch():
                    k1.set_args(*args1)
                    e1 = cl.enqueue_nd_range_kernel(queue, k1, (geom.groups * geom.wg,),
                                                    (geom.wg,))
                    k2.set_args(*args2)
                    e2 = cl.enqueue_nd_range_kernel(queue, k2, (geom.wg,), (geom.wg,))
                    return _Span(e1, e2)
                launch.result = lambda: out.get(queue=queue)[0]
                return launch
            return f"#define WG {geom.wg}\n" + HAND_WRITTEN_SOURCE, factory
        return build

    def copy_build(geom):
        prg = program(geom.wg)
        k = prg.copy_vec4

        def factory(queue, d):
            n = d["n"]
            dst = cla.empty(queue, n, np.float32)
            gsize = _round_up(n // 4 + 1, geom.wg)
            args = (d["a"].data, dst.data, np.int32(n))

            def launch():
                k.set_args(*args)
                return cl.enqueue_nd_range_kernel(queue, k, (gsize,), (geom.wg,))
            launch.result = lambda: dst.get(queue=queue)
            return launch
        return None, factory

    return [
        Variant(REFERENCE,
                "hand-written OpenCL, two kernels: stage 1 with the same G and WG, each "
                "work-item summing a grid-stride sequence, local-memory tree per group; "
                "stage 2 one group over the G partials — the reference",
                build=two_stage("sum_stage1")),
        Variant("hand-written-vec4",
                "as 'hand-written' with float4 loads in stage 1",
                build=two_stage("sum_stage1_vec4")),
        Variant(COPY,
                "hand-written float4 copy dst = a (8n bytes): the copy bandwidth, "
                "the yardstick", bytes_per_elem=8, build=copy_build, check="copy"),
    ]

# }}}


# {{{ pyopencl and NumPy

def _peer_variants() -> list[Variant]:
    import pyopencl.array as cla

    def cl_build(geom):
        def factory(queue, d):
            a = d["a"]
            holder = {}

            def launch():
                holder["r"] = cla.sum(a, queue=queue)
                return None      # two kernels inside; timed on the wall clock only
            launch.result = lambda: holder["r"].get(queue=queue)[()]
            return launch
        return None, factory

    def np_build(geom):
        def factory(queue, d):
            a = d["a_host"]
            holder = {}

            def launch():
                holder["r"] = a.sum()
                return None
            launch.result = lambda: holder["r"]
            return launch
        return None, factory

    return [
        Variant("pyopencl-array-sum", "`pyopencl.array.sum(a)` (its own two-stage "
                "reduction; wall clock only)", build=cl_build),
        Variant("numpy-host", "NumPy `a.sum()` on the host (pairwise summation)",
                build=np_build),
    ]

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
    wg = min(args.wg or (256 if kind == "gpu" else 64), dev.max_work_group_size)
    groups = args.groups or (1024 if kind == "gpu" else 4 * dev.max_compute_units)
    if args.sizes:
        sizes = list(args.sizes)
    elif args.quick:
        sizes = list(QUICK_SIZES)
    elif kind == "gpu":
        sizes = [2**26]
    else:
        sizes = [2**24]
    repeat = args.repeat or (3 if args.quick else 30)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)

    env = common.environment(queue)
    print(f"device: {env['device']['name']} [{env['platform']['name']}] ({kind}), "
          f"driver {env['device']['driver_version']}, pyopencl {env['pyopencl']}")
    print(f"workload: {WORKLOAD}, WG {wg}, G {groups} (at most), sizes {sizes}, "
          f"repeat {repeat}, warm-up {warmup}")

    variants = _kernelcore_variants() + _hand_written_variants(ctx) + _peer_variants()
    if args.variants:
        unknown = set(args.variants) - {v.name for v in variants}
        if unknown:
            raise SystemExit(f"unknown variant(s) {sorted(unknown)}; known: "
                             + ", ".join(v.name for v in variants))
        variants = [v for v in variants if v.name in args.variants]
    core = {PRIMARY, REFERENCE} & {v.name for v in variants}
    core_ok = True

    rng = np.random.default_rng(args.seed)
    per_size = []
    codes: dict[str, str | None] = {}
    notes: dict[str, str] = {}
    for n in sizes:
        geom = Geometry.choose(n, wg, groups, min(dev.max_work_group_size, 1024))
        entry: dict = {"n": n, "geometry": geom.as_dict(), "variants": {}}
        per_size.append(entry)
        if n >= 2**31 or 2 * n * 4 > 0.9 * dev.global_mem_size \
                or n * 4 > dev.max_mem_alloc_size:
            entry["skipped"] = f"n={n} does not fit the device or the int index"
            print(f"n={n}: skipped: {entry['skipped']}")
            core_ok = False
            continue
        print(f"n={n}: G={geom.groups}, WG={geom.wg}, S={geom.steps}")
        a_host = rng.random(n, dtype=np.float64).astype(np.float32)
        want = float(np.sum(a_host, dtype=np.float64))
        data = {"n": n, "a_host": a_host, "a": cla.to_device(queue, a_host)}

        launches = {}
        for v in variants:
            rec: dict = {"description": v.description, "bytes": v.bytes_per_elem * n}
            entry["variants"][v.name] = rec
            try:
                code, factory = v.build(geom)
                codes.setdefault(v.name, code)
                if getattr(factory, "note", None):
                    notes[v.name] = factory.note
                launch = factory(queue, data)
                launch()
                queue.finish()
                got = launch.result()
                if v.check == "copy":
                    if not np.array_equal(got, a_host):
                        raise AssertionError(f"copy differs at {int((got != a_host).sum())}"
                                             f" of {n} elements")
                else:
                    err = abs(float(got) - want) / abs(want)
                    rec["value"] = float(got)
                    rec["rel_error"] = err
                    if not err <= CHECK_RTOL:
                        raise AssertionError(f"sum {float(got)!r} differs from NumPy's "
                                             f"(float64) {want!r}: relative error "
                                             f"{err:.3g} > {CHECK_RTOL}")
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
            rec["gbps"] = rec["event_gbps"] or rec["wall_gbps"]
            rec["gbps_basis"] = "event" if rec["event_gbps"] else "wall"
        copy = entry["variants"].get(COPY, {})
        ref = entry["variants"].get(REFERENCE, {})
        for rec in entry["variants"].values():
            g = rec.get("gbps")
            basis = rec.get("gbps_basis")
            c = copy.get(f"{basis}_gbps") if basis else None
            rec["fraction_of_copy"] = g / c if g and c else None
            w, cw = rec.get("wall_gbps"), copy.get("wall_gbps")
            rec["fraction_of_copy_wall"] = w / cw if w and cw else None
            r = ref.get(f"{basis}_gbps") if basis else None
            rec["vs_hand_written"] = g / r if g and r else None
        pr = entry["variants"].get(PRIMARY, {})
        entry["fraction_of_copy"] = pr.get("fraction_of_copy")
        entry["ratio_vs_hand_written"] = pr.get("vs_hand_written")
        for name in core:
            if not entry["variants"].get(name, {}).get("gbps"):
                core_ok = False
        del data, launches, samples

    fracs = [e.get("fraction_of_copy") for e in per_size if e.get("fraction_of_copy")]
    result = {
        "benchmark": "reduction",
        "workload": WORKLOAD,
        "dtype": "float32",
        "work_group_size": wg,
        "groups_max": groups,
        "sizes": sizes,
        "repeat": repeat,
        "warmup": warmup,
        "timing": "rounds: each variant launched once per round, in a shuffled (seeded) "
                  "order; one launch (both stages) + queue.finish() per sample; medians",
        "quick": bool(args.quick),
        "check": f"|sum - sum_float64| / |sum_float64| <= {CHECK_RTOL} (uniform [0, 1) "
                 "inputs); the copy must be exact",
        "bandwidth_formula": "bytes / median time, bytes = 4n for a sum, 8n for the copy; "
                             "GB = 1e9 bytes. 'gbps' uses the event time (start of the "
                             "first kernel to end of the last) where there is one, else "
                             "the wall clock; fraction_of_copy compares like with like",
        "target_fraction_of_copy": TARGET_FRACTION if kind == "gpu" else None,
        "environment": env,
        "variants": {v.name: {"description": v.description, "code": codes.get(v.name),
                              **({"note_without_silencing": notes[v.name]}
                                 if v.name in notes else {})}
                     for v in variants},
        "results": per_size,
        "summary": {
            "fraction_of_copy_by_n": {str(e["n"]): e.get("fraction_of_copy")
                                      for e in per_size},
            "kernelcore_vs_hand_written_by_n": {str(e["n"]): e.get("ratio_vs_hand_written")
                                                for e in per_size},
            "min_fraction_of_copy": min(fracs) if fracs else None,
            "meets_target": (min(fracs) >= TARGET_FRACTION if fracs else False)
            if kind == "gpu" else None,
            "core_variants_ok": core_ok,
        },
    }
    return result, core_ok

# }}}


# {{{ reporting

HEADER = ["n", "variant", "event us", "wall us", "GB/s", "of copy", "of copy (wall)",
          "vs hand", "rel err"]


def _rows(result: dict) -> list[list[str]]:
    rows = []
    for entry in result["results"]:
        n = entry["n"]
        if entry.get("skipped"):
            rows.append([str(n), "(all)", "skipped"] + ["-"] * 6)
            continue
        for name, rec in entry["variants"].items():
            if rec.get("error"):
                rows.append([str(n), name, "FAILED"] + ["-"] * 6)
                continue
            ev, wall = rec.get("event_median_s"), rec.get("wall_median_s")
            rows.append([
                str(n), name,
                common.fmt(ev and ev * 1e6, ".1f"),
                common.fmt(wall and wall * 1e6, ".1f"),
                common.fmt(rec.get("gbps"), ".2f")
                + ("" if rec.get("gbps_basis") == "event" else " (wall)"),
                common.fmt(rec.get("fraction_of_copy"), ".3f"),
                common.fmt(rec.get("fraction_of_copy_wall"), ".3f"),
                common.fmt(rec.get("vs_hand_written"), ".3f"),
                common.fmt(rec.get("rel_error"), ".1e"),
            ])
    return rows


def text_report(result: dict) -> str:
    lines = [common.text_table(HEADER, _rows(result)), ""]
    for e in result["results"]:
        lines.append(f"n={e['n']}: {PRIMARY} = {common.fmt(e.get('fraction_of_copy'), '.3f')}"
                     f" of the copy bandwidth, {common.fmt(e.get('ratio_vs_hand_written'), '.3f')}"
                     f" of {REFERENCE}")
    t = result["target_fraction_of_copy"]
    if t is not None:
        ok = result["summary"]["meets_target"]
        lines.append(f"GPU target: >= {t} of the copy bandwidth: "
                     f"{'met' if ok else 'NOT met'}")
    return "\n".join(lines)


def markdown_report(result: dict) -> str:
    env = result["environment"]
    dev, plat = env["device"], env["platform"]
    out: list[str] = []
    w = out.append
    w(f"# Reduction: `{result['workload']}`")
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
    w(f"- {result['repeat']} timed launches per variant and size (rounds over all "
      f"variants, shuffled order) after {result['warmup']} warm-up launches; medians")
    w(f"- {result['bandwidth_formula']}")
    w(f"- check before timing: {result['check']}")
    for e in result["results"]:
        g = e["geometry"]
        w(f"- n={e['n']}: G={g['G']} groups x WG={g['WG']} work-items x S={g['S']} "
          f"steps; stage 2 g tag {g['stage2_g_tag']}")
    w("")
    w(f"## {PRIMARY} against the copy bandwidth")
    w("")
    rows = []
    for e in result["results"]:
        vs = e.get("variants", {})
        rows.append([str(e["n"]),
                     common.fmt(vs.get(PRIMARY, {}).get("gbps"), ".2f"),
                     common.fmt(vs.get(REFERENCE, {}).get("gbps"), ".2f"),
                     common.fmt(vs.get(COPY, {}).get("gbps"), ".2f"),
                     common.fmt(e.get("fraction_of_copy"), ".3f"),
                     common.fmt(e.get("ratio_vs_hand_written"), ".3f")])
    w(common.markdown_table(["n", f"{PRIMARY} GB/s", f"{REFERENCE} GB/s", "copy GB/s",
                             "kernelcore / copy", "kernelcore / hand-written"], rows))
    w("")
    t = result["target_fraction_of_copy"]
    if t is not None:
        ok = result["summary"]["meets_target"]
        w(f"Target (GPU): >= {t} of the copy bandwidth: **{'met' if ok else 'not met'}**.")
        w("")
    w("## All variants")
    w("")
    w(common.markdown_table(HEADER, _rows(result)))
    w("")
    w("`event`: OpenCL profiling events (two-kernel variants: start of the first to "
      "the end of the second). `wall`: one launch plus `queue.finish()` on the host "
      "clock. GB/s marked `(wall)` come from the wall clock. `of copy`: GB/s over the "
      f"`{COPY}` GB/s on the same basis.")
    w("")
    w("## Variants")
    w("")
    for name, v in result["variants"].items():
        w(f"- `{name}`: {v['description']}")
        if v.get("note_without_silencing"):
            w(f"  - without silencing: `{v['note_without_silencing']}`")
    errors = []
    for e in result["results"]:
        if e.get("skipped"):
            errors.append(f"- n={e['n']}: skipped: {e['skipped']}")
        for name, rec in e.get("variants", {}).items():
            if rec.get("error"):
                errors.append(f"- `{name}` n={e['n']}: `{rec['error']}`")
    out.extend(common.failures_and_code(
        errors, result["variants"].get(PRIMARY, {}).get("code"),
        f"Generated code of `{PRIMARY}` (stage 1, stage 2)"))
    w("")
    return "\n".join(out)

# }}}


def main(argv=None) -> int:
    args = parse_args(argv)
    result, ok = run(args)
    return common.write_reports(args, result, ok, "reduction", text_report,
                                markdown_report,
                                f"'{PRIMARY}' or '{REFERENCE}' failed (see above)")


if __name__ == "__main__":
    sys.exit(main())
