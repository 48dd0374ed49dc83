"""A compiled function's kernels as one sequential kernel
(:mod:`lazyarray.run.sequence`): results equal NumPy's for every kind of
step (gathers with negative indices, reductions inside and around
elementwise work, scans, joins, fills, 0-d results, scalar parameters,
integer and boolean dtypes), one launch per call, chosen by size on CPU
devices, and the steps' own kernels where a step cannot be part of it."""

import numpy as np
import pyopencl.array as cla
import pytest

import kernelcore as lp
import lazyarray as la
from lazyarray.arraycontext.compile import CompiledFunction
from lazyarray.arraycontext.traversal import PlainWalker
from lazyarray.run import STATS, default_queue, sequence
from lazyarray.target import default_target


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _device(x):
    """*x* on the device as a computed array (a discretization's table)."""
    return la.asarray(cla.to_device(default_queue(), np.ascontiguousarray(x)))


def _calls(compiled, args_of, expected, calls=3, launches=1):
    """Call *compiled* on new arguments *calls* times; each call's results
    equal *expected*'s and each call after the first (which traces, and
    computes the invariant work) launches *launches* kernels."""
    for k in range(calls):
        args, host = args_of(k)
        before = STATS["launches"]
        out = compiled(*args)
        assert k == 0 or STATS["launches"] - before == launches
        ref = expected(*host)
        assert set(out) == set(ref)
        for name, value in ref.items():
            got = out[name].get() if hasattr(out[name], "get") else np.asarray(out[name])
            assert got.shape == np.shape(value) and got.dtype == np.asarray(value).dtype, name
            np.testing.assert_allclose(got, value, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("group", ["device's", 256])
def test_a_program_of_every_step_kind_runs_as_one_launch(rng, monkeypatch, group):
    """(*group*: the device kind's form, and one work-group of 256)"""
    if group != "device's":
        monkeypatch.setitem(sequence.SEQUENCE_GROUP, default_target().kind, group)
    n, rows = 240, 24
    idx_host = rng.integers(-n, n, 3 * n)          # negative indices count from the end
    idx = _device(idx_host)
    table = _device(np.arange(12.0).reshape(3, 4))

    def f(t, u, k):
        g = u[idx]
        m = u.reshape(rows, n // rows)
        centred = m - la.max(m, axis=1, keepdims=True)      # a reduction inside
        joined = la.concatenate([u[:5] * t, u[5:] - t])
        return {"gathered": la.sin(g) * t + g,
                "softmax": la.exp(centred) / la.sum(la.exp(centred), axis=1, keepdims=True),
                "total": la.sum(u * u),                          # 0-d
                "running": la.cumsum(k, axis=0),                 # integer scan
                "joined": joined,
                "mask": (u > t) & (k % 3 == 0),                  # booleans
                "zeros": la.zeros((3, 4)) + table * 0,
                "matrix": m @ m[:10].T}

    def expected(t, u, k):
        g = u[idx_host]
        m = u.reshape(rows, n // rows)
        centred = m - m.max(axis=1, keepdims=True)
        return {"gathered": np.sin(g) * t + g,
                "softmax": np.exp(centred) / np.exp(centred).sum(axis=1, keepdims=True),
                "total": np.sum(u * u), "running": np.cumsum(k, axis=0),
                "joined": np.concatenate([u[:5] * t, u[5:] - t]),
                "mask": (u > t) & (k % 3 == 0), "zeros": np.zeros((3, 4)),
                "matrix": m @ m[:10].T}

    def args_of(call):
        u, k = rng.standard_normal(n), rng.integers(-50, 50, n)
        t = 0.25 + call
        return (t, la.asarray(u), la.asarray(k)), (t, u, k)

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    _calls(compiled, args_of, expected)
    program, = compiled.programs.values()
    assert len(program.sequences) == 1 and program.launches == 1 and len(program.steps) > 5


def test_small_programs_are_one_launch_and_large_ones_are_not(rng, monkeypatch):
    def f(u):
        s = la.sum(u)
        return {"a": u / s, "b": la.cumsum(u) * 2}

    def expected(u):
        return {"a": u / np.sum(u), "b": np.cumsum(u) * 2}

    def args_of(call):
        u = rng.random(500) + 0.5
        return (la.asarray(u),), (u,)

    small = CompiledFunction(f, PlainWalker(), None)
    _calls(small, args_of, expected, launches=1)
    monkeypatch.setitem(sequence.SEQUENCE_WORK, default_target().kind, 100)
    large = CompiledFunction(f, PlainWalker(), None)
    program_launches = None
    for call in range(2):
        args, host = args_of(call)
        before = STATS["launches"]
        out = large(*args)
        program_launches = STATS["launches"] - before
        for name, value in expected(*host).items():
            np.testing.assert_allclose(out[name].get(), value, rtol=1e-12)
    program, = large.programs.values()
    assert not program.sequences and program_launches == program.launches >= 2


def test_a_step_that_is_an_external_call_keeps_the_steps(rng):
    """A sort (an external call of the graph) cannot be part of a kernel:
    the program runs kernel by kernel, with NumPy's answers."""

    def f(u):
        return {"s": la.sort(u * 2) + 1}

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    for _ in range(2):
        u = rng.standard_normal(100)
        np.testing.assert_array_equal(compiled(la.asarray(u))["s"].get(), np.sort(u * 2) + 1)
    program, = compiled.programs.values()
    assert not program.sequences and program.launches == len(program.steps)


def test_the_sequence_is_one_kernel_of_the_device_kinds_form(rng):
    def f(u):
        return {"a": la.exp(u) + 1, "b": la.sum(u.reshape(10, 10), axis=0)}

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    u = rng.standard_normal(100)
    compiled(la.asarray(u))
    program, = compiled.programs.values()
    knl = program.sequences[0].kernel()
    assert knl.name == "lazyarray_program" and not program.sequences[0].constants
    # (sequential loops in one work-item on a CPU; a GPU's work-group shares them)
    group = sequence.SEQUENCE_GROUP[default_target().kind]
    tags = {str(tag) for tag in knl.iname_tags.values() if tag is not None}
    assert tags == (set() if group is None else {"l.0"})
    assert sequence.program_work([step for step, _ in program.steps]) == 100 + 100


def test_gathers_by_constant_tables_in_bounds_read_them_unwrapped(rng):
    """A gather by a table of the program (a discretization's connection)
    whose values all lie in ``[0, n)`` reads positions as they are, and the
    reshapes after it divide with C's operators; a table holding negative
    indices keeps NumPy's wrap. Results are NumPy's either way."""
    import kernelcore as lp
    inside_host = rng.integers(0, 60, 90)
    wrapped_host = rng.integers(-60, 60, 90)
    inside, wrapped = _device(inside_host), _device(wrapped_host)

    def f(u):
        m = u.reshape(6, 10)
        return {"in": m.reshape(60)[inside] * 2, "wrapped": m.reshape(60)[wrapped] + 1}

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    u = rng.standard_normal(60)
    out = compiled(la.asarray(u))
    np.testing.assert_array_equal(out["in"].get(), u[inside_host] * 2)
    np.testing.assert_array_equal(out["wrapped"].get(), u[wrapped_host] + 1)
    program, = compiled.programs.values()
    code = lp.generate_code_v2(program.sequences[0].kernel()).device_code()
    # (one use, for the wrapped table's read, and the helper's definition)
    assert code.count("loopy_mod_int64(") - code.count("long loopy_mod_int64(") == 1


def test_value_ranges_follow_casts_sums_and_the_negative_index_wrap():
    from lazyarray.graph import Const, Input, Map
    from lazyarray.lower.intervals import value_range
    table = Input(cla.to_device(default_queue(), np.arange(5)))
    known = {table: (0, 4)}
    wide = Map("astype", (table,), (5,), np.int64)
    negative = Map("less", (wide, Const(0, np.int64, False)), (5,), np.bool_)
    shifted = Map("add", (wide, Const(7, np.int64, False)), (5,), np.int64)
    wrap = Map("where", (negative, shifted, wide), (5,), np.int64)
    assert value_range(wrap, known) == (0, 4)
    assert value_range(shifted, known) == (7, 11)
    doubled = Map("multiply", (wide, Const(-2, np.int64, False)), (5,), np.int64)
    assert value_range(doubled, known) == (-8, 0)
    assert value_range(Map("where", (negative, shifted, wide), (5,), np.int64),
                       {table: (-3, 4)}) == (-3, 11)
    assert value_range(Map("sin", (wide,), (5,), np.float64), known) is None


def test_a_structure_is_lowered_once_then_found_in_memory_and_on_disk(rng, monkeypatch):
    """A second function of the same structure (a retrace, grudge making
    its operator again) reuses the built kernel; with the built kernels
    forgotten (a new process), the disk recipe serves it: lowered once."""
    lowered = []
    lower = sequence.sequence_kernel

    def counted(*args, **kwargs):
        lowered.append(1)
        return lower(*args, **kwargs)

    monkeypatch.setattr(sequence, "sequence_kernel", counted)
    scale = 1.0 + rng.random()      # (a structure no other test compiled)

    def f(u):
        return {"a": la.sqrt(la.abs(u)) * scale + la.sum(u)}

    u = rng.standard_normal(77)
    expected = np.sqrt(np.abs(u)) * scale + np.sum(u)
    for forget in (False, False, True):
        if forget:
            monkeypatch.setattr(sequence, "_LAUNCHES", {})
        compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
        for _ in range(2):
            np.testing.assert_allclose(compiled(la.asarray(u))["a"].get(), expected,
                                       rtol=1e-13)
    from lazyarray.run.cache import _enabled
    assert len(lowered) == (1 if _enabled() else 2)


@pytest.mark.parametrize("group", [1, 16, 64])
def test_one_work_group_shares_each_step_between_its_work_items(rng, monkeypatch, group):
    """The GPU form (one work-group, barriers between the steps), here on
    whatever device runs the tests: NumPy's results, one launch, for steps
    whose largest loop is shorter and longer than the group, 0-d results
    and reductions reading an earlier step's result across work-items."""
    monkeypatch.setitem(sequence.SEQUENCE_GROUP, default_target().kind, group)
    n = 100
    idx_host = rng.integers(0, n, 3 * n)
    idx = _device(idx_host)

    def f(t, u):
        g = u[idx] * t                                  # 300 elements
        m = g.reshape(30, 10)
        total = la.sum(m)                               # 0-d, reads every g
        rows = la.max(m, axis=1)                        # 30
        return {"g": g, "centred": m - rows[:, None] / total, "total": total,
                "flipped": la.cumsum(rows[::-1]), "pair": la.stack([total, t * total])}

    def expected(t, u):
        g = u[idx_host] * t
        m = g.reshape(30, 10)
        total, rows = np.sum(m), m.max(axis=1)
        return {"g": g, "centred": m - rows[:, None] / total, "total": total,
                "flipped": np.cumsum(rows[::-1]), "pair": np.stack([total, t * total])}

    def args_of(call):
        u = rng.standard_normal(n)
        return (0.5 + call, la.asarray(u)), (0.5 + call, u)

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    _calls(compiled, args_of, expected)
    program, = compiled.programs.values()
    knl = program.sequences[0].kernel()
    tags = {str(tag) for tag in knl.iname_tags.values() if tag is not None}
    assert tags == {"l.0"}
    assert len([i for i in knl.instructions if isinstance(i, lp.BarrierInstruction)]) \
        == len(program.steps) - 1


def test_runs_of_steps_around_an_external_call_are_one_kernel_each(rng):
    """A sort in the middle of a program (an external call: two steps of
    the program): the two steps before it form one kernel, the three after
    it another; four launches a call instead of seven, NumPy's results."""
    def f(u):
        v = u / la.sum(u * u)
        s = la.sort(v)
        return {"w": s - la.max(s) * la.sum(s)}

    def expected(u):
        s = np.sort(u / np.sum(u * u))
        return {"w": s - s.max() * s.sum()}

    def args_of(call):
        u = rng.standard_normal(64)
        return (la.asarray(u),), (u,)

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    _calls(compiled, args_of, expected, launches=4)
    program, = compiled.programs.values()
    assert sorted(program.sequences) == [0, 4] and len(program.steps) == 7
    assert program.launches == 4


def test_intermediates_are_the_launchs_own_and_results_stay_each_calls(rng, monkeypatch):
    """A one-kernel call allocates only the results it returns: the steps'
    intermediates live in the launch's own arrays, reused call after call,
    while every call's returned arrays keep their values."""
    made = []
    new_result = sequence.SequenceLaunch._new_result

    def counted(self, k):
        made.append(k)
        return new_result(self, k)

    monkeypatch.setattr(sequence.SequenceLaunch, "_new_result", counted)
    shift = 2.0 + rng.random()      # (a structure no other test compiled)

    def f(u, w):
        a = la.exp(-u * u) + shift
        b = la.cumsum(a) * w                # read by later steps only
        return {"s": la.sum(b), "b2": b[::2] - la.mean(a)}

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    inputs = [(rng.standard_normal(40), rng.standard_normal(40)) for _ in range(4)]
    outs, counts = [], []
    for u, w in inputs:
        before = STATS["launches"]
        outs.append(compiled(la.asarray(u), la.asarray(w)))
        assert STATS["launches"] - before == 1
        counts.append(len(made))
    for (u, w), out in zip(inputs, outs):
        a = np.exp(-u * u) + shift
        b = np.cumsum(a) * w
        np.testing.assert_allclose(out["s"].get(), np.sum(b), rtol=1e-12)
        np.testing.assert_allclose(out["b2"].get(), b[::2] - a.mean(), rtol=1e-12)
    # (the first call made every array; later ones only the two results)
    assert counts[0] > 2 and counts[3] - counts[2] == 2 and counts[2] - counts[1] == 2, counts


def test_results_are_freed_without_the_cycle_collector(rng):
    """A call's results (and their device buffers) go as soon as the caller
    drops them: flattening and rebuilding the call's containers leaves no
    reference cycle that only the cycle collector would break."""
    import gc
    import weakref

    def f(u):
        return {"a": la.sin(u) * 2.0, "b": [la.sum(u), u + 1.0]}

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    jitted = la.jit(f)
    u = la.asarray(rng.standard_normal(64))
    for call in (compiled, jitted):
        call(u)
        gc.collect()
        gc.disable()
        try:
            out = call(u)
            refs = [weakref.ref(out["a"]), weakref.ref(out["b"][1])]
            del out
            assert [r() for r in refs] == [None, None], call
        finally:
            gc.enable()


def test_a_work_group_larger_than_the_device_allows_is_the_devices_largest(rng, monkeypatch):
    """(Some GPUs allow 256 work-items: the one-kernel form still runs, as
    one work-group of the device's largest size, instead of failing over to
    the steps' own kernels.)"""
    monkeypatch.setitem(sequence.SEQUENCE_GROUP, default_target().kind, 1 << 20)
    n = default_queue().device.max_work_group_size + 904

    def f(u):
        return {"a": la.sin(u) * 2.0 + la.sum(u), "b": la.cumsum(u)}

    def args_of(call):
        u = rng.standard_normal(n)
        return (la.asarray(u),), (u,)

    compiled = CompiledFunction(f, PlainWalker(), None, single_launch=True)
    _calls(compiled, args_of, lambda u: {"a": np.sin(u) * 2.0 + np.sum(u), "b": np.cumsum(u)})
