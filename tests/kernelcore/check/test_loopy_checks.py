"""The checks loopy makes on bad kernels and bad arguments, made by kernelcore
too: accesses not ordered by dependencies, private values read across a
global barrier, accesses guarded by conditions ISL cannot use, arguments in
another layout, domains without bounds or not affine, work-groups larger than
the device's; the legal neighbours of each case still run and agree with
NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pyopencl.array as cla
import pytest

import kernelcore as lp
from kernelcore.diagnostic import (
    AccessOutOfBoundsError,
    InvocationError,
    MissingDefinitionError,
    ParseError,
    VariableAccessNotOrdered,
)
from tests.helpers import host


def f64(names, shape):
    return lp.GlobalArg(names, np.float64, shape=shape)


# {{{ variable access ordering

def test_unordered_writes_of_one_element_are_refused():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "a[i] = 12 {id=w1}\na[i+1] = 13 {id=w2}",
                         [f64("a", "n+1"), "..."])
    with pytest.raises(VariableAccessNotOrdered, match="'w1' which writes the variable 'a'"):
        lp.generate_code_v2(knl)


def test_unordered_read_after_two_writers_is_refused():
    # a read with two writers gets no automatic dependency
    knl = lp.make_kernel("{[i]: 0<=i<4}",
                         ["a[i] = 1 {id=w1}", "b[i] = a[i] {id=r1}", "a[i] = 2 {id=w2}"],
                         [f64("a,b", (4,))])
    with pytest.raises(VariableAccessNotOrdered, match="'r1'"):
        lp.generate_code_v2(knl)


def test_ordered_accesses_run_in_their_order(queue):
    knl = lp.make_kernel("{[i]: 0<=i<4}",
                         ["a[i] = 1 {id=w1}", "b[i] = a[i] {id=r1, dep=w1}",
                          "a[i] = 2 {id=w2, dep=r1}"],
                         [f64("a,b", (4,))])
    _, (a, b) = knl(queue, a=np.zeros(4), b=np.zeros(4))
    np.testing.assert_array_equal(host(a), 2.0)
    np.testing.assert_array_equal(host(b), 1.0)


def test_disjoint_accesses_need_no_order(queue):
    # even and odd elements, and the two branches of an if: never one element
    knl = lp.make_kernel("{[i]: 0<=i<8}",
                         """
                         a[2*i] = i {id=even}
                         a[2*i + 1] = -i {id=odd}
                         if i < 4
                             b[i] = 1 {id=low}
                         else
                             b[i] = 2 {id=high}
                         end
                         """, [f64("a", (16,)), f64("b", (8,))])
    _, (a, b) = knl(queue, a=np.zeros(16), b=np.zeros(8))
    np.testing.assert_array_equal(host(a), np.ravel(np.c_[np.arange(8), -np.arange(8)]))
    np.testing.assert_array_equal(host(b), [1] * 4 + [2] * 4)


def test_branches_of_an_if_on_data_need_no_order(queue):
    # loopy refuses this (it ignores predicates): where the two writes meet,
    # x[i] > 1 is evaluated at one i, so only one of them runs
    knl = lp.make_kernel("{ [i]: 0<=i<n }", """
        if x[i] > 1
          y[i] = log(x[i])
        elif x[i] >= 0
          y[i] = 0
        else
          y[i] = -x[i]
        end
        """)
    x = np.array([-2, 0.5, 1, 4, 9], dtype=np.float32)
    _, (y,) = knl(queue, x=x)
    expected = np.where(x > 1, np.log(np.abs(x)), np.where(x >= 0, 0, -x))
    np.testing.assert_allclose(host(y), expected)


def test_branches_that_meet_at_other_points_still_need_an_order():
    # y[i] and y[i + 1] meet where the two conditions read different x
    knl = lp.make_kernel("{ [i]: 0<=i<n }", """
        if x[i] > 1
          y[i] = 1 {id=then}
        else
          y[i + 1] = 2 {id=other}
        end
        """, [f64("x", "n"), f64("y", "n + 1"), "..."])
    with pytest.raises(VariableAccessNotOrdered, match="'then'"):
        lp.generate_code_v2(knl)


def test_nosync_both_ways_states_no_order_is_needed():
    text = "a[i] = 12 {id=w1%s}\na[i+1] = 13 {id=w2%s}"
    args = [f64("a", "n+1"), "..."]
    one_way = lp.make_kernel("{[i]: 0<=i<n}", text % (",nosync=w2", ""), args)
    with pytest.raises(VariableAccessNotOrdered):
        lp.generate_code_v2(one_way)
    both = lp.make_kernel("{[i]: 0<=i<n}", text % (",nosync=w2", ",nosync=w1"), args)
    assert "a[i + 1] = 13" in lp.generate_code_v2(both).device_code().replace("1 + i", "i + 1")


def test_access_ordering_option_warns_or_skips():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "a[i] = 12\na[i+1] = 13", [f64("a", "n+1"), "..."])
    with pytest.warns(lp.LoopyWarning, match="No dependency relationship"):
        lp.generate_code_v2(lp.set_options(knl, enforce_variable_access_ordered=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lp.generate_code_v2(lp.set_options(knl, enforce_variable_access_ordered="no_check"))
    with pytest.raises(ParseError, match="enforce_variable_access_ordered"):
        lp.set_options(knl, enforce_variable_access_ordered="sometimes")


def test_temporaries_of_one_storage_count_as_one_variable():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "a[i] = 12\nb[i+1] = 13", [
        lp.TemporaryVariable("a", np.float64, shape="n+1", base_storage="tmp"),
        lp.TemporaryVariable("b", np.float64, shape="n+1", base_storage="tmp")])
    with pytest.raises(VariableAccessNotOrdered, match="aliasing equivalence class"):
        lp.generate_code_v2(knl)

# }}}


# {{{ private values across global barriers

def test_private_value_read_across_a_global_barrier_is_refused():
    knl = lp.make_kernel("{ [i]: 0<=i<10 }",
                         """
                         for i
                             <> t = 1
                             ... gbarrier
                             out[i] = t
                         end
                         """, seq_dependencies=True)
    with pytest.raises(MissingDefinitionError, match="'t'.*save_and_reload_temporaries"):
        lp.generate_code_v2(knl)


@pytest.mark.parametrize("tag", [None, "g.0"])
def test_saved_private_value_crosses_the_barrier(queue, tag):
    knl = lp.make_kernel("{ [i]: 0<=i<8 }",
                         """
                         for i
                             <> t = i
                             ... gbarrier
                             out[i] = t
                         end
                         """, [lp.GlobalArg("out", np.int64, shape=(8,))],
                         seq_dependencies=True)
    if tag:
        knl = lp.tag_inames(knl, {"i": tag})
    with pytest.raises(MissingDefinitionError):
        lp.generate_code_v2(knl)
    saved = lp.save_and_reload_temporaries(knl)
    _, (out,) = saved(queue, out=np.zeros(8, np.int64))
    np.testing.assert_array_equal(host(out), np.arange(8))


def test_private_value_written_after_the_barrier_is_fine(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<10 }",
                         """
                         for i
                             <> t = 1
                             ... gbarrier
                             t = 2
                             out[i] = t
                         end
                         """, [lp.GlobalArg("out", np.int32, shape=(10,))],
                         seq_dependencies=True)
    _, (out,) = knl(queue, out=np.zeros(10, np.int32))
    np.testing.assert_array_equal(host(out), 2)

# }}}


# {{{ conditions ISL cannot use

def test_condition_that_is_not_affine_does_not_hide_an_access():
    # loopy refuses the legal kernel too (it cannot use i*i < 100): so does
    # kernelcore, saying why, rather than trusting a guard it cannot read
    knl = lp.make_kernel("{[i]: 0<=i<20}", "z[i] = x[i] if i*i < 100 else y[i-10]",
                         [f64("x,y", (10,)), "..."])
    with pytest.raises(AccessOutOfBoundsError, match=r"'i\*i < 100'.*not affine"):
        lp.generate_code_v2(knl)
    illegal = lp.make_kernel("{[i]: 0<=i<20}", "z[i] = x[i] if i*i < 400 else y[i]",
                             [f64("x,y", (10,)), "..."])
    with pytest.raises(AccessOutOfBoundsError, match="reads 'x'"):
        lp.generate_code_v2(illegal)

# }}}


# {{{ arguments

def test_host_array_in_another_order_is_refused(queue):
    knl = lp.make_kernel("{[i,j]: 0 <= i < n and 0 <= j < m}", "c[i] = sum(j, a[i,j]*b[j])",
                         default_order="F")
    rng = np.random.default_rng(42)
    a, b = rng.random((10, 10)), rng.random(10)
    with pytest.raises(ValueError, match="strides mismatch along axis 0"):
        knl(queue, a=a, b=b)
    with pytest.raises(InvocationError, match="not contiguous"):
        knl(queue, a=np.asfortranarray(rng.random((10, 20)))[:, ::2], b=b)
    _, (c,) = knl(queue, a=np.asfortranarray(a), b=b)
    np.testing.assert_allclose(host(c), a @ b)


def test_device_array_in_another_order_is_refused(queue):
    knl = lp.make_kernel("{[i,j]: 0 <= i, j < 4}", "b[i, j] = 2*a[i, j]")
    a = cla.to_device(queue, np.asfortranarray(np.arange(16.0).reshape(4, 4)))
    with pytest.raises(InvocationError, match="strides mismatch"):
        knl(queue, a=a)


def test_big_endian_input_is_read_by_value(queue):
    knl = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = 2*a[i]")
    _, (out,) = knl(queue, a=np.arange(4, dtype=">f8"))
    np.testing.assert_array_equal(host(out), [0.0, 2.0, 4.0, 6.0])


def test_work_group_larger_than_the_device_is_refused_before_launch(queue):
    knl = lp.make_kernel("{[i]: 0<=i<100000}", "out[i] = 2",
                         [lp.GlobalArg("out", np.float64, shape=(100000,))])
    knl = lp.tag_inames(knl, {"i": "l.0"})
    with pytest.raises(InvocationError, match=r"work-group of size \(100000,\).*split_iname"):
        knl(queue, out=cla.zeros(queue, 100000, np.float64))

# }}}


# {{{ domains

@pytest.mark.parametrize(("domain", "side"), [("{[i]: 0<=i}", "upper"),
                                              ("{[i]: i<n}", "lower"),
                                              ("{[i, j]: 0<=i<n and j>=i}", "upper")])
def test_unbounded_domain_is_refused(domain, side):
    with pytest.raises(ParseError, match=f"no {side} bound"):
        lp.make_kernel(domain, "out[i] = 2" if "j" not in domain else "out[i, j] = 2")


def test_unbounded_iname_no_instruction_uses_is_fine():
    knl = lp.make_kernel("{[i, j]: 0 <= i < 4}", "out[i] = 2",
                         [lp.GlobalArg("out", np.int32, shape=(4,))])
    _, (out,) = knl(out=np.zeros(4, np.int32))
    np.testing.assert_array_equal(out, 2)


def test_domain_with_a_product_of_names_is_refused():
    with pytest.raises(ParseError, match=r"not affine.*'n\*n'"):
        lp.make_kernel("{[i]: 0<=i<n*n}", "out[i] = 2")

# }}}


# {{{ malformed declarations and parameters

def test_malformed_shape_is_a_parse_error():
    with pytest.raises(ParseError, match="cannot parse the shape"):
        lp.GlobalArg("a", np.float32, shape="n,,")


@pytest.mark.parametrize("target", [None, "c"])
def test_negative_parameter_shape_is_named(queue, target):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 1",
                         [lp.GlobalArg("out", np.float32, shape="n"), "..."],
                         target=lp.ExecutableCTarget() if target else None)
    with pytest.raises(InvocationError, match=r"'out' would have the negative shape \(-3,\)"):
        knl(queue if target is None else None, n=-3)

# }}}
