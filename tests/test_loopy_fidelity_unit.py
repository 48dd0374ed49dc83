"""A translation unit as loopy users handle it (issue 20): its kernels by
name, its default entry point, printing, copy, executor, and the members of
its kernel it answers when it has one entry point."""

import numpy as np
import pytest

import kernelcore as lp


def _unit():
    return lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]", name="twice")


def _pair():
    return lp.merge([_unit(), lp.make_kernel("{[i]: 0<=i<n}", "b[i] = a[i] + 1",
                                             name="inc")])


def test_default_entrypoint_and_items():
    tu = _unit()
    knl = tu.default_entrypoint
    assert [a.name for a in knl.args] == ["a", "n", "out"]
    assert tu["twice"] is knl
    with pytest.raises(KeyError):
        _ = tu["nope"]
    with pytest.raises(ValueError):
        _ = _pair().default_entrypoint
    with pytest.raises(ValueError):
        _ = lp.make_function("{[i]: 0<=i<4}", "b[i] = 1", name="f").default_entrypoint


def test_printing_a_unit_prints_every_kernel():
    tu = _pair()
    text = str(tu)
    assert "KERNEL: twice" in text and "KERNEL: inc" in text
    assert text == "\n".join(str(tu[n]) for n in tu.kernel_names())


def test_copy_and_with_entrypoints():
    tu = _pair()
    one = tu.with_entrypoints("inc")
    assert one.entrypoints == frozenset({"inc"})
    assert one.copy(entrypoints=frozenset({"twice"})).default_entrypoint.name == "twice"
    c_unit = tu.copy(target=lp.CTarget())
    assert isinstance(c_unit.target, lp.CTarget)
    assert all(isinstance(c_unit[n].target, lp.CTarget) for n in c_unit.kernel_names())
    assert tu.copy() == tu


def test_members_of_the_kernel_need_one_entrypoint():
    tu = _unit()
    assert tu.args == tu.default_entrypoint.args
    assert tu.name == "twice"
    pair = _pair()
    assert not hasattr(pair, "args")            # AttributeError, as in loopy
    with pytest.raises(AttributeError):
        _ = tu.no_such_member


def test_executor(queue):
    tu = _pair()
    a = np.arange(5, dtype=np.float32)
    run = tu.executor(queue.context, entrypoint="inc")
    _, (b,) = run(queue, a=a)
    np.testing.assert_allclose(b, a + 1)
    _, (out,) = _unit().executor(queue.context)(queue, a=a)
    np.testing.assert_allclose(out, 2 * a)
    with pytest.raises(lp.KernelcoreError, match="not an entry point"):
        tu.executor(queue.context, entrypoint="nope")
    with pytest.raises(ValueError, match="no entry points"):
        lp.make_function("{[i]: 0<=i<4}", "b[i] = 1", name="f").executor(queue.context)
