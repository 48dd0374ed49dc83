"""The core's promises for real programs: a new scalar value reuses the
kernel, loops of any length run in bounded memory, reading elements one by one
compiles nothing, and users can wait for and time the device."""

from __future__ import annotations

import ast
import gc
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import lazyarray as la
from lazyarray import graph
from lazyarray.run import STATS
from tests.helpers import ROOT


def _planned(fn) -> int:
    """How many kernel structures *fn* planned."""
    before = STATS["planned"]
    fn()
    return STATS["planned"] - before


# {{{ 1. scalars are values, not part of the kernel

def test_a_time_loop_with_a_new_dt_each_step_plans_its_kernels_once(queue):
    u0 = np.linspace(0, 1, 257).astype(np.float32)
    ref = u0.copy()
    u = la.asarray(u0)

    def step(u, dt):
        return u + dt * (u[2:] - 2 * u[1:-1] + u[:-2]).sum() * 0.5 - dt

    def loop() -> None:
        nonlocal u, ref
        for k in range(100):
            dt = 1e-3 * (1 + 0.37 * k)
            u = step(u, dt).compute()
            ref = step(ref, dt)

    planned = _planned(loop)
    assert planned <= 2, f"{planned} kernels planned for 100 steps of two kernels"
    assert u.dtype == np.float32
    np.testing.assert_allclose(u.get(), ref, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float32, np.float64,
                                   np.complex64])
def test_new_scalar_values_reuse_the_kernel_with_numpy_typing(queue, dtype):
    h = (np.arange(12) % 5).astype(dtype)
    x = la.asarray(h)
    results = []

    def run() -> None:
        for v in (1, 2, 3, 7, 0, -1 if np.dtype(dtype).kind != "u" else 9):
            results.append((v, (x * v + 3).get()))

    planned = _planned(run)
    for v, got in results:
        want = h * v + 3
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # (a value equal to another constant of the kernel shares its argument)
    assert planned <= 2


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, 2.5])
def test_special_float_scalars_are_arguments_too(queue, value):
    h = np.array([1.0, -2.0, 0.0, np.inf], np.float32)
    x = la.asarray(h)
    with np.errstate(all="ignore"):
        for got, want in [((x * value).get(), h * value), ((x + value).get(), h + value),
                          (la.full((3,), value).get(), np.full((3,), value)),
                          (la.maximum(x, value).get(), np.maximum(h, value))]:
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
            # (zeros keep their sign; a NaN's sign bit is the platform's)
            real = ~np.isnan(want)
            np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))


def test_a_loops_scalars_are_recorded_once(queue):
    """The constant of a Python scalar used every step is one node, kept
    between steps (recording it costs a lookup); zeros of either sign stay
    apart, and signs and values are NumPy's."""
    from lazyarray.ops.inputs import node_of
    assert node_of(0.25) is node_of(0.25) and node_of(7) is node_of(7)
    assert node_of(7) is not node_of(7.0) and node_of(True) is not node_of(1)
    h = np.array([1.0, -2.0, 3.0])
    x = la.asarray(h)
    for _ in range(3):
        for value in (0.0, -0.0, 0.5, -0.5, 3, 2**62):
            got, want = (x * value).get(), h * value
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_scalar_arguments_keep_their_full_width(queue):
    """Kernel arguments are typed as their values (fuzzer finds: a shift by
    2**32 and a uint64 constant were narrowed to int when compared or
    combined with a literal)."""
    i64 = np.array([-8, 24, 100, -1, 2**40], np.int64)
    u8 = np.array([True, False])
    f64 = np.array([1.0, 2.0])
    cases = [
        (lambda m, x: x >> 4294967296, i64), (lambda m, x: x << 2**33, i64),
        (lambda m, x: x > 2**35, i64), (lambda m, x: m.where(x < 2**36, x, 2**37), i64),
        (lambda m, x: x - np.uint64(2**63), u8), (lambda m, x: x + 2**62, i64),
        (lambda m, x: x * (1 + 1e-12) - x, f64), (lambda m, x: m.maximum(x, 2**40 + 1), i64)]
    for f, h in cases:
        want = f(np, h)
        got = f(la, la.asarray(h)).get()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_jit_traces_python_numbers_as_values(queue):
    @la.jit
    def step(u, dt, k):
        return u + dt * u * u - 2 * dt + k

    u0 = np.linspace(0, 1, 50).astype(np.float32)
    u = la.asarray(u0)
    for i in range(20):
        dt = 0.01 * (i + 1)
        r = step(u, dt, 3)
        assert r.dtype == np.float32            # dt stays weak, as in NumPy
        np.testing.assert_allclose(r.get(), u0 + dt * u0 * u0 - 2 * dt + 3, rtol=1e-6)
    assert step.trace_count == 1
    step(u, 0.5, 2.5)                          # a float where an int was: a new signature
    assert step.trace_count == 2


def test_jit_refuses_an_int_that_its_conversion_cannot_hold(queue):
    @la.jit
    def add(x, n):
        return x + n

    x = la.asarray(np.arange(5, dtype=np.int8))
    np.testing.assert_array_equal(add(x, 3).get(), np.arange(5, dtype=np.int8) + 3)
    with pytest.raises(OverflowError, match="300 out of bounds for int8"):
        add(x, 300)
    with pytest.raises(OverflowError):
        np.arange(5, dtype=np.int8) + 300       # (NumPy's own error)


def test_reading_elements_one_by_one_compiles_nothing(queue):
    h = np.random.default_rng(0).random((40, 25))
    x = la.asarray(h)
    (x * 2).compute()
    before = STATS["launches"]
    start = time.perf_counter()
    values = [float(v) for v in x.ravel()]
    rows = [row.get() for row in x]
    elapsed = time.perf_counter() - start
    assert STATS["launches"] == before
    assert values == h.ravel().tolist()
    np.testing.assert_array_equal(np.array(rows), h)
    assert elapsed < 5, f"1,000 element reads took {elapsed:.1f} s"

@pytest.mark.parametrize("key", [
    (1,), (1, 2), (1, 2, 3), (slice(1, 2),), (1, slice(0, 2)), (1, slice(1, 3), 2),
    (slice(None), 1), (Ellipsis, 1), (None, 1), (1, None), (slice(None, None, -1),),
    (0, slice(None, None, 2)), (slice(0, 1), slice(1, 2)), ()])
def test_parts_of_computed_arrays_read_as_numpy_reads_them(queue, key):
    h = np.arange(24.0).reshape(2, 3, 4)
    x = (la.asarray(h) * 1).compute()
    for got, want in [(x[key], h[key]), (x.reshape(6, 4)[key[:2]], h.reshape(6, 4)[key[:2]]),
                      ((x[key] + 1), h[key] + 1)]:
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.get(), want)
        np.testing.assert_array_equal((got * 2).get(), want * 2)

# }}}


# {{{ 2. programs of any length

def _interned() -> int:
    gc.collect()
    return len(graph._INTERNED)


def test_a_loop_saving_a_new_column_each_step_compiles_once(queue):
    """``history[:, n] = u`` with a new n each step: after a few offsets the
    region's offset is a kernel argument, so the loop plans a few kernels,
    not one per column."""
    rng = np.random.default_rng(0)
    u_np = rng.random(6).astype(np.float32)
    history_np = np.zeros((6, 60), np.float32)
    u, history = la.asarray(u_np), la.asarray(history_np.copy())
    for n in range(60):
        if n == 30:             # (the first offsets compile one kernel each)
            before = STATS["planned"]
        u = u * 0.5 + 1.0
        u_np = u_np * np.float32(0.5) + np.float32(1.0)
        history[:, n] = u
        history_np[:, n] = u_np
        history.compute()
    assert STATS["planned"] == before           # nothing new in the last 30 steps
    np.testing.assert_array_equal(history.get(), history_np)


def test_a_loop_reading_a_new_column_each_step_compiles_once(queue):
    """``x[:, j]`` of a computed array with a new j each step: the column's
    offset becomes a kernel argument after a few offsets."""
    x_np = np.random.default_rng(2).random((50, 40)).astype(np.float32)
    x = la.asarray(x_np)
    total, total_np = la.zeros(50, np.float32), np.zeros(50, np.float32)
    for j in range(40):
        if j == 20:             # (the first offsets compile one kernel each)
            before = STATS["planned"]
        total = total + x[:, j] * 2.0
        total_np = total_np + x_np[:, j] * np.float32(2.0)
        total.compute()
    assert STATS["planned"] == before           # nothing new in the last 20 steps
    np.testing.assert_array_equal(total.get(), total_np)


REGION_KEYS = [
    (slice(None), 7), (3, slice(2, 9)), (slice(1, 5), slice(30, 5, -5)),
    (slice(None), slice(None, None, -3)), (2, slice(1, 30, 4)), (slice(2, 4),),
    (-1,), (slice(None, None, 2), -2), (Ellipsis, slice(3, 4)),
]


@pytest.mark.parametrize("key", REGION_KEYS, ids=[str(k) for k in REGION_KEYS])
@pytest.mark.parametrize("value_kind", ["array", "scalar", "broadcast"])
def test_regions_with_offset_arguments_match_numpy(queue, monkeypatch, key,
                                                               value_kind):
    """Every region read and assignment through the kernel-argument form
    (forced from the first offset) reads and writes what NumPy does, also
    for int and bool arrays."""
    from lazyarray.ops import regions
    monkeypatch.setattr(regions, "REGION_OFFSETS", regions.RegionOffsets(limit=1))
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.int16, np.bool_):
        target = (rng.random((6, 40)) * 10).astype(dtype)
        region = target[key].shape
        value = ((rng.random(region) * 10).astype(dtype) if value_kind == "array" else
                 dtype(3) if value_kind == "scalar" else
                 (rng.random(region[-1:]) * 10).astype(dtype))
        lazy = la.asarray(target.copy())
        np.testing.assert_array_equal(lazy[key].get(), target[key])
        np.testing.assert_array_equal((lazy[key] * 1).get(), target[key] * 1)
        lazy[key] = value
        expected = target.copy()
        expected[key] = value
        np.testing.assert_array_equal(lazy.get(), expected)



@pytest.mark.parametrize("compute_each_step", [False, True])
def test_long_eager_loops_run_in_bounded_memory(queue, compute_each_step):
    h = np.linspace(0, 1, 64)
    x, ref = la.asarray(h), h.copy()
    counts = []
    for k in range(3000):
        x = x * 0.999 + 0.001
        ref = ref * 0.999 + 0.001
        if compute_each_step:
            x.compute()
        if k % 1000 == 999:
            counts.append(_interned())
    np.testing.assert_allclose(x.get(), ref, rtol=1e-12)
    # the graph held alive does not grow with the number of steps
    assert counts[-1] <= counts[0] + 10, counts


def test_eager_loop_time_is_linear_in_its_steps(queue):
    x = la.asarray(np.ones(16))

    def run(n: int) -> float:
        nonlocal x
        start = time.perf_counter()
        for _ in range(n):
            x = x * 1.0 + 0.0
        x.compute()
        return time.perf_counter() - start

    run(500)                                    # (kernels planned)
    short, long = run(1000), run(4000)
    assert long < 8 * short, f"1,000 steps: {short:.2f} s, 4,000 steps: {long:.2f} s"


@pytest.mark.slow
def test_a_hundred_thousand_eager_steps(queue):
    x = la.asarray(np.zeros(8))
    start = time.perf_counter()
    for _ in range(100_000):
        x = x + 1.0
    assert float(x.sum()) == 8 * 100_000
    assert time.perf_counter() - start < 600


def test_jit_of_a_thousand_step_python_loop(queue):
    @la.jit
    def relax(x, a, b):
        for _ in range(1000):
            x = x * a + b
        return x

    h = np.linspace(0, 1, 33)
    want = h.copy()
    for _ in range(1000):
        want = want * 0.995 + 0.004
    np.testing.assert_allclose(relax(la.asarray(h), 0.995, 0.004).get(), want, rtol=1e-12)
    np.testing.assert_allclose(relax(la.asarray(h), 0.995, 0.004).get(), want, rtol=1e-12)
    assert relax.trace_count == 1


def test_a_deep_lazy_graph_evaluates_without_recursion_errors(queue):
    h = np.arange(10.0)
    x = la.asarray(h)
    y = x
    for _ in range(5000):
        y = -y
    np.testing.assert_array_equal(y.get(), h)

# }}}


# {{{ 7. waiting and timing

def test_block_until_ready_and_synchronize(queue):
    x = la.asarray(np.arange(5.0))
    y = x * 2
    assert y.block_until_ready() is y
    la.synchronize()
    np.testing.assert_array_equal(y.get(), np.arange(5.0) * 2)


def test_info_logging_reports_kernel_times(queue, caplog):
    x = la.asarray(np.arange(7.0))
    with caplog.at_level(logging.INFO, logger="lazyarray"):
        (x * 3 + 1).get()
        (x * 4 + 1).get()
    times = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ran ")]
    assert len(times) == 2, times
    assert all(" ms " in t for t in times)


def test_an_applications_info_logging_does_not_time_kernels(queue, caplog, monkeypatch):
    """The root logger at info (``logging.basicConfig(level=logging.INFO)``)
    leaves kernels untimed: timing them waits for the device after each one."""
    import lazyarray.run.steps as steps
    monkeypatch.setattr(logging.getLogger("lazyarray"), "level", logging.NOTSET)
    finishes = []
    real_finish = steps.default_queue().finish
    x = la.asarray(np.arange(9.0))
    with caplog.at_level(logging.INFO):
        assert logging.getLogger("lazyarray.run.steps").isEnabledFor(logging.INFO)
        monkeypatch.setattr(type(steps.default_queue()), "finish",
                            lambda q: finishes.append(1) or real_finish())
        np.testing.assert_array_equal((x * 5 + 2).get(), np.arange(9.0) * 5 + 2)
    assert not [r for r in caplog.records if r.getMessage().startswith("ran ")]
    assert not finishes

# }}}


def test_a_loop_testing_a_value_each_step_computes_its_named_arrays(queue):
    """``while float(change) > tol``: each step computes the named array it
    tests, so the next step plans only its own new work (planning the whole
    history anew each step was quadratic)."""
    from lazyarray.values import NAMED_DEPTH

    def run(xp):
        p = xp.zeros((12, 12))
        p[-1, :] = 1.0
        changes = []
        for _ in range(60):
            pn = p.copy()
            p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1]
                                    + pn[:-2, 1:-1])
            changes.append(float(np.abs(p - pn).sum()))
        return p, changes

    p, changes = run(la)
    p_np, changes_np = run(np)
    np.testing.assert_allclose(changes, changes_np, rtol=1e-12)
    np.testing.assert_allclose(p.get(), p_np, rtol=1e-12)
    assert p.node.depth < NAMED_DEPTH + 10     # (p is computed as the loop goes)


def test_import_contracts_hold():
    """The stages import downward only (.importlinter's contracts, also run by CI)."""
    linter = Path(sys.executable).parent / "lint-imports"
    command = [str(linter)] if linter.exists() else [shutil.which("lint-imports") or "lint-imports"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "BROKEN" not in result.stdout and result.stdout.count("KEPT") >= 10


def _imported_modules(tree: ast.Module, name: str, modules: set[str]) -> set[str]:
    """The modules of *modules* that module *name* imports anywhere (inside
    functions and ``TYPE_CHECKING`` blocks too)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            # ``from package import x`` runs the package's ``__init__`` too
            targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        for target in targets:
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                found.add(target)
    return found


@pytest.mark.parametrize("package", ["lazyarray", "kernelcore"])
def test_modules_import_one_another_without_cycles(package):
    """No chain of imports, those inside functions and of packages' ``__init__``
    included, leads from a module back to itself: each stage needs only those
    below it (deferred loading goes through lazyarray.deferred, not function
    bodies)."""
    root = ROOT / package
    files = {".".join((package, *p.relative_to(root).with_suffix("").parts))
             .removesuffix(".__init__"): p for p in root.rglob("*.py")}
    imports = {name: _imported_modules(ast.parse(path.read_text()), name, set(files))
               for name, path in files.items()}
    state: dict[str, int] = {}          # 1: on the current path, 2: done

    def cycle_from(name: str, path: list[str]) -> list[str] | None:
        state[name] = 1
        for target in sorted(imports[name]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = cycle_from(target, [*path, target])
                if found:
                    return found
        state[name] = 2
        return None

    for name in sorted(files):
        if name not in state:
            cycle = cycle_from(name, [name])
            assert cycle is None, " -> ".join(cycle)


def _node_kinds() -> list[type]:
    import lazyarray.calls  # noqa: F401  (the external call kinds)
    kinds, stack = [], list(graph.Node.__subclasses__())
    while stack:
        kind = stack.pop()
        kinds.append(kind)
        stack.extend(kind.__subclasses__())
    return kinds


def test_every_node_kind_has_a_method_in_every_mapper():
    from lazyarray.plan.accesses import Accesses, OperandUses
    from lazyarray.plan.structure import StructureFields
    kinds = _node_kinds()
    assert len(kinds) >= 13
    leaves = {"map_input", "map_const", "map_param"}
    for kind in kinds:
        for mapper in (Accesses, OperandUses):
            assert callable(getattr(mapper, kind.mapper_method, None)), (mapper, kind)
        if kind.mapper_method not in leaves:
            assert callable(getattr(StructureFields, kind.mapper_method, None)), kind


def test_a_mapper_refuses_a_kind_it_does_not_handle():
    from lazyarray.mapper import CachedMapper, NodeMapper, UnhandledNodeKind

    class OnlyMaps(CachedMapper):
        def map_map(self, node):
            return node.op

    x = graph.Const(2.0, np.float64, False)
    y = graph.Map("negative", (x,), (), np.float64)
    only = OnlyMaps()
    assert only(y) == "negative" and only(y) == "negative"
    with pytest.raises(UnhandledNodeKind, match="OnlyMaps has no method map_const for Const"):
        only(x)
    with pytest.raises(UnhandledNodeKind):
        NodeMapper()(y)
