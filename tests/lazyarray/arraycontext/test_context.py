"""LazyarrayArrayContext against arraycontext itself (skipped, saying so,
where arraycontext is not installed: see docs/pde-backend.md)."""

import numpy as np
import pytest

from tests.helpers import ROOT

arraycontext = pytest.importorskip(
    "arraycontext", reason="arraycontext is not installed (the 'pde' extra plus "
    "arraycontext from its repository, docs/pde-backend.md): the context's tests did not run")

import pyopencl as cl  # noqa: E402
from pytools.tag import Tag  # noqa: E402

import lazyarray as la  # noqa: E402
from lazyarray.arraycontext import LazyarrayArrayContext  # noqa: E402
from lazyarray.run import default_queue  # noqa: E402


class Marked(Tag):
    pass


@pytest.fixture
def queue():
    return cl.CommandQueue(cl.Context([default_queue().device]))


@pytest.fixture
def actx(queue):
    return LazyarrayArrayContext(queue)


def test_is_an_array_context(actx, queue):
    assert isinstance(actx, arraycontext.ArrayContext)
    assert actx.queue is queue
    assert not actx.permits_inplace_modification
    assert actx.supports_nonscalar_broadcasting and actx.permits_advanced_indexing
    assert actx.clone() is not actx and actx.clone().queue is queue


def test_freeze_thaw_with_the_eager_context(actx, queue):
    eager = arraycontext.PyOpenCLArrayContext(queue)
    a = np.linspace(0, 1, 30)
    x = actx.tag(Marked(), actx.np.sin(actx.from_numpy(a)) * 2)
    x = actx.tag_axis(0, Marked(), x)
    frozen = actx.freeze(x)
    assert frozen.queue is queue and frozen.tags == {Marked()}
    assert frozen.axes[0].tags == {Marked()}
    # the eager context computes on what this one froze, and the other way
    y = eager.thaw(frozen) + 1
    back = actx.thaw(eager.freeze(y))
    assert back.tags == frozenset()
    np.testing.assert_allclose(actx.to_numpy(back * 3), (np.sin(a) * 2 + 1) * 3)
    again = actx.thaw(frozen)
    assert again.tags == {Marked()}


def test_thawing_a_frozen_array_again_gives_the_same_node(actx):
    """A frozen array thawed twice is one node (its index bounds checked
    once); a new frozen array is a new one, and indexing by it is right."""
    a = np.arange(12.0)
    frozen_index = actx.freeze(actx.from_numpy(np.array([11, 0, 4])))
    first, second = actx.thaw(frozen_index), actx.thaw(frozen_index)
    assert first.node is second.node
    x = actx.from_numpy(a)
    np.testing.assert_array_equal(actx.to_numpy(x[first] + x[second]), 2 * a[[11, 0, 4]])
    other = actx.freeze(actx.from_numpy(np.array([1, 2])))
    assert actx.thaw(other).node is not first.node
    np.testing.assert_array_equal(actx.to_numpy(x[actx.thaw(other)]), a[[1, 2]])


def test_compile_does_not_retrace_for_a_new_time(actx):
    def rhs(t, u):
        return actx.np.cos(t) * u + t

    compiled = actx.compile(rhs)
    a = np.arange(5.0)
    u = actx.from_numpy(a)
    for t in (0.0, 0.5, 1.5):
        np.testing.assert_allclose(actx.to_numpy(compiled(t, u)), np.cos(t) * a + t)
    assert compiled.trace_count == 1


def test_compiled_rk_stage_with_a_traced_time_step(actx):
    from dataclasses import dataclass

    from arraycontext import Array, dataclass_array_container, with_container_arithmetic

    @with_container_arithmetic(bcasts_across_obj_array=True, rel_comparison=True)
    @dataclass_array_container
    @dataclass(frozen=True)
    class Pair:
        u: Array
        v: Array
        __array_ufunc__ = None

    def stage(t, dt, state):
        k = Pair(u=actx.np.cos(t) * state.v, v=-state.u)
        return state + dt / 2 * k - (dt * dt) * state / 6

    compiled = actx.compile(stage)
    a, b = np.arange(5.0), np.linspace(0, 1, 5)
    state = actx.from_numpy(Pair(a, b))
    for t, dt in ((0.0, 0.1), (0.3, 0.05)):
        got = actx.to_numpy(compiled(t, dt, state))
        np.testing.assert_allclose(got.u, a + dt / 2 * np.cos(t) * b - dt * dt * a / 6)
        np.testing.assert_allclose(got.v, b - dt / 2 * a - dt * dt * b / 6)
    assert compiled.trace_count == 1


def test_einsum_broadcasts_and_tags(actx):
    jac = np.random.default_rng(0).random((6, 1))
    u = np.random.default_rng(1).random((6, 4))
    got = actx.einsum("ej,ei->ei", actx.from_numpy(jac), actx.from_numpy(u),
                      tagged=(Marked(),))
    assert got.tags == {Marked()}
    np.testing.assert_allclose(actx.to_numpy(got), np.einsum("ej,ei->ei", jac, u))


def test_call_loopy_runs_on_the_queue(actx):
    lp = pytest.importorskip("loopy", reason="loopy is not installed (the 'pde' extra)")
    from arraycontext import make_loopy_program
    prg = make_loopy_program("{[i]: 0 <= i < n}", "out[i] = 2 * x[i] + 1")
    prg = lp.add_dtypes(prg, {"x": np.float64})
    a = np.arange(7.0)
    out = actx.call_loopy(prg, x=actx.from_numpy(a) * 2)["out"]
    assert isinstance(out, la.LazyArray)
    np.testing.assert_allclose(actx.to_numpy(out + 1), 4 * a + 2)


def test_dg_example_agrees_with_the_eager_context():
    import subprocess
    import sys
    script = ROOT / "examples" / "dg_advection.py"
    done = subprocess.run([sys.executable, str(script), "--elements", "8", "--order", "2",
                           "--steps", "4"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "lazyarray and the eager context agree" in done.stdout


def test_grudge_example_agrees_with_the_eager_context():
    pytest.importorskip("grudge", reason="grudge is not installed (from its repository, "
                        "with meshmode, modepy, recursivenodes: docs/pde-backend.md)")
    import subprocess
    import sys
    script = ROOT / "examples" / "grudge_advection.py"
    done = subprocess.run([sys.executable, str(script), "--n", "3", "--order", "2",
                           "--steps", "3"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "lazyarray and the eager context agree" in done.stdout


def test_walker_sees_a_container_class_registered_after_a_walk(actx):
    # the walker looks each class's (de)serializer up once; a registration
    # made after a walk is seen by the next walk
    from arraycontext import deserialize_container, serialize_container

    from lazyarray.arraycontext.traversal import ContainerWalker

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    walker = ContainerWalker()
    pair = Pair(la.arange(3.0), 2.0)
    leaves, structure = walker.flatten(pair)
    assert leaves == [pair] and structure.children is None

    @serialize_container.register(Pair)
    def _serialize(p):
        return [("a", p.a), ("b", p.b)]

    @deserialize_container.register(Pair)
    def _deserialize(template, children):
        return Pair(**dict(children))

    leaves, structure = walker.flatten(pair)
    assert len(leaves) == 2 and leaves[1] == 2.0
    doubled = walker.map(lambda x: x * 2, pair)
    assert isinstance(doubled, Pair) and doubled.b == 4.0
    np.testing.assert_array_equal(np.asarray(doubled.a), [0.0, 2.0, 4.0])
    rebuilt = walker.unflatten(structure, [la.ones(2), 5.0])
    assert isinstance(rebuilt, Pair) and rebuilt.b == 5.0
