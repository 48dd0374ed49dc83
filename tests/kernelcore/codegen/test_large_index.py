"""Arrays and loops beyond 2**31 - 1 elements.

Cheap tests look at generated code and at the checks: kernels made with
``index_dtype=np.int64`` declare 64-bit indices, int32 kernels keep their
code, fixed sizes beyond int32 switch a kernel to 64-bit indices, and
parametric ones are checked when the kernel is called.

The tests marked ``slow`` compute over more than 2**31 elements on the
device (about 2.2 GB of memory, 30 s on two CPU cores). PoCL's CPU device
allocates at most 2 GiB per buffer, so no single buffer holds 2**31 bytes:
the large values are concatenations of two device arrays, or computed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.runtime.invoke import get_executor
from kernelcore.target.c import CTarget, ExecutableCTarget

#: more elements than 32-bit indices reach
N = 2**31 + 1000


def _table(**kwargs) -> lp.LoopKernel:
    """A parallel kernel with a parametric 2-D domain, a row sum and argmax."""
    knl = lp.make_kernel(
        ["{ [i, j]: 0<=i<n and 0<=j<m }", "{ [k]: 0<=k<m }"],
        "out[i, j] = 2*a[i, j] + sum(k, a[i, k]) + argmax(k, a[i, k]) + i", **kwargs)
    knl = lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
    return lp.add_dtypes(knl, {"a": np.float32})


def _code(knl) -> str:
    return lp.generate_code_v2(knl).device_code()


# {{{ generated code

def test_int64_kernel_declares_64_bit_indices():
    code = _code(_table(index_dtype=np.int64))
    assert "#define lid(N) ((long) get_local_id(N))" in code
    assert "#define gid(N) ((long) get_group_id(N))" in code
    assert "long const m" in code and "long const n" in code
    assert "for (long j = 0;" in code and "for (long k = 0;" in code
    assert re.search(r"long acc_k\w*_idx;", code)
    assert not re.search(r"\bint\b", code)


def test_int32_kernel_code_is_unchanged():
    code = _code(_table())
    assert code == _code(_table(index_dtype=np.int32))
    assert "#define lid(N) ((int) get_local_id(N))" in code
    assert "int const m" in code and "for (int j = 0;" in code
    assert re.search(r"int acc_k\w*_idx;", code)
    assert "long" not in code


def test_c_target_declares_64_bit_indices():
    code = _code(_table(index_dtype=np.int64, target=CTarget()))
    assert "for (int64_t _kc_gid0 = 0;" in code and "for (int64_t _kc_lid0 = 0;" in code
    assert "int64_t const n" in code and "for (int64_t j = 0;" in code
    assert not re.search(r"\bint\b", code)
    assert "for (int _kc_gid0 = 0;" in _code(_table(target=CTarget()))


def test_index_dtype_is_int32_or_int64():
    with pytest.raises(lp.KernelcoreError, match="index_dtype"):
        lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = i", index_dtype=np.int16)
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = i", index_dtype="int64")
    assert knl.index_dtype == np.int64
    assert lp.split_iname(knl, "i", 4).index_dtype == np.int64

# }}}


# {{{ fixed sizes: 64-bit indices without asking

@pytest.mark.parametrize("domain, insn, wide", [
    # the last index 2**31 - 2 fits (and a loop up to it ends)
    ("{ [i]: 0<=i<2147483647 }", "s[0] = sum(i, i)", False),
    ("{ [i]: 0<=i<2147483648 }", "s[0] = sum(i, i)", True),
    ("{ [i]: -2147483648<=i<0 }", "s[0] = sum(i, i)", True),
    # an array beyond int32 indexed by a short loop
    ("{ [i]: 0<=i<3000 }", "out[i] = a[1000000*i]", True),
    ("{ [i]: 0<=i<3000 }", "out[i] = a[100000*i]", False),
])
def test_fixed_sizes_switch_to_64_bit(domain, insn, wide):
    knl = lp.make_kernel(domain, insn)
    if "a" in knl.arg_dict:
        knl = lp.add_dtypes(knl, {"a": np.float32})
    expected = np.int64 if wide else np.int32
    assert lp.preprocess_kernel(knl).index_dtype == expected
    assert ("((long) get_local_id" in _code(knl)) == wide


def test_split_fixed_domain_switches_to_64_bit():
    """After split_iname no loop index is large, but the index they combine
    into (computed by loop bounds and guards) is."""
    knl = lp.make_kernel("{ [i]: 0<=i<3000000000 }", "s[0] = sum(i, i)")
    knl = lp.split_iname(knl, "i", 2**15, outer_tag="g.0")
    assert lp.preprocess_kernel(knl).index_dtype == np.int64
    assert "long acc_i_inner" in _code(knl)

# }}}


# {{{ parametric sizes: checked when called

@pytest.mark.parametrize("target", [None, ExecutableCTarget()], ids=["opencl", "c"])
def test_parametric_array_checked_when_called(queue, target):
    knl = lp.make_kernel("{ [i, j]: 0<=i<n and 0<=j<m }", "t[i, j] = i + j",
                         target=target)
    _, (t,) = knl(queue, n=3, m=4)
    assert np.array_equal(t, np.add.outer(np.arange(3), np.arange(4)))
    with pytest.raises(lp.InvocationError,
                       match=r"(?s)n=50000.*array 't'.*index_dtype=np\.int64"):
        knl(queue, n=50000, m=50000)


def test_parametric_domain_checked_when_called(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<4*n }", "s[0] = sum(i, 1.0)")
    assert knl(queue, n=5)[1][0][0] == 20
    with pytest.raises(lp.InvocationError, match="loop index 'i'"):
        knl(queue, n=2**29)


def test_checks_only_where_sizes_can_exceed_int32():
    def checks(knl) -> bool:
        return "raise_index_overflow" in get_executor(knl, {}).wrapper_source
    # an int32 n bounds the loop and the array
    assert not checks(lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = i"))
    assert checks(lp.make_kernel("{ [i]: 0<=i<2*n }", "out[i] = i"))
    assert not checks(lp.make_kernel("{ [i]: 0<=i<2*n }", "out[i] = i",
                                     index_dtype=np.int64))
    assert checks(lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = i",
                                 [lp.ValueArg("n", np.int64), "..."]))

# }}}


# {{{ lazyarray: kernels reaching 2**31 - 1 elements get 64-bit indices

def _kernels(value) -> list:
    from lazyarray.run import plan
    return [step.kernel for step in plan([value.node])]


def test_lazyarray_kernels_of_large_values_are_64_bit():
    import lazyarray as la
    big = (la.arange(N) % 251).astype(np.uint8)
    small = (la.arange(1000) % 251).astype(np.uint8)
    for value in (big + 1, big.sum(dtype=np.int64), big.reshape(-1, 8)[-5:],
                  big[-10:]):
        assert [k.index_dtype for k in _kernels(value)] == [np.int64]
    for value in (small + 1, small.sum(), small.reshape(-1, 8)[-5:]):
        assert [k.index_dtype for k in _kernels(value)] == [np.int32]

# }}}


# {{{ slow: computing over more than 2**31 elements

def _pattern(start: int, stop: int) -> np.ndarray:
    """The values ``k % 251`` (uint8) at positions k of the large array."""
    return (np.arange(start, stop) % 251).astype(np.uint8)


@pytest.fixture(scope="module")
def large():
    """N uint8 values ``k % 251``: two device arrays (each below PoCL's 2 GiB
    buffer limit) concatenated lazily."""
    import lazyarray as la
    half = 2**30
    head = (la.arange(half) % 251).astype(np.uint8).compute()
    tail = ((la.arange(N - half) + half) % 251).astype(np.uint8).compute()
    return la.concatenate([head, tail])


@pytest.mark.slow
def test_kernelcore_sum_beyond_int32(queue):
    knl = lp.make_kernel(f"{{ [i]: 0<=i<{N} }}", "s[0] = sum(i, i)")
    knl = lp.split_iname(knl, "i", 2**15, outer_tag="g.0")
    _, (s,) = knl(queue)
    assert s[0] == N * (N - 1) // 2


@pytest.mark.slow
def test_elementwise_tail(large):
    assert large.shape == (N,)
    assert np.array_equal((large + 1)[-3000:].get(), _pattern(N - 3000, N) + 1)


@pytest.mark.slow
def test_sum(large):
    periods, rest = divmod(N, 251)
    assert int(large.sum(dtype=np.int64).get()) == \
        periods * (250 * 251 // 2) + rest * (rest - 1) // 2


@pytest.mark.slow
def test_count_of_booleans(large):
    periods, rest = divmod(N, 251)
    assert int((large > 100).sum().get()) == periods * 150 + max(0, rest - 101)


@pytest.mark.slow
def test_reshape_and_slice_near_the_end(large):
    rows = large.reshape(-1, 8)
    assert rows.shape == (N // 8, 8)
    assert np.array_equal(rows[-5:].get(), _pattern(N - 40, N).reshape(5, 8))
    assert np.array_equal(large[N - 2000::7].get(), _pattern(N - 2000, N)[::7])


@pytest.mark.slow
def test_iota_sum():
    import lazyarray as la
    assert int(la.arange(N).sum().get()) == N * (N - 1) // 2

# }}}
