"""Property-based differential tests of kernelcore's loop domains.

Each example builds a random kernel (random affine loop domain in 1-3 inames
with parameters, random affine array accesses, random expressions or
reductions), runs it on the OpenCL device and compares the result with a
brute-force Python evaluation of the very same loops (``strategies.py``
enumerates the domain points from the same bounds it rendered into the ISL
text).

Covered:

* rectangular, triangular (``0<=j<=i``, ``i<=j<n``), offset (``2<=i<n``),
  "last few" (``n-2<=i<n``), split-like (``0<=j<=i+1 and j<m``) domains,
  written as one set or as a list of nested sets, with parameter values that
  often make the domain empty at run time;
* affine subscripts (``a[i + 2*j]``, ``a[n - 1 - i]``, ``b[j, i]``) with
  explicit shapes, and with automatically found shapes (the shapes of the
  returned and the required arrays are checked against the footprint);
* reductions ``sum``/``product``/``max``/``min`` over one or two inames,
  including reductions that are empty at run time (sum -> 0, product -> 1);
* integer ``//`` and ``%`` (Python floor semantics) on int32/int64 values
  including negatives and the extremes of the type;
* domains that are empty for all parameter values run nothing;
* fixed, example-based versions of shrunk counterexamples found so far
  (``test_fixed_*``), which run every parameter value through one kernel.

Semantics encoded by the reference (loopy's):

* an instruction runs once for every point of the projection of the domain
  onto the instruction's own inames.  So with ONE set
  ``{ [i, k]: 0 <= i < n and 0 <= k < i }``, ``out[i] = sum(k, ...)`` runs
  for ``1 <= i < n`` only (``out[0]`` is not written), while with nested sets
  ``["{ [i]: 0 <= i < n }", "{ [k]: 0 <= k < i }"]`` it runs for
  ``0 <= i < n`` and ``out[0]`` is the neutral element of the reduction;
* kernels with explicit integer shapes carry the assumptions
  ``0 <= p <= PMAX`` on their parameters and the shapes hold the footprint
  for every admitted parameter value, so static bounds checks can pass.

Settings are deterministic (``derandomize=True``, no example database).  The
number of examples can be scaled with ``KERNELCORE_HYPOTHESIS_SCALE``
(a float, default 1); ``KERNELCORE_HYPOTHESIS_SHRINK=0`` turns shrinking off
(useful when a failure is known and only the first counterexample matters).
The ``slow``-marked variants run many more examples (``--runslow``).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import Phase, assume, given, note, settings
from hypothesis import strategies as st

import kernelcore as lp
from tests import strategies as S

# A kernel with wrong loop bounds can spin forever inside the OpenCL runtime,
# where pytest-timeout's default (signal) method never gets control back:
# the thread method ends the run instead of letting it hang.
pytestmark = pytest.mark.timeout(300, method="thread")
_SLOW_TIMEOUT = pytest.mark.timeout(3000, method="thread")


# {{{ settings

_SCALE = float(os.environ.get("KERNELCORE_HYPOTHESIS_SCALE", "1"))
_SHRINK = os.environ.get("KERNELCORE_HYPOTHESIS_SHRINK", "1") != "0"


def _settings(max_examples):
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if _SHRINK:
        phases.append(Phase.shrink)
    return settings(max_examples=max(1, int(max_examples * _SCALE)), phases=phases)


# }}}


# {{{ queue

@pytest.fixture(scope="module")
def kq(request):
    """The session queue from conftest, or a queue of our own."""
    try:
        return request.getfixturevalue("queue")
    except pytest.FixtureLookupError:
        return lp.default_queue()

# }}}


# {{{ helpers

MARK = -999


def _arg(alias, name, dtype, shape):
    cls = lp.ArrayArg if alias else lp.GlobalArg
    return cls(name, dtype, shape=shape)


def _to_numpy(x):
    if isinstance(x, np.ndarray):
        return x
    get = getattr(x, "get", None)
    assert get is not None, type(x)
    return get()


def _assert_same(actual, expected, dtype, mask=None, what="out"):
    actual = _to_numpy(actual)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    if mask is not None:
        # entries outside the mask are not checked
        actual = np.where(mask, actual, expected)
    if np.issubdtype(np.dtype(dtype), np.integer):
        bad = np.nonzero(actual != expected)
        assert not bad[0].size, (
            f"{what}: {bad[0].size} mismatching entries; first at "
            f"{[int(b[0]) for b in bad]}: got {actual[tuple(b[0] for b in bad)]}"
            f", expected {expected[tuple(b[0] for b in bad)]}\n"
            f"got:\n{actual}\nexpected:\n{expected}")
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6,
                                   err_msg=what)


def _out_subscripts(draw, names, points):
    """Injective write subscripts: a permutation of *names*, each shifted to
    be >= 0 over *points* (all points the kernel admits); returns
    (subscripts, shape)."""
    order = draw(st.permutations(list(names)))
    subs = []
    shape = []
    for x in order:
        lo = min((p[x] for p in points), default=0)
        hi = max((p[x] for p in points), default=0)
        off = max(0, -lo) + draw(st.integers(0, 1))
        subs.append(S.Affine(((x, 1),), off))
        shape.append(max(1, hi + off + 1) + draw(st.integers(0, 1)))
    return tuple(subs), tuple(shape)


def _make_kernel(domain_text, insns, kernel_data, assumptions, priority):
    knl = lp.make_kernel(domain_text, insns, kernel_data,
                         assumptions=assumptions)
    if priority:
        knl = lp.prioritize_loops(knl, ",".join(priority))
    return knl

# }}}


class _Case:
    """Base of the drawn cases: hypothesis prints them with their own
    (compact) repr, which shows the kernel text."""

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


# {{{ 1+2: random domains, random affine assignments

@dataclass(repr=False)
class AssignCase(_Case):
    domain: S.Domain
    params: dict
    dtype: type
    rhs: S.Expr
    out_subs: tuple
    shapes: dict            # name -> explicit shape (inputs and "out")
    seed: int
    declare_dtypes: bool
    declare_value_args: bool
    alias: bool
    priority: tuple
    paren_all: bool
    assumptions: str
    more_params: tuple = ()     # further parameter values, same kernel
    device_io: bool = False     # pass pyopencl arrays instead of numpy

    @property
    def instruction(self):
        return "out[{}] = {}".format(", ".join(s.render() for s in self.out_subs),
                                 self.rhs.render(self.paren_all))

    def __repr__(self):
        return (f"AssignCase(domain={self.domain.render()!r}, "
                f"insn={self.instruction!r}, params={self.params}, "
                f"dtype={np.dtype(self.dtype).name}, shapes={self.shapes}, "
                f"seed={self.seed}, declare_dtypes={self.declare_dtypes}, "
                f"value_args={self.declare_value_args}, "
                f"priority={self.priority}, assumptions={self.assumptions!r}, "
                f"more_params={self.more_params}, "
                f"device_io={self.device_io})")


def _assumptions(draw, params):
    return S.box_assumptions(params, draw(st.integers(0, 2)))


@st.composite
def assign_cases(draw, ndims=None):
    dom = draw(S.domains(ndims=ndims))
    pnames = dom.params_used()
    params = draw(S.param_values(pnames))
    box = dom.box_points()
    dtype = draw(st.sampled_from(S.ALL_DTYPES))
    is_float = np.issubdtype(np.dtype(dtype), np.floating)
    rhs = draw(S.expr_trees(dom.inames, tuple(pnames), float_consts=is_float))
    rhs = S.fit_reads(rhs, box, extra=lambda: draw(st.integers(0, 1)))
    shapes = S.footprint_shapes([(rhs, box)],
                                slack=lambda: draw(st.integers(0, 2)))
    out_subs, out_shape = _out_subscripts(draw, dom.inames, box)
    shapes["out"] = out_shape
    priority = None
    if len(dom.inames) > 1 and draw(st.booleans()):
        # a nesting the domain allows (see test_priority_is_advisory for
        # one it does not allow)
        priority = draw(dom.loop_orders())
    return AssignCase(
        domain=dom, params=params, dtype=dtype, rhs=rhs, out_subs=out_subs,
        shapes=shapes, seed=draw(st.integers(0, 2**32 - 1)),
        declare_dtypes=draw(st.booleans()),
        declare_value_args=draw(st.booleans()),
        alias=draw(st.booleans()),
        priority=priority,
        paren_all=draw(st.sampled_from([False, False, True])),
        assumptions=_assumptions(draw, pnames),
        more_params=tuple(draw(S.param_values(pnames))
                          for _ in range(draw(st.integers(0, 2)))),
        device_io=draw(st.integers(0, 3)) == 3)


def _expected_assign(case, params, arrays):
    text = case.rhs.render(case.paren_all)
    points = case.domain.points(params)
    expected = np.full(case.shapes["out"], MARK, dtype=case.dtype)
    for count, p in enumerate(points):
        env = {**params, **p}
        value, biggest = S.eval_expr(case.rhs, env, arrays)
        assume(biggest < 2**20)  # no overflow, exact in float32
        if count < 8:
            # self-check of the generator: the text means what we evaluate
            assert S.eval_rendered(text, env, arrays) == value
        idx = tuple(s.eval(env) for s in case.out_subs)
        assert expected[idx] == MARK, "generator bug: write not injective"
        expected[idx] = value
    return expected, len(points)


def _codegen_count():
    stats = getattr(lp, "cache_stats", None)
    return None if stats is None else stats().get("codegen")


def _check_assign(queue, case: AssignCase):
    import pyopencl.array as cla

    rng = np.random.default_rng(case.seed)
    dtype = case.dtype
    arrays = {name: S.small_values(rng, shape, dtype)
              for name, shape in case.shapes.items() if name != "out"}
    all_params = (case.params,) + tuple(case.more_params)
    expecteds = []
    for params in all_params:
        expected, npoints = _expected_assign(case, params, arrays)
        note(f"params {params}: {npoints} domain points")
        expecteds.append(expected)

    data = [_arg(case.alias, name, dtype if case.declare_dtypes else None,
                 shape) for name, shape in sorted(case.shapes.items())]
    if case.declare_value_args:
        data += [lp.ValueArg(p, np.int32) for p in sorted(case.params)]
    data.append("...")

    knl = _make_kernel(case.domain.render(), case.instruction, data,
                       case.assumptions, case.priority)
    codegens = None
    for call, (params, expected) in enumerate(zip(all_params, expecteds)):
        out_in = np.full(case.shapes["out"], MARK, dtype=dtype)
        args = dict(arrays, out=out_in)
        if case.device_io:
            args = {k: cla.to_device(queue, v) for k, v in args.items()}
        evt, result = knl(queue, **args, **params)
        assert len(result) == 1
        res = result[0]
        if case.device_io:
            # device arrays in, device arrays out
            assert isinstance(res, cla.Array), type(res)
            res = res.get()
        else:
            # numpy in, numpy out
            assert isinstance(res, np.ndarray), type(res)
        # a passed-in output keeps its dtype
        assert res.dtype == np.dtype(dtype), res.dtype
        _assert_same(res, expected, dtype, what=f"out (call {call}, {params})")
        if call == 0:
            codegens = _codegen_count()
        else:
            # same dtypes, other parameter values: no new code generation
            assert _codegen_count() == codegens


#: (each example compiles kernels of its own: the default counts are kept
#: small, the ``_many`` twins, ``slow``, run many more)
@_settings(30)
@given(case=assign_cases())
def test_affine_assignment(kq, case):
    _check_assign(kq, case)


@_settings(10)
@given(case=assign_cases(ndims=3))
def test_affine_assignment_3d(kq, case):
    _check_assign(kq, case)


@pytest.mark.slow
@_SLOW_TIMEOUT
@_settings(25)
@given(case=assign_cases(ndims=3))
def test_affine_assignment_3d_many(kq, case):
    _check_assign(kq, case)


@pytest.mark.slow
@_SLOW_TIMEOUT
@_settings(400)
@given(case=assign_cases())
def test_affine_assignment_many(kq, case):
    _check_assign(kq, case)

# }}}


# {{{ 2b: automatically found shapes

@dataclass(repr=False)
class AutoShapeCase(_Case):
    domain: S.Domain
    params: dict
    dtype: type
    rhs: S.Expr
    out_subs: tuple
    pass_out: bool
    pass_params: tuple
    seed: int

    @property
    def instruction(self):
        return "out[{}] = {}".format(", ".join(s.render() for s in self.out_subs),
                                 self.rhs.render())

    def upper(self, name):
        """Largest value of iname *name* (an Affine in the parameters)."""
        (u,) = self.domain.dim(name).uppers
        return u

    def shape_formula(self, subscripts):
        """Per axis, max footprint + 1 as an Affine in the parameters
        (all subscripts have non-negative coefficients)."""
        result = []
        for s in subscripts:
            terms = {}
            const = s.const + 1
            for x, c in s.terms:
                u = self.upper(x)
                const += c * u.const
                for p, pc in u.terms:
                    terms[p] = terms.get(p, 0) + c * pc
            result.append(S.Affine(tuple(sorted(terms.items())), const))
        return result

    def shapes(self):
        """name -> (formulas, evaluated shape) for a, b and out."""
        result = {}
        for r in S.reads_in(self.rhs):
            assert r.array not in result
            result[r.array] = self.shape_formula(r.subscripts)
        result["out"] = self.shape_formula(self.out_subs)
        return {name: tuple(a.eval(self.params) for a in f)
                for name, f in result.items()}

    def __repr__(self):
        return (f"AutoShapeCase(domain={self.domain.render()!r}, "
                f"insn={self.instruction!r}, params={self.params}, "
                f"dtype={np.dtype(self.dtype).name}, pass_out={self.pass_out},"
                f" pass_params={self.pass_params}, seed={self.seed}, "
                f"expected shapes={self.shapes()})")


@st.composite
def auto_shape_cases(draw):
    ndims = draw(st.integers(1, 3))
    dom = draw(S.domains(ndims=ndims, rect_only=True, allow_split=False))
    pnames = dom.params_used()
    # every upper bound P + c must be >= 0 so that the shape formulas are >= 1
    need = {p: 0 for p in pnames}
    for d in dom.dims:
        (u,) = d.uppers
        (p, _), = u.terms
        need[p] = max(need[p], -u.const)
    params = {p: draw(st.integers(max(1, need[p]), 6)) for p in pnames}
    dtype = draw(st.sampled_from(S.ALL_DTYPES))
    rhs = draw(S.expr_trees(dom.inames, (), nonneg_subscripts=True,
                            max_depth=2))
    if not S.reads_in(rhs):
        # the output's dtype is inferred from the inputs
        rhs = S.Bin("+", rhs, S.Read("a", (draw(S.raw_subscript(
            dom.inames, (), nonneg=True)),)))
    # every read gets an array of its own (a0, b1, ...): two reads of one
    # array may have footprints without a common static maximum, which is a
    # StaticValueFindingError, not what this test is about
    counter = iter(range(100))
    rhs = S.map_reads(rhs, lambda r: S.Read(f"{r.array}{next(counter)}",
                                            r.subscripts))
    order = draw(st.permutations(list(dom.inames)))
    out_subs = tuple(S.Affine(((x, 1),), draw(st.integers(0, 1)))
                     for x in order)
    case = AutoShapeCase(domain=dom, params=params, dtype=dtype, rhs=rhs,
                         out_subs=out_subs, pass_out=draw(st.booleans()),
                         pass_params=(), seed=draw(st.integers(0, 2**32 - 1)))
    # parameters may be left out where an argument's axis is exactly 'P'
    formulas = {}
    for r in S.reads_in(rhs):
        formulas.setdefault(r.array, []).extend(
            case.shape_formula(r.subscripts))
    if case.pass_out:
        formulas["out"] = case.shape_formula(out_subs)
    deducible = {a.terms[0][0] for fs in formulas.values() for a in fs
                 if len(a.terms) == 1 and a.terms[0][1] == 1 and a.const == 0}
    case.pass_params = tuple(
        p for p in pnames if p not in deducible or draw(st.booleans()))
    return case


def _check_auto_shape(queue, case: AutoShapeCase):
    rng = np.random.default_rng(case.seed)
    dtype = case.dtype
    shapes = case.shapes()
    arrays = {name: S.small_values(rng, shape, dtype)
              for name, shape in shapes.items() if name != "out"}
    points = case.domain.points(case.params)

    # self-check: if the domain is non-empty, the formulas are the footprint
    if points:
        fp = S.footprint_shapes([(case.rhs, points)])
        for name, shape in fp.items():
            assert shape == shapes[name], (name, shape, shapes[name])

    expected = np.full(shapes["out"], MARK, dtype=dtype)
    touched = np.zeros(shapes["out"], dtype=bool)
    for p in points:
        env = {**case.params, **p}
        value, biggest = S.eval_expr(case.rhs, env, arrays)
        assume(biggest < 2**20)
        idx = tuple(s.eval(env) for s in case.out_subs)
        expected[idx] = value
        touched[idx] = True

    knl = lp.make_kernel(case.domain.render(), case.instruction)
    kwargs = dict(arrays)
    kwargs.update({p: case.params[p] for p in case.pass_params})
    if case.pass_out:
        kwargs["out"] = np.full(shapes["out"], MARK, dtype=dtype)
    evt, result = knl(queue, **kwargs)
    assert len(result) == 1
    out = _to_numpy(result[0])
    assert out.shape == shapes["out"], (
        f"returned out has shape {out.shape}, footprint says {shapes['out']}")
    if case.pass_out:
        _assert_same(out, expected, dtype)
    else:
        _assert_same(out, expected, dtype, mask=touched)


@_settings(15)
@given(case=auto_shape_cases())
def test_auto_shapes(kq, case):
    _check_auto_shape(kq, case)


@pytest.mark.slow
@_SLOW_TIMEOUT
@_settings(250)
@given(case=auto_shape_cases())
def test_auto_shapes_many(kq, case):
    _check_auto_shape(kq, case)

# }}}


# {{{ 3: reductions

@dataclass(repr=False)
class ReductionCase(_Case):
    domain: S.Domain
    outer: tuple
    red: tuple
    red_order: tuple
    op: str
    params: dict
    dtype: type
    body: S.Expr
    wrap: str
    extra: S.Expr           # for wrap == "plus": over the outer inames
    scale: int
    out_subs: tuple
    shapes: dict
    seed: int
    declare_dtypes: bool
    assumptions: str
    more_params: tuple = ()

    @property
    def nested(self):
        return len(self.domain.groups) > 1

    @property
    def instruction(self):
        if len(self.red_order) == 1:
            inames = self.red_order[0]
        else:
            inames = "({})".format(", ".join(self.red_order))
        red = f"{self.op}({inames}, {self.body.render()})"
        if self.wrap == "plus":
            rhs = f"{red} + {self.extra.render()}"
        elif self.wrap == "times":
            rhs = f"{self.scale}*{red}"
        else:
            rhs = red
        return "out[{}] = {}".format(", ".join(s.render() for s in self.out_subs),
                                 rhs)

    def outer_points(self, params=None):
        params = self.params if params is None else params
        points = self.domain.points(params)
        if not self.nested:
            # loopy semantics: an instruction runs over the projection of
            # the domain onto its own inames
            return S.project(points, self.outer)
        outer_dom = S.Domain(
            dims=tuple(d for d in self.domain.dims if d.name in self.outer),
            groups=(self.outer,))
        return outer_dom.points(params)

    def outer_box_points(self):
        used = self.domain.params_used()
        result = []
        for values in itertools.product(range(S.PMAX + 1), repeat=len(used)):
            params = dict(zip(used, values))
            result.extend({**params, **p} for p in self.outer_points(params))
        return result

    def __repr__(self):
        return (f"ReductionCase(domain={self.domain.render()!r}, "
                f"insn={self.instruction!r}, params={self.params}, "
                f"dtype={np.dtype(self.dtype).name}, shapes={self.shapes}, "
                f"seed={self.seed}, declare_dtypes={self.declare_dtypes}, "
                f"assumptions={self.assumptions!r}, "
                f"more_params={self.more_params})")


@st.composite
def reduction_cases(draw):
    outer = ("i", "j")[:draw(st.integers(1, 2))]
    red = ("k", "l")[:draw(st.integers(1, 2))]
    dims = draw(S.dims_for(outer + red))
    nested = draw(st.booleans())
    dom = S.Domain(dims=dims,
                   groups=(outer, red) if nested else (outer + red,),
                   param_prefix=draw(st.booleans()),
                   merge_commas=draw(st.booleans()))
    assume(dom.satisfiable_somewhere())
    pnames = dom.params_used()
    params = draw(S.param_values(pnames))
    op = draw(st.sampled_from(["sum", "sum", "product", "max", "min"]))
    dtype = draw(st.sampled_from(S.ALL_DTYPES))
    is_float = np.issubdtype(np.dtype(dtype), np.floating)

    case = ReductionCase(
        domain=dom, outer=outer, red=red,
        red_order=tuple(draw(st.permutations(list(red)))),
        op=op, params=params, dtype=dtype, body=None,
        wrap=draw(st.sampled_from(["plain", "plain", "plus", "times"])),
        extra=None, scale=draw(st.integers(-3, 3)), out_subs=None,
        shapes=None, seed=draw(st.integers(0, 2**32 - 1)),
        declare_dtypes=draw(st.booleans()),
        assumptions=_assumptions(draw, pnames),
        more_params=tuple(draw(S.param_values(pnames))
                          for _ in range(draw(st.integers(0, 2)))))

    points = dom.box_points()
    outer_points = case.outer_box_points()
    body = draw(S.expr_trees(
        outer + red, tuple(pnames),
        float_consts=is_float and op != "product",
        max_depth=1 if op == "product" else 2,
        var_leaves=op != "product"))
    case.body = S.fit_reads(body, points)
    pairs = [(case.body, points)]
    if case.wrap == "plus":
        extra = draw(S.expr_trees(outer, tuple(pnames), max_depth=1))
        case.extra = S.fit_reads(extra, outer_points)
        pairs.append((case.extra, outer_points))
    case.shapes = S.footprint_shapes(pairs)
    case.out_subs, case.shapes["out"] = _out_subscripts(
        draw, outer, outer_points)
    return case


def _check_reduction(queue, case: ReductionCase):
    rng = np.random.default_rng(case.seed)
    dtype = case.dtype
    lo, hi = (-1, 2) if case.op == "product" else (-4, 4)
    arrays = {name: S.small_values(rng, shape, dtype, lo, hi)
              for name, shape in case.shapes.items() if name != "out"}
    if case.op == "product":
        for a in arrays.values():
            a[a == 0] = 1   # keep products interesting

    all_params = (case.params,) + tuple(case.more_params)
    refs = [_expected_reduction(case, params, arrays) for params in all_params]

    data = [lp.GlobalArg(name, dtype if case.declare_dtypes else None,
                         shape=shape)
            for name, shape in sorted(case.shapes.items())]
    data.append("...")
    knl = lp.make_kernel(case.domain.render(), case.instruction, data,
                         assumptions=case.assumptions)
    for params, (expected, check) in zip(all_params, refs):
        evt, (out,) = knl(queue, out=np.full(case.shapes["out"], MARK, dtype),
                          **arrays, **params)
        _assert_same(out, expected, dtype, mask=check, what=f"out ({params})")


def _expected_reduction(case, params, arrays):
    dtype = case.dtype
    points = case.domain.points(params)
    by_outer = {}
    for p in points:
        by_outer.setdefault(tuple(p[x] for x in case.outer), []).append(p)

    expected = np.full(case.shapes["out"], MARK, dtype=dtype)
    check = np.ones(case.shapes["out"], dtype=bool)
    n_empty = 0
    for op_ in case.outer_points(params):
        env_o = {**params, **op_}
        values = []
        for p in by_outer.get(tuple(op_[x] for x in case.outer), []):
            v, biggest = S.eval_expr(case.body, {**params, **p}, arrays)
            assume(biggest < 2**20)
            values.append(v)
        value, biggest = S.reduce_values(case.op, values)
        assume(biggest < 2**20)
        idx = tuple(s.eval(env_o) for s in case.out_subs)
        if value is None:
            # max/min over an empty set: not specified here, not checked
            check[idx] = False
            n_empty += 1
            continue
        n_empty += not values
        if case.wrap == "plus":
            v2, biggest = S.eval_expr(case.extra, env_o, arrays)
            assume(biggest < 2**20)
            value = value + v2
        elif case.wrap == "times":
            value = case.scale * value
        expected[idx] = value
    note(f"params {params}: {len(points)} points, {n_empty} empty reductions")
    return expected, check


@_settings(30)
@given(case=reduction_cases())
def test_reductions(kq, case):
    _check_reduction(kq, case)


@pytest.mark.slow
@_SLOW_TIMEOUT
@_settings(400)
@given(case=reduction_cases())
def test_reductions_many(kq, case):
    _check_reduction(kq, case)


@pytest.mark.parametrize("op, neutral", [("sum", 0), ("product", 1)])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_empty_reduction_neutral(kq, op, neutral, dtype):
    """Rows whose (nested) reduction domain is empty get the neutral element;
    an all-empty run (n = 0 inner points) too."""
    knl = lp.make_kernel(
        ["{ [i]: 0 <= i < n }", "{ [k]: 2 <= k <= i }"],
        f"out[i] = {op}(k, a[k])")
    a = np.arange(1, 7).astype(dtype)
    evt, (out,) = knl(kq, a=a, n=6)
    ref = [0 if op == "sum" else 1] * 6
    for i in range(6):
        vals = [a[k] for k in range(2, i + 1)]
        ref[i] = sum(vals) if op == "sum" else int(np.prod(vals))
    assert list(_to_numpy(out)) == ref
    assert _to_numpy(out)[0] == neutral

# }}}


# {{{ 4: integer floor division and remainder

_DIVMOD_FORMS = (
    ("q_ab", "a[i] // b[i]"),
    ("r_ab", "a[i] % b[i]"),
    ("q_ac", "a[i] // {C}"),
    ("r_ac", "a[i] % {C}"),
    ("q_cb", "{C} // b[i]"),
    ("r_cb", "{C} % b[i]"),
    ("q_i", "(i - {K}) // {D}"),
    ("r_i", "(i - {K}) % {D}"),
)


@dataclass(repr=False)
class DivModCase(_Case):
    dtype: type
    a: list
    b: list
    C: int
    K: int
    D: int
    forms: tuple
    paren_negative: bool

    def _lit(self, v):
        return f"({v})" if v < 0 and self.paren_negative else str(v)

    def instructions(self):
        lines = []
        for name, text in _DIVMOD_FORMS:
            if name in self.forms:
                lines.append(f"{name}[i] = " + text.format(
                    C=self._lit(self.C), K=self.K, D=self._lit(self.D)))
        return lines

    def expected(self, name, i):
        a, b, C, K, D = self.a, self.b, self.C, self.K, self.D
        return {
            "q_ab": lambda: a[i] // b[i], "r_ab": lambda: a[i] % b[i],
            "q_ac": lambda: a[i] // C, "r_ac": lambda: a[i] % C,
            "q_cb": lambda: C // b[i], "r_cb": lambda: C % b[i],
            "q_i": lambda: (i - K) // D, "r_i": lambda: (i - K) % D,
        }[name]()

    def __repr__(self):
        return (f"DivModCase(dtype={np.dtype(self.dtype).name}, a={self.a}, "
                f"b={self.b}, insns={self.instructions()})")


@st.composite
def divmod_cases(draw, extremes=False):
    """With *extremes*, operands range over the whole type (except its
    minimum, so that MIN // -1 cannot overflow); otherwise |v| < 2**20."""
    dtype = draw(st.sampled_from(S.INT_DTYPES))
    info = np.iinfo(dtype)
    i32 = np.iinfo(np.int32)
    if extremes:
        lo, hi = int(info.min) + 1, int(info.max)
        clo, chi = int(i32.min) + 1, int(i32.max)
    else:
        lo, hi = -2**20, 2**20
        clo, chi = -1000, 1000
    values = st.one_of(st.integers(-30, 30), st.integers(lo, hi),
                       st.sampled_from([lo, hi, -1, 1, 0]))
    nonzero = values.filter(lambda v: v != 0)
    n = draw(st.integers(1, 10))
    C = draw(st.one_of(st.integers(-9, 9), st.integers(clo, chi))
             .filter(lambda v: v != 0))
    return DivModCase(
        dtype=dtype,
        a=draw(st.lists(values, min_size=n, max_size=n)),
        b=draw(st.lists(nonzero, min_size=n, max_size=n)),
        C=C,
        K=draw(st.integers(0, 12)),
        D=draw(st.integers(-5, 5).filter(lambda v: v != 0)),
        forms=tuple(sorted(draw(st.sets(
            st.sampled_from([f for f, _ in _DIVMOD_FORMS]),
            min_size=1, max_size=4)))),
        paren_negative=draw(st.booleans()))


def _check_divmod(queue, case: DivModCase):
    n = len(case.a)
    knl = lp.make_kernel("{ [i]: 0 <= i < n }", case.instructions())
    knl = lp.set_options(knl, return_dict=True)
    kwargs = {}
    if any(f in case.forms for f in ("q_ab", "r_ab", "q_ac", "r_ac")):
        kwargs["a"] = np.array(case.a, dtype=case.dtype)
    if any(f in case.forms for f in ("q_ab", "r_ab", "q_cb", "r_cb")):
        kwargs["b"] = np.array(case.b, dtype=case.dtype)
    if not kwargs:
        kwargs["n"] = n
    evt, outs = knl(queue, **kwargs)
    assert set(outs) == set(case.forms)
    for name in case.forms:
        got = _to_numpy(outs[name])
        assert got.shape == (n,), (name, got.shape)
        if not name.endswith("_i"):
            assert got.dtype == np.dtype(case.dtype), (name, got.dtype)
        exp = [case.expected(name, i) for i in range(n)]
        assert [int(v) for v in got] == exp, (name, list(got), exp)


@_settings(15)
@given(case=divmod_cases())
def test_floordiv_mod(kq, case):
    _check_divmod(kq, case)


@_settings(15)
@given(case=divmod_cases(extremes=True))
def test_floordiv_mod_extremes(kq, case):
    _check_divmod(kq, case)


@pytest.mark.slow
@_SLOW_TIMEOUT
@_settings(300)
@given(case=divmod_cases())
def test_floordiv_mod_many(kq, case):
    _check_divmod(kq, case)


@pytest.mark.slow
@_SLOW_TIMEOUT
@_settings(300)
@given(case=divmod_cases(extremes=True))
def test_floordiv_mod_extremes_many(kq, case):
    _check_divmod(kq, case)


@_settings(15)
@given(n=st.integers(0, 13), d=st.integers(1, 4), k=st.integers(0, 5),
       m=st.integers(1, 4))
def test_floordiv_mod_in_subscripts(kq, n, d, k, m):
    """``//`` and ``%`` of inames inside read and write subscripts."""
    nmax = 13
    a_len = max(m, (nmax - 1) // d + 1)
    out_shape = ((nmax + d - 1) // d, d)
    knl = lp.make_kernel(
        "{ [i]: 0 <= i < n }",
        f"out[i // {d}, i % {d}] = 10*a[i // {d}] + a[(i + {k}) % {m}]",
        [lp.GlobalArg("a", np.int32, shape=(a_len,)),
         lp.GlobalArg("out", np.int32, shape=out_shape),
         "..."],
        assumptions=f"0 <= n <= {nmax}")
    a = np.arange(100, 100 + a_len, dtype=np.int32)
    out = np.full(out_shape, MARK, dtype=np.int32)
    expected = out.copy()
    for i in range(n):
        expected[i // d, i % d] = 10 * a[i // d] + a[(i + k) % m]
    evt, (res,) = knl(kq, a=a, out=out, n=n)
    _assert_same(res, expected, np.int32)

# }}}


# {{{ unsatisfiable and runtime-empty domains

@pytest.mark.parametrize("domain, assumptions", [
    ("{ [i]: 5 <= i < 3 }", ""),
    ("[n] -> { [i]: 0 <= i < n and i >= n }", "n <= 16"),
    ("{ [i, j]: 0 <= i < n and i < j < i + 1 }", "n <= 16"),
    ("{ [i]: 0 <= i < n and 10 <= i }", "n <= 5"),
    (["{ [i]: 0 <= i < n }", "{ [j]: i + 1 <= j <= i }"], "n <= 16"),
])
def test_unsatisfiable_domain_runs_nothing(kq, domain, assumptions):
    knl = lp.make_kernel(
        domain, "out[i] = 1",
        [lp.GlobalArg("out", np.float64, shape=(16,)), "..."],
        assumptions=assumptions)
    out = np.zeros(16)
    knl(kq, out=out, **({"n": 4} if "n" in str(domain) else {}))
    # an instruction runs over its own inames' domain: the empty domain of the
    # j it does not use leaves the i loop of the two-domain case running
    ran = 4 if isinstance(domain, list) else 0
    assert (out[:ran] == 1).all() and (out[ran:] == 0).all()


@pytest.mark.parametrize("domain, insn, n", [
    ("{ [i]: 5 <= i < n }", "out[i] = 1", 3),
    ("{ [i]: 0 <= i < n }", "out[i] = 1", 0),
    ("{ [i]: n - 2 <= i < n and 0 <= i }", "out[i] = i", 0),
    ("{ [i, j]: 0 <= i < n and i + 2 <= j < n }", "out[i + j] = 1", 2),
    (["{ [i]: 0 <= i < n }", "{ [j]: i + 2 <= j < n }"], "out[j - i] = 1", 2),
])
def test_runtime_empty_domain_is_fine(kq, domain, insn, n):
    knl = lp.make_kernel(
        domain, insn,
        [lp.GlobalArg("out", np.float64, shape=(16,)), "..."],
        assumptions="0 <= n <= 7")
    evt, (out,) = knl(kq, out=np.full(16, MARK, np.float64), n=n)
    assert (_to_numpy(out) == MARK).all()



# {{{ fixed examples (shrunk counterexamples found by the tests above)

# (domain, instruction, Python predicate of the domain over (i, j) and the
# parameters, parameter names); out has shape (16, 16), every parameter
# value 0 .. PMAX is run through one compiled kernel.
_FIXED = [
    # a piecewise loop bound ("m >= 4 ? 3 : 2") that is only right where
    # the domain is non-empty
    ("[m] -> { [i]: 1 < i and i < m and i < 4 }",
     "out[i, 0] = 10*i",
     lambda i, j, m: 1 < i < m and i < 4 and j == 0, ("m",)),
    ("{ [i, j]: 1 < i < m and i <= 3 and 0 < j < i }",
     "out[i, j] = 10*i + j",
     lambda i, j, m: 1 < i < m and i <= 3 and 0 < j < i, ("m",)),
    # a conditional expression as a loop bound (operator precedence)
    ("{ [i, j]: m - 3 <= i < m and i - 1 < j < 1 }",
     "out[i + 3, j + 3] = 2*i + j",
     lambda i, j, m: m - 3 <= i < m and i - 1 < j < 1, ("m",)),
    # loop bounds that are the max / min of three expressions
    ("{ [i, j]: n - 1 <= i and 0 <= i and i < m and m - 1 <= j < i + 2 }",
     "out[i, j] = 10*i + j",
     lambda i, j, n, m: n - 1 <= i and 0 <= i < m and m - 1 <= j < i + 2,
     ("n", "m")),
    ("{ [i, j]: 0 <= i < 3 and i < n and i <= j < m }",
     "out[i, j] = 10*i + j",
     lambda i, j, n, m: 0 <= i < 3 and i < n and i <= j < m, ("n", "m")),
    # triangular, with the outer bound depending on two parameters
    (["{ [i]: 0 <= i < n and i < m }", "{ [j]: i <= j < n }"],
     "out[i, j] = 10*i + j",
     lambda i, j, n, m: 0 <= i < n and i < m and i <= j < n, ("n", "m")),
]


@pytest.mark.parametrize("domain, insn, pred, pnames", _FIXED)
def test_fixed_domain_examples(kq, domain, insn, pred, pnames):
    lhs, rhs = insn.split(" = ")
    assumptions = S.box_assumptions(list(pnames))
    knl = lp.make_kernel(
        domain, insn, [lp.GlobalArg("out", np.int32, shape=(16, 16)), "..."],
        assumptions=assumptions)
    for values in itertools.product(range(S.PMAX + 1), repeat=len(pnames)):
        params = dict(zip(pnames, values))
        expected = np.full((16, 16), MARK, np.int32)
        for i in range(-8, 16):
            for j in range(-8, 16):
                if pred(i, j, **params):
                    env = dict(params, i=i, j=j)
                    idx = tuple(eval(lhs[len("out"):], {}, env))
                    expected[idx] = eval(rhs, {}, env)
        evt, (out,) = knl(kq, out=np.full((16, 16), MARK, np.int32),
                          **params)
        _assert_same(out, expected, np.int32, what=f"out ({params})")


@pytest.mark.parametrize("nested", [False, True])
def test_fixed_triangular_reduction(kq, nested):
    """``out[i] = sum(k, a[i])`` over ``0 <= k < i``: with one set the
    instruction runs over the projection ``1 <= i < n`` (out[0] untouched);
    with nested sets over ``0 <= i < n`` (out[0] = 0)."""
    domain = (["{ [i]: 0 <= i < n }", "{ [k]: 0 <= k < i }"] if nested
              else "{ [i, k]: 0 <= i < n and 0 <= k < i }")
    knl = lp.make_kernel(
        domain, "out[i] = sum(k, a[i])",
        [lp.GlobalArg("a", np.int32, shape=(8,)),
         lp.GlobalArg("out", np.int32, shape=(8,)), "..."],
        assumptions="0 <= n <= 8")
    a = np.arange(1, 9, dtype=np.int32)
    for n in range(0, 9):
        expected = np.full(8, MARK, np.int32)
        for i in range(n):
            if i >= 1 or nested:
                expected[i] = i * a[i]
        evt, (out,) = knl(kq, a=a, out=np.full(8, MARK, np.int32), n=n)
        _assert_same(out, expected, np.int32, what=f"out (n={n})")

# }}}

def test_priority_is_advisory(kq):
    """The tutorial: loop priority is advisory only; a nesting that the
    domain requires (j's bounds use i) wins over the priority."""
    knl = lp.make_kernel(
        "{ [i, j]: 0 <= i < n and 0 <= j <= i }",
        "out[i, j] = 10*i + j",
        [lp.GlobalArg("out", np.int32, shape=(5, 5)), "..."],
        assumptions="0 <= n <= 5")
    knl = lp.prioritize_loops(knl, "j,i")
    evt, (out,) = knl(kq, out=np.full((5, 5), MARK, np.int32), n=4)
    expected = np.full((5, 5), MARK, np.int32)
    for i in range(4):
        for j in range(i + 1):
            expected[i, j] = 10 * i + j
    _assert_same(out, expected, np.int32)

# }}}

# vim: foldmethod=marker
