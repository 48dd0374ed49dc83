"""Operation, memory-access and synchronization statistics of kernels.

The counting functions return a :class:`ToCountMap` from descriptive keys
(:class:`Op`, :class:`MemAccess`, or strings such as ``"barrier_local"``) to
:class:`Count` objects. A count depends on the domain parameters; without
barvinok islpy cannot build a closed-form polynomial for a parametric set, so a
:class:`Count` keeps the integer sets whose points are being counted and counts
them exactly once parameter values are given (:meth:`Count.eval_with_dict`).

Conventions (those of loopy's statistics):

* arithmetic is counted per instruction over the points of its domain, after
  preprocessing (so a reduction counts its accumulator updates); ``a - b`` is
  ``a + (-1)*b`` and the multiplication by -1 is free; index arithmetic inside
  subscripts counts too unless ``count_within_subscripts=False``;
* arithmetic counts have sub-group granularity;
* global memory accesses are counted per array reference (no common
  subexpressions are assumed); accesses whose address varies along local axis 0
  are counted per work-item, uniform ones per sub-group; local memory accesses
  per sub-group;
* synchronization counts are per work-item: each barrier is counted once per
  iteration of the sequential loops around it, each device kernel once.

Public names: CountGranularity, Count, Op, MemAccess, ToCountMap, get_op_map,
get_mem_access_map, get_synchronization_map, stringify_stats_mapping.
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import Any, Callable

import islpy as isl
import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper import Mapper

from kernelcore.diagnostic import KernelcoreError, KernelcoreWarning
from kernelcore.ir.data import AddressSpace, ArrayArg, TemporaryVariable
from kernelcore.ir.domain import aff_to_expr, project_to
from kernelcore.ir.expr import get_dependencies
from kernelcore.ir.instruction import Assignment, BarrierInstruction
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag

dim_type = isl.dim_type

__all__ = ["CountGranularity", "Count", "Op", "MemAccess", "ToCountMap",
           "get_op_map", "get_mem_access_map", "get_synchronization_map",
           "stringify_stats_mapping"]


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
    def constant(cls, value) -> Count:
        return cls([(value, ())])

    @classmethod
    def points(cls, s: isl.Set | isl.BasicSet, coeff=1) -> Count:
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

    def eval_with_dict(self, params: dict[str, Any] | None = None):
        """The count's value for the parameter values in *params* (extra entries
        are ignored)."""
        params = params or {}
        needed = self.param_names()
        key = []
        for p in needed:
            if p in params:
                key.append((p, int(params[p])))
        key = tuple(key)
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
        return _as_number(s.count_val())
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
    from pymbolic.mapper.stringifier import PREC_PRODUCT, StringifyMapper
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
    stringify = StringifyMapper()
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


# {{{ keys

def _norm_dtype(dtype):
    if dtype is None:
        return None
    return np.dtype(dtype)


def _dtype_str(dtype) -> str:
    return "None" if dtype is None else f"np:{dtype!r}"


def _strides_str(strides) -> str:
    if strides is None:
        return "None"
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(strides.items())) + "}"


class _Key:
    """Common behaviour of statistics keys: fields, equality, copy."""

    fields: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.fields)

    def _hashable(self) -> tuple:
        return tuple(frozenset(v.items()) if isinstance(v, dict) else v
                     for v in self._values())

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._hashable() == other._hashable()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._hashable())

    def copy(self, **kwargs):
        values = {f: getattr(self, f) for f in self.fields}
        values.update(kwargs)
        return type(self)(**values)

    def __repr__(self) -> str:
        return str(self)


class Op(_Key):
    """An arithmetic operation: *dtype* operated on, *name* (``add``, ``mul``,
    ``div``, ``pow``, ``shift``, ``bw``, ``maximum``, ``minimum``,
    ``func:<name>``) and *count_granularity*. None fields are wildcards produced
    by :meth:`ToCountMap.group_by`."""

    fields = ("dtype", "name", "count_granularity")

    def __init__(self, dtype=None, name=None, count_granularity=None):
        _check_granularity(count_granularity)
        self.dtype = _norm_dtype(dtype)
        self.name = name
        self.count_granularity = count_granularity

    def __str__(self) -> str:
        return f"Op({_dtype_str(self.dtype)}, {self.name}, {self.count_granularity})"


class MemAccess(_Key):
    """A kind of memory access: memory type *mtype* (``global``/``local``),
    *dtype*, strides of the flat index along local ids (*lid_strides*) and group
    ids (*gid_strides*), *direction* (``load``/``store``), *variable* and
    *count_granularity*."""

    fields = ("mtype", "dtype", "lid_strides", "gid_strides", "direction",
              "variable", "count_granularity")

    def __init__(self, mtype=None, dtype=None, lid_strides=None, gid_strides=None,
                 direction=None, variable=None, count_granularity=None):
        _check_granularity(count_granularity)
        if mtype not in (None, "global", "local"):
            raise ValueError(f"MemAccess: mtype must be 'global' or 'local', got {mtype!r}")
        if direction not in (None, "load", "store"):
            raise ValueError(f"MemAccess: direction must be 'load' or 'store', got "
                             f"{direction!r}")
        self.mtype = mtype
        self.dtype = _norm_dtype(dtype)
        self.lid_strides = None if lid_strides is None else dict(sorted(lid_strides.items()))
        self.gid_strides = None if gid_strides is None else dict(sorted(gid_strides.items()))
        self.direction = direction
        self.variable = variable
        self.count_granularity = count_granularity

    def __str__(self) -> str:
        return (f"MemAccess({self.mtype}, {_dtype_str(self.dtype)}, "
                f"{_strides_str(self.lid_strides)}, {_strides_str(self.gid_strides)}, "
                f"{self.direction}, {self.variable}, {self.count_granularity})")

# }}}


# {{{ the map

def _matches(value, allowed, field: str) -> bool:
    if field == "dtype":
        try:
            allowed = [_norm_dtype(a) for a in allowed]
        except TypeError:
            pass
    return value in allowed


class ToCountMap:
    """A mapping from keys to counts (:class:`Count` objects or numbers) with
    helpers to filter, group and evaluate them. A missing key counts zero."""

    def __init__(self, count_map=None, zero=None):
        self.count_map: dict = dict(count_map or {})
        #: what a missing key counts (a zero :class:`Count` unless given)
        self.zero = zero

    # mapping protocol

    def __getitem__(self, key):
        try:
            return self.count_map[key]
        except KeyError:
            return Count.zero() if self.zero is None else self.zero

    def __setitem__(self, key, value) -> None:
        self.count_map[key] = value

    def __contains__(self, key) -> bool:
        return key in self.count_map

    def __len__(self) -> int:
        return len(self.count_map)

    def __iter__(self):
        return iter(self.count_map)

    def keys(self):
        return self.count_map.keys()

    def values(self):
        return self.count_map.values()

    def items(self):
        return self.count_map.items()

    def get(self, key, default=None):
        return self.count_map.get(key, default)

    def copy(self, count_map=None) -> ToCountMap:
        return ToCountMap(self.count_map if count_map is None else count_map)

    # arithmetic

    def __add__(self, other) -> ToCountMap:
        if isinstance(other, (int, float)) and other == 0:
            return self.copy()
        if not isinstance(other, ToCountMap):
            return NotImplemented
        result = dict(self.count_map)
        for k, v in other.count_map.items():
            result[k] = result[k] + v if k in result else v
        return ToCountMap(result)

    __radd__ = __add__

    def __mul__(self, other) -> ToCountMap:
        return ToCountMap({k: v * other for k, v in self.count_map.items()})

    __rmul__ = __mul__

    # queries

    def filter_by(self, **kwargs) -> ToCountMap:
        """The entries whose key fields take one of the given values, e.g.
        ``filter_by(dtype=[np.float32], direction=["load"])`` (a single value
        may be given without a list)."""
        def ok(key):
            for field, allowed in kwargs.items():
                if not isinstance(allowed, (list, tuple, set, frozenset)):
                    allowed = [allowed]
                if not hasattr(key, field):
                    raise AttributeError(f"filter_by: key {key!r} has no field "
                                         f"'{field}'")
                if not _matches(getattr(key, field), list(allowed), field):
                    return False
            return True
        return ToCountMap({k: v for k, v in self.count_map.items() if ok(k)})

    def filter_by_func(self, func: Callable[[Any], bool]) -> ToCountMap:
        """The entries whose key satisfies *func*."""
        return ToCountMap({k: v for k, v in self.count_map.items() if func(k)})

    def group_by(self, *fields: str) -> ToCountMap:
        """Counts summed over keys that agree on *fields*; the new keys keep only
        those fields (the rest None). Without fields, everything is summed under
        one key of each key type."""
        result: dict = {}
        for k, v in self.count_map.items():
            if isinstance(k, _Key):
                for f in fields:
                    if f not in k.fields:
                        raise AttributeError(f"group_by: {type(k).__name__} has no "
                                             f"field '{f}'")
                new_key = type(k)(**{f: getattr(k, f) for f in fields})
            else:
                if fields:
                    raise AttributeError(f"group_by: key {k!r} has no fields")
                new_key = k
            result[new_key] = result[new_key] + v if new_key in result else v
        return ToCountMap(result)

    def to_bytes(self) -> ToCountMap:
        """Counts multiplied by the item size of each key's dtype."""
        result = {}
        for k, v in self.count_map.items():
            dtype = getattr(k, "dtype", None)
            if dtype is None:
                raise ValueError(f"to_bytes: key {k!r} has no dtype")
            result[k] = v * int(np.dtype(dtype).itemsize)
        return ToCountMap(result)

    def sum(self):
        """All counts added up."""
        total: Any = Count.zero()
        for v in self.count_map.values():
            total = total + v
        return total

    def eval(self, params: dict[str, Any] | None = None) -> ToCountMap:
        """A map of the same keys to numbers, for the parameter values *params*."""
        return ToCountMap({k: _eval(v, params) for k, v in self.count_map.items()},
                          zero=0)

    def eval_and_sum(self, params: dict[str, Any] | None = None):
        """The sum of all counts evaluated at *params*."""
        return sum((_eval(v, params) for v in self.count_map.values()), 0)

    def __str__(self) -> str:
        return stringify_stats_mapping(self)

    def __repr__(self) -> str:
        return f"ToCountMap({self.count_map!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, ToCountMap) and self.count_map == other.count_map

    __hash__ = None


def _eval(v, params):
    if isinstance(v, Count):
        return v.eval_with_dict(params or {})
    if hasattr(v, "eval_with_dict"):
        return v.eval_with_dict(params or {})
    return v


def stringify_stats_mapping(m) -> str:
    """One ``key : count`` line per entry, sorted by the key's text."""
    items = m.items() if hasattr(m, "items") else m
    lines = [f"{k} : {v}\n" for k, v in sorted(items, key=lambda kv: str(kv[0]))]
    return "".join(lines)

# }}}


# {{{ helpers: kernels, domains, granularity

def _prepare(knl):
    from kernelcore.ir.instruction import CallInstruction
    from kernelcore.ir.kernel import KernelState
    from kernelcore.preprocess import preprocess_kernel
    from kernelcore.translation_unit import TranslationUnit
    if isinstance(knl, TranslationUnit):
        knl = knl.executable_kernel()
    opaque = sorted(i.id for i in knl.instructions if isinstance(i, CallInstruction))
    if opaque:
        raise KernelcoreError(
            f"cannot count the work of call instruction(s) {', '.join(opaque)}: the "
            "called function is opaque to kernelcore (inline kernel calls first)")
    if knl.state < KernelState.PREPROCESSED:
        knl = preprocess_kernel(knl)
    return knl


def _domain_of(knl, inames) -> isl.Set:
    """The points of *inames* (only those dims) over the kernel's parameters."""
    inames = list(inames)
    dom = knl.get_inames_domain(inames)
    return project_to(dom, inames).coalesce()


def _local_inames(knl, inames) -> set[str]:
    return {i for i in inames if isinstance(knl.iname_tags.get(i), LocalIndexTag)}


class _Grid:
    """Work-group size and group counts of a kernel, evaluated lazily."""

    def __init__(self, knl, subgroup_size):
        self.knl = knl
        self.subgroup_size = subgroup_size
        self._sizes = None

    @property
    def sizes(self):
        if self._sizes is None:
            from kernelcore.codegen.grid import grid_sizes
            self._sizes = grid_sizes(self.knl)
        return self._sizes

    def local_size_total(self) -> int:
        total = 1
        for pw in self.sizes[1]:
            if _involves_params(pw):
                raise KernelcoreError("cannot count per sub-group: the work-group size "
                                      f"is not a constant ({pw})")
            total *= _eval_factor(pw, {})
        return total

    def subgroups_per_group(self) -> int:
        total = self.local_size_total()
        if total == 1:
            return 1
        sg = self.subgroup_size
        if sg is None:
            raise ValueError(
                "counting per sub-group needs the sub-group size: pass "
                "subgroup_size=<int> (or subgroup_size='guess' to assume 32)")
        return -(-total // sg)

    def unused_axes_factors(self, used_inames, disregard_local: bool) -> tuple:
        """Sizes (PwAffs) of the hardware axes the instruction does not use."""
        groups, local = self.sizes
        used_g = {self.knl.iname_tags[i].axis for i in used_inames
                  if isinstance(self.knl.iname_tags.get(i), GroupIndexTag)}
        used_l = {self.knl.iname_tags[i].axis for i in used_inames
                  if isinstance(self.knl.iname_tags.get(i), LocalIndexTag)}
        factors = [pw for axis, pw in enumerate(groups) if axis not in used_g]
        if not disregard_local:
            factors += [pw for axis, pw in enumerate(local) if axis not in used_l]
        return tuple(factors)


def _process_subgroup_size(subgroup_size):
    if subgroup_size is None or isinstance(subgroup_size, (int, np.integer)):
        if subgroup_size is not None and subgroup_size < 1:
            raise ValueError(f"subgroup_size must be positive, got {subgroup_size}")
        return None if subgroup_size is None else int(subgroup_size)
    if subgroup_size == "guess":
        warnings.warn("subgroup_size='guess': assuming sub-groups of 32 work-items",
                      KernelcoreWarning, stacklevel=3)
        return 32
    raise ValueError(f"subgroup_size must be an int, 'guess' or None, got "
                     f"{subgroup_size!r}")


class _InsnCounter:
    """How many times an instruction's events happen, per granularity."""

    def __init__(self, knl, grid: _Grid, count_redundant_work: bool):
        self.knl = knl
        self.grid = grid
        self.count_redundant_work = count_redundant_work
        self._cache: dict = {}

    def __call__(self, insn, granularity) -> Count:
        key = (insn.id, granularity)
        if key in self._cache:
            return self._cache[key]
        inames = set(insn.within_inames)
        disregard_local = granularity != CountGranularity.WORKITEM
        if disregard_local:
            kept = inames - _local_inames(self.knl, inames)
            dom = project_to(self.knl.get_inames_domain(list(inames)), kept).coalesce()
        else:
            dom = _domain_of(self.knl, inames)
        count = Count.points(dom)
        if self.count_redundant_work:
            for pw in self.grid.unused_axes_factors(inames, disregard_local):
                count = count * pw
        if granularity == CountGranularity.SUBGROUP:
            count = count * self.grid.subgroups_per_group()
        self._cache[key] = count
        return count

# }}}


# {{{ operations

class _OpCounter(Mapper):
    """expression -> {(dtype, op name): multiplicity} for one evaluation."""

    def __init__(self, type_of, count_within_subscripts: bool):
        self.type_of = type_of
        self.count_within_subscripts = count_within_subscripts

    @staticmethod
    def _merge(*dicts) -> dict:
        result: dict = {}
        for d in dicts:
            for k, v in d.items():
                result[k] = result.get(k, 0) + v
        return {k: v for k, v in result.items() if v}

    def _op(self, expr, name: str, n: int, children) -> dict:
        own = {(self.type_of(expr), name): n} if n > 0 else {}
        return self._merge(own, *(self.rec(c) for c in children))

    def map_constant(self, expr) -> dict:
        return {}

    map_variable = map_nan = map_constant

    def map_subscript(self, expr) -> dict:
        if not self.count_within_subscripts:
            return {}
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        return self._merge(*(self.rec(i) for i in idx))

    def map_sum(self, expr) -> dict:
        return self._op(expr, "add", len(expr.children) - 1, expr.children)

    def map_product(self, expr) -> dict:
        # multiplying by -1 is a negation (it is how subtraction is spelled)
        kept = [c for c in expr.children if not _is_minus_one(c)]
        return self._op(expr, "mul", len(kept) - 1, expr.children)

    def map_quotient(self, expr) -> dict:
        return self._op(expr, "div", 1, (expr.numerator, expr.denominator))

    map_floor_div = map_remainder = map_quotient

    def map_power(self, expr) -> dict:
        return self._op(expr, "pow", 1, (expr.base, expr.exponent))

    def map_left_shift(self, expr) -> dict:
        return self._op(expr, "shift", 1, (expr.shiftee, expr.shift))

    map_right_shift = map_left_shift

    def map_bitwise_not(self, expr) -> dict:
        return self._op(expr, "bw", 1, (expr.child,))

    def map_bitwise_or(self, expr) -> dict:
        return self._op(expr, "bw", len(expr.children) - 1, expr.children)

    map_bitwise_and = map_bitwise_xor = map_bitwise_or

    def map_comparison(self, expr) -> dict:
        return self._merge(self.rec(expr.left), self.rec(expr.right))

    def map_logical_not(self, expr) -> dict:
        return self.rec(expr.child)

    def map_logical_or(self, expr) -> dict:
        return self._merge(*(self.rec(c) for c in expr.children))

    map_logical_and = map_logical_or

    def map_if(self, expr) -> dict:
        # both branches are counted (as loopy does)
        return self._merge(self.rec(expr.condition), self.rec(expr.then),
                           self.rec(expr.else_))

    def map_min(self, expr) -> dict:
        return self._op(expr, "minimum", len(expr.children) - 1, expr.children)

    def map_max(self, expr) -> dict:
        return self._op(expr, "maximum", len(expr.children) - 1, expr.children)

    def map_call(self, expr) -> dict:
        return self._op(expr, f"func:{expr.function.name}", 1, expr.parameters)

    def map_type_cast(self, expr) -> dict:
        return self.rec(expr.child)

    def map_common_subexpression(self, expr) -> dict:
        return self.rec(expr.child)

    def map_reduction(self, expr) -> dict:
        raise KernelcoreError("op counting found an unrealized reduction "
                              f"({expr}); count a preprocessed kernel")


def _is_minus_one(c) -> bool:
    return isinstance(c, (int, float, np.integer, np.floating)) \
        and not isinstance(c, bool) and c == -1


def _type_function(knl):
    from kernelcore.types import TypeInferenceMapper, kernel_type_context
    dtypes, weak = kernel_type_context(knl)
    for p in knl.all_params():
        if dtypes.get(p) is None:
            dtypes[p] = knl.index_dtype
    mapper = TypeInferenceMapper(dtypes, set(weak), knl.callables, knl.index_dtype)

    def type_of(expr):
        return mapper(expr).dtype
    return type_of


def get_op_map(knl, subgroup_size=None, count_redundant_work: bool = False,
               count_within_subscripts: bool = True) -> ToCountMap:
    """Count the arithmetic operations of *knl*: a :class:`ToCountMap` from
    :class:`Op` to :class:`Count`.

    *count_redundant_work*: also count work repeated along hardware axes an
    instruction does not use (otherwise such work is counted once).
    *count_within_subscripts*: count the index arithmetic of array subscripts.
    """
    knl = _prepare(knl)
    grid = _Grid(knl, _process_subgroup_size(subgroup_size))
    times = _InsnCounter(knl, grid, count_redundant_work)
    counter = _OpCounter(_type_function(knl), count_within_subscripts)
    result: dict = {}
    g = CountGranularity.SUBGROUP
    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            continue
        ops = counter._merge(counter(insn.assignee), counter(insn.expression))
        if not ops:
            continue
        n = times(insn, g)
        for (dtype, name), mult in ops.items():
            key = Op(dtype, name, g)
            add = n * mult
            result[key] = result[key] + add if key in result else add
    return ToCountMap(result)

# }}}


# {{{ memory accesses

class _AccessFinder(Mapper):
    """Collect (variable name, index tuple or None) for the reads of an
    expression, nested subscripts included."""

    def __init__(self, names):
        self.names = names
        self.found: list[tuple[str, tuple | None]] = []

    def map_constant(self, expr):
        pass

    map_nan = map_constant

    def map_variable(self, expr):
        if expr.name in self.names:
            self.found.append((expr.name, None))

    def map_subscript(self, expr):
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        name = getattr(expr.aggregate, "name", None)
        if name in self.names:
            self.found.append((name, tuple(idx)))
        else:
            self.rec(expr.aggregate)
        for i in idx:
            self.rec(i)

    def _children(self, children):
        for c in children:
            self.rec(c)

    def map_sum(self, expr):
        self._children(expr.children)

    map_product = map_bitwise_or = map_bitwise_and = map_bitwise_xor = map_sum
    map_logical_or = map_logical_and = map_min = map_max = map_sum

    def map_quotient(self, expr):
        self._children((expr.numerator, expr.denominator))

    map_floor_div = map_remainder = map_quotient

    def map_power(self, expr):
        self._children((expr.base, expr.exponent))

    def map_left_shift(self, expr):
        self._children((expr.shiftee, expr.shift))

    map_right_shift = map_left_shift

    def map_bitwise_not(self, expr):
        self.rec(expr.child)

    map_logical_not = map_type_cast = map_common_subexpression = map_bitwise_not

    def map_comparison(self, expr):
        self._children((expr.left, expr.right))

    def map_if(self, expr):
        self._children((expr.condition, expr.then, expr.else_))

    def map_call(self, expr):
        self._children(expr.parameters)

    def map_reduction(self, expr):
        self.rec(expr.expr)


class _NotAffine(Exception):
    pass


def _coefficient(expr, iname: str):
    """The coefficient of *iname* in *expr* if *expr* is affine in it."""
    if isinstance(expr, prim.Variable):
        return 1 if expr.name == iname else 0
    if isinstance(expr, (int, float, np.number)) or iname not in get_dependencies(expr):
        return 0
    if isinstance(expr, prim.Sum):
        return _add_exprs([_coefficient(c, iname) for c in expr.children])
    if isinstance(expr, prim.Product):
        dep = [c for c in expr.children if not isinstance(c, (int, float, np.number))
               and iname in get_dependencies(c)]
        if len(dep) != 1:
            raise _NotAffine()
        coeff = _coefficient(dep[0], iname)
        for c in expr.children:
            if c is not dep[0]:
                coeff = _mul_exprs(coeff, c)
        return coeff
    raise _NotAffine()


def _add_exprs(items):
    nums = sum(i for i in items if isinstance(i, (int, np.integer)))
    rest = [i for i in items if not isinstance(i, (int, np.integer))]
    if not rest:
        return int(nums)
    parts = rest + ([int(nums)] if nums else [])
    return parts[0] if len(parts) == 1 else prim.Sum(tuple(parts))


def _mul_exprs(a, b):
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) * int(b)
    if isinstance(a, (int, np.integer)) and a == 0 or \
            isinstance(b, (int, np.integer)) and b == 0:
        return 0
    if isinstance(a, (int, np.integer)) and a == 1:
        return b
    if isinstance(b, (int, np.integer)) and b == 1:
        return a
    return prim.Product((a, b))


def _tidy_stride(expr):
    if isinstance(expr, (int, np.integer)) or expr is None:
        return expr if expr is None else int(expr)
    from kernelcore.codegen.simplify import simplify
    return simplify(expr)


def _array_strides(array, nindex: int) -> tuple:
    if isinstance(array.shape, tuple) and len(array.shape) == nindex:
        try:
            return tuple(array.element_strides())
        except Exception:
            pass
    if nindex <= 1:
        return (1,) * nindex
    raise KernelcoreError(f"cannot find the strides of '{array.name}' for a "
                          f"{nindex}-index access")


def _hw_strides(knl, array, index: tuple | None):
    """(lid_strides, gid_strides): the stride of the flat element index along
    each local/group axis whose iname the index uses."""
    if index is None:
        return {}, {}
    deps = set()
    for i in index:
        deps |= get_dependencies(i)
    lid, gid = {}, {}
    strides = None
    for iname in sorted(deps & set(knl.all_inames())):
        tag = knl.iname_tags.get(iname)
        if not isinstance(tag, (LocalIndexTag, GroupIndexTag)):
            continue
        if strides is None:
            strides = _array_strides(array, len(index))
        try:
            total = 0
            for idx, stride in zip(index, strides):
                total = _add_exprs([total, _mul_exprs(_coefficient(idx, iname), stride)])
            total = _tidy_stride(total)
        except _NotAffine:
            total = None
        (lid if isinstance(tag, LocalIndexTag) else gid)[tag.axis] = total
    return lid, gid


def _memory_variables(knl) -> dict[str, tuple[str, Any]]:
    """name -> (mtype, variable) for the arrays in global or local memory."""
    result = {}
    for a in knl.args:
        if isinstance(a, ArrayArg):
            result[a.name] = ("global", a)
    for name, tv in knl.temporary_variables.items():
        if isinstance(tv, TemporaryVariable):
            if tv.address_space == AddressSpace.GLOBAL:
                result[name] = ("global", tv)
            elif tv.address_space == AddressSpace.LOCAL:
                result[name] = ("local", tv)
    return result


def get_mem_access_map(knl, subgroup_size=None, count_redundant_work: bool = False
                       ) -> ToCountMap:
    """Count the global and local memory accesses of *knl*: a
    :class:`ToCountMap` from :class:`MemAccess` to :class:`Count`.

    Every array reference counts once per execution (loads of an element used
    twice in one expression count twice). A global access whose address changes
    with local id 0 is counted per work-item, any other per sub-group; local
    memory accesses are counted per sub-group.
    """
    knl = _prepare(knl)
    grid = _Grid(knl, _process_subgroup_size(subgroup_size))
    times = _InsnCounter(knl, grid, count_redundant_work)
    variables = _memory_variables(knl)
    result: dict = {}

    def record(insn, name, index, direction):
        mtype, var = variables[name]
        lid, gid = _hw_strides(knl, var, index)
        if mtype == "local":
            g = CountGranularity.SUBGROUP
        else:
            g = CountGranularity.WORKITEM if lid.get(0, 0) != 0 \
                else CountGranularity.SUBGROUP
        key = MemAccess(mtype, var.dtype, lid, gid, direction, name, g)
        n = times(insn, g)
        result[key] = result[key] + n if key in result else n

    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            continue
        finder = _AccessFinder(variables)
        finder(insn.expression)
        assignee = insn.assignee
        if isinstance(assignee, prim.Subscript):
            idx = assignee.index if isinstance(assignee.index, tuple) \
                else (assignee.index,)
            for i in idx:
                finder(i)
        for name, index in finder.found:
            record(insn, name, index, "load")
        target = getattr(assignee, "name", None) or getattr(
            getattr(assignee, "aggregate", None), "name", None)
        if target in variables:
            index = None
            if isinstance(assignee, prim.Subscript):
                index = assignee.index if isinstance(assignee.index, tuple) \
                    else (assignee.index,)
            record(insn, target, index, "store")
    return ToCountMap(result)

# }}}


# {{{ synchronization

def get_synchronization_map(knl, subgroup_size=None) -> ToCountMap:
    """Count synchronization events per work-item: ``barrier_local`` /
    ``barrier_global`` (once per iteration of the sequential loops around each
    barrier) and ``kernel_launch`` (once per device kernel)."""
    from kernelcore.ir.kernel import KernelState
    from kernelcore.schedule.items import (
        Barrier, CallKernel, EnterLoop, LeaveLoop, ReturnFromKernel, RunInstruction)
    from kernelcore.schedule.linearize import linearize
    _process_subgroup_size(subgroup_size)
    knl = _prepare(knl)
    if knl.state < KernelState.LINEARIZED or knl.linearization is None:
        knl = linearize(knl)
    result: dict = {}
    loops: list[str] = []
    cache: dict = {}

    def add(key):
        t = tuple(loops)
        if t not in cache:
            cache[t] = Count.points(_domain_of(knl, t))
        result[key] = result[key] + cache[t] if key in result else cache[t]

    for item in knl.linearization:
        if isinstance(item, EnterLoop):
            loops.append(item.iname)
        elif isinstance(item, LeaveLoop):
            loops.pop()
        elif isinstance(item, Barrier):
            add(f"barrier_{item.kind}")
        elif isinstance(item, CallKernel):
            add("kernel_launch")
        elif isinstance(item, RunInstruction):
            insn = knl.id_to_insn[item.insn_id]
            if isinstance(insn, BarrierInstruction):
                add(f"barrier_{insn.synchronization_kind}")
        elif isinstance(item, ReturnFromKernel):
            pass
        else:
            raise KernelcoreError(f"unexpected linearization item {item!r}")
    return ToCountMap(result)

# }}}
