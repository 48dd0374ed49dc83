"""Temporaries, prefetching, precomputation and synchronization.

Follows the tutorial sections "Precomputation, Storage, and Temporary
Variables", "Synchronization" and the "Write races" / "Barriers" parts of
"Common Problems": every example is run on the device and compared with
NumPy, and the generated OpenCL is checked for the structural facts the
tutorial points out (where a temporary lives, where barriers go, how many
device kernels a global barrier produces).  Beyond the tutorial: tiled
transpose and matrix multiply built from ``add_prefetch``, explicit and
suppressed barriers, global temporaries, precomputed substitution rules, and
the errors raised for names that do not exist.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host

# {{{ helpers

def device_code(knl, dtypes=None):
    if dtypes:
        knl = lp.add_dtypes(knl, dtypes)
    return lp.generate_code_v2(knl).device_code()



def kernel_functions(code):
    """Names of the ``__kernel`` functions in *code*, in order."""
    names = []
    for line in code.splitlines():
        if line.startswith("__kernel"):
            line = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", line)
            m = re.match(r"__kernel\s+void\s+(\w+)\s*\(", line)
            assert m, line
            names.append(m.group(1))
    return names


def line_index(lines, pattern, start=0):
    """Index of the first line at or after *start* matching regex *pattern*."""
    for k in range(start, len(lines)):
        if re.search(pattern, lines[k]):
            return k
    raise AssertionError(f"no line matching {pattern!r} in:\n" + "\n".join(lines))


def has_barrier(code, fence="CLK_LOCAL_MEM_FENCE"):
    return re.search(rf"\bbarrier\s*\(\s*{fence}", code) is not None


def linearization_section(knl_text):
    text = str(knl_text)
    assert "SCHEDULE:" in text, text
    return text[text.index("SCHEDULE:"):]


# }}}


# {{{ explicit private temporaries

def test_private_temporary_typed(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <float32> a_temp = sin(a[i])
        out1[i] = a_temp {id=out1}
        out2[i] = sqrt(1-a_temp*a_temp) {dep=out1}
        """)
    code = device_code(knl, {"a": np.float32})
    # a private scalar, declared once at the top of the kernel body
    assert re.search(r"^\s*float a_temp;", code, re.M), code
    assert "__local" not in code
    assert re.search(r"a_temp = sin\(a\[i\]\);", code), code
    assert not has_barrier(code)

    for n in (0, 1, 37):
        a = rng.uniform(-1, 1, n).astype(np.float32)
        evt, (out1, out2) = knl(queue, a=a)
        out1, out2 = host(out1), host(out2)
        assert out1.dtype == np.float32 and out2.dtype == np.float32
        np.testing.assert_allclose(out1, np.sin(a), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out2, np.sqrt(1 - np.sin(a)**2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_private_temporary_type_inferred(queue, rng, dtype):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <> a_temp = sin(a[i])
        out1[i] = a_temp
        out2[i] = sqrt(1-a_temp*a_temp)
        """)
    code = device_code(knl, {"a": dtype})
    ctype = "float" if dtype == np.float32 else "double"
    assert re.search(rf"^\s*{ctype} a_temp;", code, re.M), code

    a = rng.uniform(-1, 1, 50).astype(dtype)
    evt, (out1, out2) = knl(queue, a=a)
    out1, out2 = host(out1), host(out2)
    assert out1.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out1, np.sin(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(out2, np.sqrt(1 - np.sin(a)**2), rtol=tol, atol=tol)


def test_temporary_may_not_shadow_argument():
    with pytest.raises(lp.KernelcoreError, match="'b'"):
        lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            <> b = 2*c[i]
            out[i] = b
            """,
            [lp.GlobalArg("b", np.float64, shape=("n",)), "..."])


def test_temporary_may_not_shadow_iname():
    with pytest.raises(lp.KernelcoreError, match="'i'"):
        lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            <> i = 2*c[i]
            out[i] = i
            """)


def test_temporary_may_not_shadow_domain_parameter(queue):
    """``n`` is the domain's parameter: a temporary of that name must be refused
    with a kernelcore error (not fail later inside the generated invoker)."""
    with pytest.raises(lp.KernelcoreError, match="'n'"):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            <> n = 2*c[i]
            out[i] = n
            """)
        knl(queue, c=np.arange(4.0))


# }}}


# {{{ temporaries in local memory

def _local_temp_kernel():
    return lp.make_kernel(
        "{ [i_outer,i_inner, k]:  "
        "0<= 16*i_outer + i_inner <n and 0<= i_inner,k <16}",
        """
        <> a_temp[i_inner] = a[16*i_outer + i_inner] {priority=10}
        out[16*i_outer + i_inner] = sum(k, a_temp[k])
        """)


def _check_local_temp_code(code, name):
    lines = code.splitlines()
    assert re.search(rf"__local float {name}\[16\];", code), code
    write = line_index(lines, rf"\b{name}\[lid\(0\)\] = a\[")
    bar = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", write)
    loop = line_index(lines, r"for \(int k = 0; k <= 15; \+\+k\)", bar)
    read = line_index(lines, rf"\b{name}\[", loop)
    assert write < bar < loop <= read
    # the barrier is not inside a conditional that only some work-items enter
    assert lines[bar].startswith("  barrier"), lines[bar]


@pytest.mark.parametrize("explicit_scope", [True, False])
def test_local_temporary(queue, rng, explicit_scope):
    knl = _local_temp_kernel()
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    if explicit_scope:
        knl = lp.set_temporary_scope(knl, "a_temp", "local")
    # without set_temporary_scope, the write indexed by an l.0 iname makes it local
    code = device_code(knl, {"a": np.float32})
    _check_local_temp_code(code, "a_temp")
    assert re.search(r"\bfloat acc_\w*;", code), code

    # every group reads all 16 entries of a_temp: use whole groups only
    for n in (16, 64):
        a = rng.uniform(-1, 1, n).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        ref = np.repeat(a.reshape(-1, 16).sum(axis=1), 16)
        np.testing.assert_allclose(host(out), ref, rtol=1e-5, atol=1e-5)


def test_local_temporary_write_cl_prints_code(queue, rng, capsys):
    knl = _local_temp_kernel()
    knl = lp.rename_callable(knl, "loopy_kernel", "local_temp_write_cl_demo")
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    knl = lp.set_temporary_scope(knl, "a_temp", "local")
    knl = lp.set_options(knl, "write_cl")
    a = rng.uniform(-1, 1, 32).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    printed = capsys.readouterr().out
    assert "#define lid(N) ((int) get_local_id(N))" in printed
    assert "__local float a_temp[16];" in printed
    assert "barrier(CLK_LOCAL_MEM_FENCE)" in printed
    np.testing.assert_allclose(host(out), np.repeat(a.reshape(-1, 16).sum(1), 16),
                               rtol=1e-5, atol=1e-5)


def test_explicit_local_temporary_variable(queue, rng):
    """A local TemporaryVariable given in the kernel data, reversed within groups."""
    knl = lp.make_kernel(
        "{ [i_outer, i_inner]: 0<=i_outer<ng and 0<=i_inner<16 }",
        """
        t[i_inner] = a[16*i_outer + i_inner] {id=w}
        out[16*i_outer + i_inner] = t[15 - i_inner] {id=r, dep=w}
        """,
        [lp.TemporaryVariable("t", np.float32, shape=(16,),
                              address_space=lp.AddressSpace.LOCAL),
         lp.GlobalArg("a", np.float32, shape=("16*ng",)),
         lp.GlobalArg("out", np.float32, shape=("16*ng",)),
         "..."])
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    code = device_code(knl)
    assert "__local float t[16];" in code
    lines = code.splitlines()
    w = line_index(lines, r"\bt\[lid\(0\)\] = ")
    b = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", w)
    line_index(lines, r"out\[.*\] = t\[15 \+ -1 \* lid\(0\)\]", b)

    a = rng.uniform(-1, 1, 48).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a.reshape(3, 16)[:, ::-1].ravel())


@pytest.mark.parametrize("nb", [1, 3])
def test_local_temporary_2d_transpose(queue, rng, nb):
    """A 2D local temporary written along (l.1, l.0), read transposed."""
    knl = lp.make_kernel(
        "{[io,jo,ii,ji]: 0<=io,jo<nb and 0<=ii,ji<8}",
        """
        <float32> t[ii, ji] = a[8*io+ii, 8*jo+ji] {id=w}
        out[8*jo+ii, 8*io+ji] = t[ji, ii] {id=r, dep=w}
        """,
        [lp.GlobalArg("a", np.float32, shape=("8*nb", "8*nb")),
         lp.GlobalArg("out", np.float32, shape=("8*nb", "8*nb")),
         "..."])
    knl = lp.tag_inames(knl, dict(io="g.1", jo="g.0", ii="l.1", ji="l.0"))
    code = device_code(knl)
    assert "reqd_work_group_size(8, 8, 1)" in code
    # 8x8 entries deduced from the accesses (stored flat or as a 2D array)
    assert re.search(r"__local float t\[(64|8\]\[8)\];", code), code
    lines = code.splitlines()
    w = line_index(lines, r"\bt\[.*\] = a\[")
    b = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", w)
    line_index(lines, r"\bout\[.*\] = t\[", b)
    a = rng.uniform(-1, 1, (8 * nb, 8 * nb)).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a.T)


def test_set_temporary_scope_private_keeps_private(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <> t = 3*a[i]
        out[i] = t + 1
        """)
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.set_temporary_scope(knl, "t", "private")
    code = device_code(knl, {"a": np.float64})
    assert re.search(r"^\s*double t;", code, re.M), code
    assert "__local" not in code and not has_barrier(code)
    a = rng.uniform(-1, 1, 35)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), 3 * a + 1)


# }}}


# {{{ prefetching

def _prefetch_base_kernel():
    knl = lp.make_kernel(
        "{ [i_outer,i_inner, k]:  "
        "0<= 16*i_outer + i_inner <n and 0<= i_inner,k <16}",
        """
        out[16*i_outer + i_inner] = sum(k, a[16*i_outer + i_inner])
        """)
    return lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))


@pytest.mark.parametrize("n", [1, 16, 37])
def test_prefetch_without_sweep_is_private_scalar(queue, rng, n):
    knl_pf = lp.add_prefetch(_prefetch_base_kernel(), "a")
    code = device_code(knl_pf, {"a": np.float32})
    assert re.search(r"^\s*float a_fetch;", code, re.M), code
    assert "__local" not in code
    assert not has_barrier(code)
    lines = code.splitlines()
    fetch = line_index(lines, r"\ba_fetch = a\[")
    loop = line_index(lines, r"for \(int k = 0; k <= 15; \+\+k\)", fetch)
    line_index(lines, r"acc_\w* = acc_\w* \+ a_fetch;", loop)

    a = rng.uniform(-1, 1, n).astype(np.float32)
    evt, (out,) = knl_pf(queue, a=a)
    np.testing.assert_allclose(host(out), 16 * a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 16, 37])
def test_prefetch_swept_is_local(queue, rng, n):
    knl_pf = lp.add_prefetch(_prefetch_base_kernel(), "a", ["i_inner"], default_tag="l.0")
    code = device_code(knl_pf, {"a": np.float32})
    assert "__local float a_fetch[16];" in code
    lines = code.splitlines()
    fetch = line_index(lines, r"\ba_fetch\[lid\(0\)\] = a\[")
    bar = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", fetch)
    loop = line_index(lines, r"for \(int k = 0; k <= 15; \+\+k\)", bar)
    line_index(lines, r"acc_\w* = acc_\w* \+ a_fetch\[lid\(0\)\];", loop)

    a = rng.uniform(-1, 1, n).astype(np.float32)
    evt, (out,) = knl_pf(queue, a=a)
    np.testing.assert_allclose(host(out), 16 * a, rtol=1e-5, atol=1e-6)


def test_prefetch_is_a_new_kernel_original_unchanged():
    knl = _prefetch_base_kernel()
    before = str(knl)
    knl_pf = lp.add_prefetch(knl, "a", ["i_inner"], default_tag="l.0")
    assert str(knl) == before
    assert "a_fetch" not in knl.temporary_variables
    assert "a_fetch" in knl_pf.temporary_variables


# }}}


# {{{ write race (Common Problems)

def _transpose_kernel():
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i,j<n }",
        """
        out[j,i] = a[i,j]
        """, assumptions="n>=1", name="transpose")
    knl = lp.split_iname(knl, "j", 16, inner_tag="l.1", outer_tag="g.0")
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.1")
    return knl


def test_write_race_prefetch_one_inner_iname(queue, rng):
    knl = lp.add_prefetch(_transpose_kernel(), "a", "i_inner")
    a = rng.uniform(size=(20, 20)).astype(np.float32)
    with pytest.raises(lp.WriteRaceConditionWarning) as excinfo:
        knl(queue, a=a)
    msg = str(excinfo.value)
    assert "'j_inner'" in msg
    assert "a_fetch_rule" in msg
    assert "'a_fetch'" in msg
    assert "transpose" in msg
    assert "write_race_local(a_fetch_rule)" in msg
    # and the same from code generation alone
    with pytest.raises(lp.WriteRaceConditionWarning, match="j_inner"):
        device_code(knl, {"a": np.float32})
    assert issubclass(lp.WriteRaceConditionWarning, lp.LoopyWarning)


@pytest.mark.parametrize("n", [1, 15, 16, 37, 64])
def test_tiled_transpose_prefetch_both_inner(queue, rng, n):
    knl = lp.add_prefetch(_transpose_kernel(), "a", ["i_inner", "j_inner"])
    code = device_code(knl, {"a": np.float32})
    assert re.search(r"__local float a_fetch\[", code), code
    assert "reqd_work_group_size(16, 16, 1)" in code
    lines = code.splitlines()
    fetch = line_index(lines, r"\ba_fetch\[.*lid\(0\).*\] = a\[")
    bar = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", fetch)
    line_index(lines, r"\bout\[.*\] = a_fetch\[", bar)

    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a.T)


def test_tiled_transpose_prefetch_untagged_storage(queue, rng):
    """default_tag=None: each work-item fetches the whole tile into private memory."""
    knl = lp.add_prefetch(_transpose_kernel(), "a", ["i_inner", "j_inner"],
                          default_tag=None)
    code = device_code(knl, {"a": np.float32})
    assert "__local" not in code
    assert not has_barrier(code)
    assert re.search(r"for \(int a_dim_\d", code), code
    for n in (1, 23):
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a.T)


def test_prefetch_dim_arg_names(queue, rng):
    knl = lp.add_prefetch(_transpose_kernel(), "a", ["i_inner", "j_inner"],
                          dim_arg_names=["fa_row", "fa_col"], default_tag=None)
    assert {"fa_row", "fa_col"} <= set(knl.all_inames())
    code = device_code(knl, {"a": np.float32})
    assert "fa_row" in code and "fa_col" in code
    a = rng.uniform(-1, 1, (18, 18)).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a.T)


# }}}


# {{{ tiled matrix multiply

def _tiled_matmul():
    knl = lp.make_kernel(
        "{[i,j,k]: 0<=i<n and 0<=j<m and 0<=k<l}",
        "c[i,j] = sum(k, a[i,k]*b[k,j])",
        name="tiled_matmul")
    knl = lp.add_dtypes(knl, {"a": np.float32, "b": np.float32})
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "k", 16)
    knl = lp.add_prefetch(knl, "a", ["k_inner", "i_inner"], default_tag="l.auto")
    knl = lp.add_prefetch(knl, "b", ["j_inner", "k_inner"], default_tag="l.auto")
    return knl


def test_tiled_matmul_code_structure():
    code = device_code(_tiled_matmul())
    assert "reqd_work_group_size(16, 16, 1)" in code
    assert re.search(r"__local float a_fetch\[", code), code
    assert re.search(r"__local float b_fetch\[", code), code
    lines = code.splitlines()
    loop = line_index(lines, r"for \(int k_outer = 0;")
    fa = line_index(lines, r"\ba_fetch\[.*\] = a\[", loop)
    fb = line_index(lines, r"\bb_fetch\[.*\] = b\[", loop)
    bar1 = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", max(fa, fb))
    inner = line_index(lines, r"for \(int k_inner = 0;", bar1)
    # the next k_outer iteration overwrites the tiles: a second barrier, in the loop
    bar2 = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", inner)
    store = line_index(lines, r"\bc\[.*\] = ", bar2)
    assert loop < fa and loop < fb and bar1 < inner < bar2 < store
    assert len(re.findall(r"\bbarrier\(", code)) == 2


@pytest.mark.parametrize("n", [1, 15, 16, 33, 70])
def test_tiled_matmul_square(queue, rng, n):
    knl = _tiled_matmul()
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    evt, (c,) = knl(queue, a=a, b=b)
    c = host(c)
    assert c.dtype == np.float32 and c.shape == (n, n)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4 * max(n, 1))


@pytest.mark.parametrize("shape", [(1, 17, 3), (15, 16, 33), (33, 5, 70), (40, 48, 16)])
def test_tiled_matmul_rectangular(queue, rng, shape):
    n, l_, m = shape
    knl = _tiled_matmul()
    a = rng.uniform(-1, 1, (n, l_)).astype(np.float32)
    b = rng.uniform(-1, 1, (l_, m)).astype(np.float32)
    evt, (c,) = knl(queue, a=a, b=b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(host(c), ref, rtol=1e-4, atol=1e-4 * l_)


# }}}


# {{{ barriers: explicit, automatic, suppressed

def _reverse_in_group(extra_opts="", with_lbarrier=False):
    dep = "b" if with_lbarrier else "w"
    barrier = "... lbarrier {id=b, dep=w}\n" if with_lbarrier else ""
    knl = lp.make_kernel(
        "{ [i_outer,i_inner]: 0<=i_outer<ng and 0<=i_inner<16 }",
        f"""
        <float32> t[i_inner] = a[16*i_outer + i_inner] {{id=w}}
        {barrier}
        out[16*i_outer + i_inner] = t[15 - i_inner] {{id=r, dep={dep}{extra_opts}}}
        """,
        [lp.GlobalArg("a", np.float32, shape=("16*ng",)),
         lp.GlobalArg("out", np.float32, shape=("16*ng",)),
         "..."])
    return lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))


@pytest.mark.parametrize("with_lbarrier", [True, False])
def test_reverse_within_group_barrier(queue, rng, with_lbarrier):
    knl = _reverse_in_group(with_lbarrier=with_lbarrier)
    code = device_code(knl)
    assert "__local float t[16];" in code
    # exactly one barrier, explicit or inserted, between the write and the read
    assert len(re.findall(r"\bbarrier\(", code)) == 1, code
    lines = code.splitlines()
    w = line_index(lines, r"\bt\[lid\(0\)\] = a\[")
    b = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", w)
    line_index(lines, r"\bout\[.*\] = t\[", b)

    for ng in (1, 3):
        a = rng.uniform(-1, 1, 16 * ng).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a.reshape(ng, 16)[:, ::-1].ravel())


def test_nosync_suppresses_barrier():
    knl = _reverse_in_group(extra_opts=", nosync=w")
    code = device_code(knl)
    assert "__local float t[16];" in code
    assert "barrier(" not in code, code


def test_nosync_names_several_instructions():
    knl = lp.make_kernel(
        "{ [i_outer,i_inner]: 0<=i_outer<ng and 0<=i_inner<16 }",
        """
        <float32> t[i_inner] = a[16*i_outer + i_inner] {id=w1}
        <float32> u[i_inner] = 2*a[16*i_outer + i_inner] {id=w2}
        out[16*i_outer + i_inner] = t[15 - i_inner] + u[15 - i_inner] \
            {id=r, dep=w1:w2, nosync=w1:w2}
        """,
        [lp.GlobalArg("a", np.float32, shape=("16*ng",)),
         lp.GlobalArg("out", np.float32, shape=("16*ng",)),
         "..."])
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    code = device_code(knl)
    assert "__local float t[16];" in code and "__local float u[16];" in code
    assert "barrier(" not in code, code


def test_nosync_for_one_of_two_keeps_a_barrier():
    knl = lp.make_kernel(
        "{ [i_outer,i_inner]: 0<=i_outer<ng and 0<=i_inner<16 }",
        """
        <float32> t[i_inner] = a[16*i_outer + i_inner] {id=w1}
        <float32> u[i_inner] = 2*a[16*i_outer + i_inner] {id=w2}
        out[16*i_outer + i_inner] = t[15 - i_inner] + u[15 - i_inner] \
            {id=r, dep=w1:w2, nosync=w1}
        """,
        [lp.GlobalArg("a", np.float32, shape=("16*ng",)),
         lp.GlobalArg("out", np.float32, shape=("16*ng",)),
         "..."])
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    code = device_code(knl)
    assert has_barrier(code), code


def test_local_temporary_reused_in_sequential_loop(queue, rng):
    """Reading other work-items' entries, then overwriting them in the next
    iteration: a barrier after the write and another before the next write."""
    knl = lp.make_kernel(
        "{[s, i_inner]: 0<=s<ns and 0<=i_inner<16}",
        """
        for s
          <float32> t[i_inner] = a[s, i_inner] {id=w}
          out[s, i_inner] = t[15 - i_inner] {id=r, dep=w}
        end
        """,
        [lp.GlobalArg("a", np.float32, shape=("ns", 16)),
         lp.GlobalArg("out", np.float32, shape=("ns", 16)),
         "..."])
    knl = lp.tag_inames(knl, {"i_inner": "l.0"})
    code = device_code(knl)
    lines = code.splitlines()
    loop = line_index(lines, r"for \(int s = 0;")
    w = line_index(lines, r"\bt\[lid\(0\)\] = a\[", loop)
    b1 = line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", w)
    r = line_index(lines, r"\bout\[.*\] = t\[", b1)
    line_index(lines, r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", r)
    assert len(re.findall(r"\bbarrier\(", code)) == 2
    for ns in (1, 5):
        a = rng.uniform(-1, 1, (ns, 16)).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a[:, ::-1])


def test_no_barrier_when_each_work_item_reads_its_own_entry(queue, rng):
    knl = lp.make_kernel(
        "{ [i_outer,i_inner]: 0<=i_outer<ng and 0<=i_inner<16 }",
        """
        <float32> t[i_inner] = a[16*i_outer + i_inner] {id=w}
        out[16*i_outer + i_inner] = 2*t[i_inner] {id=r, dep=w}
        """,
        [lp.GlobalArg("a", np.float32, shape=("16*ng",)),
         lp.GlobalArg("out", np.float32, shape=("16*ng",)),
         "..."])
    knl = lp.tag_inames(knl, dict(i_outer="g.0", i_inner="l.0"))
    a = rng.uniform(-1, 1, 32).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 2 * a)


# }}}


# {{{ global barriers: the rotate examples

def _rotate(with_gbarrier, name):
    if with_gbarrier:
        insns = """
        for i
           <>tmp = arr[i] {id=maketmp,dep=*}
           ... gbarrier {id=bar,dep=*maketmp}
           arr[(i + 1) % n] = tmp {id=rotate,dep=*bar}
        end
        """
    else:
        insns = """
        for i
           <>tmp = arr[i] {id=maketmp,dep=*}
           arr[(i + 1) % n] = tmp {id=rotate,dep=*maketmp}
        end
        """
    knl = lp.make_kernel(
        "[n] -> {[i] : 0<=i<n}", insns,
        [lp.GlobalArg("arr", shape=("n",), dtype=np.int32), "..."],
        name=name, assumptions="n mod 16 = 0")
    return lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")


def test_rotate_missing_global_barrier():
    knl = _rotate(False, "rotate_v1")
    with pytest.raises(lp.MissingBarrierError) as excinfo:
        lp.generate_code_v2(knl)
    msg = str(excinfo.value)
    assert "rotate depends on maketmp" in msg
    assert "'arr'" in msg
    assert "global barrier" in msg
    assert "no_sync_with" in msg
    assert issubclass(lp.MissingBarrierError, lp.LoopyError)


def test_rotate_nosync_silences_missing_barrier():
    knl = lp.make_kernel(
        "[n] -> {[i] : 0<=i<n}",
        """
        for i
           <>tmp = arr[i] {id=maketmp,dep=*}
           arr[(i + 1) % n] = tmp {id=rotate,dep=*maketmp,nosync=maketmp}
        end
        """,
        [lp.GlobalArg("arr", shape=("n",), dtype=np.int32), "..."],
        name="rotate_nosync", assumptions="n mod 16 = 0")
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")
    code = lp.generate_code_v2(knl).device_code()
    assert kernel_functions(code) == ["rotate_nosync"]


def test_rotate_missing_definition():
    knl = _rotate(True, "rotate_v2")
    with pytest.raises(lp.MissingDefinitionError) as excinfo:
        lp.generate_code_v2(knl)
    msg = str(excinfo.value)
    assert "'tmp'" in msg
    assert "rotate_v2_0" in msg
    assert "save_and_reload_temporaries" in msg


def test_rotate_schedule_splits_kernel():
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(_rotate(True, "rotate_v2")))
    lin = linearization_section(knl)
    calls = re.findall(r"CALL KERNEL (\w+)", lin)
    returns = re.findall(r"RETURN FROM KERNEL (\w+)", lin)
    assert calls == ["rotate_v2", "rotate_v2_0"]
    assert returns == ["rotate_v2", "rotate_v2_0"]
    # maketmp in the first kernel, the barrier between, rotate in the second
    pos = {name: lin.index(name) for name in
           ("CALL KERNEL rotate_v2(", "{id=maketmp}", "RETURN FROM KERNEL rotate_v2\n",
            "{id=bar}", "CALL KERNEL rotate_v2_0(", "{id=rotate}",
            "RETURN FROM KERNEL rotate_v2_0")}
    order = sorted(pos, key=pos.get)
    assert order == list(pos), lin


def _saved_rotate(name="rotate_v2"):
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(_rotate(True, name)))
    knl = lp.save_and_reload_temporaries(knl)
    return lp.get_one_scheduled_kernel(knl)


def test_rotate_save_and_reload_code():
    knl = _saved_rotate()
    assert "tmp_save_slot" in knl.temporary_variables
    assert knl.temporary_variables["tmp_save_slot"].address_space == lp.AddressSpace.GLOBAL
    lin = linearization_section(knl)
    assert re.findall(r"CALL KERNEL (\w+)", lin) == ["rotate_v2", "rotate_v2_0"]
    assert "tmp.save" in lin and "tmp.reload" in lin
    assert lin.index("tmp.save") < lin.index("RETURN FROM KERNEL rotate_v2\n")
    assert lin.index("CALL KERNEL rotate_v2_0") < lin.index("tmp.reload")

    code = lp.generate_code_v2(knl).device_code()
    assert kernel_functions(code) == ["rotate_v2", "rotate_v2_0"]
    assert code.count("__kernel") == 2
    assert "tmp_save_slot" in code
    first, second = code.split("__kernel")[1:]
    assert re.search(r"tmp_save_slot\[.*\] = tmp;", first), first
    assert re.search(r"tmp = tmp_save_slot\[", second), second
    assert "reqd_work_group_size(16, 1, 1)" in first
    assert "reqd_work_group_size(16, 1, 1)" in second
    # each kernel gets its own private tmp
    assert re.search(r"^\s*int tmp;", first, re.M) and re.search(r"^\s*int tmp;", second, re.M)


@pytest.mark.parametrize("n", [16, 48])
def test_rotate_save_and_reload_runs(queue, n):
    knl = _saved_rotate()
    arr = np.arange(n, dtype=np.int32)
    evt, (out,) = knl(queue, arr=arr.copy())
    np.testing.assert_array_equal(host(out), np.roll(np.arange(n, dtype=np.int32), 1))


def test_rotate_save_and_reload_device_array(queue):
    import pyopencl.array as cla
    knl = _saved_rotate()
    arr = cla.arange(queue, 16, dtype=np.int32)
    evt, (out,) = knl(queue, arr=arr)
    expected = np.array([15] + list(range(15)), dtype=np.int32)
    np.testing.assert_array_equal(arr.get(), expected)
    np.testing.assert_array_equal(host(out), expected)


def test_save_and_reload_accepts_unscheduled_kernel(queue):
    knl = lp.save_and_reload_temporaries(lp.preprocess_kernel(_rotate(True, "rotate_v3")))
    arr = np.arange(32, dtype=np.int32)
    evt, (out,) = knl(queue, arr=arr.copy())
    np.testing.assert_array_equal(host(out), np.roll(np.arange(32, dtype=np.int32), 1))


def test_save_and_reload_two_temporaries_three_kernels(queue):
    knl = lp.make_kernel(
        "[n] -> {[i] : 0<=i<n}",
        """
        for i
           <>t1 = arr[i] {id=m1,dep=*}
           <>t2 = 2*arr[i] {id=m2,dep=*}
           ... gbarrier {id=b1,dep=m1:m2}
           arr[(i + 1) % n] = t1 {id=r1,dep=b1}
           ... gbarrier {id=b2,dep=r1}
           out[i] = arr[i] + t2 {id=r2,dep=b2}
        end
        """,
        [lp.GlobalArg("arr", shape=("n",), dtype=np.int32), "..."],
        name="three_parts", assumptions="n mod 16 = 0")
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")
    with pytest.raises(lp.MissingDefinitionError):
        lp.generate_code_v2(knl)
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(knl))
    knl = lp.get_one_scheduled_kernel(lp.save_and_reload_temporaries(knl))
    assert {"t1_save_slot", "t2_save_slot"} <= set(knl.temporary_variables)
    code = lp.generate_code_v2(knl).device_code()
    assert kernel_functions(code) == ["three_parts", "three_parts_0", "three_parts_1"]
    for n in (16, 64):
        x = np.arange(n, dtype=np.int32)
        evt, (arr, out) = knl(queue, arr=x.copy())
        np.testing.assert_array_equal(host(arr), np.roll(x, 1))
        np.testing.assert_array_equal(host(out), np.roll(x, 1) + 2 * x)


# }}}


# {{{ global temporaries

def _two_pass(name):
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        for i
          <float32> g[i] = 2*a[i] {id=w}
        end
        ... gbarrier {id=gb, dep=w}
        for i
          out[i] = g[n-1-i] {id=r, dep=gb}
        end
        """, name=name)
    knl = lp.set_temporary_scope(knl, "g", "global")
    return lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")


def test_global_temporary_two_pass_code():
    knl = lp.add_dtypes(_two_pass("twopass"), {"a": np.float32})
    assert knl.temporary_variables["g"].address_space == lp.AddressSpace.GLOBAL
    sched = lp.get_one_scheduled_kernel(lp.preprocess_kernel(knl))
    lin = linearization_section(sched)
    assert re.findall(r"CALL KERNEL (\w+)", lin) == ["twopass", "twopass_0"]
    assert len(re.findall(r"RETURN FROM KERNEL", lin)) == 2
    code = lp.generate_code_v2(knl).device_code()
    assert kernel_functions(code) == ["twopass", "twopass_0"]
    # the temporary is a global buffer passed to both kernels, not declared inside
    for part in code.split("__kernel")[1:]:
        assert re.search(r"__global float \*__restrict__ g\b", part), part
    assert not re.search(r"^\s*float g\[", code, re.M)


@pytest.mark.parametrize("n", [1, 16, 37, 100])
def test_global_temporary_two_pass_runs(queue, rng, n):
    knl = _two_pass("twopass")
    a = rng.uniform(-1, 1, n).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), (2 * a)[::-1])


def test_global_temporary_without_gbarrier_needs_one():
    """Like the rotate example, but the data moves between work-items through a
    global *temporary*: that also needs a global barrier, and it must be
    reported rather than silently generating a racy single kernel."""
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        for i
          <float32> g[i] = 2*a[i] {id=w}
        end
        for i
          out[i] = g[n-1-i] {id=r, dep=w}
        end
        """, name="needs_gbarrier")
    knl = lp.set_temporary_scope(knl, "g", "global")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(lp.MissingBarrierError, match="'g'"):
        device_code(knl, {"a": np.float32})


def test_global_temporary_sequential(queue, rng):
    """A global temporary also works without any parallelism (one device kernel).

    The reading loop uses its own iname: instructions sharing the iname ``i``
    would run in one loop, each iteration reading entries not written yet."""
    knl = lp.make_kernel(
        "{[i, i2]: 0<=i, i2<n}",
        """
        for i
          <float64> g[i] = a[i]*a[i] {id=w}
        end
        for i2
          out[i2] = g[n-1-i2] + g[i2] {id=r, dep=w}
        end
        """)
    knl = lp.set_temporary_scope(knl, "g", "global")
    code = device_code(knl, {"a": np.float64})
    assert kernel_functions(code) == ["loopy_kernel"]
    a = rng.uniform(-1, 1, 21)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), a[::-1]**2 + a**2)


# }}}


# {{{ substitution rules and precompute

def _stencil_kernel():
    return lp.make_kernel(
        "{[i,j]: 0<=i<n and 0<=j<3}",
        """
        f(x) := 2*a[x] + 1
        out[i] = sum(j, f(i+j))
        """,
        [lp.GlobalArg("a", np.float32, shape=("n+2",)),
         lp.GlobalArg("out", np.float32, shape=("n",)),
         "..."])


def _stencil_ref(a, n):
    return sum(2 * a[j:j + n] + 1 for j in range(3))


def test_substitution_rule_and_expand_subst(queue, rng):
    knl = _stencil_kernel()
    assert "f" in knl.substitutions
    expanded = lp.expand_subst(knl)
    assert not expanded.substitutions
    assert "f(" not in str(expanded).split("INSTRUCTIONS")[1]
    a = rng.uniform(-1, 1, 12).astype(np.float32)
    for k in (knl, expanded):
        evt, (out,) = k(queue, a=a)
        np.testing.assert_allclose(host(out), _stencil_ref(a, 10), rtol=1e-5, atol=1e-5)


def test_assignment_to_subst(queue, rng):
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        <> t[i] = a[i]*a[i] {id=t}
        out[i] = t[i] + 1 {dep=t}
        """)
    k2 = lp.assignment_to_subst(knl, "t")
    assert "t_subst" in k2.substitutions
    assert "t" not in k2.temporary_variables
    code = device_code(k2, {"a": np.float64})
    assert not re.search(r"\bt\[", code), code
    a = rng.uniform(-1, 1, 9)
    evt, (out,) = k2(queue, a=a)
    np.testing.assert_allclose(host(out), a * a + 1)


@pytest.mark.parametrize("n", [1, 10])
def test_precompute_sequential_sweep(queue, rng, n):
    knl = lp.precompute(_stencil_kernel(), "f", "j", default_tag=None)
    code = device_code(knl)
    # three values of f per i, in a private array, filled by a loop
    assert re.search(r"^\s*float \w+\[3\];", code, re.M), code
    assert "__local" not in code
    a = rng.uniform(-1, 1, n + 2).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), _stencil_ref(a, n), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 10, 16, 40])
def test_precompute_local_sweep(queue, rng, n):
    knl = lp.split_iname(_stencil_kernel(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "f", "i_inner,j", default_tag="l.auto")
    code = device_code(knl)
    # 16 outputs need 16+2 values of f: one local array shared by the group
    assert re.search(r"__local float \w+\[18\];", code), code
    assert has_barrier(code)
    a = rng.uniform(-1, 1, n + 2).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), _stencil_ref(a, n), rtol=1e-5, atol=1e-5)


def test_precompute_named_temporary(queue, rng):
    knl = lp.precompute(_stencil_kernel(), "f", "j", default_tag=None,
                        temporary_name="f_vals")
    assert "f_vals" in knl.temporary_variables
    a = rng.uniform(-1, 1, 9).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), _stencil_ref(a, 7), rtol=1e-5, atol=1e-5)


# }}}


# {{{ errors for unknown names

def test_set_temporary_scope_unknown_name():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "<> t = a[i]\nout[i] = t")
    with pytest.raises(lp.UnknownNameError, match="nope"):
        lp.set_temporary_scope(knl, "nope", "local")
    with pytest.raises(lp.KernelcoreError):
        lp.set_temporary_scope(knl, "a", "local")      # an argument, not a temporary


def test_set_temporary_scope_unknown_scope():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "<> t = a[i]\nout[i] = t")
    with pytest.raises(lp.KernelcoreError, match="bogus"):
        lp.set_temporary_scope(knl, "t", "bogus")


def test_add_prefetch_unknown_array():
    knl = _prefetch_base_kernel()
    with pytest.raises(lp.UnknownNameError, match="zz"):
        lp.add_prefetch(knl, "zz")
    with pytest.raises(lp.KernelcoreError):
        lp.add_prefetch(knl, "a", ["no_such_iname"])


def test_precompute_unknown_rule():
    knl = _stencil_kernel()
    with pytest.raises(lp.UnknownNameError, match="'g'"):
        lp.precompute(knl, "g", "j")
    with pytest.raises(lp.KernelcoreError):
        lp.precompute(knl, "f", "no_such_iname")


def test_assignment_to_subst_unknown_temporary():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "<> t = a[i]\nout[i] = t")
    with pytest.raises(lp.UnknownNameError):
        lp.assignment_to_subst(knl, "nope")


# }}}

# vim: foldmethod=marker


def test_add_nosync_takes_loopy_arguments():
    knl = lp.make_kernel("{[i]: 0<=i<10}", """
        <> a[i] = 10 {id=w1}
        <> b[i] = 10 {id=w2}
        <> c[2*i] = 0 {id=w3}
        <> d = 1 + c[2*i] {id=r3}
        """, name="nosync")
    insns = lp.add_nosync(knl, "any", "writes:a", "writes:b")["nosync"].id_to_insn
    assert not insns["w2"].no_sync_with     # no dependency between them: nothing added
    insns = lp.add_nosync(knl, "any", "writes:a", "writes:b", force=True)["nosync"].id_to_insn
    assert insns["w2"].no_sync_with == {("w1", "any")}
    insns = lp.add_nosync(knl, "local", "writes:c", "reads:c",
                          bidirectional=True)["nosync"].id_to_insn
    assert insns["r3"].no_sync_with == {("w3", "local")}
    assert insns["w3"].no_sync_with == {("r3", "local")}
    with pytest.raises(lp.LoopyError, match="no instruction matches"):
        lp.add_nosync(knl, "local", "writes:zz", "reads:c")
    assert lp.add_nosync(knl, "local", "writes:zz", "reads:c", empty_ok=True) is not None


def test_extract_subst_of_a_whole_right_hand_side(queue):
    """A template may match an instruction's whole expression, and name
    inames that are no parameters (they match themselves)."""
    knl = lp.make_kernel("{[i, j]: 0<=i<4 and 0<=j<3}", "y[i, j] = x[i, j]",
                         [lp.GlobalArg("x,y", shape=lp.auto, dtype=np.float64)])
    knl = lp.extract_subst(knl, "rule1", "x[i, arg1]", parameters=("arg1",))
    k = knl.default_entrypoint
    assert str(k.instructions[0].expression) == "rule1(j)"
    x = np.arange(12.0).reshape(4, 3)
    _, (y,) = knl(queue, x=x)
    np.testing.assert_array_equal(host(y), x)


def test_reduction_arg_to_subst_rule(queue):
    knl = lp.make_kernel("{[i, j, k]: 0<=i<5 and 0<=j,k<4}",
                         "out[j] = sum(i, a[i, j]*2) + sum(k, a[0, k])")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float64})
    from kernelcore.transform.data import reduction_arg_to_subst_rule
    ruled = reduction_arg_to_subst_rule(knl, "i")
    k = ruled.default_entrypoint
    assert str(k.substitutions["red_i_arg"].expression) == "a[i, j]*2"
    assert "red_i_arg(i)" in str(k.instructions[0].expression)
    assert "red_k_arg" not in k.substitutions
    a = np.arange(20.0).reshape(5, 4)
    _, (out,) = ruled(queue, a=a)
    np.testing.assert_allclose(host(out), 2 * a.sum(axis=0) + a[0].sum())
