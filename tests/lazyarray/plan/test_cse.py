"""Values read more than once at the same index are computed once per kernel
(private temporaries), and the planner does not store them for that."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray import target as la_target
from lazyarray.plan import storage
from tests.helpers import launches_of


def _w2(x, steps, mod):
    for _ in range(steps):
        x = x * np.float32(0.999) + np.float32(0.5) * mod.sqrt(mod.abs(x) + 1)
    return x


@pytest.mark.parametrize("steps", [1, 8, 16])
def test_chains_reading_each_step_twice_are_one_kernel(queue, steps):
    # (16 steps are 80 operations deep; a longer chain is computed every
    # DEPTH_LIMIT = 100 operations as it is built)
    a = np.random.default_rng(0).random(1000).astype(np.float32)
    got, launches = launches_of(lambda: np.asarray(_w2(la.asarray(a), steps, np)))
    assert launches == 1
    np.testing.assert_allclose(got, _w2(a, steps, np), rtol=1e-5)


def test_the_planner_stores_only_the_result_of_a_chain(queue):
    y = _w2(la.asarray(np.ones(10, np.float32)), 30, np)
    assert [reason for _, reason in storage.storage_plan(y.node)] == ["result"]


def test_shared_values_become_temporaries(queue):
    x = la.asarray(np.linspace(0, 1, 50, dtype=np.float32))
    s = np.sin(x)
    code = la.explain(s * s + s, print_it=False, show_code=True)
    kernel = code[code.index("__kernel"):]
    # (OpenCL's sin, or kernelcore's kc_sin_f32 on PoCL's CPUs)
    assert kernel.count("sin(") + kernel.count("sin_f32(") == 1


@pytest.mark.parametrize("steps, kernels", [(2, 1), (3, 2)])
def test_distinct_indices_count_separately(queue, monkeypatch, steps, kernels):
    """A 3-point stencil: two steps read the first step's values at 3 distinct
    offsets (recomputed), three steps read them at 5 (stored, with a CPU's
    recompute limit; a GPU's is higher)."""
    monkeypatch.setattr(la_target, "device_profile", lambda device: ("cpu", 4))
    a = np.random.default_rng(1).random(40).astype(np.float32)
    u, v = la.asarray(a), a
    for _ in range(steps):
        u = u[:-2] + u[1:-1] + u[2:]
        v = v[:-2] + v[1:-1] + v[2:]
    got, launches = launches_of(lambda: np.asarray(u))
    assert launches == kernels
    np.testing.assert_allclose(got, v, rtol=1e-5)


def test_broadcast_operands_are_shared_along_the_broadcast(queue):
    rng = np.random.default_rng(2)
    a, b = rng.random((30, 20)).astype(np.float32), rng.random(20).astype(np.float32)
    x, y = la.asarray(a), la.asarray(b)
    e = np.exp(y)
    got, launches = launches_of(lambda: np.asarray(x * e + e * e))
    assert launches == 1
    np.testing.assert_allclose(got, a * np.exp(b) + np.exp(b) ** 2, rtol=1e-5)


def test_concatenation_parts_are_not_hoisted(queue):
    """A part of a concatenation is read only where it lies; computing it once
    for every element would read outside its input."""
    a = np.random.default_rng(3).random(12).astype(np.float32)
    x = la.asarray(a)
    left, right = x[:4] * x[:4], np.sqrt(x[4:]) * np.sqrt(x[4:])
    c = la.concatenate([left, right])
    got = np.asarray(c * c + c)
    ca = np.concatenate([a[:4] * a[:4], np.sqrt(a[4:]) ** 2])
    np.testing.assert_allclose(got, ca * ca + ca, rtol=1e-5)


def test_where_with_shared_branches(queue):
    a = np.random.default_rng(4).standard_normal((7, 9))
    x = la.asarray(a)
    pos = x > 0
    s = np.sqrt(np.abs(x))
    got = np.asarray(la.where(pos, s, -s) + la.where(pos, s * s, 0.0))
    sa = np.sqrt(np.abs(a))
    np.testing.assert_allclose(got, np.where(a > 0, sa, -sa) + np.where(a > 0, sa * sa, 0.0))


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_row_kernels_with_shared_values(queue, device_layouts, kind):
    """A softmax whose exponentials are also used elementwise: still one
    kernel, with either device's row layout."""
    device_layouts(kind, 4)
    a = np.random.default_rng(5).standard_normal((100, 70)).astype(np.float32)
    x = la.asarray(a)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    got, launches = launches_of(lambda: np.asarray(p * e + e))
    assert launches == 1
    ea = np.exp(a - a.max(axis=1, keepdims=True))
    pa = ea / ea.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, pa * ea + ea, rtol=1e-5, atol=1e-6)


_OPS = ["add", "multiply", "subtract", "sin", "sqrt_abs", "shift", "where", "roll"]


@st.composite
def _dags(draw):
    n = draw(st.integers(2, 9))
    ops = draw(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 20),
                                  st.integers(0, 20)), min_size=1, max_size=12))
    return n, ops


def _build(x, ops, mod):
    """A DAG over the values made so far: every value may be read again."""
    values = [x]
    for op, i, j in ops:
        a, b = values[i % len(values)], values[j % len(values)]
        if op == "add":
            values.append(a + b)
        elif op == "multiply":
            values.append(a * b)
        elif op == "subtract":
            values.append(a - a * b)
        elif op == "sin":
            values.append(mod.sin(a))
        elif op == "sqrt_abs":
            values.append(mod.sqrt(mod.absolute(a)))
        elif op == "shift":
            values.append(mod.concatenate([a[1:], a[:1]]))
        elif op == "roll":
            values.append(mod.roll(a, 2))
        else:
            values.append(mod.where(a > b, a, b * b))
    return values[-1]


@settings(max_examples=40)
@given(_dags())
def test_random_shared_dags_match_numpy(case):
    n, ops = case
    a = np.random.default_rng(n).uniform(-1, 1, n)
    expected = _build(a, ops, np)
    got = np.asarray(_build(la.asarray(a), ops, la))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)



@pytest.mark.parametrize("kind, kernels", [("cpu", 10), ("gpu", 5)])
def test_gpus_recompute_a_stencil_step_inside_the_next(device_layouts, kind, kernels):
    """Ten 5-point steps: a CPU stores every step; a GPU recomputes each step
    inside the next one (the limit is per device kind), halving the traffic."""
    device_layouts(kind, 4)
    a = np.random.default_rng(6).random((20, 24)).astype(np.float32)

    def step(u, cat):
        c = u[1:-1, 1:-1]
        inner = c + np.float32(0.2) * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                       + u[1:-1, :-2] - 4 * c)
        middle = cat([u[1:-1, :1], inner, u[1:-1, -1:]], axis=1)
        return cat([u[:1], middle, u[-1:]], axis=0)

    u, v = la.asarray(a), a
    for _ in range(10):
        u, v = step(u, la.concatenate), step(v, np.concatenate)
    got, launches = launches_of(lambda: np.asarray(u))
    assert launches == kernels
    np.testing.assert_allclose(got, v, rtol=1e-5)
