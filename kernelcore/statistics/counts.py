"""Count objects: exact point counts of parametric integer sets, and the
count granularities.

Public names: CountGranularity, Count.
"""


from __future__ import annotations

from fractions import Fraction
from typing import Any

import islpy as isl
import numpy as np
from pymbolic.mapper.stringifier import PREC_PRODUCT, StringifyMapper

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.domain import aff_to_expr

dim_type = isl.dim_type


# {{{ granularity

class CountGranularity:
    """How often one event is counted: once per work-item, once per sub-group
    (of *subgroup_size* work-items), or once per work-group."""

    WORKITEM = "workitem"
    SUBGROUP = "subgroup"
    WORKGROUP = "workgroup"
    ALL = (WORKITEM, SUBGROUP, WORKGROUP)


def _check_granularity(g) -> None:
    if g is not None and g not in CountGranularity.ALL:
        raise ValueError(f"unknown count granularity {g!r} (expected one of "
                         f"{', '.join(CountGranularity.ALL)} or None)")

# }}}


# {{{ counts

def _param_names(obj) -> tuple[str, ...]:
    return tuple(obj.get_dim_name(dim_type.param, i)
                 for i in range(obj.dim(dim_type.param)))


def _involves_params(obj) -> bool:
    n = obj.dim(dim_type.param)
    return n > 0 and obj.involves_dims(dim_type.param, 0, n)


def _as_number(v: isl.Val):
    if v.is_int():
        return int(v.to_python())
    if v.is_rat():
        return Fraction(int(v.get_num_si()), int(v.get_den_val().to_python()))
    raise KernelcoreError(f"count is not finite ({v}); are all parameters bounded?")


def _tidy_number(x):
    if isinstance(x, Fraction) and x.denominator == 1:
        return int(x)
    return x


class Count:
    """A non-negative count that depends on the kernel's parameters.

    It is a sum of terms ``coefficient * f1 * f2 * ...`` where each factor is an
    :class:`islpy.Set` (standing for its number of points) or an
    :class:`islpy.PwAff` of the parameters (standing for its value).
    :meth:`eval_with_dict` fixes the parameters and counts exactly.
    """

    __slots__ = ("terms", "_cache")

    def __init__(self, terms=()):
        merged: list[list] = []
        for coeff, factors in terms:
            if coeff == 0:
                continue
            factors = tuple(factors)
            for entry in merged:
                if _same_factors(entry[1], factors):
                    entry[0] += coeff
                    break
            else:
                merged.append([coeff, factors])
        self.terms = tuple((_tidy_number(c), f) for c, f in merged if c != 0)
        self._cache: dict = {}

    # construction

    @classmethod
    def zero(cls) -> Count:
        return cls()

    @classmethod
    def constant(cls, value: int | Fraction) -> Count:
        return cls([(value, ())])

    @classmethod
    def points(cls, s: isl.Set | isl.BasicSet, coeff: int | Fraction = 1) -> Count:
        """The number of points of *s* (a set whose only parameters are domain
        parameters), times *coeff*."""
        if isinstance(s, isl.BasicSet):
            s = s.to_set()
        return cls([(coeff, (s,))])

    # arithmetic

    def __add__(self, other) -> Count:
        if isinstance(other, (int, Fraction, np.integer)):
            other = Count.constant(int(other) if isinstance(other, np.integer) else other)
        if not isinstance(other, Count):
            return NotImplemented
        return Count(self.terms + other.terms)

    __radd__ = __add__

    def __mul__(self, other) -> Count:
        if isinstance(other, Count):
            return Count([(c1 * c2, f1 + f2) for c1, f1 in self.terms
                          for c2, f2 in other.terms])
        if isinstance(other, (int, Fraction, np.integer)):
            k = int(other) if isinstance(other, np.integer) else other
            return Count([(c * k, f) for c, f in self.terms])
        if isinstance(other, (isl.Set, isl.BasicSet, isl.PwAff)):
            if isinstance(other, isl.BasicSet):
                other = other.to_set()
            return Count([(c, f + (other,)) for c, f in self.terms])
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self) -> Count:
        return self * -1

    def __sub__(self, other) -> Count:
        return self + (-other)

    def __rsub__(self, other) -> Count:
        return (-self) + other

    # evaluation

    def param_names(self) -> tuple[str, ...]:
        """Names of the parameters the count may depend on."""
        names: list[str] = []
        for _, factors in self.terms:
            for f in factors:
                for p in _param_names(f):
                    if p not in names:
                        names.append(p)
        return tuple(names)

    def is_constant(self) -> bool:
        """True when no factor depends on a parameter."""
        return not any(_involves_params(f) for _, fs in self.terms for f in fs)

    def eval_with_dict(self, params: dict[str, Any] | None = None) -> int | Fraction:
        """The count's value for the parameter values in *params* (extra entries
        are ignored)."""
        params = params or {}
        needed = self.param_names()
        key = []
        for p in needed:
            if p in params:
                key.append((p, int(params[p])))
        key = tuple(key)  # type: ignore[assignment]  # the cache key
        if key in self._cache:
            return self._cache[key]
        values = dict(key)
        total: Any = 0
        for coeff, factors in self.terms:
            term: Any = coeff
            for f in factors:
                term = term * _eval_factor(f, values)
                if term == 0:
                    break
            total += term
        total = _tidy_number(total)
        self._cache[key] = total
        return total

    # printing

    def __str__(self) -> str:
        if self.is_constant():
            return f"{{ {self.eval_with_dict({})} }}"
        params = self.param_names()
        parts = []
        conditions = set()
        for coeff, factors in self.terms:
            items = [] if coeff == 1 else [str(coeff)]
            for f in factors:
                text, cond = _factor_str(f)
                items.append(text)
                if cond is not None:
                    conditions.add(cond)
            parts.append(" * ".join(items) or "1")
        body = " + ".join(parts)
        if len(conditions) == 1:
            cond, = conditions
            if cond:
                body += f" : {cond}"
        elif conditions:
            # several domains of validity: show the sets themselves
            parts = []
            for coeff, factors in self.terms:
                items = [] if coeff == 1 else [str(coeff)]
                items += [_factor_str(f, closed_form=False)[0] for f in factors]
                parts.append(" * ".join(items) or "1")
            body = " + ".join(parts)
        return f"[{', '.join(params)}] -> {{ {body} }}"

    def __repr__(self) -> str:
        return f"Count({self})"


def _same_factors(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        try:
            if not x.get_space().is_equal(y.get_space()) or not x.plain_is_equal(y):
                return False
        except isl.Error:
            return False
    return True


def _fix_params(s: isl.Set, values: dict[str, int]) -> isl.Set:
    for i, p in enumerate(_param_names(s)):
        if p in values:
            s = s.fix_val(dim_type.param, i, values[p])
        elif _involves(s, i):
            raise KernelcoreError(
                f"a value for parameter '{p}' is needed to evaluate this count")
    return s


def _involves(obj, i: int) -> bool:
    return obj.involves_dims(dim_type.param, i, 1)


def _eval_factor(f, values: dict[str, int]):
    if isinstance(f, isl.Set):
        s = _fix_params(f, values)
        if s.dim(dim_type.param):
            s = s.project_out(dim_type.param, 0, s.dim(dim_type.param))
        return count_points(s)
    # a piecewise affine function of the parameters
    names = _param_names(f)
    for i, p in enumerate(names):
        if p not in values and _involves(f, i):
            raise KernelcoreError(
                f"a value for parameter '{p}' is needed to evaluate this count")
    pt = isl.Point.zero(f.get_domain_space())
    for i, p in enumerate(names):
        if p in values:
            pt = pt.set_coordinate_val(dim_type.param, i, values[p])
    v = f.eval(pt)
    if v.is_nan():
        return 0
    return _as_number(v)


#: sets of at most this many points (by their bounding box) are counted by
#: ISL's enumeration
ENUMERATE_UP_TO = 1 << 14


def count_points(s: isl.Set) -> int:
    """The number of integer points of the bounded, parameter-free set *s*:
    a box as the product of its extents, a union one disjoint piece at a time,
    any other set one slice of its narrowest dimension at a time, and small
    sets by enumeration (ISL's count enumerates, which a loop nest of 10^10
    iterations makes take hours)."""
    s = s.remove_redundancies()
    if s.is_empty():
        return 0
    pieces = s.coalesce().get_basic_sets()
    if len(pieces) > 1:
        disjoint = s.make_disjoint().get_basic_sets()
        return sum(count_points(isl.Set.from_basic_set(b)) for b in disjoint)
    dims = s.dim(dim_type.set)
    extents = [s.dim_max_val(d).to_python() - s.dim_min_val(d).to_python() + 1
               for d in range(dims)]
    volume = int(np.prod(extents, dtype=object)) if extents else 1
    if s.is_box():
        return volume
    if volume <= ENUMERATE_UP_TO:
        return int(_as_number(s.count_val()))
    d = min((e, d) for d, e in enumerate(extents) if e > 1)[1]
    low = s.dim_min_val(d).to_python()
    return sum(count_points(s.fix_val(dim_type.set, d, low + k)) for k in range(extents[d]))


def _factor_str(f, closed_form: bool = True) -> tuple[str, str | None]:
    """(text, condition on the parameters or None) for one factor."""
    if isinstance(f, isl.Set):
        if closed_form:
            box = _box_count_expr(f)
            if box is not None:
                return box
        text = str(f)
        body = text.split("->", 1)[1].strip() if text.startswith("[") else text
        return f"#{body}", None
    pieces = f.get_pieces()
    if len(pieces) == 1:
        return f"({aff_to_expr(pieces[0][1])})", None
    return f"({f})", None


def _box_count_expr(s: isl.Set) -> tuple[str, str] | None:
    """For a rectangular set whose extents are affine in the parameters: its
    number of points as a product of extents, and where that holds."""
    nset = s.dim(dim_type.set)
    params = s.params()
    box = isl.Set.universe(s.get_space())
    extents = []
    try:
        for d in range(nset):
            lo, hi = s.dim_min(d), s.dim_max(d)
            if lo.n_piece() != 1 or hi.n_piece() != 1:
                return None
            (_, lo_aff), = lo.get_pieces()
            (_, hi_aff), = hi.get_pieces()
            var = isl.Aff.var_on_domain(isl.LocalSpace.from_space(s.get_space()),
                                        dim_type.set, d)
            lo_l = _lift_aff(lo_aff, s.get_space())
            hi_l = _lift_aff(hi_aff, s.get_space())
            box = box & var.ge_set(lo_l) & var.le_set(hi_l)
            extents.append(aff_to_expr(hi_aff.sub(lo_aff).add_constant_val(1)))
    except isl.Error:
        return None
    box = box.intersect_params(params)
    if not box.is_equal(s):
        return None
    stringify: StringifyMapper[[]] = StringifyMapper()
    texts = [stringify(e, PREC_PRODUCT) if not isinstance(e, int) else str(e)
             for e in extents]
    numbers = [e for e in extents if isinstance(e, int)]
    symbolic = [t for t, e in zip(texts, extents) if not isinstance(e, int)]
    const = 1
    for k in numbers:
        const *= k
    items = ([str(const)] if const != 1 or not symbolic else []) + symbolic
    cond = str(params)
    cond = cond.split(":", 1)[1].rsplit("}", 1)[0].strip() if ":" in cond else ""
    return " * ".join(items), cond


def _lift_aff(aff: isl.Aff, space: isl.Space) -> isl.Aff:
    """A parameter-only *aff* as an affine function on the set space *space*."""
    ls = isl.LocalSpace.from_space(space)
    result = isl.Aff.zero_on_domain(ls)
    result = result.add_constant_val(aff.get_constant_val())
    names = _param_names(space)
    for i in range(aff.dim(dim_type.param)):
        c = aff.get_coefficient_val(dim_type.param, i)
        if not c.is_zero():
            j = names.index(aff.get_dim_name(dim_type.param, i))
            result = result.set_coefficient_val(dim_type.param, j, c)
    if aff.dim(dim_type.div):
        raise isl.Error("division in extent")
    return result


# }}}
