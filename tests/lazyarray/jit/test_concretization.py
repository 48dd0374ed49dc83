"""Inside ``la.jit``, conversions that need an array's value (``float``,
``int``, ``bool``/``if``, ``.item()``, ``.get()``, ``np.asarray``,
``print``/``repr``, ``range(n)``) raise ConcretizationError at the user's
line instead of freezing a trace-time value into later calls; outside jit
they work, and the suggested rewrites work under jit."""

import inspect

import numpy as np
import pytest

import lazyarray as la


def _line_of(fn, marker: str) -> int:
    """The line number of the line of *fn*'s source containing *marker*."""
    lines, first = inspect.getsourcelines(fn)
    (offset,) = [k for k, line in enumerate(lines) if marker in line]
    return first + offset


def _check_refused(fn, marker, *args, what=None, **jit_options):
    """Calling ``la.jit(fn)`` raises ConcretizationError naming this file,
    the line of *marker* and the source text there."""
    jitted = la.jit(fn, **jit_options)
    with pytest.raises(la.ConcretizationError) as info:
        jitted(*args)
    message = str(info.value)
    line = _line_of(fn, marker)
    assert f"{__file__}:{line} " in message, message
    assert marker in message
    assert fn.__name__ in message
    if what is not None:
        assert what in message
    assert "la.where" in message and "static_argnames" in message
    return message


_X = np.array([1.5, -2.0, 3.0], np.float32)


def total_as_float(x):
    return x * float(x.sum())                  # float-site


def total_as_int(x):
    return x * int(x.sum())                    # int-site


def total_as_complex(x):
    return x * complex(x.sum()).real           # complex-site


def total_as_item(x):
    return x * x.sum().item()                  # item-site


def branch_on_value(x):
    if x.sum() > 0:                            # if-site
        return x * 2
    return x


def host_copy(x):
    return la.asarray(x.get() * 2)             # get-site


def numpy_conversion(x):
    return la.asarray(np.asarray(x) * 2)       # asarray-site


def printing(x):
    print(x)                                   # print-site
    return x


def representing(x):
    return x + len(repr(x))                    # repr-site


def negated_truth(x):
    return x * (not x[0])                      # not-site


@pytest.mark.parametrize("fn, marker, what", [
    (total_as_float, "float-site", "float()"),
    (total_as_int, "int-site", "int()"),
    (total_as_complex, "complex-site", "complex()"),
    (total_as_item, "item-site", ".item()"),
    (branch_on_value, "if-site", "bool()"),
    (host_copy, "get-site", ".get()"),
    (numpy_conversion, "asarray-site", "np.asarray()"),
    (printing, "print-site", "print()"),
    (representing, "repr-site", "repr()"),
    (negated_truth, "not-site", "bool()"),
])
def test_conversions_refuse_under_jit_at_the_users_line(queue, fn, marker, what):
    message = _check_refused(fn, marker, _X, what=what)
    assert "frozen" in message


@pytest.mark.parametrize("fn, expected", [
    (total_as_float, _X * np.float32(2.5)),
    (total_as_int, _X * 2),
    (total_as_complex, _X * np.float32(2.5)),
    (total_as_item, _X * np.float32(2.5)),
    (branch_on_value, _X * 2),
    (host_copy, _X * 2),
    (numpy_conversion, _X * 2),
    (representing, _X + len("lazyarray([ 1.5, -2. ,  3. ], dtype=float32)")),
])
def test_the_same_functions_work_without_jit(queue, fn, expected):
    result = fn(la.asarray(_X))
    np.testing.assert_allclose(result.get(), expected, rtol=1e-6)


def test_print_and_repr_work_without_jit(queue, capsys):
    x = la.asarray(_X)
    printing(x)
    assert capsys.readouterr().out.strip() == str(np.asarray(_X))     # as NumPy prints
    assert repr(x) == "lazyarray([ 1.5, -2. ,  3. ], dtype=float32)"


def test_a_refused_trace_leaves_the_function_usable(queue):
    jitted = la.jit(total_as_float)
    with pytest.raises(la.ConcretizationError):
        jitted(_X)
    with pytest.raises(la.ConcretizationError):          # (nothing frozen: refused again)
        jitted(_X * 2)
    np.testing.assert_allclose(total_as_float(la.asarray(_X)).get(),
                               _X * float(_X.sum()), rtol=1e-6)


def test_the_error_is_a_type_error_and_a_lazyarray_error():
    assert issubclass(la.ConcretizationError, TypeError)
    assert issubclass(la.ConcretizationError, la.LazyArrayError)


def sized_by_argument(x, n):
    total = x
    for _ in range(n):                         # range-site
        total = total * 2
    return total


def branch_on_argument(x, dt):
    if dt > 0:                                 # dt-site
        return x + dt
    return x - dt


def sliced_by_argument(x, n):
    return x[:n]                               # slice-site


def test_scalar_arguments_refuse_as_sizes_and_branches_and_name_the_argument(queue):
    message = _check_refused(sized_by_argument, "range-site", _X, 3, what="index or size")
    assert "static_argnames=('n',)" in message
    message = _check_refused(branch_on_argument, "dt-site", _X, 0.5, what="bool()")
    assert "static_argnames=('dt',)" in message
    message = _check_refused(sliced_by_argument, "slice-site", _X, 2)
    assert "static_argnames=('n',)" in message


def test_static_arguments_are_the_fix_for_sizes_and_branches(queue):
    sized = la.jit(sized_by_argument, static_argnames=("n",))
    for n in (0, 1, 3, 3):
        np.testing.assert_allclose(sized(_X, n).get(), _X * 2.0 ** n)
    assert sized.trace_count == 3
    branched = la.jit(branch_on_argument, static_argnames=("dt",))
    for dt in (0.5, -0.25):
        np.testing.assert_allclose(branched(_X, dt).get(), branch_on_argument(_X, dt))


def test_where_is_the_fix_for_a_branch_on_values(queue):
    @la.jit
    def doubled_if_positive(x):
        return la.where(x.sum() > 0, x * 2, x)

    for data in (_X, -_X, _X * 3):
        expected = branch_on_value(data)
        np.testing.assert_allclose(doubled_if_positive(data).get(), expected)
    assert doubled_if_positive.trace_count == 1


def test_the_value_stays_an_array_under_jit(queue):
    """The fix for float(x.sum()): keep the total a 0-d array; each call
    uses its own total (nothing frozen)."""
    @la.jit
    def scaled(x):
        return x * x.sum()

    for data in (_X, _X + 1):
        np.testing.assert_allclose(scaled(data).get(), data * data.sum(), rtol=1e-6)


def test_shapes_and_lengths_are_fine_under_jit(queue):
    @la.jit
    def by_shape(x):
        out = x
        for _ in range(len(x)):
            out = out + x.shape[0]
        return out.reshape(x.shape[0], 1)

    np.testing.assert_allclose(by_shape(_X).get(), (_X + 9).reshape(3, 1))


def test_constants_made_inside_a_traced_function_still_work(queue):
    @la.jit
    def shifted(x):
        return x + la.asarray(np.arange(3, dtype=np.float32))

    np.testing.assert_allclose(shifted(_X).get(), _X + np.arange(3))
    np.testing.assert_allclose(shifted(_X * 2).get(), _X * 2 + np.arange(3))


def test_allclose_under_jit_refuses_at_the_users_line(queue):
    def compare(x):
        return x * la.allclose(x, x)           # allclose-site

    _check_refused(compare, "allclose-site", _X, what="bool()")


def test_compute_inside_a_trace_does_not_freeze_the_value(queue):
    @la.jit
    def f(x):
        y = (x * 2).compute().block_until_ready()
        return y + 1

    np.testing.assert_array_equal(f(np.ones(3)).get(), np.full(3, 3.0))
    np.testing.assert_array_equal(f(np.zeros(3)).get(), np.ones(3))


def test_assigning_into_an_argument_inside_jit_changes_the_callers_array(queue):
    def bump(u, v):
        u[0] = 5.0
        v += 1
        return u + v

    def rebinds(u):
        u = u + 1                           # a new value under the same name
        return u

    jitted, rebinding = la.jit(bump), la.jit(rebinds)
    for _ in range(2):
        for make in (la.asarray, np.array, lambda h: la.asarray(h).compute().node.data):
            h_u, h_v = np.zeros(3), np.arange(3.0)
            u, v = make(h_u.copy()), make(h_v.copy())
            got = jitted(u, v)
            want = bump(h_u, h_v)                  # (NumPy changes h_u and h_v)
            np.testing.assert_array_equal(got.get(), want)
            for changed, host in ((u, h_u), (v, h_v)):
                np.testing.assert_array_equal(np.asarray(changed.get() if hasattr(
                    changed, "get") else changed), host)
        x = la.asarray(np.zeros(3))
        np.testing.assert_array_equal(rebinding(x).get(), np.ones(3))
        np.testing.assert_array_equal(x.get(), np.zeros(3))     # not changed
    assert jitted.trace_count <= 3
