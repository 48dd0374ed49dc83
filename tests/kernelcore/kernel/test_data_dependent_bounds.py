"""Loops whose bounds the kernel computes (loopy's data-dependent domains):
``<> row_len = ...`` used as a parameter of ``{[jj]: 0<=jj<row_len}``. The
loop runs inside the loops of the instruction that writes its bound, after
it; results are compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host

ROWSTARTS = np.array([0, 3, 3, 7, 8, 12, 20], np.int32)


def _csr_row_sum():
    return lp.make_kernel(
        ["{[i]: 0<=i<n}", "{[jj]: 0<=jj<row_len}"],
        """
        <> row_start = rowstarts[i]
        <> row_len = rowstarts[i+1] - row_start
        rowsum[i] = sum(jj, values[row_start + jj])
        """,
        [lp.GlobalArg("rowstarts", np.int32, shape="n+1"),
         lp.GlobalArg("values", np.float64, shape="nnz"),
         lp.GlobalArg("rowsum", np.float64, shape="n"),
         lp.ValueArg("nnz", np.int32), ...],
        assumptions="n>=1")


@pytest.mark.parametrize("parallel", [False, True])
def test_csr_row_sums(queue, parallel):
    knl = _csr_row_sum()
    if parallel:
        knl = lp.split_iname(knl, "i", 4, outer_tag="g.0", inner_tag="l.0")
    values = np.random.default_rng(1).random(20)
    _, (out,) = knl(queue, rowstarts=ROWSTARTS, values=values)
    expected = [values[a:b].sum() for a, b in zip(ROWSTARTS[:-1], ROWSTARTS[1:])]
    np.testing.assert_allclose(host(out), expected)
    assert "row_len" not in {a.name for a in knl.default_entrypoint.args}


def test_writes_in_a_loop_of_computed_length(queue):
    knl = lp.make_kernel(
        ["{[i]: 0<=i<n}", "{[jj]: 0<=jj<row_len}"],
        """
        <> row_len = lengths[i]
        a[i, jj] = i + 10*jj
        """,
        [lp.GlobalArg("lengths", np.int32, shape="n"),
         lp.GlobalArg("a", np.int32, shape="n, n"), ...])
    dom = knl.default_entrypoint
    assert dom.parents_per_domain() == [None, 0]
    lengths = np.array([0, 2, 5, 1, 3], np.int32)
    a = np.full((5, 5), -1, np.int32)
    _, (res,) = knl(queue, lengths=lengths, a=a)
    expected = np.full((5, 5), -1, np.int32)
    for i, n in enumerate(lengths):
        expected[i, :n] = i + 10*np.arange(n)
    np.testing.assert_array_equal(host(res), expected)


def test_hardware_axis_over_computed_bound_raises():
    knl = lp.split_iname(_csr_row_sum(), "jj", 4, outer_tag="g.1", inner_tag="l.1")
    with pytest.raises(lp.LoopyError, match="data-dependent bounds"):
        lp.generate_code_v2(lp.add_dtypes(knl, {"values": np.float64}))


def test_cache_mode_switches_the_disk_cache_for_a_block():
    before = lp.CACHING_ENABLED
    with lp.CacheMode(not before):
        assert lp.CACHING_ENABLED is (not before)
    assert lp.CACHING_ENABLED is before


def test_inames_inferred_through_temporaries_and_computed_bounds(queue):
    """loopy's inference: reading a temporary written in loop ``b`` (not
    indexed by it) puts the reader in ``b``; so does a loop bounded by such a
    temporary. Shape parameters become arguments; arrays declared without a
    shape are indexed as plain pointers."""
    knl = lp.make_kernel(
        ["{[b]: 0<=b<nboxes}", "{[isrc]: start<=isrc<end}"],
        """
        <> box = boxes[b]
        <> start = starts[box]
        <> end = start + counts[box]
        out[b] = sum(isrc, w[isrc])  {id=total}
        """,
        [lp.GlobalArg("starts,counts", np.int32, shape=None),
         lp.GlobalArg("w", np.float64, shape="nw"),
         lp.GlobalArg("out", np.float64, shape="nboxes"), "..."])
    entry = knl.default_entrypoint
    assert "b" in entry.id_to_insn["total"].within_inames
    assert "nw" in {a.name for a in entry.args}
    boxes = np.array([2, 0, 1], np.int32)
    starts = np.array([0, 3, 5], np.int32)
    counts = np.array([3, 2, 4], np.int32)
    w = np.arange(9.0)
    _, (out,) = knl(queue, boxes=boxes, starts=starts, counts=counts, w=w)
    expected = [w[starts[k]:starts[k] + counts[k]].sum() for k in boxes]
    np.testing.assert_allclose(host(out), expected)


def test_block_inames_are_final():
    knl = lp.make_kernel(
        "{[i, j]: 0<=i, j<4}",
        """
        for i
            for j
                <> t[i] = 2
            end
            out[i] = t[i]  {id=read}
        end
        """, seq_dependencies=True)
    assert knl.default_entrypoint.id_to_insn["read"].within_inames == {"i"}


def test_array_without_shape_is_written_through(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[2*i] = a[i]",
                         [lp.GlobalArg("out", np.float32, shape=None),
                          lp.GlobalArg("a", np.float32, shape="n"), ...])
    out = np.zeros(10, np.float32)
    a = np.arange(1, 6, dtype=np.float32)
    _, (res,) = knl(queue, a=a, out=out)
    expected = np.zeros(10, np.float32)
    expected[::2] = a
    np.testing.assert_array_equal(host(res), expected)
