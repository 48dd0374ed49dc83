"""Naming and splitting array axes with their inames, and padded strides
(loopy's set_array_axis_names, split_array_dim, find_padding_multiple,
add_padding, add_padding_to_avoid_bank_conflicts)."""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array
import pytest

import kernelcore as lp
from kernelcore.transform.data import add_padding_to_avoid_bank_conflicts
from tests.helpers import host


def _twice():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "a[i] = 2*b[i]")
    return lp.add_and_infer_dtypes(knl, {"b": np.float32})


def test_split_array_dim_splits_the_iname_too(queue):
    knl = lp.set_array_axis_names(_twice(), "a,b", "i")
    knl = lp.split_array_dim(knl, [("a", 0), ("b", 0)], 4, split_kwargs={"slabs": (0, 1)})
    k = knl.default_entrypoint
    assert {"i_outer", "i_inner"} <= set(k.all_inames()) and "i" not in k.all_inames()
    assert k.arg_dict["a"].dim_names == ("i_outer", "i_inner")
    assert k.arg_dict["a"].element_strides() == (4, 1)
    b = np.arange(30, dtype=np.float32)
    _, (a,) = knl(queue, b=np.concatenate([b, np.zeros(2, np.float32)]).reshape(8, 4),
                  n=30)
    np.testing.assert_array_equal(host(a).reshape(-1)[:30], 2 * b)


def test_split_array_dim_needs_inames_as_indices():
    knl = lp.make_kernel("{[i]: 0<=i<8}", "a[i+1] = 1")
    with pytest.raises(lp.LoopyError, match="not indexed by an iname"):
        lp.split_array_dim(knl, ("a", 0), 4)


def test_padding_multiple_and_padded_stride(queue):
    knl = lp.make_kernel("{[k, j]: 0<=k<K and 0<=j<36}", "f[k, j] = k + 0.5*j",
                         [lp.GlobalArg("f", np.float32, shape=("K", 36)), "..."])
    # strides of 36*m elements padded to 64: 5 is the first m wasting <= 10%
    assert lp.find_padding_multiple(knl, "f", 0, 64) == 5
    padded = lp.add_padding(knl, "f", 0, 64)
    assert padded.default_entrypoint.arg_dict["f"].element_strides() == (64, 1)
    storage = cl_array.zeros(queue, (7, 64), np.float32)
    padded(queue, f=storage[:, :36], K=7)
    k, j = np.meshgrid(np.arange(7), np.arange(36), indexing="ij")
    np.testing.assert_allclose(storage.get()[:, :36], k + 0.5 * j)
    assert not storage.get()[:, 36:].any()


def test_no_bank_padding_where_local_memory_is_global(queue):
    knl = lp.split_iname(_twice(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.add_prefetch(knl, "b", ["i_inner"], default_tag="l.auto")
    device = queue.device
    padded = add_padding_to_avoid_bank_conflicts(knl, device)
    if device.local_mem_type != cl.device_local_mem_type.LOCAL:
        assert padded.default_entrypoint.temporary_variables == \
            knl.default_entrypoint.temporary_variables
    b = np.arange(64, dtype=np.float32)
    _, (a,) = padded(queue, b=b)
    np.testing.assert_array_equal(host(a), 2 * b)


def test_concatenate_arrays(queue):
    knl = lp.make_kernel(
        "{[i, j]: 0<=i<10 and 0<=j<4}",
        """
        <> a[i] = x[i]    {id=init_a}
        <> b[j] = 2*x[j]  {id=init_b}
        out[i] = a[i] + b[i % 4] {id=use, dep=init_a:init_b}
        """)
    knl = lp.add_dtypes(knl, {"x": np.float64})
    merged = lp.concatenate_arrays(knl, ["a", "b"], "c")
    temps = merged.default_entrypoint.temporary_variables
    assert temps["c"].shape == (14,) and "a" not in temps and "b" not in temps
    x = np.linspace(0, 1, 10)
    _, (out,) = merged(queue, x=x)
    np.testing.assert_allclose(host(out), x + 2 * x[np.arange(10) % 4])
    with pytest.raises(lp.LoopyError, match="no temporary"):
        lp.concatenate_arrays(knl, ["a", "x"])
