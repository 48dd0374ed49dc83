"""Hand-written OpenCL kernels for the suite's workloads (the roofline
reference) and the float4 copy kernel whose bandwidth every variant is
compared with. All run on the queue lazyarray uses.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from bench_matmul import HAND_WRITTEN_SOURCE as MATMUL_SOURCE
from bench_matmul import TILE as MATMUL_TILE
from workloads import HEAT_K, HEAT_STEPS, W2_STEPS, Case, NotApplicable, Runner

#: transpose tile (TD x TD, padded to TD + 1 columns in local memory), walked
#: by TD x TROWS work-items
TD, TROWS = 32, 8

SOURCE = r"""
__kernel void w1(__global const float *a, __global const float *b,
                 __global const float *c, __global const float *d,
                 __global const float *e, __global float *out, const int n)
{
  const int i = get_global_id(0);
  if (i < n)
    out[i] = a[i] * b[i] + c[i] * d[i] - sin(e[i]);
}

__kernel void w2(__global const float *x, __global float *out, const int n)
{
  const int i = get_global_id(0);
  if (i < n)
  {
    float v = x[i];
#pragma unroll
    for (int s = 0; s < W2_STEPS; ++s)     /* unrolled, PoCL vectorizes it */
      v = v * 0.999f + 0.5f * sqrt(fabs(v) + 1.0f);
    out[i] = v;
  }
}

__kernel void add(__global const float *a, __global const float *b,
                  __global float *out, const int n)
{
  const int i = get_global_id(0);
  if (i < n)
    out[i] = a[i] + b[i];
}

/* Work-item k of m walks its share of 0..n-1: on a GPU every m-th index from k
   (neighbouring work-items read neighbouring elements), on a CPU a contiguous
   range (one thread runs a work-group's items one after another). */
#if CHUNKED
#define FOR_SHARE(j, k, m, n) \
  for (int j = (int)(k) * (((n) + (int)(m) - 1) / (int)(m)), \
       j##_end = min((int)(n), j + ((n) + (int)(m) - 1) / (int)(m)); j < j##_end; ++j)
#else
#define FOR_SHARE(j, k, m, n) for (int j = (int)(k); j < (n); j += (int)(m))
#endif

/* The reductions load VEC floats at a time: 1 on a GPU, 8 on a CPU (SIMD). */
#if VEC == 8
typedef float8 floatv;
#define LOADV(k, p) vload8((k), (p))
#define STOREV(v, k, p) vstore8((v), (k), (p))
float hsum(floatv v) { float4 h = v.lo + v.hi; return (h.x + h.y) + (h.z + h.w); }
float hmax(floatv v)
{
  float4 h = fmax(v.lo, v.hi);
  return fmax(fmax(h.x, h.y), fmax(h.z, h.w));
}
#else
typedef float floatv;
#define LOADV(k, p) ((p)[k])
#define STOREV(v, k, p) ((p)[k] = (v))
#define hsum(v) (v)
#define hmax(v) (v)
#endif

/* Tree reduction (COMBINE) of the RWG values in scratch (every work-item
   passes its own); returns the result in every work-item. */
#define GROUP_REDUCTION(NAME, COMBINE) \
float NAME(__local float *scratch, float value) \
{ \
  const int lid = get_local_id(0); \
  scratch[lid] = value; \
  barrier(CLK_LOCAL_MEM_FENCE); \
  for (int s = RWG / 2; s > 0; s >>= 1) \
  { \
    if (lid < s) \
      scratch[lid] = COMBINE(scratch[lid], scratch[lid + s]); \
    barrier(CLK_LOCAL_MEM_FENCE); \
  } \
  const float total = scratch[0]; \
  barrier(CLK_LOCAL_MEM_FENCE); \
  return total; \
}

#define ADD(a, b) ((a) + (b))
GROUP_REDUCTION(group_sum, ADD)
GROUP_REDUCTION(group_max, fmax)

/* dot, stage 1: partial sums, one per work-group */
__kernel __attribute__((reqd_work_group_size(RWG, 1, 1)))
void dot_partial(__global const float *a, __global const float *b,
                 __global float *partial, const int n)
{
  __local float scratch[RWG];
  const int nv = n / VEC;
  floatv acc = 0.0f;
  FOR_SHARE(k, get_global_id(0), get_global_size(0), nv)
    acc += LOADV(k, a) * LOADV(k, b);
  float total = hsum(acc);
  for (int i = nv * VEC + get_global_id(0); i < n; i += get_global_size(0))
    total += a[i] * b[i];
  total = group_sum(scratch, total);
  if (get_local_id(0) == 0)
    partial[get_group_id(0)] = total;
}

/* dot, stage 2: one work-group sums the partial sums */
__kernel __attribute__((reqd_work_group_size(RWG, 1, 1)))
void sum_partials(__global const float *partial, __global float *out, const int m)
{
  __local float scratch[RWG];
  float acc = 0.0f;
  for (int i = get_local_id(0); i < m; i += RWG)
    acc += partial[i];
  const float total = group_sum(scratch, acc);
  if (get_local_id(0) == 0)
    out[0] = total;
}

/* one work-group per row */
__kernel __attribute__((reqd_work_group_size(RWG, 1, 1)))
void row_sums(__global const float *x, __global float *out, const int ncols)
{
  __local float scratch[RWG];
  __global const float *row = x + (size_t)get_group_id(0) * ncols;
  const int lid = get_local_id(0), nv = ncols / VEC;
  floatv acc = 0.0f;
  FOR_SHARE(k, lid, RWG, nv)
    acc += LOADV(k, row);
  float total = hsum(acc);
  for (int j = nv * VEC + lid; j < ncols; j += RWG)
    total += row[j];
  total = group_sum(scratch, total);
  if (lid == 0)
    out[get_group_id(0)] = total;
}

/* Each work-item owns CPI adjacent columns: 1 on a GPU (neighbouring
   work-items read neighbouring columns), 128 on a CPU (8 float16 accumulators:
   each row is read as 512 contiguous bytes). */
#if CPI > 1
#define CB (CPI / 16)
__kernel void col_sums(__global const float *x, __global float *out,
                       const int nrows, const int ncols)
{
  const int j0 = get_global_id(0) * CPI;
  if (j0 + CPI <= ncols)
  {
    float16 acc[CB];
    for (int b = 0; b < CB; ++b)
      acc[b] = 0.0f;
    for (int i = 0; i < nrows; ++i)
      for (int b = 0; b < CB; ++b)
        acc[b] += vload16(b, x + (size_t)i * ncols + j0);
    for (int b = 0; b < CB; ++b)
      vstore16(acc[b], b, out + j0);
  }
  else      /* the last, partial block of columns */
    for (int j = j0; j < ncols; ++j)
    {
      float acc = 0.0f;
      for (int i = 0; i < nrows; ++i)
        acc += x[(size_t)i * ncols + j];
      out[j] = acc;
    }
}
#else
__kernel void col_sums(__global const float *x, __global float *out,
                       const int nrows, const int ncols)
{
  const int j = get_global_id(0);
  if (j >= ncols)
    return;
  float acc = 0.0f;
  for (int i = 0; i < nrows; ++i)
    acc += x[(size_t)i * ncols + j];
  out[j] = acc;
}
#endif

/* one work-group per row: max, sum of exponentials, write */
__kernel __attribute__((reqd_work_group_size(RWG, 1, 1)))
void softmax_rows(__global const float *x, __global float *out, const int ncols)
{
  __local float scratch[RWG];
  const size_t base = (size_t)get_group_id(0) * ncols;
  __global const float *row = x + base;
  __global float *orow = out + base;
  const int lid = get_local_id(0), nv = ncols / VEC, tail = nv * VEC + lid;
  floatv mv = -INFINITY;
  FOR_SHARE(k, lid, RWG, nv)
    mv = fmax(mv, LOADV(k, row));
  float m = hmax(mv);
  for (int j = tail; j < ncols; j += RWG)
    m = fmax(m, row[j]);
  m = group_max(scratch, m);
  floatv sv = 0.0f;
  FOR_SHARE(k, lid, RWG, nv)
    sv += exp(LOADV(k, row) - m);
  float s = hsum(sv);
  for (int j = tail; j < ncols; j += RWG)
    s += exp(row[j] - m);
  const float inv = 1.0f / group_sum(scratch, s);
  FOR_SHARE(k, lid, RWG, nv)
    STOREV(exp(LOADV(k, row) - m) * inv, k, orow);
  for (int j = tail; j < ncols; j += RWG)
    orow[j] = exp(row[j] - m) * inv;
}

/* one explicit heat-equation step; the boundary is copied */
__kernel void heat_step(__global const float *u, __global float *v, const int n)
{
  const int j = get_global_id(0), i = get_global_id(1);
  if (i >= n || j >= n)
    return;
  const size_t p = (size_t)i * n + j;
  if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
    v[p] = u[p];
  else
    v[p] = u[p] + HEAT_K * (u[p + n] + u[p - n] + u[p + 1] + u[p - 1] - 4.0f * u[p]);
}

/* out = 2*a.T through a padded local-memory tile */
__kernel __attribute__((reqd_work_group_size(TD, TROWS, 1)))
void scaled_transpose(__global const float *a, __global float *out, const int n)
{
  __local float tile[TD][TD + 1];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int bx = get_group_id(0) * TD, by = get_group_id(1) * TD;
  for (int r = ly; r < TD; r += TROWS)
    if (by + r < n && bx + lx < n)
      tile[r][lx] = a[(size_t)(by + r) * n + bx + lx];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int r = ly; r < TD; r += TROWS)
    if (bx + r < n && by + lx < n)
      out[(size_t)(bx + r) * n + by + lx] = 2.0f * tile[lx][r];
}

"""

COPY_SOURCE = r"""
__kernel void copy4(__global const float4 *src, __global float4 *dst, const int n4)
{
  const int i = get_global_id(0);
  if (i < n4)
    dst[i] = src[i];
}
"""

_PROGRAMS: dict[tuple[int, bool], cl.Program] = {}


def _is_gpu(queue) -> bool:
    return bool(queue.device.type & cl.device_type.GPU)


def _wg(queue) -> int:
    """Work-group size of the elementwise kernels."""
    return 256 if _is_gpu(queue) else 128


def _rwg(queue) -> int:
    """Work-group size of the reductions (a power of two)."""
    return 256 if _is_gpu(queue) else 8


def _cpi(queue) -> int:
    """Columns per work-item of the column sums (1, or a multiple of 16)."""
    return 1 if _is_gpu(queue) else 128


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def program(queue, copy: bool = False) -> cl.Program:
    """The workloads' kernels with bench_matmul's tiled matmul, or (*copy*) the
    copy kernel on its own, built once per context."""
    key = (queue.context.int_ptr, copy)
    if key not in _PROGRAMS:
        gpu = _is_gpu(queue)
        defines = {"RWG": _rwg(queue), "CHUNKED": int(not gpu), "VEC": 1 if gpu else 8,
                   "CPI": _cpi(queue),
                   "W2_STEPS": W2_STEPS, "HEAT_K": f"{HEAT_K}f", "TD": TD,
                   "TROWS": TROWS, "TS": MATMUL_TILE}
        header = "".join(f"#define {k} {v}\n" for k, v in defines.items())
        source = COPY_SOURCE if copy else header + SOURCE + MATMUL_SOURCE
        _PROGRAMS[key] = cl.Program(queue.context, source).build()
    return _PROGRAMS[key]


def _launcher(queue, prg: cl.Program, name: str, args: tuple, gsize: tuple,
              lsize: tuple | None) -> Callable[[], None]:
    """Enqueue kernel *name* of *prg* with fixed *args* (a kernel object of its
    own, whose arguments are set once, not per launch)."""
    kernel = cl.Kernel(prg, name)
    kernel.set_args(*args)

    def launch():
        cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)
    launch.args = args      # set_args keeps no reference: the buffers must stay alive
    return launch


def _runner(queue, launches: list[Callable[[], None]], out: cla.Array) -> Runner:
    def launch():
        for one in launches:
            one()
        return out

    def call():
        launch()
        queue.finish()
        return out
    return Runner(call, to_host=lambda r: r.get().reshape(out.shape), launch=launch,
                  wait=queue.finish)


def _elementwise(queue, prg, name: str, inputs: list, out_shape: tuple) -> Runner:
    n = int(np.prod(out_shape))
    out = cla.empty(queue, out_shape, np.float32)
    wg = _wg(queue)
    args = (*(x.data for x in inputs), out.data, np.int32(n))
    return _runner(queue, [_launcher(queue, prg, name, args,
                                     (_round_up(n, wg),), (wg,))], out)


def _dot(queue, prg, a, b) -> Runner:
    rwg = _rwg(queue)
    groups = 1024 if _is_gpu(queue) else 4 * queue.device.max_compute_units
    groups = max(1, min(groups, -(-a.size // rwg)))
    partial = cla.empty(queue, (groups,), np.float32)
    out = cla.empty(queue, (), np.float32)
    return _runner(queue, [
        _launcher(queue, prg, "dot_partial",
                  (a.data, b.data, partial.data, np.int32(a.size)),
                  (groups * rwg,), (rwg,)),
        _launcher(queue, prg, "sum_partials", (partial.data, out.data, np.int32(groups)),
                  (rwg,), (rwg,))], out)


def _rows(queue, prg, name: str, x, out_shape: tuple) -> Runner:
    """One work-group per row of *x* (row sums, softmax)."""
    rwg = _rwg(queue)
    out = cla.empty(queue, out_shape, np.float32)
    nrows, ncols = x.shape
    return _runner(queue, [_launcher(queue, prg, name,
                                     (x.data, out.data, np.int32(ncols)),
                                     (nrows * rwg,), (rwg,))], out)


def _cols(queue, prg, x) -> Runner:
    nrows, ncols = x.shape
    items = -(-ncols // _cpi(queue))
    wg = _wg(queue) if _is_gpu(queue) else 1
    out = cla.empty(queue, (ncols,), np.float32)
    return _runner(queue, [_launcher(queue, prg, "col_sums",
                                     (x.data, out.data, np.int32(nrows), np.int32(ncols)),
                                     (_round_up(items, wg),), (wg,))], out)


def _heat(queue, prg, u) -> Runner:
    """HEAT_STEPS launches, ping-pong between two buffers (the input is kept)."""
    n = u.shape[0]
    if u.shape != (n, n):
        # (the kernel is square-only: other shapes would write past the arrays)
        raise NotApplicable("the hand-written heat step works on square grids only")
    bufs = [cla.empty(queue, u.shape, np.float32) for _ in range(2)]
    if _is_gpu(queue):
        lsize = (32, 8)
        gsize = (_round_up(n, 32), _round_up(n, 8))
    else:
        lsize, gsize = None, (n, n)
    # one kernel object per (source, destination) pair, so args are set once
    pairs = [(u, bufs[0])] + [(bufs[k % 2], bufs[(k + 1) % 2]) for k in range(2)]
    launch = [_launcher(queue, prg, "heat_step", (src.data, dst.data, np.int32(n)),
                        gsize, lsize) for src, dst in pairs]
    order = [launch[0]] + [launch[1 + (k - 1) % 2] for k in range(1, HEAT_STEPS)]
    return _runner(queue, order, bufs[(HEAT_STEPS - 1) % 2])


def _matmul(queue, prg, a, b) -> Runner:
    n = a.shape[0]
    if a.shape != (n, n) or b.shape != (n, n):
        # (the classic kernel is square-only: other shapes would read past the arrays)
        raise NotApplicable("the hand-written matmul multiplies square matrices only")
    out = cla.empty(queue, (n, n), np.float32)
    g = _round_up(n, MATMUL_TILE)
    return _runner(queue, [_launcher(queue, prg, "matmul_tiled",
                                     (a.data, b.data, out.data, np.int32(n)),
                                     (g, g), (MATMUL_TILE, MATMUL_TILE))], out)


def _transpose(queue, prg, a) -> Runner:
    n = a.shape[0]
    if a.shape != (n, n):
        # (the kernel is square-only: other shapes would read past the array)
        raise NotApplicable("the hand-written transpose works on square matrices only")
    out = cla.empty(queue, (n, n), np.float32)
    blocks = -(-n // TD)
    return _runner(queue, [_launcher(queue, prg, "scaled_transpose",
                                     (a.data, out.data, np.int32(n)),
                                     (blocks * TD, blocks * TROWS), (TD, TROWS))], out)


def runner(queue, case: Case, inputs: list[np.ndarray]) -> Runner:
    """The hand-written kernel(s) of *case* on device copies of *inputs*."""
    prg = program(queue)
    dev = [cla.to_device(queue, x) for x in inputs]
    x = dev[0]
    by_name = {
        "W1": lambda: _elementwise(queue, prg, "w1", dev, x.shape),
        "W2": lambda: _elementwise(queue, prg, "w2", dev, x.shape),
        "W3 dot": lambda: _dot(queue, prg, *dev),
        "W3 rows": lambda: _rows(queue, prg, "row_sums", x, (x.shape[0],)),
        "W3 cols": lambda: _cols(queue, prg, x),
        "W4": lambda: _rows(queue, prg, "softmax_rows", x, x.shape),
        "W5": lambda: _heat(queue, prg, x),
        "W6": lambda: _matmul(queue, prg, *dev),
        "W7": lambda: _transpose(queue, prg, x),
        "W8": lambda: _elementwise(queue, prg, "add", dev, x.shape),
    }
    name = case.workload if case.workload == "W8" else case.name
    if name not in by_name:
        raise NotApplicable(case.name)
    return by_name[name]()


def copy_runner(queue, nelements: int) -> Runner:
    """``dst = src`` with float4 loads and stores over *nelements* floats
    (rounded up to a multiple of 4); moves 2 x 4 x that many bytes."""
    n4 = -(-nelements // 4)
    host = np.arange(4 * n4, dtype=np.float32)
    src = cla.to_device(queue, host)
    dst = cla.empty(queue, (4 * n4,), np.float32)
    wg = _wg(queue)
    r = _runner(queue, [_launcher(queue, program(queue, copy=True), "copy4",
                                  (src.data, dst.data, np.int32(n4)),
                                  (_round_up(n4, wg),), (wg,))], dst)
    r.expected = host
    r.nbytes = 2 * host.nbytes
    return r
