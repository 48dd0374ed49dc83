"""Checks that reject wrong parallel code before it runs: two loops of one
instruction on one hardware axis, array accesses outside their arrays (proven
with ISL over the domain and the assumptions), writes whose index does not
separate the work-items (write races), and schedules that would silently
compute wrong values; correct kernels of the same shapes still run and agree
with NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.diagnostic import AccessOutOfBoundsError
from tests.helpers import host


def generate(knl):
    """Generate code (the checks run there; no code cache is involved)."""
    return lp.generate_code_v2(knl).device_code()


def f32(name, shape):
    return lp.GlobalArg(name, np.float32, shape=shape)


# {{{ one hardware axis per loop of an instruction

@pytest.mark.parametrize("tag", ["l.0", "g.0"])
def test_two_inames_on_one_axis_are_rejected(queue, tag):
    knl = lp.make_kernel("{ [i, j]: 0 <= i, j < 16 }", "out[i, j] = a[i, j]  {id=copy}")
    knl = lp.tag_inames(knl, {"i": tag, "j": tag})
    with pytest.raises(lp.KernelcoreError) as excinfo:
        knl(queue, a=np.ones((16, 16), np.float32))
    msg = str(excinfo.value)
    assert "'copy'" in msg and "'i'" in msg and "'j'" in msg and f"'{tag}'" in msg, msg


def test_reduction_on_the_axis_of_its_instruction_is_rejected():
    knl = lp.make_kernel("{ [i, j]: 0 <= i, j < 16 }", "out[i] = sum(j, a[i, j])  {id=rowsum}")
    knl = lp.tag_inames(knl, {"i": "l.0", "j": "l.0"})
    with pytest.raises(lp.KernelcoreError, match=r"'rowsum'.*'i' and 'j' both tagged 'l.0'"):
        generate(lp.add_dtypes(knl, {"a": np.float32}))


def test_distinct_axes_run_the_whole_grid(queue, rng):
    knl = lp.make_kernel("{ [i, j]: 0 <= i < 16 and 0 <= j < 8 }", "out[i, j] = 2*a[i, j]")
    knl = lp.tag_inames(knl, {"i": "l.1", "j": "l.0"})
    a = rng.random((16, 8), dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 2 * a)

# }}}


# {{{ accesses outside the array

def test_shifted_read_past_the_end_is_rejected():
    knl = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i] = a[i + 1]  {id=shift}",
                         [f32("a", "n"), f32("out", "n"), "..."])
    with pytest.raises(AccessOutOfBoundsError) as excinfo:
        generate(knl)
    msg = str(excinfo.value)
    assert "'shift'" in msg and "reads 'a'" in msg and "[i + 1]" in msg, msg
    # the offending range and an example where it leaves the array
    assert "0 < index <= n" in msg and "index = 1" in msg, msg
    assert isinstance(excinfo.value, IndexError) and isinstance(excinfo.value,
                                                                lp.KernelcoreError)


def test_write_before_the_start_is_rejected():
    knl = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i - 1] = a[i]  {id=back}",
                         [f32("a", "n"), f32("out", "n"), "..."])
    with pytest.raises(AccessOutOfBoundsError, match=r"'back' writes 'out' at \[i \+ -1\]"
                       r"|'back' writes 'out' at \[i - 1\]") as excinfo:
        generate(knl)
    assert "index = -1" in str(excinfo.value)


def test_second_axis_and_reduction_inames_are_checked():
    knl = lp.make_kernel("{ [i, j]: 0 <= i < n and 0 <= j < m }",
                         "out[i] = sum(j, a[i, j + 1])  {id=rows}",
                         [f32("a", "n, m"), f32("out", "n"), "..."])
    with pytest.raises(AccessOutOfBoundsError, match="along axis 1") as excinfo:
        generate(knl)
    assert "'rows'" in str(excinfo.value) and "'a'" in str(excinfo.value)


def test_temporary_is_checked_against_its_shape():
    knl = lp.make_kernel(
        "{ [i]: 0 <= i < 16 }",
        ["tmp[i] = a[i]  {id=fill}", "out[i] = tmp[i + 1]  {id=use, dep=fill}"],
        [f32("a", 16), f32("out", 16),
         lp.TemporaryVariable("tmp", np.float32, shape=(16,))])
    with pytest.raises(AccessOutOfBoundsError, match=r"'use' reads 'tmp'.*index = 16"):
        generate(knl)


def test_shifted_reads_inside_the_array_run(queue, rng):
    knl = lp.make_kernel("{ [i]: 0 <= i < n - 1 }", "out[i] = a[i + 1] - a[i]",
                         [f32("a", "n"), f32("out", "n - 1"), "..."])
    a = rng.random(37, dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), np.diff(a), rtol=1e-6)


def test_concatenation_with_if_is_checked_per_branch(queue, rng):
    """Each operand of ``if`` is read only where its condition holds: part
    ``a`` for ``i < 5``, part ``b`` from 5 on."""
    args = [f32("a", 5), f32("b", "n - 5"), f32("out", "n"), lp.ValueArg("n", np.int32)]
    knl = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i] = if(i < 5, a[i], b[i - 5])",
                         args, assumptions="n >= 5")
    a, b = rng.random(5, dtype=np.float32), rng.random(12, dtype=np.float32)
    evt, (out,) = knl(queue, a=a, b=b, n=17)
    np.testing.assert_array_equal(host(out), np.concatenate([a, b]))

    wrong = lp.make_kernel("{ [i]: 0 <= i < n }",
                           "out[i] = if(i < 6, a[i], b[i - 5])  {id=cat}", args,
                           assumptions="n >= 5")
    with pytest.raises(AccessOutOfBoundsError, match=r"'cat' reads 'a'.*index = 5"):
        generate(wrong)


def test_if_block_guards_its_accesses(queue, rng):
    knl = lp.make_kernel("{ [i]: 0 <= i < n }",
                         """
                         if i < n - 1
                             out[i] = a[i + 1]
                         else
                             out[i] = 0
                         end
                         """, [f32("a", "n"), f32("out", "n"), "..."])
    a = rng.random(20, dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), np.append(a[1:], 0))


def test_assumptions_bound_the_accesses(queue, rng):
    """``a[n - 1]`` outside any loop reads ``a[-1]`` for n = 0 unless the
    assumptions say n >= 1; ``b[i]`` needs m >= n."""
    text = ["first[0] = a[n - 1]  {id=last}", "out[i] = a[i] * b[i]  {id=mul}"]
    args = [f32("a", "n"), f32("b", "m"), f32("first", 1), f32("out", "n"), "..."]
    domains = ["{ [i]: 0 <= i < n }", "{ [j]: 0 <= j < m }"]
    with pytest.raises(AccessOutOfBoundsError, match=r"'last' reads 'a'.*n = 0"):
        generate(lp.make_kernel(domains, text, args, assumptions="m >= n"))
    with pytest.raises(AccessOutOfBoundsError, match=r"'mul' reads 'b'"):
        generate(lp.make_kernel(domains, text, args, assumptions="n >= 1"))

    knl = lp.make_kernel(domains, text, args, assumptions="n >= 1 and m >= n")
    a, b = rng.random(9, dtype=np.float32), rng.random(12, dtype=np.float32)
    evt, (first, out) = knl(queue, a=a, b=b)
    assert host(first)[0] == a[-1]
    np.testing.assert_array_equal(host(out), a * b[:9])


def test_clamped_indices_are_checked(queue, rng):
    args = [f32("a", "n"), f32("out", "n"), "..."]
    knl = lp.make_kernel("{ [i]: 0 <= i < n }",
                         "out[i] = a[min(i + 1, n - 1)] - a[max(i - 1, 0)]", args)
    a = rng.random(15, dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), np.append(a[1:], a[-1]) - np.append(a[0], a[:-1]))
    bad = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i] = a[min(i + 1, n)]  {id=clamp}", args)
    with pytest.raises(AccessOutOfBoundsError, match="'clamp'"):
        generate(bad)


def test_data_dependent_indices_are_not_judged_guards_are_not_trusted(queue, rng):
    """A gathered index is left alone (ISL cannot decide it); a condition on
    data does not hide an access outside the array (as loopy: ISL cannot use
    it), unless the option says to only warn."""
    gather = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i] = a[idx[i]]",
                            [f32("a", 10), lp.GlobalArg("idx", np.int32, shape="n"),
                             f32("out", "n"), "..."])
    a, idx = rng.random(10, dtype=np.float32), np.array([9, 0, 3, 3], np.int32)
    evt, (out,) = gather(queue, a=a, idx=idx)
    np.testing.assert_array_equal(host(out), a[idx])
    guarded = lp.make_kernel("{ [i]: 0 <= i < n }",
                             "out[i] = if(flag[i] > 0, a[i + 1], 0)",
                             [f32("a", "n"), f32("flag", "n"), f32("out", "n"), "..."])
    with pytest.raises(AccessOutOfBoundsError, match=r"'flag\[i\] > 0'.*not affine"):
        generate(guarded)
    with pytest.warns(lp.KernelcoreWarning, match="reads 'a'"):
        generate(lp.set_options(guarded, enforce_array_accesses_within_bounds=False))


def test_enforce_option_warns_or_skips():
    knl = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i] = a[i + 1]  {id=shift}",
                         [f32("a", "n"), f32("out", "n"), "..."])
    warn = lp.set_options(knl, enforce_array_accesses_within_bounds=False)
    with pytest.warns(lp.KernelcoreWarning, match=r"'shift' reads 'a'"):
        generate(warn)
    skip = lp.set_options(knl, enforce_array_accesses_within_bounds="no_check")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        generate(skip)
    with pytest.raises(lp.ParseError, match="enforce_array_accesses_within_bounds"):
        lp.set_options(knl, enforce_array_accesses_within_bounds="sometimes")

# }}}


# {{{ write races

@pytest.mark.parametrize("tag", ["l.0", "g.0"])
def test_wrapped_write_index_is_a_race(tag):
    knl = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[i % 4] = a[i]  {id=wrap}",
                         [f32("a", 16), f32("out", 4)])
    knl = lp.tag_inames(knl, {"i": tag})
    with pytest.raises(lp.WriteRaceConditionWarning) as excinfo:
        generate(knl)
    msg = str(excinfo.value)
    assert "'wrap'" in msg and "'out'" in msg and "i % 4" in msg and f"i ({tag})" in msg, msg
    assert "write_race(wrap)" in msg          # how to silence it


def test_halved_index_over_split_iname_is_a_race():
    knl = lp.make_kernel("{ [i]: 0 <= i < n }", "out[i // 2] = a[i]  {id=half}",
                         [f32("a", "n"), f32("out", "n"), "..."])
    knl = lp.split_iname(knl, "i", 8, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(lp.WriteRaceConditionWarning, match=r"'half'.*i_inner \(l.0\)"):
        generate(knl)


def test_index_without_the_parallel_iname_is_a_race_even_if_not_affine():
    knl = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[idx[0]] = a[i]  {id=scatter}",
                         [f32("a", 16), f32("out", 16),
                          lp.GlobalArg("idx", np.int32, shape=1)])
    knl = lp.tag_inames(knl, {"i": "l.0"})
    with pytest.raises(lp.WriteRaceConditionWarning, match=r"'scatter'.*iname\(s\) i are not"):
        generate(knl)


def test_silenced_race_generates_code():
    knl = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[i % 4] = a[i]  {id=wrap}",
                         [f32("a", 16), f32("out", 4)], silenced_warnings=["write_race(wrap)"])
    knl = lp.tag_inames(knl, {"i": "l.0"})
    assert "__kernel" in generate(knl)


def test_injective_wrapped_and_blocked_writes_run(queue, rng):
    """A rotation (``(i + 3) % 16``), a write per (work-item, sequential j) and
    a write by one work-item only (a predicate) are not races."""
    rotate = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[(i + 3) % 16] = a[i]",
                            [f32("a", 16), f32("out", 16)])
    rotate = lp.tag_inames(rotate, {"i": "l.0"})
    a = rng.random(16, dtype=np.float32)
    evt, (out,) = rotate(queue, a=a)
    np.testing.assert_array_equal(host(out), np.roll(a, 3))

    blocked = lp.make_kernel("{ [i, j]: 0 <= i < 16 and 0 <= j < 4 }",
                             "out[16*j + i] = a[16*j + i] + 1",
                             [f32("a", 64), f32("out", 64)])
    blocked = lp.tag_inames(blocked, {"i": "l.0"})
    a = rng.random(64, dtype=np.float32)
    evt, (out,) = blocked(queue, a=a)
    np.testing.assert_array_equal(host(out), a + 1)

    single = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[0] = a[15]  {if=i == 0}",
                            [f32("a", 16), f32("out", 1)])
    single = lp.tag_inames(single, {"i": "l.0"})
    evt, (out,) = single(queue, a=a[:16])
    assert host(out)[0] == a[15]

# }}}


def _blocked_matmul(inner_tag):
    knl = lp.make_kernel("{[i,j,k]: 0<=i,j,k<n}", "c[i, j] = sum(k, a[i, k]*b[k, j])")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 64, outer_tag="g.0")
    knl = lp.split_iname(knl, "j_inner", 4, outer_tag="l.0", inner_tag=inner_tag)
    knl = lp.split_iname(knl, "k", 16)
    knl = lp.add_prefetch(knl, "a", ["k_inner", "i_inner"], default_tag="l.auto")
    return lp.add_prefetch(knl, "b", ["k_inner", "j_inner_outer", "j_inner_inner"],
                           default_tag="l.auto")


def test_shared_accumulator_across_unrolled_iname_is_refused():
    # with 'unr' the scalar accumulator is shared by the four j values, which
    # forces the j loop around the k loop and the tile fetch out of it
    knl = lp.add_dtypes(_blocked_matmul("unr"), {"a": np.float32, "b": np.float32})
    with pytest.raises(lp.SchedulingError, match="a_fetch"):
        lp.generate_code_v2(knl)


@pytest.mark.parametrize("n", [16, 64, 70])
def test_ilp_accumulators_keep_fetch_and_update_together(queue, n):
    knl = _blocked_matmul("ilp")
    rng = np.random.default_rng(n)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    evt, (c,) = knl(queue, a=a, b=b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_private_value_is_read_in_the_run_that_wrote_it(queue):
    knl = lp.make_kernel(
        "{[i,j]: 0<=i<n and 0<=j<m}",
        """
        <> t = a[i] {id=w}
        out[i, j] = t + b[j] {id=r, dep=w}
        """)
    evt, (out,) = knl(queue, a=np.arange(3.0), b=np.arange(2.0))
    np.testing.assert_array_equal(out, np.arange(3.0)[:, None] + np.arange(2.0))
    code = lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float64, "b": np.float64}))
    # the write of t sits in the i loop, outside the j loop that reads it
    body = code.device_code()
    assert body.index("t = a[i]") < body.index("for (int j")
