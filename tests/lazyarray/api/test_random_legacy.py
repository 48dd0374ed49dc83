"""la.random's NumPy streams: the legacy functions, RandomState and
default_rng give NumPy's numbers bit for bit for the same seed, as lazy
arrays (scalars as NumPy returns them); inside la.jit the same calls draw
new numbers from the device stream at every call."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

import lazyarray as la
import lazyarray.random as lr

# random_integers is deprecated by NumPy (and tested here as NumPy has it)
pytestmark = pytest.mark.filterwarnings("ignore:This function is deprecated")

# {{{ helpers


def assert_same(ours, theirs) -> None:
    """*ours* is what NumPy returned as *theirs*: a lazy array for an array of
    numbers (same dtype, shape and bits), else the same type and value."""
    if isinstance(theirs, np.ndarray) and theirs.dtype.kind in "biufc":
        assert isinstance(ours, la.LazyArray), type(ours)
        got = ours.get()
        assert got.dtype == theirs.dtype and got.shape == theirs.shape
        assert np.array_equal(got, theirs, equal_nan=True), (got, theirs)
    else:
        assert type(ours) is type(theirs), (type(ours), type(theirs))
        if isinstance(theirs, np.ndarray):
            assert np.array_equal(ours, theirs)
        else:
            assert ours == theirs or (ours != ours and theirs != theirs)


#: (name, args, kwargs) of a call of every legacy draw, some twice (scalars)
LEGACY_CALLS = [
    ("rand", (4, 5), {}), ("rand", (), {}), ("randn", (3, 2), {}), ("randn", (), {}),
    ("random", ((2, 3),), {}), ("random", (), {}), ("random_sample", (7,), {}),
    ("random_sample", (), {}), ("ranf", (5,), {}), ("sample", ((2, 2),), {}),
    ("randint", (5,), {}), ("randint", (-3, 9, (4, 4)), {}),
    ("randint", (0, 256), {"size": 6, "dtype": np.uint8}),
    ("random_integers", (6,), {"size": 5}), ("random_integers", (2, 4), {}),
    ("uniform", (), {}), ("uniform", (-2.0, 3.0, (3, 3)), {}),
    ("normal", (), {}), ("normal", (1.5, 0.25, 8), {}),
    ("standard_normal", (), {}), ("standard_normal", ((2, 5),), {}),
    ("choice", (10,), {}), ("choice", (10, 6), {}),
    ("choice", ([3, 1, 4, 1, 5],), {"size": 4, "p": [0.1, 0.2, 0.3, 0.2, 0.2]}),
    ("choice", (20, 5), {"replace": False}),
    ("permutation", (9,), {}), ("permutation", (np.arange(12).reshape(4, 3),), {}),
    ("bytes", (9,), {}),
    ("exponential", (2.0, 5), {}), ("poisson", (3.5, 6), {}), ("poisson", (), {}),
    ("binomial", (10, 0.3, 6), {}), ("beta", (2.0, 3.0, 4), {}), ("gamma", (2.0, 1.5, 4), {}),
    ("standard_exponential", (4,), {}), ("lognormal", (0.5, 0.2, 4), {}),
    ("laplace", (1.0, 2.0, 4), {}), ("logistic", (1.0, 2.0, 4), {}),
    ("multinomial", (20, [0.2, 0.3, 0.5], 3), {}),
    ("multivariate_normal", ([1.0, -1.0], [[2.0, 0.3], [0.3, 1.0]], 5), {}),
    ("dirichlet", ([1.0, 2.0, 3.0], 4), {}), ("geometric", (0.3, 5), {}),
    ("triangular", (0.0, 1.0, 3.0, 5), {}), ("standard_t", (4.0, 5), {}),
    ("chisquare", (3.0, 5), {}), ("weibull", (1.5, 5), {}), ("rayleigh", (2.0, 5), {}),
    ("pareto", (3.0, 5), {}), ("power", (2.0, 5), {}), ("vonmises", (0.5, 2.0, 5), {}),
    ("gumbel", (0.0, 2.0, 5), {}), ("hypergeometric", (10, 5, 6, 5), {}),
    ("negative_binomial", (5, 0.4, 5), {}), ("f", (5.0, 7.0, 5), {}),
    ("standard_cauchy", (5,), {}), ("standard_gamma", (2.5, 5), {}),
    ("zipf", (2.5, 5), {}), ("logseries", (0.6, 5), {}),
    ("noncentral_chisquare", (3.0, 1.5, 5), {}), ("noncentral_f", (3.0, 5.0, 1.5, 5), {}),
    ("wald", (1.0, 2.0, 5), {}), ("exponential", (), {}), ("gamma", (2.0,), {}),
]

# }}}


# {{{ the legacy functions


def test_every_legacy_function_is_there_with_numpys_signature():
    names = {n for n in dir(np.random) if not n.startswith("_")
             and callable(getattr(np.random, n)) and not isinstance(getattr(np.random, n), type)
             and n != "test"}
    assert names <= set(dir(lr)), sorted(names - set(dir(lr)))
    assert {name for name, _, _ in LEGACY_CALLS} | {"seed", "get_state", "set_state",
                                                    "shuffle", "default_rng"} >= names - {
        "get_bit_generator", "set_bit_generator"}
    for name in ("normal", "choice", "randint", "multivariate_normal", "uniform"):
        ours = inspect.signature(getattr(lr, name))
        assert list(ours.parameters) == list(inspect.signature(getattr(np.random, name)).parameters)
        assert getattr(lr, name).__doc__
    assert list(inspect.signature(lr.rand).parameters) == ["dims"]


@pytest.mark.parametrize("name, args, kwargs", LEGACY_CALLS,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(LEGACY_CALLS)])
def test_legacy_function_gives_numpys_numbers(name, args, kwargs):
    lr.seed(3)
    ours = getattr(lr, name)(*args, **kwargs)
    np.random.seed(3)
    theirs = getattr(np.random, name)(*args, **kwargs)
    assert_same(ours, theirs)


def test_interleaved_calls_follow_one_stream():
    lr.seed(11)
    ours = [getattr(lr, name)(*args, **kwargs) for name, args, kwargs in LEGACY_CALLS]
    np.random.seed(11)
    theirs = [getattr(np.random, name)(*args, **kwargs) for name, args, kwargs in LEGACY_CALLS]
    for a, b in zip(ours, theirs):
        assert_same(a, b)


def test_the_global_state_is_numpys():
    np.random.seed(8)                       # NumPy's seed seeds la.random too
    a = lr.rand(3)
    lr.seed(8)                              # and the other way round
    b = np.random.rand(3)
    assert_same(a, b)
    lr.seed(None)                           # fresh entropy
    assert not np.array_equal(lr.rand(4).get(), lr.rand(4).get())


def test_get_state_and_set_state_round_trip():
    lr.seed(5)
    state = lr.get_state()
    assert state[0] == "MT19937"
    a = lr.randn(6)
    lr.set_state(state)
    assert_same(lr.randn(6), a.get())
    np.random.set_state(state)
    assert_same(a, np.random.randn(6))
    d = lr.get_state(legacy=False)
    assert isinstance(d, dict) and d["bit_generator"] == "MT19937"
    assert np.array_equal(d["state"]["key"], np.random.get_state(legacy=False)["state"]["key"])
    state = lr.get_state()
    ours = lr.random(2)
    np.random.set_state(state)
    assert_same(ours, np.random.random(2))


def test_random_state_instances_have_numpys_methods_and_numbers():
    ours, theirs = lr.RandomState(42), np.random.RandomState(42)
    methods = {n for n in dir(np.random.RandomState) if not n.startswith("_")}
    assert methods <= set(dir(ours))
    for name, args, kwargs in LEGACY_CALLS:
        if name in ("ranf", "sample"):
            continue
        assert_same(getattr(ours, name)(*args, **kwargs), getattr(theirs, name)(*args, **kwargs))
    assert_same(ours.tomaxint(3), theirs.tomaxint(3))
    ours.seed(1)
    theirs.seed(1)
    assert_same(ours.rand(2, 2), theirs.rand(2, 2))
    state = ours.get_state()
    x = ours.normal(size=3)
    ours.set_state(state)
    assert_same(ours.normal(size=3), x.get())
    # an instance is its own stream: the global one is untouched
    lr.seed(2)
    lr.RandomState(9).rand(5)
    ours = lr.rand(2)
    np.random.seed(2)
    assert_same(ours, np.random.rand(2))
    gen = np.random.MT19937(4)
    assert_same(lr.RandomState(np.random.MT19937(4)).rand(3),
                np.random.RandomState(gen).rand(3))


def test_lazy_arguments_are_taken_as_their_values():
    mu = np.array([0.0, 10.0, -5.0])
    sigma = np.array([1.0, 0.5, 2.0])
    p = np.array([0.5, 0.25, 0.25])
    pool = np.array([7.5, -1.0, 3.25])
    lr.seed(4)
    ours = [lr.normal(la.asarray(mu), sigma), lr.normal(mu, la.asarray(sigma), (2, 3)),
            lr.choice(la.asarray(pool), 5, p=la.asarray(p)),
            lr.choice(la.asarray(pool), 3, replace=False),
            lr.multivariate_normal(la.asarray(mu[:2]), la.asarray(np.diag(sigma[:2])), 4),
            lr.uniform(la.asarray(mu), 20.0),
            lr.choice(la.asarray(pool))]
    np.random.seed(4)
    theirs = [np.random.normal(mu, sigma), np.random.normal(mu, sigma, (2, 3)),
              np.random.choice(pool, 5, p=p), np.random.choice(pool, 3, replace=False),
              np.random.multivariate_normal(mu[:2], np.diag(sigma[:2]), 4),
              np.random.uniform(mu, 20.0), np.random.choice(pool)]
    for a, b in zip(ours, theirs):
        assert_same(a, b)
    with pytest.raises(ValueError, match="1-dimensional"):
        lr.choice(la.zeros((2, 2)))
    lr.seed(4)
    ours = lr.choice(la.asarray(7), 5)              # a 0-d array: a population size
    np.random.seed(4)
    assert_same(ours, np.random.choice(np.array(7), 5))
    assert_same(lr.default_rng(1).choice(la.asarray(7), 3),
                np.random.default_rng(1).choice(np.array(7), 3))


def test_shuffle_and_permutation_of_lazy_arrays_follow_numpy():
    for shape in [(10,), (6, 3), (5, 2, 2)]:
        data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        x = la.asarray(data)
        alias = x
        lr.seed(6)
        assert lr.shuffle(x) is None
        perm = lr.permutation(la.asarray(data))
        after = lr.rand(2)
        expected = data.copy()
        np.random.seed(6)
        np.random.shuffle(expected)
        assert_same(x, expected)
        assert alias is x
        assert_same(perm, np.random.permutation(data))
        assert_same(after, np.random.rand(2))       # the state moved on as NumPy's
    x = la.arange(10.0)
    lr.seed(0)
    lr.shuffle(x[2:8])                              # through a view, as NumPy's
    expected = np.arange(10.0)
    np.random.seed(0)
    np.random.shuffle(expected[2:8])
    assert_same(x, expected)
    host = np.arange(8)
    lr.seed(1)
    lr.shuffle(host)                                # a NumPy array: in place on the host
    np.random.seed(1)
    assert np.array_equal(host, np.random.permutation(8))
    with pytest.raises(IndexError):
        lr.permutation(la.asarray(3.0))

# }}}


# {{{ default_rng and Generator


def generator_calls(rng, lazy):
    """A sequence of draws of every kind (arrays passed lazy where *lazy*)."""
    data = np.arange(24, dtype=np.int32).reshape(4, 6)
    arr = la.asarray(data) if lazy else data.copy()
    out = la.zeros((2, 3)) if lazy else np.zeros((2, 3))
    results = [rng.random(), rng.random((3, 4)), rng.random(5, dtype=np.float32),
               rng.integers(5), rng.integers(-4, 40, (2, 7)), rng.integers(0, 3, 9, np.uint8, True),
               rng.normal(), rng.normal(2.0, 3.0, 6), rng.uniform(-1.0, 1.0, (2, 2)),
               rng.standard_normal(4), rng.standard_normal(3, dtype=np.float32),
               rng.exponential(2.0, 5), rng.poisson(4.0, 5), rng.gamma(2.0, size=3),
               rng.choice(10), rng.choice(10, 4, replace=False),
               rng.choice(arr, 2), rng.choice(arr, 3, axis=1, replace=False),
               rng.choice(arr[0], 4, p=(la.asarray if lazy else np.asarray)(np.full(6, 1 / 6))),
               rng.permutation(7), rng.permutation(arr), rng.permutation(arr, axis=1),
               rng.permuted(arr, axis=1), rng.random(out=out), out,
               rng.multivariate_normal([0.0, 1.0], np.eye(2), 3), rng.bytes(5),
               rng.standard_exponential(3), rng.binomial(7, 0.5, 4)]
    rng.shuffle(arr)
    results.append(arr)
    rng.shuffle(arr, axis=1)
    results += [arr, rng.random(2)]
    return results


def test_default_rng_gives_numpys_numbers_for_every_method():
    ours = generator_calls(lr.default_rng(123), lazy=True)
    theirs = generator_calls(np.random.default_rng(123), lazy=False)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if isinstance(b, bytes) or np.ndim(b) == 0:
            assert type(a) is type(b) and a == b, k
        else:
            assert_same(a, b)


def test_generators_and_bit_generators_as_numpy_has_them():
    for name in ("Generator", "BitGenerator", "SeedSequence", "PCG64", "Philox",
                 "MT19937", "SFC64", "PCG64DXSM"):
        assert name in dir(lr)
    assert lr.Philox is np.random.Philox and lr.SeedSequence is np.random.SeedSequence
    assert_same(lr.Generator(lr.Philox(7)).normal(size=4),
                np.random.Generator(np.random.Philox(7)).normal(size=4))
    assert_same(lr.default_rng(lr.SeedSequence(5)).random(3),
                np.random.default_rng(np.random.SeedSequence(5)).random(3))
    rng = lr.default_rng(1)
    assert lr.default_rng(rng) is rng and isinstance(rng, lr.Generator)
    assert isinstance(rng.bit_generator, np.random.PCG64)
    shared = np.random.default_rng(3)
    wrapped = lr.default_rng(shared)                # NumPy's generator is shared, not copied
    wrapped.random(2)
    assert_same(wrapped.random(2), np.random.default_rng(3).random(4)[2:])
    assert shared.bit_generator.state == wrapped.bit_generator.state
    kids, numpy_kids = lr.default_rng(9).spawn(2), np.random.default_rng(9).spawn(2)
    for kid, numpy_kid in zip(kids, numpy_kids):
        assert_same(kid.integers(0, 100, 5), numpy_kid.integers(0, 100, 5))


def test_streams_pickle_and_go_on_with_the_same_numbers():
    for stream in (lr.RandomState(8), lr.default_rng(8)):
        stream.random(3)
        copy = pickle.loads(pickle.dumps(stream))
        assert type(copy) is type(stream)
        assert_same(copy.random(4), stream.random(4).get())


def test_scalar_results_have_numpys_types():
    for name, args in [("rand", ()), ("randn", ()), ("randint", (5,)), ("random", ()),
                       ("normal", ()), ("uniform", ()), ("poisson", ()),
                       ("choice", ([1, 2, 3],)), ("binomial", (3, 0.5)), ("bytes", (3,))]:
        lr.seed(0)
        ours = getattr(lr, name)(*args)
        np.random.seed(0)                   # (the same global state)
        theirs = getattr(np.random, name)(*args)
        assert type(ours) is type(theirs) and ours == theirs, name
    assert type(lr.rand()) is float and type(lr.randint(5)) is int
    ours, theirs = lr.default_rng(2), np.random.default_rng(2)
    for name, args in [("random", ()), ("integers", (5,)), ("normal", ()), ("choice", (4,))]:
        a, b = getattr(ours, name)(*args), getattr(theirs, name)(*args)
        assert type(a) is type(b) and a == b, name

# }}}


def test_namespace_is_the_api_only():
    namespace: dict = {}
    exec("from lazyarray.random import *", namespace)
    names = set(namespace) - {"__builtins__"}
    assert names == set(lr.__all__)
    for private in ("np", "math", "threading", "operator", "inspect", "annotations"):
        assert private not in dir(lr) and private not in names and not hasattr(lr, private)
    assert set(dir(lr)) == set(lr.__all__)
    for name in ("seed", "rand", "uniform", "default_rng", "device_rng", "DeviceGenerator",
                 "RandomState", "shuffle", "permutation", "philox4x32"):
        assert name in lr.__all__


# {{{ under la.jit


def test_jit_draws_new_numbers_each_call_with_the_right_distribution():
    n = 20000

    @la.jit
    def draws(x):
        return (x + la.random.rand(n), la.random.randn(n), la.random.normal(3.0, 2.0, n),
                la.random.randint(0, 10, n), la.random.uniform(-1.0, 1.0, (n // 100, 100)))

    x = np.zeros(n)
    first, second = draws(x), draws(x)
    assert draws.trace_count == 1
    for a, b in zip(first, second):
        assert not np.array_equal(a.get(), b.get())
    u, z, g, k, v = (a.get() for a in second)
    assert u.dtype == np.float64 and u.shape == (n,) and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.02 and abs(u.std() - 12 ** -0.5) < 0.02
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    assert abs(g.mean() - 3) < 0.1 and abs(g.std() - 2) < 0.1
    assert k.dtype == np.int64 and set(np.unique(k)) == set(range(10))
    assert v.shape == (n // 100, 100) and v.min() >= -1 and v.max() < 1
    assert abs(v.mean()) < 0.03


def test_jit_draws_every_device_distribution_with_its_moments():
    n = 100000
    rng = lr.RandomState(3)

    @la.jit
    def draws(x):
        return dict(
            lognormal=rng.lognormal(0.5, 0.2, n), laplace=rng.laplace(1.0, 2.0, n),
            logistic=rng.logistic(1.0, 2.0, n), gumbel=rng.gumbel(0.0, 2.0, n),
            rayleigh=rng.rayleigh(2.0, n), weibull=rng.weibull(1.5, n),
            pareto=rng.pareto(3.0, n), power=rng.power(2.0, n),
            cauchy=rng.standard_cauchy(n), geometric=rng.geometric(0.3, n),
            exponential=rng.exponential(2.0, n), standard=rng.standard_exponential(n),
            dice=rng.random_integers(1, 6, n), pick=rng.choice(10, n),
            sample=x + rng.random_sample(n))

    d = {k: v.get() for k, v in draws(np.zeros(n)).items()}
    # (mean, standard deviation) of each distribution
    moments = {"lognormal": (np.exp(0.52), np.sqrt((np.exp(0.04) - 1) * np.exp(1.04))),
               "laplace": (1.0, 2 * np.sqrt(2)), "logistic": (1.0, 2 * np.pi / np.sqrt(3)),
               "gumbel": (2 * np.euler_gamma, 2 * np.pi / np.sqrt(6)),
               "rayleigh": (2 * np.sqrt(np.pi / 2), 2 * np.sqrt(2 - np.pi / 2)),
               "weibull": (0.902745, 0.612936), "power": (2 / 3, np.sqrt(1 / 18)),
               "geometric": (1 / 0.3, np.sqrt(0.7) / 0.3), "exponential": (2.0, 2.0),
               "standard": (1.0, 1.0), "dice": (3.5, np.sqrt(35 / 12)),
               "pick": (4.5, np.sqrt(99 / 12)), "sample": (0.5, np.sqrt(1 / 12))}
    for name, (mean, std) in moments.items():
        assert d[name].shape == (n,)
        assert abs(d[name].mean() - mean) < 6 * std / np.sqrt(n), name
        assert abs(d[name].std() / std - 1) < 0.05, name
    assert abs(np.median(d["pareto"]) - (2 ** (1 / 3) - 1)) < 0.01     # (its variance is large)
    assert abs(np.median(d["cauchy"])) < 0.02
    assert abs(np.mean(np.abs(d["cauchy"]) < 1) - 0.5) < 0.01
    assert d["geometric"].dtype == np.int64 and d["geometric"].min() == 1
    assert set(np.unique(d["dice"])) == set(range(1, 7))
    assert set(np.unique(d["pick"])) == set(range(10))
    assert d["power"].min() >= 0 and d["power"].max() <= 1


def test_jit_generator_draws_and_seeding_reproduce():
    rng = lr.default_rng(5)

    @la.jit
    def noise(x, scale):
        return x + scale * rng.standard_normal(x.shape), rng.integers(0, 4, x.shape)

    x = np.zeros((50, 40))
    a, b, c = noise(x, 1.0), noise(x, 3.0), noise(x, 1.0)
    assert noise.trace_count == 1
    assert not np.array_equal(a[0].get(), c[0].get())
    assert not np.array_equal(a[1].get(), c[1].get())
    assert a[0].shape == (50, 40) and a[1].dtype == np.int64
    assert abs(b[0].get().std() - 3) < 0.2 and set(np.unique(a[1].get())) == {0, 1, 2, 3}
    # the device stream follows the NumPy stream's state: the same seed, the same calls
    rng2 = lr.default_rng(5)

    @la.jit
    def noise2(x, scale):
        return x + scale * rng2.standard_normal(x.shape), rng2.integers(0, 4, x.shape)

    assert np.array_equal(noise2(x, 1.0)[0].get(), a[0].get())
    assert np.array_equal(noise2(x, 3.0)[1].get(), b[1].get())
    assert np.array_equal(noise2(x, 1.0)[0].get(), c[0].get())

    @la.jit
    def seeded(x):
        la.random.seed(2)
        return x + la.random.rand(*x.shape)

    @la.jit
    def local(x):
        seeded, fresh = la.random.default_rng(7), la.random.default_rng()
        return x + seeded.random(x.shape), x + fresh.random(x.shape)

    y = np.zeros(64)
    assert np.array_equal(seeded(y).get(), seeded(y).get())     # seeded at each call
    (p, q), (r, s) = local(y), local(y)
    assert np.array_equal(p.get(), r.get())                     # as NumPy: a fresh seeded generator
    assert not np.array_equal(q.get(), s.get())                 # fresh entropy at each call
    la.random.seed(2)
    t = seeded(y).get()
    assert np.array_equal(t, seeded(y).get())


def test_jit_refuses_host_only_draws_at_the_users_line():
    @la.jit
    def bad(x):
        return x + la.random.poisson(3.0, x.shape)

    with pytest.raises(la.ConcretizationError, match="outside the jitted function") as info:
        bad(np.zeros(3))
    assert "test_random_legacy.py" in str(info.value) and "poisson" in str(info.value)
    with pytest.raises(la.ConcretizationError, match="permutation"):
        la.jit(lambda x: x + lr.default_rng(0).permutation(3))(np.zeros(3))

# }}}


def test_permutations_and_choices_of_small_host_arrays_stay_on_the_host(monkeypatch):
    # (they uploaded NumPy's order to the device and read the result back: 100x
    # NumPy's time, and OpenCL started in scripts that never use the device)
    import lazyarray.run as run
    from tests.helpers import counting
    uploads = []
    upload = run.to_device
    monkeypatch.setattr(run, "to_device", lambda host: uploads.append(1) or upload(host))
    with la.tier("auto"):
        x, expected = la.arange(60.0), np.arange(60.0)
        ours, theirs = la.random.RandomState(4), np.random.RandomState(4)
        with counting() as n:
            results = [ours.permutation(x), ours.choice(x, 5), ours.permutation(x)]
            ours.shuffle(x)
        wanted = [theirs.permutation(expected), theirs.choice(expected, 5),
                  theirs.permutation(expected)]
        theirs.shuffle(expected)
    assert n.launches == 0 and n.planned == 0 and not uploads
    for got, want in zip([*results, x], [*wanted, expected]):
        assert isinstance(got, la.HostArray)
        np.testing.assert_array_equal(got.get(), want)
