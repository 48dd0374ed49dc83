"""The lazyarray side of the arraycontext backend, without arraycontext: the
namespace over containers, computing container leaves together, tags beside
the graph, compile keys, size-1 einsum broadcasting, CSR products, and
computing on a queue of another OpenCL context."""

import threading

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from pytools.tag import Tag

import lazyarray as la
from lazyarray.arraycontext.compile import CompiledFunction, compile_key, flatten_call
from lazyarray.arraycontext.freeze import compute_together, shared_roots
from lazyarray.arraycontext.namespace import StandaloneNamespace
from lazyarray.arraycontext.sparse import csr_matmul
from lazyarray.arraycontext.tags import TaggedArray, axes_of, tagged, tags_of, with_axis_tagged
from lazyarray.arraycontext.traversal import PlainWalker
from lazyarray.run import STATS, default_queue, using_queue
from lazyarray.run import steps as runtime
from tests.helpers import counting


class Important(Tag):
    pass


class ElementAxis(Tag):
    pass


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# {{{ namespace

def test_namespace_maps_over_containers(rng):
    a, b = rng.standard_normal(5), rng.standard_normal((2, 3))
    xnp = StandaloneNamespace()
    state = {"u": la.asarray(a), "v": (la.asarray(b), 2.0)}
    result = xnp.sin(state)
    np.testing.assert_allclose(result["u"].get(), np.sin(a))
    np.testing.assert_allclose(result["v"][0].get(), np.sin(b))
    assert result["v"][1] == pytest.approx(np.sin(2.0))
    both = xnp.maximum(state, 0.5)            # a scalar broadcasts against a container
    np.testing.assert_allclose(both["v"][0].get(), np.maximum(b, 0.5))
    total = xnp.sum({"u": la.asarray(a), "w": la.asarray(b)})
    assert float(total) == pytest.approx(a.sum() + b.sum())
    assert float(xnp.max([la.asarray(a), la.asarray(b)])) == max(a.max(), b.max())
    assert bool(xnp.any([la.asarray(a > 5), la.asarray(b > -10)]))
    assert not bool(xnp.all([la.asarray(a > 5), la.asarray(b > -10)]))


def test_namespace_where_reshape_and_sizes(rng):
    xnp = StandaloneNamespace()
    a = rng.standard_normal((3, 4))
    cond = np.array([[0.0, 2.0, 0.0, -1.0]] * 3)
    got = xnp.where(la.asarray(cond), la.asarray(a), 0.0)      # a float condition
    np.testing.assert_allclose(got.get(), np.where(cond, a, 0.0))
    x = la.asarray(a)
    np.testing.assert_array_equal(xnp.reshape(x, (4, 3), order="F").get(),
                                  a.reshape((4, 3), order="F"))
    np.testing.assert_array_equal(xnp.ravel(x, order="F").get(), a.ravel(order="F"))
    np.testing.assert_array_equal(xnp.reshape(x, (2, -1), order="F").get(),
                                  a.reshape((2, -1), order="F"))
    assert xnp.size(x) == 12 and xnp.shape(x) == (3, 4)
    assert bool(xnp.array_equal({"p": x}, {"p": la.asarray(a.copy())}))
    assert not bool(xnp.array_equal({"p": x}, {"p": x + 1}))
    assert not bool(xnp.array_equal({"p": x}, {"q": x}))
    np.testing.assert_allclose(float(xnp.linalg.norm({"p": x, "q": (x, x)})),
                               np.sqrt(3) * np.linalg.norm(a))


def test_zero_size_arrays_launch_nothing():
    xnp = StandaloneNamespace()
    with counting() as ran:
        z = xnp.zeros((0, 5), np.float64) * 2 + 1
        assert z.get().shape == (0, 5)
    assert ran.launches == 0


# }}}


# {{{ computing together

def test_shared_work_is_planned_once(rng):
    a = la.asarray(rng.standard_normal(1000))
    shared = la.exp(la.sin(a) * 3 + la.cos(a))
    leaves = [shared + 1, shared * 2, la.sum(shared)]
    roots = shared_roots([x.node for x in leaves])
    assert [r is shared.node for r in roots] == [True]
    with counting() as ran:
        values = compute_together([x.node for x in leaves])
    assert ran.launches == 4          # the shared value, then three leaves
    ref = np.exp(np.sin(a.get()) * 3 + np.cos(a.get()))
    np.testing.assert_allclose(values[0].get(), ref + 1)
    np.testing.assert_allclose(values[1].get(), ref * 2)
    np.testing.assert_allclose(values[2].get(), ref.sum())


def test_cheap_shared_work_is_recomputed(rng):
    a = la.asarray(rng.standard_normal(100))
    cheap = a * 2
    assert shared_roots([(cheap + 1).node, (cheap - 1).node]) == []
    # a leaf that another leaf reads is computed first, once
    u = la.exp(la.sin(a) + la.cos(a) * a)
    assert shared_roots([u.node, (u * 2).node]) == [u.node]


# }}}


# {{{ tags

def test_tags_live_beside_the_graph(rng):
    data = rng.standard_normal((6, 4))
    x = la.asarray(data)
    t = with_axis_tagged(tagged(x * 2 + 1, Important()), 0, ElementAxis())
    assert isinstance(t, TaggedArray)
    assert tags_of(t) == {Important()} and t.tags_of_type(Important)
    assert axes_of(t)[0].tags == {ElementAxis()} and not axes_of(t)[1].tags
    assert tags_of(x) == frozenset()                # the original is untouched
    plain = x * 2 + 1
    assert t.node is plain.node                     # same node: same structure key
    runtime._KERNELS.clear()
    with counting() as ran:
        np.testing.assert_allclose(la.asarray(t).get(), data * 2 + 1)
        y = la.asarray(rng.standard_normal((6, 4)))
        np.testing.assert_allclose(tagged(y * 2 + 1, Important()).get(), y.get() * 2 + 1)
    assert ran.planned == 1          # tags did not split the kernel cache


# }}}


# {{{ compile

def test_compile_keys_and_traced_scalars(rng):
    walker = PlainWalker()
    calls = []

    def step(state, t):
        calls.append(1)
        return {"u": state["u"] + t * state["v"], "v": state["v"] * 2}

    compiled = CompiledFunction(step, walker, None)
    u, v = rng.standard_normal(8), rng.standard_normal(8)
    state = {"u": la.asarray(u), "v": la.asarray(v)}
    for t in (0.1, 0.25, 0.5):                      # a new time does not retrace
        out = compiled(state, t)
        np.testing.assert_allclose(out["u"].get(), u + t * v)
        np.testing.assert_allclose(out["v"].get(), v * 2)
    assert compiled.trace_count == 1 and len(calls) == 1
    compiled({"u": la.asarray(u[:4]), "v": la.asarray(v[:4])}, 0.1)   # a new shape does
    assert compiled.trace_count == 2
    leaves, structure = flatten_call(walker, [state, 0.1])
    other, other_structure = flatten_call(walker, [state, 3])
    assert compile_key(leaves, structure, ()) != compile_key(other, other_structure, ())
    assert compile_key(leaves, structure, ()) == compile_key(
        *flatten_call(walker, [{"u": la.asarray(u), "v": la.asarray(v)}, 7.5]), ())


def test_numpy_scalars_are_traced_values(rng):
    """A time loop's ``t = np.float64(0)``, advanced by ``t += dt``: each new
    value reuses the trace (meshmode's simple-dg example retraced at every
    right-hand side call), and the scalar keeps NumPy's (strong) dtype."""
    calls = []

    def stage(t, state):
        calls.append(type(t))
        return {"u": state["u"] * (t + 0.5), "v": state["v"] + t}

    compiled = CompiledFunction(stage, PlainWalker(), None)
    u, v = rng.standard_normal(7), rng.standard_normal(5).astype(np.float32)
    state = {"u": la.asarray(u), "v": la.asarray(v)}
    t = np.float64(0)
    compiled(t, state)
    with counting() as ran:
        for _ in range(4):
            t += 0.125
            out = compiled(t, state)
            np.testing.assert_allclose(out["u"].get(), u * (t + 0.5))
            assert out["v"].dtype == (v + t).dtype == np.float64       # NEP 50: t is strong
            np.testing.assert_allclose(out["v"].get(), v + t)
        assert compiled.trace_count == 1 and len(calls) == 1
    assert ran.planned == 0
    # a NumPy scalar of another type is another signature; its dtype is kept
    out = compiled(np.float32(0.25), state)
    assert compiled.trace_count == 2
    assert out["v"].dtype == (v + np.float32(0.25)).dtype == np.float32
    np.testing.assert_array_equal(out["v"].get(), v + np.float32(0.25))
    out = compiled(np.int32(3), state)
    np.testing.assert_allclose(out["u"].get(), u * 3.5)
    assert compiled.trace_count == 3
    # arithmetic among traced scalars and numbers stays a traced scalar
    from lazyarray.arraycontext.compile import TracedScalar
    kinds = []

    def scaled(t, x):
        kinds.append((type(t), type(t / 2 + 1), type(2 * t)))
        return x * (t / 2 + 1)

    f = CompiledFunction(scaled, PlainWalker(), None)
    for t in (np.float64(1.0), np.float64(3.0)):
        np.testing.assert_allclose(f(t, la.asarray(u)).get(), u * (t / 2 + 1))
    assert kinds == [(TracedScalar, TracedScalar, TracedScalar)]


def _expensive(x, idx):
    """Work worth storing: a gather and several operations (a DG flux's shape)."""
    g = x[idx]
    return la.sin(g) * 3 + la.cos(g) * g


def test_compiled_calls_replay_launches_without_planning(rng, monkeypatch):
    """After the first call a compiled function runs its planned launches:
    no tracing, no storage planning, no host transfer; one launch per planned
    kernel, the same count every call; results equal NumPy's."""
    from lazyarray.plan import storage
    n = 3000
    idx_host = rng.permutation(n)
    geom_host = rng.standard_normal(n)
    # captured by the function, on the device (as a discretization's arrays)
    idx = la.asarray(cla.to_device(default_queue(), idx_host))
    geom = la.asarray(cla.to_device(default_queue(), geom_host))
    calls = []

    def rhs(t, state):
        calls.append(1)
        flux = _expensive(state["u"], idx) / (geom * geom + 1)
        return {"u": flux * t - state["v"], "v": flux + state["u"] * 2}

    # (each kernel launched on its own: see test_sequence.py for one launch)
    compiled = CompiledFunction(rhs, PlainWalker(), None, single_launch=False)
    u, v = rng.standard_normal(n), rng.standard_normal(n)

    def expected(t, u, v):
        g = u[idx_host]
        flux = (np.sin(g) * 3 + np.cos(g) * g) / (geom_host * geom_host + 1)
        return flux * t - v, flux + u * 2

    out = compiled(0.5, {"u": la.asarray(u), "v": la.asarray(v)})
    program, = compiled.programs.values()
    # the geometric factor reads no argument: computed once, when tracing
    assert program.hoisted == 1
    # the flux both outputs read is stored once: it, then each output
    assert program.launches == 3
    with counting() as ran:

        def no_planning(*args, **kwargs):
            raise AssertionError("planned again")

        def no_transfer(*args, **kwargs):
            raise AssertionError("a host transfer")

        monkeypatch.setattr(storage, "storage_plan", no_planning)
        monkeypatch.setattr(cla.Array, "get", no_transfer)
        results = []
        for t in (0.25, 1.5, 2.0):
            u, v = rng.standard_normal(n), rng.standard_normal(n)
            before = STATS["launches"]
            out = compiled(t, {"u": la.asarray(u), "v": la.asarray(v)})
            assert STATS["launches"] - before == 3
            results.append((t, u, v, out))
        monkeypatch.undo()
        for t, u, v, out in results:
            ref_u, ref_v = expected(t, u, v)
            np.testing.assert_allclose(out["u"].get(), ref_u, rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(out["v"].get(), ref_v, rtol=1e-13, atol=1e-13)
        assert len(calls) == 1 and compiled.trace_count == 1
    assert ran.planned == 0


def test_compiled_steps_with_scalar_arguments_run_by_position(rng, monkeypatch):
    """Steps taking scalar arguments (a traced number, a constant kept as an
    argument) replay by position too once bound: no launch by name after
    the first call, results NumPy's for each new value."""
    from lazyarray.run.launch import BoundLaunch
    n = 500
    floor = np.float32(0.0)          # (a zero: an argument, not written in the code)

    def f(t, u):
        total = la.sum(u * t)
        return {"a": la.maximum(u, floor) * t + total, "b": u - t}

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=False)
    u = rng.standard_normal(n).astype(np.float32)
    compiled(np.float32(0.5), la.asarray(u))
    by_position = []
    run_at = BoundLaunch.run_at

    def counted(self, *args):
        by_position.append(1)
        return run_at(self, *args)

    def by_name(*args, **kwargs):
        raise AssertionError("a launch by name")

    monkeypatch.setattr(BoundLaunch, "run_at", counted)
    monkeypatch.setattr(BoundLaunch, "__call__", by_name)
    program, = compiled.programs.values()
    for t in (np.float32(1.5), np.float32(-2.0)):
        with counting() as ran:
            out = compiled(t, la.asarray(u))
        assert ran.launches == program.launches
        total = np.sum(u * t, dtype=np.float32)
        np.testing.assert_allclose(out["a"].get(), np.maximum(u, 0) * t + total, rtol=1e-5)
        np.testing.assert_allclose(out["b"].get(), u - t, rtol=1e-6)
    assert len(by_position) == 2 * program.launches


def test_compiled_broadcast_einsum_operand_is_stored_first(rng):
    """An einsum operand that the product reads once per value of a label it
    lacks (meshmode's face mass, ``"ifj,fej->ei"``) is stored before the
    product, in a compiled function and when computed eagerly: its work is
    done once per element, not once per ``i``."""
    from lazyarray.values import on_device
    nel, nodes, faces, fnodes = 200, 10, 3, 4
    lift = rng.standard_normal((nodes, faces, fnodes))
    idx_host = rng.integers(0, faces * nel * fnodes, faces * nel * fnodes)
    idx = la.asarray(cla.to_device(default_queue(), idx_host))
    xnp = StandaloneNamespace()
    seen = []

    def face_mass(x):
        flux = _expensive(x, idx).reshape(faces, nel, fnodes)
        seen.append(flux)
        return xnp.einsum("ifj,fej->ei", la.asarray(lift), flux)

    x = rng.standard_normal(faces * nel * fnodes)
    g = x[idx_host]
    ref = np.einsum("ifj,fej->ei", lift, (np.sin(g) * 3 + np.cos(g) * g).reshape(
        faces, nel, fnodes))
    compiled = CompiledFunction(face_mass, PlainWalker(), None)
    np.testing.assert_allclose(compiled(la.asarray(x)).get(), ref, rtol=1e-12)
    program, = compiled.programs.values()
    stored = [st.node.shape for st, _ in program.steps]
    assert (faces * nel * fnodes,) in stored           # the flux, before the product
    assert all(len(shape) <= 2 for shape in stored)    # no (E, i, f, j) product stored
    with counting() as ran:
        np.testing.assert_allclose(compiled(la.asarray(x * 2)).get(),
                                   np.einsum("ifj,fej->ei", lift, (
                                       np.sin(2 * g) * 3 + np.cos(2 * g) * 2 * g).reshape(
                                           faces, nel, fnodes)), rtol=1e-12)
    assert ran.launches == program.launches
    # computed outside compile: the flux is stored on the way
    result = face_mass(la.asarray(x))
    compute_together([result.node])
    flux = seen[-1].node.arg        # (stored, then held by its array as a leaf)
    assert flux.kind == "input" or on_device(flux) is not None
    np.testing.assert_allclose(result.get(), ref, rtol=1e-12)


def test_compiled_function_reads_offset_views_and_nests(rng):
    """Arguments that start inside their buffer are read from their start;
    called while ``la.jit`` traces, the function is part of that trace."""
    queue = default_queue()
    whole = rng.standard_normal(40)
    big = cla.to_device(queue, whole)
    compiled = CompiledFunction(lambda a, b: la.exp(a) + b, PlainWalker(), None)
    out = compiled(big[8:24], la.asarray(whole[:16]))
    np.testing.assert_allclose(out.get(), np.exp(whole[8:24]) + whole[:16])
    outer = la.jit(lambda a: compiled(a, a) * 2)
    np.testing.assert_allclose(outer(la.asarray(whole)).get(), 2 * (np.exp(whole) + whole))
    assert compiled.trace_count == 1


class _Opaque:
    """A container opting out of NumPy's operators, as arraycontext's do: it
    broadcasts numbers (numbers.Number) over its one array, and leaves other
    operands to them."""

    __array_ufunc__ = None

    def __init__(self, x):
        self.x = x

    def __rmul__(self, other):
        import numbers
        return _Opaque(other * self.x) if isinstance(other, numbers.Number) else NotImplemented


def test_traced_numbers_broadcast_over_containers_as_numbers(rng):
    import numbers

    from lazyarray.arraycontext.compile import TracedScalar
    seen = []

    def step(dt, u):
        half = dt / 2
        seen.append((type(dt), type(half), type(2 * dt - 1), type(-dt), type(dt * u)))
        scaled = half * _Opaque(u)          # a container broadcasts the traced scalar
        return scaled.x + abs(dt) * u

    compiled = CompiledFunction(step, PlainWalker(), None)
    u = rng.standard_normal(6)
    for dt in (0.1, 0.4):
        np.testing.assert_allclose(compiled(dt, la.asarray(u)).get(), dt / 2 * u + dt * u)
    assert compiled.trace_count == 1
    (t_dt, t_half, t_affine, t_neg, t_product), = seen
    assert t_dt is t_half is t_affine is t_neg is TracedScalar
    assert t_product is la.LazyArray            # with an array: a plain lazy array
    assert isinstance(TracedScalar(la.asarray(1.0).node), numbers.Number)


# }}}


# {{{ einsum, sparse

@pytest.mark.parametrize("spec, shapes", [
    ("ij,ij->ij", [(3, 1), (3, 4)]),
    ("ij,ij->i", [(3, 1), (3, 4)]),
    ("ej,ij->ei", [(5, 1), (2, 4)]),
    ("ex,ei->ei", [(5, 1), (5, 3)]),
    ("ifj,efj->ei", [(4, 3, 2), (6, 3, 1)]),
])
def test_einsum_broadcasts_size_one_labels(rng, spec, shapes):
    ops = [rng.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(la.einsum(spec, *ops).get(), np.einsum(spec, *ops),
                               rtol=1e-12)


def test_einsum_still_refuses_mismatched_sizes():
    with pytest.raises(la.ShapeError, match="label 'j' has sizes 3 and 4"):
        la.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 2)))


def test_csr_matmul_on_the_device(rng):
    dense = rng.standard_normal((7, 5)) * (rng.random((7, 5)) < 0.4)
    dense[3] = 0                                   # an empty row
    rows, cols = np.nonzero(dense)
    starts = np.searchsorted(rows, np.arange(8))
    x = rng.standard_normal((5, 3))
    got = csr_matmul((7, 5), la.asarray(dense[rows, cols]), la.asarray(cols),
                     la.asarray(starts), la.asarray(x))
    np.testing.assert_allclose(got.get(), dense @ x, rtol=1e-12, atol=1e-14)
    got1 = csr_matmul((7, 5), dense[rows, cols], cols, starts, x[:, 0])
    np.testing.assert_allclose(got1.get(), dense @ x[:, 0], rtol=1e-12, atol=1e-14)


# }}}


# {{{ queues

def test_compute_on_the_queue_given(rng):
    device = default_queue().device
    queue = cl.CommandQueue(cl.Context([device]))
    a = rng.standard_normal(50)
    with using_queue(queue):
        x = la.asarray(a)
        y = (la.sin(x) * 2).sum()
        assert x.node.data.queue is queue
        value = float(y)
    assert value == pytest.approx(np.sin(a).sum() * 2)
    # computed outside the block: on the queue of the graph's inputs
    z = la.cos(x) + 1
    np.testing.assert_allclose(compute_together([z.node], queue)[0].get(queue=queue),
                               np.cos(a) + 1)
    w = la.exp(x) * 3
    result = compute_together([w.node])[0]
    assert result.queue.context == queue.context
    # thawing an array of that context
    b = cla.to_device(queue, a)
    with using_queue(queue):
        np.testing.assert_allclose((la.asarray(b) * 2).get(), a * 2)


def test_values_of_another_context_read_back_outside_its_block(rng):
    queue = cl.CommandQueue(cl.Context([default_queue().device]))
    a = rng.standard_normal(12)
    with using_queue(queue):
        x = la.asarray(a)
        zeros = la.zeros(4)
    # outside the block: computed on the inputs' queue and read back there
    np.testing.assert_array_equal(x.get(), a)
    np.testing.assert_allclose(np.asarray(x * 2), a * 2)
    assert float(x.sum()) == pytest.approx(a.sum())
    np.testing.assert_array_equal(x[2:5].get(), a[2:5])
    assert "lazyarray(" in repr(x + 1)
    # an array made here, in the default queue's context, joins them (copied once)
    b = rng.standard_normal(12)
    np.testing.assert_allclose((x + la.asarray(b)).get(), a + b)
    np.testing.assert_allclose((la.asarray(b) * x).get(), a * b)
    np.testing.assert_allclose((zeros + x[:4]).get(), a[:4])
    frozen = cla.to_device(queue, a).with_queue(None)
    np.testing.assert_allclose((la.asarray(frozen) + 1).get(), a + 1)


def test_queue_choice_is_per_thread():
    device = default_queue().device
    queue = cl.CommandQueue(cl.Context([device]))
    seen = []
    with using_queue(queue):
        assert default_queue() is queue
        worker = threading.Thread(target=lambda: seen.append(default_queue()))
        worker.start()
        worker.join()
    assert seen[0] is not queue
    assert default_queue() is not queue
