"""Elementwise operations: graph building for the ufuncs of
:mod:`lazyarray.ufunc_templates`.

Result dtypes are NumPy's own, and so are the dtypes a ufunc computes in:
operands are cast to the input types of the loop NumPy would pick
(``np.sin`` of int16 computes in float32), Python scalars stay weak as in
NumPy 2. Where the spelling depends on the operands' kinds (shifts,
``sign``, NaN-propagating ``maximum``, bool arithmetic, complex tests), the
graph records an internal variant (a name starting with ``_``) chosen here.

Public names: elementwise, cast, constant, real_part, imag_part, broadcast_shapes,
isclose, round_half_even, HugeInt, typing_probe.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarray.errors import DTypeError, NoDeviceVersion, ShapeError, unsupported_dtype_error
from lazyarray.graph import (
    Const,
    Map,
    Node,
    View,
    is_weak,
)
from lazyarray.mapper import is_kind
from lazyarray.ufunc_templates import COMPLEX_UFUNCS, UFUNCS


def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy's broadcast of *shapes* (a ShapeError naming them if impossible)."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError("operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None


#: a Python scalar standing for a weak value of each kind, in typing
_WEAK_PROBES = {"b": True, "i": 1, "u": 1, "f": 1.0, "c": 1j}


def typing_probe(x):
    """A stand-in with NumPy's typing behaviour: empty arrays, or Python scalars."""
    if is_kind(x, "const"):
        return x.value.item() if x.weak else x.value
    if is_weak(x):
        return _WEAK_PROBES[x.dtype.kind]
    return np.empty(0, x.dtype)


def _loop_operand(x):
    """What ``ufunc.resolve_dtypes`` takes for *x* (Python types are weak)."""
    if is_weak(x):
        v = typing_probe(x)
        return np.dtype(np.bool_) if isinstance(v, bool) else type(v)
    return x.dtype


def constant(value: Any, dtype: Any) -> Node:
    """A scalar node of *dtype* holding *value* (also NaN and infinities: a
    kernel reads it as an argument)."""
    dtype = np.dtype(dtype)
    return Const(dtype.type(value), dtype, False)


def _operand(node: Node, loop_dtype: np.dtype, name: str = "") -> Node:
    """*node* as an operand of a loop on *loop_dtype*: converted to it. A
    Python scalar becomes a constant of the loop type, as NumPy converts it
    (a kernel argument: a new value reuses the kernel), except an integer
    outside the loop type's range in a comparison, which NumPy compares as
    the integer it is."""
    if is_kind(node, "const") and node.weak and loop_dtype.kind in "iu" \
            and node.dtype.kind in "iu" and name in _COMPARISONS \
            and not _fits(node.value, loop_dtype):
        return node
    return cast(node, loop_dtype)


def _fits(value, dtype: np.dtype) -> bool:
    """Whether the integer *value* is one of *dtype*'s values."""
    info = np.iinfo(dtype)
    return info.min <= int(value) <= info.max


def cast(node: Node, dtype: Any) -> Node:
    """*node* converted to *dtype* as NumPy's ``astype`` does (nonzero is True,
    complex to real keeps the real part)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc" or dtype == np.float16:
        raise unsupported_dtype_error(dtype)
    if is_kind(node, "param"):
        node.converted_to.add(dtype)
    if node.dtype == dtype and not is_kind(node, "const"):
        return node
    if is_kind(node, "const"):
        key = (node._key, dtype)
        converted = _CONST_CASTS.get(key)
        if converted is None:
            converted = _const_cast(node, dtype)
            if len(_CONST_CASTS) >= 4096:
                _CONST_CASTS.clear()
            _CONST_CASTS[key] = converted
        return converted
    if dtype.kind == "b":
        return Map("_nonzero", (node,), node.shape, dtype)
    if node.dtype.kind == "c" and dtype.kind != "c":
        return cast(real_part(node), dtype)
    return Map("astype", (node,), node.shape, dtype)


#: constants converted to a dtype, by the constant's interning key and the dtype
_CONST_CASTS: dict[tuple, Const] = {}


def _const_cast(node: Const, dtype: np.dtype) -> Const:
    """The constant *node* converted to *dtype* as NumPy's ``astype`` does."""
    if dtype.kind == "b":
        return Const(bool(node.value != 0), dtype, False)
    with np.errstate(all="ignore"):
        value = node.value.real if node.dtype.kind == "c" and dtype.kind != "c" \
            else node.value
        return constant(np.asarray(value).astype(dtype)[()], dtype)  # type: ignore[return-value]


def real_part(node: Node) -> Node:
    """The real part of *node* (*node* itself when it is not complex)."""
    if node.dtype.kind != "c":
        return node
    return Map("_real", (node,), node.shape, np.empty(0, node.dtype).real.dtype)


def imag_part(node: Node) -> Node:
    """The imaginary part of *node* (zeros of its dtype when it is not complex)."""
    if node.dtype.kind != "c":
        return View(Const(0, node.dtype, False), (), node.shape)
    return Map("_imag", (node,), node.shape, np.empty(0, node.dtype).real.dtype)


def _variant(name: str, loop: tuple, out: np.dtype) -> str:
    """The ELEMENTWISE entry computing ufunc *name* on operands of the loop
    dtypes *loop* (results of dtype *out*)."""
    kind = loop[0].kind if loop else "f"
    bits = loop[0].itemsize * 8 if loop else 0
    if kind == "c":
        if name in ("sign", "isnan", "isinf", "isfinite", "logical_and", "logical_or",
                    "logical_not"):
            return f"_{name}_c"
        return name
    if name in ("add", "multiply") and out.kind == "b":
        return "_or" if name == "add" else "_and"
    if name in ("maximum", "minimum", "fmax", "fmin"):
        if kind == "f":
            return f"_{name}_f"
        return "_maximum_i" if name in ("maximum", "fmax") else "_minimum_i"
    if name in ("floor", "ceil", "trunc", "rint") and kind in "biu":
        return "_identity"
    if name in ("isnan", "isinf") and kind in "biu":
        return "_false"
    if name == "isfinite" and kind in "biu":
        return "_true"
    if name == "invert" and kind == "b":
        return "logical_not"
    if name == "left_shift":
        return f"_left_shift{bits}"
    if name == "right_shift":
        return f"_right_shift_{'u' if kind == 'u' else 'i'}{bits}"
    if name == "sign" and kind in "iu":
        return f"_sign_{kind}"
    if name in ("floor_divide", "remainder", "mod", "fmod") and kind in "iu":
        return f"_{'remainder' if name == 'mod' else name}_{kind}"
    if name == "reciprocal" and kind in "iu":
        if kind == "u":
            return "_reciprocal_u"
        return f"_reciprocal_zero{bits}" if bits >= 32 else "_reciprocal_i"
    return name


class HugeInt(int):
    """A Python integer outside the range of every NumPy integer type: an
    operand of comparisons only (``uint64_array < 2**70`` is all True)."""


_COMPARISONS = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
                "equal": "==", "not_equal": "!="}


def _huge_operands(name: str, args: tuple) -> tuple:
    """*args* with their :class:`HugeInt` resolved as NumPy does: with
    floats it is a (weak) Python float, compared with integers it settles the
    comparison (one bool constant is returned); elsewhere NumPy's
    OverflowError."""
    others = [a for a in args if not isinstance(a, HugeInt)]
    if others and all(a.dtype.kind in "fc" for a in others):
        # (Python's OverflowError beyond the largest float, as NumPy's)
        return tuple(Const(float(a), np.float64, True) if isinstance(a, HugeInt) else a
                     for a in args)
    if len(others) != 1 or len(args) != 2 or name not in _COMPARISONS:
        huge = next(a for a in args if isinstance(a, HugeInt))
        raise OverflowError(f"Python integer {huge} out of bounds for "
                            f"{others[0].dtype if others else 'int64'}")
    [other] = others
    if other.dtype.kind in "fc":
        return tuple(a if a is other else constant(float(a), np.float64) for a in args)
    # any value of an integer type lies between the huge value and zero
    sign = [0 if a is other else int(np.sign(a)) for a in args]
    truth = {"<": sign[0] < sign[1], "<=": sign[0] <= sign[1], ">": sign[0] > sign[1],
             ">=": sign[0] >= sign[1], "==": False, "!=": True}[_COMPARISONS[name]]
    return (Const(truth, np.bool_, False),)


#: node kinds whose weakness and dtype are all that typing reads of them
#: (not constants, parameters or external calls)
_ARRAY_NODES = frozenset({"input", "map", "reduce", "view", "reshape", "concat", "iota", "scan",
                          "gather"})
#: per ufunc and its operands' typing entries (see :func:`_direct_key`): the
#: Map's op, dtype and weakness and the loop dtypes its operands convert to
_DIRECT: dict[tuple, tuple] = {}
#: ufuncs whose graph depends on a constant operand's value, not only its type
_VALUE_DEPENDENT = frozenset({"power", "float_power", "where"})


def _direct_key(name: str, args: tuple) -> tuple | None:
    """What typing *name* on *args* depends on, as a key: per operand its
    dtype and weakness, and for a Python integer its sign and bit length
    (``~value`` for a negative one: the ranges NumPy checks it against);
    None where typing reads more."""
    key: list = [name]
    for a in args:
        kind = getattr(a, "kind", None)        # (None: a HugeInt operand)
        if kind == "const":
            if name in _VALUE_DEPENDENT:
                return None
            if a.weak and a.dtype.kind in "iu":
                value = int(a.value)
                key.append((a.dtype, True, value < 0, (value if value >= 0 else ~value)
                            .bit_length()))
            else:
                key.append((a.dtype, a.weak))
        elif kind in _ARRAY_NODES:
            key.append((a.dtype, kind == "map" and a.weak))
        else:
            return None
    return tuple(key)


def elementwise(name: str, *args: Node) -> Node:
    """The graph node of ufunc *name* applied to *args* (nodes)."""
    key = _direct_key(name, args)
    if key is not None:
        direct = _DIRECT.get(key)
        if direct is not None:
            # (typed as before, without asking NumPy again)
            op, dtype, weak, loop = direct
            return Map(op, tuple([a if a.dtype == d and a.kind != "const"
                                  else _operand(a, d, name) for a, d in zip(args, loop)]),
                       _common_shape(args), dtype, weak)
    node, loop = _elementwise(name, args)
    if key is not None and loop is not None and is_kind(node, "map") and len(_DIRECT) < 4096:
        _DIRECT[key] = (node.op, node.dtype, node.weak, loop)
    return node


def _elementwise(name: str, args: tuple) -> tuple[Node, tuple | None]:
    """The node of ufunc *name* on *args* and the loop dtypes its operands
    were converted to (None where the node is not the loop's Map of them)."""
    if name not in UFUNCS and name != "where":
        raise DTypeError(f"ufunc '{name}' is not supported by lazyarray")
    if any(isinstance(a, HugeInt) for a in args):
        resolved = _huge_operands(name, args)
        if len(resolved) == 1:
            other = next(a for a in args if not isinstance(a, HugeInt))
            return View(resolved[0], (), other.shape), None
        args = resolved
    shape = _common_shape(args)
    if name == "where":
        # (NumPy's own where: a Python int out of the array's range is
        # wrapped by NumPy 2.4, refused by later versions)
        dtype = np.where(np.empty(0, bool), *(typing_probe(a) for a in args[1:])).dtype
        args = (cast(args[0], np.bool_),) + tuple(_operand(a, dtype) for a in args[1:])
        return Map(name, args, shape, dtype), None
    dtype, loop = _typing(name, args)
    if np.dtype(np.float16) in (dtype, *loop):
        raise DTypeError(
            f"{name} of {', '.join(str(a.dtype) for a in args)} computes in float16 in "
            "NumPy, which lazyarray does not support; cast the operands to float32 first")
    if name in ("power", "float_power") and is_kind(args[1], "const"):
        special = _scalar_power(args[0], args[1], loop[0], dtype)
        if special is not None:
            return special, None
    if any(d.kind == "c" for d in loop) and name not in COMPLEX_UFUNCS:
        raise NoDeviceVersion(f"{name} on complex values is not supported on the device yet")
    weak = all(is_weak(a) for a in args)
    args = tuple(_operand(a, d, name) for a, d in zip(args, loop))
    return Map(_variant(name, loop, dtype), args, shape, dtype, weak), tuple(loop)


def _common_shape(args) -> tuple:
    """The broadcast shape of *args* (nodes); equal shapes and scalars
    broadcast without asking NumPy (the common case, on every operator)."""
    shape: tuple = ()
    for a in args:
        if a.shape != shape and a.shape:
            if shape:
                return broadcast_shapes(*(a.shape for a in args))
            shape = a.shape
    return shape


#: per ufunc name and operands' dtypes and weakness: NumPy's result dtype and
#: loop dtypes (asking NumPy costs microseconds per operator)
_TYPINGS: dict[tuple, tuple] = {}


def _typing(name: str, args: tuple) -> tuple:
    """``(result dtype, loop dtypes)`` of ufunc *name* on *args*, as NumPy
    types them (a DTypeError where NumPy has no loop)."""
    key: tuple | None = (name, *[(a.dtype, is_weak(a)) for a in args])
    if any(is_kind(a, "const") and a.weak and a.dtype.kind in "iu" for a in args):
        key = None          # (a Python int's value matters: out of range)
    else:
        typing = _TYPINGS.get(key)  # type: ignore[arg-type]
        if typing is not None:
            return typing
    ufunc = getattr(np, name)
    try:
        with np.errstate(all="ignore"):
            dtype = ufunc(*(typing_probe(a) for a in args)).dtype
        operands = tuple(_loop_operand(a) for a in args)
        loop = ufunc.resolve_dtypes(operands + (None,))[:-1]
        if any(d.kind == "O" for d in loop):
            # (Python ints alone compare in an object loop, as they may be
            # huge: traced ones are int64 values)
            loop = ufunc.resolve_dtypes(tuple(np.dtype(o) for o in operands) + (None,))[:-1]
    except TypeError as e:
        raise DTypeError(f"{name} is not defined for dtypes "
                         f"{', '.join(str(a.dtype) for a in args)}: {e}") from None
    if key is not None and len(_TYPINGS) < 4096:
        _TYPINGS[key] = (dtype, loop)
    return dtype, loop


#: powers NumPy computes with another ufunc (``x**0.5`` is ``sqrt(x)``, so
#: ``(-inf)**0.5`` is NaN where C's ``pow`` gives inf)
_POWER_AS = {2: "square", 0.5: "sqrt", -1: "reciprocal", 1: "positive"}


def _scalar_power(base: Node, exponent: Const, loop: np.dtype, dtype: np.dtype) -> Node | None:
    """``base ** exponent`` for a scalar exponent the way NumPy computes it,
    or None where it is an ordinary power; NumPy's error for integers to a
    negative integer power."""
    value = exponent.value
    if loop.kind in "iu" and value < 0 and 0 not in base.shape:    # (NumPy checks elements)
        raise ValueError("Integers to negative integer powers are not allowed.")
    if loop.kind not in "fc" or value.imag != 0:
        return None
    if value.real in _POWER_AS:
        return cast(elementwise(_POWER_AS[value.real], cast(base, loop)), dtype)
    if loop.kind == "f" and value.real in _POWER_PRODUCTS:
        return cast(_power_by_products(cast(base, loop), float(value.real)), dtype)
    return None


#: other powers computed with products, a reciprocal and a square root (to
#: within two ulps of C's ``pow``, which PoCL computes 50-100 times slower
#: than NumPy: n-body's ``r2**-1.5``)
_POWER_PRODUCTS = frozenset([3, 4, -2, -3, -4, -0.5, 1.5, -1.5, 2.5, -2.5])


def _power_by_products(x: Node, exponent: float) -> Node:
    """``x ** exponent`` (real *x*, an exponent of :data:`_POWER_PRODUCTS`)
    as C's ``pow`` defines it: a negative power is a power of ``1 / x``, a
    half-integer power of ``|x|`` has a square root, and is NaN for finite
    negative *x* (``-0.0`` and ``-inf`` are as ``pow`` has them)."""
    whole = int(abs(exponent))
    half = abs(exponent) != whole
    base = elementwise("absolute", x) if half else x
    if exponent < 0:
        base = elementwise("reciprocal", base)
    power = _integer_power(base, whole)
    if half:
        root = elementwise("sqrt", base)
        power = root if power is None else elementwise("multiply", power, root)
        zero = Const(x.dtype.type(0), x.dtype, False)
        negative = elementwise("logical_and", elementwise("less", x, zero),
                               elementwise("isfinite", x))
        power = elementwise("where", negative, Const(x.dtype.type(np.nan), x.dtype, False),
                            power)
    assert power is not None
    return power


def _integer_power(x: Node, n: int) -> Node | None:
    """``x ** n`` for ``0 <= n <= 4`` by squaring (None for ``n == 0``)."""
    if n == 0:
        return None
    if n == 1:
        return x
    square = elementwise("square", x)
    if n == 2:
        return square
    if n == 3:
        return elementwise("multiply", square, x)
    return elementwise("square", square)


def isclose(a: Node, b: Node, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Node:
    """NumPy's isclose: ``|a - b| <= atol + rtol * |b|`` where *b* is finite,
    or ``a == b`` (infinities); NaNs are close only with *equal_nan*."""
    b = cast(b, np.result_type(typing_probe(b), 1.0))
    bound = elementwise("add", Const(float(atol), np.float64, True),
                        elementwise("multiply", Const(float(rtol), np.float64, True),
                                    elementwise("absolute", b)))
    close = elementwise("less_equal", elementwise("absolute", elementwise("subtract", a, b)),
                        bound)
    close = elementwise("logical_or", elementwise(
        "logical_and", close, elementwise("isfinite", b)), elementwise("equal", a, b))
    if equal_nan:
        close = elementwise("logical_or", close, elementwise(
            "logical_and", elementwise("isnan", a), elementwise("isnan", b)))
    return close


def _power_of_ten(n: int) -> float:
    """10**n as NumPy's round computes it (in float64: infinite beyond its
    range, so that rounding to 400 digits gives NumPy's NaN, not an error)."""
    with np.errstate(over="ignore"):
        return float(np.float64(10.0) ** n)


def round_half_even(x: Node, decimals: int = 0) -> Node:
    """NumPy's round (``around``): half to even, at *decimals* digits."""
    decimals = int(decimals)
    if x.dtype.kind == "c":
        raise NoDeviceVersion("round of complex values is not supported on the device yet")
    if x.dtype.kind == "b":
        if decimals == 0:
            raise DTypeError("round of bool computes in float16 in NumPy, which lazyarray "
                             "does not support; cast the array to float32 first")
        raise DTypeError(f"round of bool to {decimals} decimals: NumPy cannot cast the "
                         "float64 result to bool either")
    if x.dtype.kind in "iu":
        if decimals >= 0:
            return x
        factor = _power_of_ten(-decimals)
        wide = cast(x, np.float64)
        y = elementwise("multiply", elementwise("rint", elementwise(
            "true_divide", wide, Const(factor, np.float64, True))),
            Const(factor, np.float64, True))
        return cast(y, x.dtype)
    if decimals == 0:
        return elementwise("rint", x)
    if decimals > 0:
        scale = Const(_power_of_ten(decimals), np.float64, True)
        return elementwise("true_divide", elementwise("rint", elementwise(
            "multiply", x, scale)), scale)
    scale = Const(_power_of_ten(-decimals), np.float64, True)
    return elementwise("multiply", elementwise("rint", elementwise(
        "true_divide", x, scale)), scale)

