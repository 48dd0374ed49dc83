"""chunk_iname: a loop split into a fixed number of contiguous chunks of
nearly equal length; every index is still visited once and the kernel
computes what NumPy does."""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest
from pymbolic import evaluate

import kernelcore as lp
from kernelcore.diagnostic import KernelcoreError
from tests.helpers import host


def _kernel(lo: int | None, n: int | None):
    knl = lp.make_kernel("{ [i]: lo<=i<n }", "out[i] = 2*a[i] + i",
                         [lp.GlobalArg("out,a", np.float32, shape=("n",)), ...])
    fixed = {k: v for k, v in (("lo", lo), ("n", n)) if v is not None}
    return lp.fix_parameters(knl, **fixed) if fixed else knl


def _expected(a: np.ndarray, lo: int) -> np.ndarray:
    out = np.zeros_like(a)
    out[lo:] = 2 * a[lo:] + np.arange(lo, len(a))
    return out


@pytest.mark.parametrize(("lo", "n", "chunks"),
                         [(0, 130, 3), (0, 4, 3), (2, 17, 5), (0, 2, 3), (3, 9, 1)])
def test_chunks_in_local_axis_match_numpy(queue, lo, n, chunks):
    knl = lp.chunk_iname(_kernel(lo, n), "i", chunks, inner_tag="l.0")
    knl = lp.prioritize_loops(knl, "i_outer, i_inner")
    a = np.arange(n, dtype=np.float32) * 0.5
    _, (out,) = knl(queue, a=a, out=np.zeros(n, np.float32))
    np.testing.assert_array_equal(host(out), _expected(a, lo))


@pytest.mark.parametrize("n", [1, 7, 30, 31, 32])
def test_chunks_with_symbolic_bounds_match_numpy(queue, n):
    knl = lp.chunk_iname(_kernel(None, None), "i", 4)
    a = np.linspace(1, 2, n, dtype=np.float32)
    _, (out,) = knl(queue, a=a, out=np.zeros(n, np.float32), lo=1)
    np.testing.assert_allclose(host(out), _expected(a, 1))


def test_chunks_are_contiguous_and_nearly_equal():
    # 10 indices in 3 chunks: 4 + 3 + 3, in order
    knl = lp.make_kernel("{ [i]: 0<=i<10 }", "out[i] = 1",
                         [lp.GlobalArg("out", np.int32, shape=(10,))])
    entry = lp.chunk_iname(knl, "i", 3, outer_iname="c", inner_iname="p").default_entrypoint
    assert "i" not in entry.all_inames()
    (insn,) = entry.instructions
    index = insn.assignee.index_tuple[0]
    chunks: dict[int, list[int]] = {}

    def visit(point):
        c, p = (point.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(2))
        chunks.setdefault(c, []).append(evaluate(index, {"c": c, "p": p}))

    (domain,) = entry.domains
    isl.Set.from_basic_set(domain).foreach_point(visit)
    assert {c: sorted(v) for c, v in chunks.items()} == {
        0: [0, 1, 2, 3], 1: [4, 5, 6], 2: [7, 8, 9]}


def test_bounds_depending_on_another_loop_are_refused():
    knl = lp.make_kernel("{ [i, j]: 0<=i<8 and 0<=j<i }", "out[i, j] = 1",
                         [lp.GlobalArg("out", np.float32, shape=(8, 8))])
    with pytest.raises(KernelcoreError, match="box"):
        lp.chunk_iname(knl, "j", 2)
