"""Issue 40: more of loopy's forms that its tests use: the options
``annotate_inames`` and ``build_options`` (flags for the C compiler),
``loopy.symbolic.is_expression_equal``."""

import numpy as np
import pymbolic.primitives as prim
import pytest

import kernelcore as lp
from kernelcore.diagnostic import KernelcoreError
from kernelcore.symbolic import is_expression_equal


def test_annotate_inames_is_accepted(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 2*a[i]", options="annotate_inames")
    assert knl.default_entrypoint.options.annotate_inames
    a = np.arange(5.0)
    _, (b,) = knl(queue, a=a)
    np.testing.assert_allclose(b, 2 * a)


def test_build_options_reach_the_c_compiler():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 2*a[i]", target=lp.ExecutableCTarget())
    a = np.arange(5.0)
    ok = lp.set_options(knl, build_options=["-Werror", "-DUNUSED=1"])
    _, (b,) = ok(a=a)
    np.testing.assert_allclose(b, 2 * a)
    broken = lp.set_options(knl, build_options=["-fno-such-flag-anywhere"])
    with pytest.raises(KernelcoreError):
        broken(a=a)


def test_build_options_must_be_strings():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 2*a[i]")
    with pytest.raises(KernelcoreError):
        lp.set_options(knl, build_options="-O3")


def test_is_expression_equal():
    x, y = prim.Variable("x"), prim.Variable("y")
    assert is_expression_equal(x + 2, 2 + x)
    assert is_expression_equal((x + 2)**2, x**2 + 4*x + 4)
    assert is_expression_equal((x + y)**2, x**2 + 2*x*y + y**2)
    assert not is_expression_equal(x + 1, x + 2)
    assert not is_expression_equal(x, None)
    assert is_expression_equal(3, 3) and not is_expression_equal(3, 4)
