"""Hypothesis strategies and a brute-force reference evaluator for the
kernelcore differential tests (``test_hypothesis_domains.py``).

Nothing in here imports kernelcore: this module only describes loop domains
and expressions, renders them in the kernel language (ISL set notation for
domains, the Python-like instruction language for expressions), and evaluates
them in plain Python so that the compiled kernels can be checked against it.

Model
-----
* A loop domain is a sequence of :class:`Dim` objects, one per iname, in
  nesting order.  Every bound of an iname is an :class:`Affine` expression in
  the parameters (``n``, ``m``) and in *earlier* inames only, so the set of
  points can be enumerated exactly by nested loops over ``max(lowers) ..
  min(uppers)``.
* The dims may be rendered as one ISL set or split into several sets (a list
  of domains, later ones using earlier inames as parameters), which must mean
  the same set of points for an instruction that uses every iname.
* Expressions are small trees (:class:`Read`, :class:`Const`, :class:`Var`,
  :class:`Bin`, :class:`Neg`) with exact Python evaluation.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

INAMES = ("i", "j", "k")
PARAMS = ("n", "m")

# Values of the parameters used to decide that a generated domain is
# satisfiable for at least one parameter value (so that it is a valid kernel).
_SAT_GRID = (0, 1, 2, 3, 5, 8, 13, 20)

# Parameters are drawn from 0 .. PMAX, and the kernels carry the assumptions
# "0 <= p <= PMAX" (so that explicit integer shapes can be large enough for
# every parameter value the kernel admits).
PMAX = 6


def box_assumptions(params, style=0):
    """Assumption text for ``0 <= p <= PMAX``, in one of a few spellings."""
    if not params:
        return ""
    if style == 0:
        parts = [f"0 <= {p} <= {PMAX}" for p in params]
    elif style == 1:
        parts = [f"{p} >= 0 and {p} <= {PMAX}" for p in params]
    else:
        parts = [f"{p} < {PMAX + 1} and {p} > -1" for p in params]
    return " and ".join(parts)


# {{{ affine expressions

@dataclass(frozen=True)
class Affine:
    """``const + sum(coeff * name)``; *terms* keeps the drawn order."""

    terms: tuple = ()       # ((name, coeff), ...), coeff != 0
    const: int = 0

    @staticmethod
    def make(const=0, **coeffs):
        return Affine(tuple((k, v) for k, v in coeffs.items() if v), const)

    def names(self):
        return {name for name, _ in self.terms}

    def coeff(self, name):
        return sum(c for nm, c in self.terms if nm == name)

    def eval(self, env):
        return self.const + sum(c * env[name] for name, c in self.terms)

    def shifted(self, k):
        return Affine(self.terms, self.const + k)

    def render(self):
        parts = []
        for name, c in self.terms:
            if c == 1:
                mono = name
            elif c == -1:
                mono = "-" + name
            else:
                mono = f"{c}*{name}"
            if not parts:
                parts.append(mono)
            elif mono.startswith("-"):
                parts.append("- " + mono[1:])
            else:
                parts.append("+ " + mono)
        if not parts:
            return str(self.const)
        if self.const > 0:
            parts.append(f"+ {self.const}")
        elif self.const < 0:
            parts.append(f"- {-self.const}")
        return " ".join(parts)

    def __str__(self):
        return self.render()

# }}}


# {{{ domains

@dataclass(frozen=True)
class Dim:
    """One iname: ``max(lowers) <= name <= min(uppers)`` (all non-strict
    internally); the ``*_strict`` flags only select how a bound is *written*
    (``L - 1 < x`` instead of ``L <= x``, ``x < U + 1`` instead of
    ``x <= U``)."""

    name: str
    lowers: tuple
    uppers: tuple
    lower_strict: tuple
    upper_strict: tuple

    def names(self):
        result = set()
        for a in self.lowers + self.uppers:
            result |= a.names()
        return result

    def bounds(self, env):
        lo = max(a.eval(env) for a in self.lowers)
        hi = min(a.eval(env) for a in self.uppers)
        return lo, hi

    def _lower_str(self, idx):
        a = self.lowers[idx]
        if self.lower_strict[idx]:
            return f"{a.shifted(-1)} < "
        return f"{a} <= "

    def _upper_str(self, idx):
        a = self.uppers[idx]
        if self.upper_strict[idx]:
            return f" < {a.shifted(1)}"
        return f" <= {a}"

    def constraint_strs(self, names=None, chain=True):
        """ISL text of this dim's constraints.  *names* allows rendering the
        same bounds for several inames at once (``0 <= i, j < n``)."""
        target = self.name if names is None else ", ".join(names)
        if chain and len(self.lowers) == 1 and len(self.uppers) == 1:
            return [self._lower_str(0) + target + self._upper_str(0)]
        result = [self._lower_str(idx) + target
                  for idx in range(len(self.lowers))]
        result += [target + self._upper_str(idx)
                   for idx in range(len(self.uppers))]
        return result

    def same_bounds(self, other):
        return (self.lowers, self.uppers, self.lower_strict,
                self.upper_strict) == (other.lowers, other.uppers,
                                       other.lower_strict, other.upper_strict)


@dataclass(frozen=True)
class Domain:
    dims: tuple                 # of Dim, in nesting order
    groups: tuple               # tuple of tuples of iname names (one per set)
    param_prefix: bool = False  # write "[n, i] -> { ... }"
    merge_commas: bool = False  # write "0 <= i, j < n" where possible
    chain: bool = True          # write "0 <= i < n" instead of two terms

    @property
    def inames(self):
        return tuple(d.name for d in self.dims)

    def dim(self, name):
        for d in self.dims:
            if d.name == name:
                return d
        raise KeyError(name)

    def params_used(self):
        inames = set(self.inames)
        result = set()
        for d in self.dims:
            result |= d.names() - inames
        return sorted(result)

    def _render_group(self, group):
        dims = [self.dim(nm) for nm in group]
        own = set(group)
        outside = set()
        for d in dims:
            outside |= d.names() - own
        constraints = []
        idx = 0
        while idx < len(dims):
            run = [dims[idx]]
            if self.merge_commas:
                while (idx + len(run) < len(dims)
                        and dims[idx + len(run)].same_bounds(run[0])
                        and not (dims[idx + len(run)].names()
                                 & {r.name for r in run})):
                    run.append(dims[idx + len(run)])
            if len(run) > 1:
                constraints += run[0].constraint_strs(
                    names=[r.name for r in run], chain=self.chain)
            else:
                constraints += run[0].constraint_strs(chain=self.chain)
            idx += len(run)
        body = "{{ [{}]: {} }}".format(", ".join(group), " and ".join(constraints))
        if self.param_prefix and outside:
            return "[{}] -> {}".format(", ".join(sorted(outside)), body)
        return body

    def render(self):
        """A string for one group, a list of strings for several."""
        strs = [self._render_group(g) for g in self.groups]
        if len(strs) == 1:
            return strs[0]
        return strs

    def points(self, params):
        """All points (dicts iname -> value), lexicographic in iname order."""
        result = []

        def rec(idx, env):
            if idx == len(self.dims):
                result.append({nm: env[nm] for nm in self.inames})
                return
            d = self.dims[idx]
            lo, hi = d.bounds(env)
            for v in range(lo, hi + 1):
                env[d.name] = v
                rec(idx + 1, env)
            env.pop(d.name, None)

        rec(0, dict(params))
        return result

    def box_points(self, pmax=None):
        """Points (merged with their parameter values) for every parameter
        value in ``0 .. pmax``: the kernels are created with the assumptions
        ``0 <= p <= pmax`` and explicit shapes must fit all of them."""
        pmax = PMAX if pmax is None else pmax
        used = self.params_used()
        result = []
        for values in itertools.product(range(pmax + 1), repeat=len(used)):
            params = dict(zip(used, values))
            result.extend({**params, **p} for p in self.points(params))
        return result

    def loop_orders(self):
        """Strategy for a nesting order of the inames that the domain
        allows: sets of a list stay in list order (a nested set's inames
        are inside its parent's), and within a set an iname comes after the
        inames its bounds use."""
        return st.permutations(list(self.inames)).map(self._legal_order)

    def _legal_order(self, perm):
        rank = {nm: idx for idx, nm in enumerate(perm)}
        result = []
        for group in self.groups:
            todo = sorted(group, key=rank.__getitem__)
            while todo:
                for nm in todo:
                    if not (self.dim(nm).names() & set(todo) - {nm}):
                        result.append(nm)
                        todo.remove(nm)
                        break
        return tuple(result)

    def satisfiable_somewhere(self):
        used = self.params_used()
        for values in itertools.product(_SAT_GRID, repeat=len(used)):
            if self.points(dict(zip(used, values))):
                return True
        return False

    def __str__(self):
        return repr(self.render())


def _groups_for(names, dims, split):
    """Group inames into separate ISL sets.  A new set is started only where
    an iname depends on an iname of the current last set, so every set uses
    only inames of the sets before it (each nested in its predecessor)."""
    if not split:
        return (tuple(names),)
    by_name = {d.name: d for d in dims}
    groups = [[names[0]]]
    for nm in names[1:]:
        if by_name[nm].names() & set(groups[-1]):
            groups.append([nm])
        else:
            groups[-1].append(nm)
    return tuple(tuple(g) for g in groups)


@st.composite
def dims_for(draw, names, params=PARAMS, deps_on=(), rect_only=False):
    """Draw :class:`Dim` objects for *names* (in order).  Bounds may use
    parameters, earlier names and the inames in *deps_on*."""
    dims = []
    for idx, x in enumerate(names):
        prev = tuple(deps_on) + tuple(names[:idx])
        if rect_only:
            lowers = [Affine(const=draw(st.sampled_from([0, 0, 0, 1, 2])))]
            p = draw(st.sampled_from(params))
            uppers = [Affine(((p, 1),), draw(st.sampled_from([-1, -1, -2, 0])))]
        else:
            lower_kinds = ["const", "const", "const"]
            if prev:
                lower_kinds += ["prev", "prev"]
            lower_kinds += ["tail"]
            kind = draw(st.sampled_from(lower_kinds))
            if kind == "const":
                lowers = [Affine(const=draw(st.sampled_from([0, 0, 1, 2])))]
            elif kind == "prev":
                p = draw(st.sampled_from(prev))
                lowers = [Affine(((p, 1),), draw(st.sampled_from([0, 0, 1])))]
            else:
                # "last few": n - c <= x (x may then be negative)
                p = draw(st.sampled_from(params))
                lowers = [Affine(((p, 1),), -draw(st.integers(1, 3)))]
            if draw(st.integers(0, 4)) == 4:
                # a second, redundant-or-not lower bound
                lowers.append(Affine(const=draw(st.integers(0, 2))))

            def upper(prev=prev):
                k = draw(st.sampled_from(
                    ["param", "param", "param"]
                    + (["prev", "prev"] if prev else []) + ["const"]))
                if k == "param":
                    p = draw(st.sampled_from(params))
                    return Affine(((p, 1),),
                                  draw(st.sampled_from([-1, -1, -2, 0, 1])))
                if k == "prev":
                    p = draw(st.sampled_from(prev))
                    return Affine(((p, 1),), draw(st.sampled_from([-1, 0, 1, 2])))
                return Affine(const=draw(st.integers(0, 4)))

            uppers = [upper()]
            if draw(st.integers(0, 2)) == 2:
                # split-like bounds, e.g. "0 <= j <= i + 1 and j < m"
                uppers.append(upper())
            # an iname bounded only by constants below and above is fine, but
            # insist that every iname has some non-trivial upper bound
        lower_strict = tuple(draw(st.booleans()) for _ in lowers)
        upper_strict = tuple(draw(st.sampled_from([True, True, False]))
                             for _ in uppers)
        dims.append(Dim(x, tuple(lowers), tuple(uppers), lower_strict,
                        upper_strict))
    return tuple(dims)


@st.composite
def domains(draw, ndims=None, rect_only=False, allow_split=True):
    if ndims is None:
        ndims = draw(st.integers(1, 3))
    names = INAMES[:ndims]
    dims = draw(dims_for(names, rect_only=rect_only))
    split = allow_split and ndims > 1 and draw(st.booleans())
    dom = Domain(
        dims=dims,
        groups=_groups_for(names, dims, split),
        param_prefix=draw(st.booleans()),
        merge_commas=draw(st.booleans()),
        chain=draw(st.sampled_from([True, True, False])),
    )
    assume(dom.satisfiable_somewhere())
    return dom


@st.composite
def param_values(draw, names, lo=0, hi=PMAX):
    """Parameter values, often 0 and 1 so that runtime-empty domains happen."""
    mid = st.integers(max(lo, 2), max(lo, hi))
    value = st.one_of(mid, st.sampled_from(sorted({max(lo, 0), max(lo, 1)})),
                      mid, mid)
    return {p: draw(value) for p in names}

# }}}


# {{{ expression trees

PREC_SUM, PREC_PRODUCT, PREC_UNARY, PREC_ATOM = 10, 20, 30, 40


class Expr:
    prec = PREC_ATOM

    def render(self, paren_all=False):
        raise NotImplementedError

    def __str__(self):
        return self.render()


@dataclass(frozen=True)
class Const(Expr):
    value: object

    @property
    def prec(self):
        return PREC_UNARY if self.value < 0 else PREC_ATOM

    def render(self, paren_all=False):
        return repr(self.value)

    def eval(self, env, arrays, track):
        return self.value


@dataclass(frozen=True)
class Var(Expr):
    name: str

    def render(self, paren_all=False):
        return self.name

    def eval(self, env, arrays, track):
        return env[self.name]


@dataclass(frozen=True)
class Read(Expr):
    array: str
    subscripts: tuple  # of Affine

    def render(self, paren_all=False):
        return "{}[{}]".format(self.array,
                           ", ".join(s.render() for s in self.subscripts))

    def index(self, env):
        return tuple(s.eval(env) for s in self.subscripts)

    def eval(self, env, arrays, track):
        arr = arrays[self.array]
        idx = self.index(env)
        assert len(idx) == arr.ndim
        assert all(0 <= v < s for v, s in zip(idx, arr.shape)), \
            (self.render(), idx, arr.shape)  # bug in the test generator
        return arr[idx].item()


_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}


@dataclass(frozen=True)
class Bin(Expr):
    op: str
    left: Expr
    right: Expr

    @property
    def prec(self):
        return PREC_PRODUCT if self.op == "*" else PREC_SUM

    def render(self, paren_all=False):
        lhs = self.left.render(paren_all)
        rhs = self.right.render(paren_all)
        if paren_all or self.left.prec < self.prec:
            lhs = f"({lhs})"
        if paren_all or self.right.prec <= self.prec:
            rhs = f"({rhs})"
        return f"{lhs} {self.op} {rhs}"

    def eval(self, env, arrays, track):
        v = _OPS[self.op](self.left.eval(env, arrays, track),
                          self.right.eval(env, arrays, track))
        track.append(abs(v))
        return v


@dataclass(frozen=True)
class Neg(Expr):
    operand: Expr
    prec = PREC_UNARY

    def render(self, paren_all=False):
        inner = self.operand.render(paren_all)
        if paren_all or self.operand.prec <= PREC_UNARY:
            inner = f"({inner})"
        return "-" + inner

    def eval(self, env, arrays, track):
        return -self.operand.eval(env, arrays, track)


def reads_in(expr):
    if isinstance(expr, Read):
        return [expr]
    if isinstance(expr, Bin):
        return reads_in(expr.left) + reads_in(expr.right)
    if isinstance(expr, Neg):
        return reads_in(expr.operand)
    return []


def vars_in(expr):
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, Read):
        return set().union(*(s.names() for s in expr.subscripts))
    if isinstance(expr, Bin):
        return vars_in(expr.left) | vars_in(expr.right)
    if isinstance(expr, Neg):
        return vars_in(expr.operand)
    return set()


def map_reads(expr, fn):
    if isinstance(expr, Read):
        return fn(expr)
    if isinstance(expr, Bin):
        return Bin(expr.op, map_reads(expr.left, fn), map_reads(expr.right, fn))
    if isinstance(expr, Neg):
        return Neg(map_reads(expr.operand, fn))
    return expr


def eval_expr(expr, env, arrays):
    """Exact value and the largest magnitude of any intermediate result."""
    track = []
    v = expr.eval(env, arrays, track)
    track.append(abs(v))
    return v, max(track)


class _PyArray:
    """Array view for ``eval`` of rendered text: bounds-checked, returns
    Python scalars (so no NumPy overflow/wrap-around semantics)."""

    def __init__(self, arr):
        self.arr = arr

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        assert all(0 <= v < s for v, s in zip(idx, self.arr.shape))
        return self.arr[idx].item()


def eval_rendered(text, env, arrays):
    """Evaluate rendered expression text with Python semantics."""
    ns = dict(env)
    ns.update({name: _PyArray(a) for name, a in arrays.items()})
    return eval(text, {"__builtins__": {}}, ns)


@st.composite
def raw_subscript(draw, inames, params, nonneg=False):
    """An affine subscript before shifting it into range."""
    if nonneg:
        coeffs = {x: draw(st.sampled_from([0, 1, 1, 2])) for x in inames}
        return Affine(tuple((x, c) for x, c in coeffs.items() if c),
                      draw(st.integers(0, 2)))
    style = draw(st.sampled_from(["one", "one", "combo", "reverse"]))
    if style == "one":
        x = draw(st.sampled_from(inames))
        return Affine(((x, 1),), draw(st.integers(-1, 2)))
    if style == "reverse":
        # e.g. n - 1 - i
        x = draw(st.sampled_from(inames))
        p = draw(st.sampled_from(params)) if params else None
        terms = ((p, 1), (x, -1)) if p else ((x, -1),)
        return Affine(terms, -1)
    terms = []
    for x in draw(st.permutations(list(inames))):
        c = draw(st.sampled_from([0, 1, 1, -1, 2, -2]))
        if c:
            terms.append((x, c))
    if params and draw(st.integers(0, 3)) == 0:
        terms.append((draw(st.sampled_from(params)), 1))
    return Affine(tuple(terms), draw(st.integers(-2, 3)))


@st.composite
def expr_trees(draw, inames, params, float_consts=False, max_depth=3,
               var_leaves=True, nonneg_subscripts=False, leaf_read_weight=3):
    """Expression trees over arrays ``a`` (1-D) and ``b`` (2-D)."""

    def leaf():
        kinds = ["read"] * leaf_read_weight + ["const"]
        if var_leaves and inames:
            kinds.append("iname")
        if var_leaves and params:
            kinds.append("param")
        kind = draw(st.sampled_from(kinds))
        if kind == "read":
            if inames and draw(st.booleans()):
                return Read("b", (draw(raw_subscript(inames, params,
                                                     nonneg_subscripts)),
                                  draw(raw_subscript(inames, params,
                                                     nonneg_subscripts))))
            return Read("a", (draw(raw_subscript(inames, params,
                                                 nonneg_subscripts)),)
                        if inames else (Affine(const=draw(st.integers(0, 2))),))
        if kind == "const":
            if float_consts and draw(st.booleans()):
                return Const(draw(st.sampled_from([0.5, 1.5, -2.5, 0.25])))
            return Const(draw(st.integers(-3, 4)))
        if kind == "iname":
            return Var(draw(st.sampled_from(inames)))
        return Var(draw(st.sampled_from(params)))

    def tree(depth):
        if depth == 0 or draw(st.integers(0, 2)) == 0:
            return leaf()
        op = draw(st.sampled_from(["+", "-", "*", "+", "neg"]))
        if op == "neg":
            return Neg(tree(depth - 1))
        return Bin(op, tree(depth - 1), tree(depth - 1))

    return tree(draw(st.integers(0, max_depth)))


def fit_reads(expr, points, extra=lambda: 0):
    """Shift each read's subscripts so they are >= 0 over *points*; returns
    the new expression."""

    def fix(read):
        subs = []
        for s in read.subscripts:
            lo = min((s.eval(p) for p in points), default=0)
            subs.append(s.shifted(max(0, -lo) + extra()))
        return Read(read.array, tuple(subs))

    return map_reads(expr, fix)


def footprint_shapes(exprs_and_points, slack=lambda: 0):
    """Explicit shapes large enough for all reads (at least 1 per axis)."""
    maxes = {}
    for expr, points in exprs_and_points:
        for r in reads_in(expr):
            cur = maxes.setdefault(r.array, [0] * len(r.subscripts))
            for ax, s in enumerate(r.subscripts):
                for p in points:
                    cur[ax] = max(cur[ax], s.eval(p) + 1)
    return {name: tuple(max(1, v) + slack() for v in ax)
            for name, ax in maxes.items()}

# }}}


# {{{ reductions

def reduce_values(op, values):
    """Python reference of a reduction; returns (value, max |partial|)."""
    if op == "sum":
        fn, neutral = operator.add, 0
    elif op == "product":
        fn, neutral = operator.mul, 1
    elif op == "max":
        fn, neutral = max, None
    elif op == "min":
        fn, neutral = min, None
    else:
        raise ValueError(op)
    if not values:
        return neutral, 0
    partials = list(itertools.accumulate(values, fn))
    return partials[-1], max(abs(v) for v in partials)

# }}}


# {{{ misc

def project(points, names):
    """Distinct projections of *points* onto *names*, in first-seen order."""
    seen = {}
    for p in points:
        key = tuple(p[nm] for nm in names)
        seen.setdefault(key, {nm: p[nm] for nm in names})
    return list(seen.values())


INT_DTYPES = (np.int32, np.int64)
FLOAT_DTYPES = (np.float32, np.float64)
ALL_DTYPES = INT_DTYPES + FLOAT_DTYPES


def small_values(rng, shape, dtype, lo=-4, hi=4):
    vals = rng.integers(lo, hi + 1, size=shape)
    return vals.astype(dtype)

# }}}

# vim: foldmethod=marker
