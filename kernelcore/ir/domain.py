"""Loop domains: parsing, alignment, and conversions between islpy and pymbolic.

Public names: parse_domain, parse_assumptions, align_to, move_names_to_params,
aff_to_expr, pw_aff_to_expr, set_to_cond_expr, constraint_to_expr, expr_to_pw_aff,
NotAffineError, static_max_of_pw_aff, static_range, check_bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import reduce
from math import gcd
from typing import TYPE_CHECKING, Any, cast

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError, ParseError, StaticValueFindingError

if TYPE_CHECKING:
    from pymbolic.typing import ArithmeticExpression, Expression

dim_type = isl.dim_type

_ISL_KEYWORDS = {"and", "or", "not", "exists", "mod", "floor", "ceil", "min", "max",
                 "true", "false", "infty", "NaN", "rat", "cst"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9']*")


_EXISTS = re.compile(r"\bexists\s*\(?\s*([A-Za-z_][\w\s,]*?)\s*:")


def _params_in(text: str, bound: set[str]) -> list[str]:
    """Names in *text* that are parameters: not keywords, not in *bound*, not
    bound by ``exists``."""
    bound = bound | {n.strip() for m in _EXISTS.finditer(text) for n in m.group(1).split(",")}
    found: list[str] = []
    for name in _IDENT.findall(text):
        if name not in _ISL_KEYWORDS and name not in bound and name not in found:
            found.append(name)
    return found


def parse_domain(text: str | isl.BasicSet | isl.Set) -> isl.BasicSet | isl.Set:
    """Parse an ISL set string; undeclared names become parameters."""
    if isinstance(text, (isl.BasicSet, isl.Set)):
        return text
    if not isinstance(text, str):
        raise ParseError(f"a domain must be an ISL set string, got {type(text).__name__}")
    src = text.strip()
    if re.fullmatch(r"\{\s*:?\s*\}", src):
        # a domain without loops: the instructions run once
        return isl.BasicSet("{ : }")
    if "->" not in src.split("{", 1)[0]:
        m = re.match(r"\{\s*\[([^\]]*)\]\s*(:?)(.*)\}\s*$", src, re.S)
        if m is None:
            raise ParseError(f"malformed domain {text!r}: expected '{{ [inames] : "
                             "constraints }'")
        inames = {s.strip() for s in m.group(1).split(",") if s.strip()}
        body = m.group(3)
        bound = set(inames)
        for ex in re.finditer(r"exists\s*\(?\s*([A-Za-z_0-9,\s]+?)\s*:", body):
            bound |= {s.strip() for s in ex.group(1).split(",")}
        params = _params_in(body, bound)
        if params:
            src = f"[{', '.join(params)}] -> {src}"
    try:
        result = isl.Set(src)
    except isl.Error as e:
        product = _PRODUCT.search(src)
        if product is not None:
            raise ParseError(
                f"domain {text!r} is not affine: it multiplies names ('{product.group(0)}'), "
                "and a loop domain may only add names times constants; give the product "
                "a name of its own (a parameter such as 'nn', with the relation in "
                "assumptions or passed as an argument)") from None
        raise ParseError(f"malformed domain {text!r}: {e}") from None
    result = result.coalesce()
    bsets = result.get_basic_sets()
    if len(bsets) == 1:
        return bsets[0]
    return result


#: a product of two names (or of a name and a parenthesis) in ISL text
_PRODUCT = re.compile(r"[A-Za-z_][\w']*\s*\*\s*[A-Za-z_(][\w']*|\)\s*\*\s*[A-Za-z_(][\w']*")


def check_bounded(dom: isl.Set | isl.BasicSet, used: Iterable[str]) -> None:
    """Raise :class:`~kernelcore.diagnostic.ParseError` if the loop domain
    *dom* leaves one of the inames *used* by instructions without a lower or
    an upper bound (its loop would not end)."""
    if dom.is_bounded():
        return
    used = set(used)
    n = dom.dim(dim_type.set)
    for k in range(n):
        if dom.get_dim_name(dim_type.set, k) not in used:
            continue
        alone = dom.project_out(dim_type.set, k + 1, n - k - 1).project_out(dim_type.set, 0, k)
        if isinstance(alone, isl.BasicSet):
            alone = alone.to_set()
        if alone.is_bounded():
            continue
        missing = [side for side, probe in (("lower", alone.dim_min), ("upper", alone.dim_max))
                   if not _has_bound(probe)]
        name = dom.get_dim_name(dim_type.set, k)
        raise ParseError(
            f"loop domain {dom} gives iname '{name}' no "
            f"{' and no '.join(missing) or 'finite'} bound, so its loop would not end: bound "
            f"it on both sides (as in '0 <= {name} < n')")


def _has_bound(probe: Any) -> bool:
    try:
        probe(0)
    except isl.Error:
        return False
    return True


def parse_assumptions(text: str | isl.BasicSet | isl.Set | None,
                      params: Sequence[str]) -> isl.Set:
    """Parse assumptions ("n>=1 and n mod 16 = 0") into a parameter set."""
    names = list(params)
    if isinstance(text, (isl.BasicSet, isl.Set)):
        aset = text if isinstance(text, isl.Set) else text.to_set()
        aset = aset.params() if not aset.is_params() else aset
    else:
        body = "" if text is None else text.strip()
        names += [p for p in _params_in(body, set()) if p not in names]
        try:
            aset = isl.Set(f"[{', '.join(names)}] -> {{ : {body} }}")
        except isl.Error as e:
            raise ParseError(f"malformed assumptions {text!r}: {e}") from None
    universe = isl.Set(f"[{', '.join(names)}] -> {{ : }}")
    return aset.align_params(universe.space) & universe.align_params(aset.space)


#: the most projections or alignments remembered (then their table starts afresh)
_MEMO_KEPT = 4096
#: alignments made (see align_to), by the object, its dimensions' names and
#: the template's
_ALIGNED: dict[tuple, Any] = {}


def _names(obj: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (tuple(obj.get_var_names(dim_type.param)), tuple(obj.get_var_names(dim_type.set)))


def align_to(obj: Any, template: Any) -> Any:
    """*obj* in *template*'s space (dims matched by name, missing ones added;
    remembered as :func:`project_to`'s projections are: islpy aligns in
    Python, one dimension at a time)."""
    key = (type(obj), obj, _names(obj), _names(template))
    try:
        known = _ALIGNED.get(key)
    except TypeError:               # (an isl object without a hash)
        return isl.align_spaces(obj, template, obj_bigger_ok=True)
    if known is None:
        known = isl.align_spaces(obj, template, obj_bigger_ok=True)
        if len(_ALIGNED) >= _MEMO_KEPT:
            _ALIGNED.clear()
        _ALIGNED[key] = known
    return known


def move_names_to_params(s: isl.Set, names: Iterable[str]) -> isl.Set:
    """Turn the set dimensions called *names* into parameters."""
    for name in names:
        var = s.get_var_dict()
        if name in var and var[name][0] == dim_type.set:
            s = s.move_dims(dim_type.param, s.dim(dim_type.param),
                            dim_type.set, var[name][1], 1)
    return s


#: projections made (see project_to), by the set, its dimensions' names and
#: the names kept
_PROJECTIONS: dict[tuple, isl.Set] = {}


def project_to(s: isl.Set, keep: Iterable[str]) -> isl.Set:
    """Project out every set dimension not in *keep* (remembered: code
    generation projects the same domains for each copy of a kernel that
    transformations make, and a projection costs far more than a lookup)."""
    keep = frozenset(keep)
    names = tuple(s.get_dim_name(dim_type.set, i) for i in range(s.dim(dim_type.set)))
    if keep.issuperset(names):
        return s
    key = (s, names, tuple(s.get_var_names(dim_type.param)), keep)
    known = _PROJECTIONS.get(key)
    if known is not None:
        return known
    projected = s
    for i in reversed(range(len(names))):
        if names[i] not in keep:
            projected = projected.project_out(dim_type.set, i, 1)
    if len(_PROJECTIONS) >= _MEMO_KEPT:
        _PROJECTIONS.clear()
    _PROJECTIONS[key] = projected
    return projected


# {{{ isl -> pymbolic

def _val_to_int_or_frac(v: isl.Val):
    num = v.get_num_si()
    den = v.get_den_val().get_num_si()
    return num, den


def _linear_expr(terms: Sequence[tuple[int, Any]], const: int):
    """sum(coeff*var) + const as a tidy pymbolic expression."""
    parts: list[Any] = []
    if const:
        parts.append(const)
    for coeff, var in terms:
        if coeff == 0:
            continue
        parts.append(var if coeff == 1 else prim.Product((coeff, var)))
    if not parts:
        return 0
    if len(parts) == 1:
        return parts[0]
    return prim.Sum(tuple(parts))


def aff_to_expr(aff: isl.Aff) -> ArithmeticExpression:
    """An isl quasi-affine expression as pymbolic (divs become floor divisions)."""
    den_total = 1
    entries: list[tuple[int, int, Any]] = []
    for dt in (dim_type.param, dim_type.in_):
        for i in range(aff.dim(dt)):
            num, den = _val_to_int_or_frac(aff.get_coefficient_val(dt, i))
            if num:
                entries.append((num, den, prim.Variable(cast(str, aff.get_dim_name(dt, i)))))
    for i in range(aff.dim(dim_type.div)):
        num, den = _val_to_int_or_frac(aff.get_coefficient_val(dim_type.div, i))
        if num:
            entries.append((num, den, div_to_expr(aff.get_div(i))))
    cnum, cden = _val_to_int_or_frac(aff.get_constant_val())
    for _num, den, _v in entries:
        den_total = _lcm(den_total, den)
    den_total = _lcm(den_total, cden)
    terms = [(num * (den_total // den), v) for num, den, v in entries]
    const = cnum * (den_total // cden)
    expr = _linear_expr(terms, const)
    if den_total != 1:
        expr = prim.FloorDiv(expr, den_total)
    return expr


def div_to_expr(div_aff: isl.Aff) -> ArithmeticExpression:
    """``floor(div_aff)`` as pymbolic."""
    expr = aff_to_expr(div_aff)
    if isinstance(expr, prim.FloorDiv):
        return expr
    return expr


def _lcm(a: int, b: int) -> int:
    return a * b // gcd(a, b)


def constraint_to_expr(c: isl.Constraint) -> prim.Comparison:
    """An isl constraint as a pymbolic comparison (``expr >= 0`` or ``expr == 0``)."""
    terms: list[tuple[int, Any]] = []
    for dt in (dim_type.param, dim_type.set):
        for i in range(c.space.dim(dt)):
            num = c.get_coefficient_val(dt, i).get_num_si()
            if num:
                terms.append((num, prim.Variable(cast(str, c.space.get_dim_name(dt, i)))))
    local = c.get_local_space()
    for i in range(local.dim(dim_type.div)):
        num = c.get_coefficient_val(dim_type.div, i).get_num_si()
        if num:
            terms.append((num, div_to_expr(local.get_div(i))))
    const = c.get_constant_val().get_num_si()
    # order: variables first as loopy users are used to, constant first
    expr = _linear_expr(terms, const)
    return prim.Comparison(expr, "==" if c.is_equality() else ">=", 0)


def basic_set_to_conditions(bs: isl.BasicSet) -> list:
    return [constraint_to_expr(c) for c in bs.get_constraints()]


def _has_unknown_div(bs: isl.BasicSet) -> bool:
    local = bs.get_local_space()
    for i in range(local.dim(dim_type.div)):
        try:
            local.get_div(i)
        except isl.Error:
            return True
    return False


def set_to_cond_expr(s: isl.Set | isl.BasicSet) -> Expression:
    """An isl set as a boolean pymbolic expression (True when universe)."""
    if isinstance(s, isl.BasicSet):
        s = s.to_set()
    if any(_has_unknown_div(bs) for bs in s.get_basic_sets()):
        s = s.compute_divs()        # existential variables as explicit divisions
    alternatives = []
    for bs in s.get_basic_sets():
        conds = basic_set_to_conditions(bs)
        if not conds:
            return True
        alternatives.append(conds[0] if len(conds) == 1 else prim.LogicalAnd(tuple(conds)))
    if not alternatives:
        return False
    return alternatives[0] if len(alternatives) == 1 else prim.LogicalOr(tuple(alternatives))


def pw_aff_to_expr(pwaff: isl.PwAff) -> ArithmeticExpression:
    """A piecewise quasi-affine function as pymbolic (pieces become conditionals;
    the last piece is the fallback everywhere else)."""
    return pw_aff_to_expr_and_total(pwaff)[0]


def pw_aff_to_expr_and_total(pwaff: isl.PwAff) -> tuple[ArithmeticExpression, isl.PwAff]:
    """(expression, the total function that expression computes everywhere)."""
    pieces = pwaff.get_pieces()
    if not pieces:
        raise StaticValueFindingError(f"empty piecewise expression {pwaff}")
    affs = [isl.PwAff.from_aff(aff) for _, aff in pieces]
    if len(pieces) > 1:
        for combine, node in ((isl.PwAff.min, prim.Min), (isl.PwAff.max, prim.Max)):
            combined = reduce(combine, affs)
            if combined.ne_set(pwaff).is_empty():
                return node(tuple(aff_to_expr(aff) for _, aff in pieces)), combined
    result = aff_to_expr(pieces[-1][1])
    covered = None
    total = None
    for (dom, _), pw in zip(pieces[:-1], affs[:-1]):
        region = dom if covered is None else dom - covered
        part = pw.intersect_domain(region)
        total = part if total is None else total.union_add(part)
        covered = dom if covered is None else covered | dom
    rest = affs[-1] if covered is None else affs[-1].intersect_domain(covered.complement())
    total = rest if total is None else total.union_add(rest)
    for dom, aff in reversed(pieces[:-1]):
        result = prim.If(set_to_cond_expr(dom), aff_to_expr(aff), result)
    return result, total


def static_max_of_pw_aff(pwaff: isl.PwAff, context: isl.Set | None = None) -> isl.Aff:
    """One affine piece of *pwaff* that is >= every piece wherever *context* holds
    (raises :class:`StaticValueFindingError` when none dominates)."""
    dom = pwaff.domain()
    if context is not None:
        pwaff = pwaff.align_params(context.space)
        dom = pwaff.domain() & context.align_params(pwaff.domain().space)
    pieces = pwaff.get_pieces()
    if len(pieces) == 1:
        return pieces[0][1]
    # constant bounds first: a fixed size is what work-group sizes need
    for _, candidate in sorted(pieces, key=lambda p: not p[1].is_cst()):
        below = isl.PwAff.from_aff(candidate).lt_set(pwaff)
        if (below & dom).is_empty():
            return candidate
    raise StaticValueFindingError(f"a static maximum was not found for PwAff '{pwaff}'")


# }}}


# {{{ pymbolic -> isl

def affine_simplify(expr: Expression, space: isl.Space) -> Expression:
    """*expr* in ISL's canonical form when it is quasi-affine over *space*."""
    try:
        pieces = expr_to_pw_aff(expr, space).get_pieces()
    except NotAffineError:
        return expr
    return aff_to_expr(pieces[0][1]) if len(pieces) == 1 else expr


class NotAffineError(ValueError):
    """An expression is not quasi-affine in the given variables."""


#: the affine functions of recently used spaces: id -> (the space, kept alive so
#: that its id is not reused; its affs); emptied when full. (Spaces of
#: different names compare equal in islpy, so they are told apart by identity:
#: a kernel's space is one object.)
_AFFS: dict[int, tuple[isl.Space, dict]] = {}


def expr_to_pw_aff(expr: Expression, space: isl.Space) -> isl.PwAff:
    """A quasi-affine pymbolic expression as an isl PwAff over *space*."""
    known = _AFFS.get(id(space))
    if known is None:
        if len(_AFFS) >= 64:
            _AFFS.clear()
        known = _AFFS[id(space)] = (space, isl.affs_from_space(space))
    # (its affs: the names' and, by integer key, the constants' made so far)
    return _to_aff(expr, known[1])


def _to_aff(expr, affs):
    if isinstance(expr, bool):
        raise NotAffineError(f"boolean {expr} in affine expression")
    if isinstance(expr, (int, np.integer)):
        # (the space's constants are kept beside its names: islpy makes a
        # number into a PwAff piece by piece)
        value = int(expr)
        const = affs.get(value)
        if const is None:
            const = affs[value] = affs[0] + value
        return const
    if isinstance(expr, prim.Variable):
        if expr.name not in affs:
            raise NotAffineError(f"'{expr.name}' is not a loop index or parameter")
        return affs[expr.name]
    if isinstance(expr, prim.Sum):
        result = affs[0]
        for ch in expr.children:
            result = result + _to_aff(ch, affs)
        return result
    if isinstance(expr, prim.Product):
        const = 1
        nonconst = None
        for ch in expr.children:
            if isinstance(ch, int):
                const *= ch
            elif nonconst is None:
                nonconst = _to_aff(ch, affs)
            else:
                rhs = _to_aff(ch, affs)
                if rhs.is_cst():
                    nonconst = nonconst.mul(rhs)
                elif nonconst.is_cst():
                    nonconst = rhs.mul(nonconst)
                else:
                    raise NotAffineError(f"{expr} is not affine")
        return (affs[0] + const) if nonconst is None else nonconst.scale_val(
            isl.Val.int_from_si(isl.DEFAULT_CONTEXT, const)) if const != 1 else nonconst
    if isinstance(expr, prim.If):
        cond = _to_set(expr.condition, affs)
        then, else_ = _to_aff(expr.then, affs), _to_aff(expr.else_, affs)
        return then.intersect_domain(cond).union_add(
            else_.intersect_domain(cond.complement()))
    if isinstance(expr, (prim.Min, prim.Max)):
        parts = [_to_aff(c, affs) for c in expr.children]
        combine = isl.PwAff.min if isinstance(expr, prim.Min) else isl.PwAff.max
        return reduce(combine, parts)
    if isinstance(expr, prim.FloorDiv) and isinstance(expr.denominator, int) \
            and expr.denominator > 0:
        num = _to_aff(expr.numerator, affs)
        return num.scale_down_val(
            isl.Val.int_from_si(isl.DEFAULT_CONTEXT, expr.denominator)).floor()
    if isinstance(expr, prim.Remainder) and isinstance(expr.denominator, int) \
            and expr.denominator > 0:
        num = _to_aff(expr.numerator, affs)
        return num.mod_val(isl.Val.int_from_si(isl.DEFAULT_CONTEXT, expr.denominator))
    raise NotAffineError(f"{expr} is not quasi-affine")


_COMPARE = {">=": "ge_set", ">": "gt_set", "<=": "le_set", "<": "lt_set",
            "==": "eq_set", "!=": "ne_set"}


def _to_set(cond, affs) -> isl.Set:
    if isinstance(cond, prim.Comparison) and cond.operator in _COMPARE:
        left, right = _to_aff(cond.left, affs), _to_aff(cond.right, affs)
        return getattr(left, _COMPARE[cond.operator])(right)
    if isinstance(cond, prim.LogicalAnd):
        return reduce(isl.Set.intersect, [_to_set(c, affs) for c in cond.children])
    if isinstance(cond, prim.LogicalOr):
        return reduce(isl.Set.union, [_to_set(c, affs) for c in cond.children])
    if isinstance(cond, prim.LogicalNot):
        return _to_set(cond.child, affs).complement()
    raise NotAffineError(f"{cond} is not an affine condition")

# }}}


def static_range(knl: Any, iname: str) -> tuple[int, int]:
    """The smallest and largest value *iname* takes for any parameters the
    assumptions allow (an error if either is unbounded)."""
    dom = project_to(knl.get_inames_domain([iname]) & knl.assumptions_set, [iname])
    idx = dom.get_var_dict()[iname][1]
    lo, hi = dom.dim_min_val(idx), dom.dim_max_val(idx)
    if not lo.is_int() or not hi.is_int():
        raise KernelcoreError(f"iname '{iname}' needs a constant range here (split it "
                              "with a fixed length first, or state a bound in the "
                              "assumptions)")
    return lo.get_num_si(), hi.get_num_si()
