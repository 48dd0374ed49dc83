"""What kernelcore may assume in the C it writes. Integer division and
remainder by positive constants compile to C's own operators where the
operand cannot be negative: remainders by positive constants (floor
semantics), floor quotients and sums and products of such, and temporaries
only ever set to such values; the results stay Python's floor semantics
everywhere, also for negative values read from arrays. Arrays that
work-items share through work-group barriers are not declared restrict."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp


def _kernel(body: str, temporaries: list) -> lp.LoopKernel:
    knl = lp.make_kernel(
        "{ [i]: 0 <= i < n }", body,
        [lp.GlobalArg("a", np.int64, shape="n"), lp.GlobalArg("x", np.float64, shape=(60,)),
         lp.GlobalArg("out", np.float64, shape="n"), lp.ValueArg("n", np.int32), *temporaries])
    return lp.set_options(knl, return_dict=True)


def test_positions_wrapped_by_a_remainder_index_with_plain_division():
    knl = _kernel("""
        <> p = a[i] % 60
        <> q = a[i] - 7
        out[i] = x[(p // 6) % 10 * 6 + p % 6] + q // 4 + (q % 5)
        """, [])
    knl = lp.add_dtypes(knl, {"p": np.int64, "q": np.int64})
    code = lp.generate_code_v2(knl).device_code()
    # the wrap itself and the quotient of a - 7 (any sign) keep floor helpers...
    assert code.count("loopy_mod_int64(a[i], 60)") == 1 and "loopy_floor_div_int64(q, 4)" in code
    # ...the decomposition of the wrapped position does not
    assert "p / 6 % 10" in code and "p % 6" in code
    a, x, out = _run(knl)
    p, q = a % 60, a - 7
    np.testing.assert_array_equal(out, x[(p // 6) % 10 * 6 + p % 6] + q // 4 + q % 5)


def _run(knl: lp.LoopKernel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """*knl* run on indices of both signs: (a, x, out)."""
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    a = np.array([-125, -61, -60, -1, 0, 5, 59, 60, 61, 1234567, -1234567], np.int64)
    x = np.linspace(-3, 3, 60)
    out = cla.empty(queue, a.size, np.float64)
    knl(queue, a=cla.to_device(queue, a), x=cla.to_device(queue, x), out=out, n=a.size)
    return a, x, out.get()


def test_a_temporary_set_to_a_possibly_negative_value_is_not_trusted():
    from kernelcore.codegen.bounds import nonnegative_temporaries
    knl = _kernel("""
        <> p = a[i] % 60 {id=first}
        p = p - 30 {id=second, dep=first, inames=i}
        <> r = (a[i] % 8) * 3 + 2 {id=third, dep=second}
        out[i] = x[(p // 7) % 60] + x[r // 5]  {id=last, dep=third}
        """, [])
    knl = lp.add_dtypes(knl, {"p": np.int64, "r": np.int64})
    assert nonnegative_temporaries(knl) == frozenset({"r"})
    code = lp.generate_code_v2(knl).device_code()
    assert "loopy_floor_div_int64(p, 7)" in code and "r / 5" in code
    a, x, out = _run(knl)
    p, r = a % 60 - 30, (a % 8) * 3 + 2
    np.testing.assert_array_equal(out, x[(p // 7) % 60] + x[r // 5])


def test_arrays_shared_through_work_group_barriers_are_not_restrict():
    """A kernel whose work-items pass global memory to each other through a
    work-group barrier declares its written arrays without ``__restrict__``
    (NVIDIA's compiler kept a load of one across the barrier: every
    work-item but the writer read a stale value); read-only arrays and
    kernels without such barriers keep it."""
    knl = lp.make_kernel(
        ["{ [i]: 0 <= i < 64 }", "{ [j]: 0 <= j < 64 }"],
        """
        a[i] = 2 * x[i]  {id=first}
        out[j] = a[63 - j]  {id=second, dep=first, nosync=first}
        """,
        [lp.GlobalArg("x", np.float64, shape=(64,)), lp.GlobalArg("a", np.float64, shape=(64,)),
         lp.GlobalArg("out", np.float64, shape=(64,))])
    knl = lp.tag_inames(knl, {"i": "l.0", "j": "l.0"})
    shared = lp.add_barrier(knl, "id:first", "id:second", synchronization_kind="local",
                            mem_kind="global")
    code = lp.generate_code_v2(shared).device_code()
    assert "__global double *a" in code
    assert "__restrict__ a" not in code and "__restrict__ out" not in code
    assert "double const *__restrict__ x" in code
    plain = lp.generate_code_v2(lp.tag_inames(lp.make_kernel(
        "{ [i]: 0 <= i < 64 }", "a[i] = 2 * x[i]",
        [lp.GlobalArg("x", np.float64, shape=(64,)),
         lp.GlobalArg("a", np.float64, shape=(64,))]), {"i": "l.0"})).device_code()
    assert "__restrict__ a" in plain
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    x = np.arange(64.0)
    a, out = cla.empty(queue, 64, np.float64), cla.empty(queue, 64, np.float64)
    shared(queue, x=cla.to_device(queue, x), a=a, out=out)
    np.testing.assert_array_equal(out.get(), 2 * x[::-1])
