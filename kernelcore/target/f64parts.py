"""Pieces the float64 helpers are written with: exact constants as pairs
of doubles, polynomials, and the lines every helper starts with.

Public names: none (shared by :mod:`kernelcore.target.f64math` and
:mod:`kernelcore.target.f64atan`).
"""

from __future__ import annotations

from fractions import Fraction

from kernelcore.target.f32math import _pi_scaled

_INLINE = "static inline __attribute__((always_inline))"
#: first line of every function body: error-free transformations need each
#: product rounded on its own (no a * b + c fused by the compiler)
_EXACT = "#pragma OPENCL FP_CONTRACT OFF"


def _atanh_of_inverse(n: int, bits: int = 240) -> Fraction:
    """atanh(1/n) within 2^-bits (its series, in integers)."""
    one = 1 << (bits + 16)
    total, power, k = 0, one // n, 1
    while power:
        total += power // k
        power //= n * n
        k += 2
    return Fraction(total, one)


def _pi(bits: int) -> Fraction:
    return Fraction(_pi_scaled(bits), 2 ** bits)


def _double(x: Fraction | float) -> str:
    return repr(float(x))


def _split(x: Fraction, bits: int | None = None) -> tuple[str, str]:
    """*x* as a double of at most *bits* significant bits (53 if None) and
    the double nearest to the rest."""
    if bits is None:
        hi = Fraction(float(x))
    else:
        scale = 2 ** (bits - 1 - Fraction(abs(x)).numerator.bit_length()
                      + Fraction(abs(x)).denominator.bit_length())
        hi = Fraction(round(x * scale), scale)
    return _double(hi), _double(x - hi)


def _horner(coefficients: list[Fraction], var: str) -> str:
    """The polynomial of *coefficients* (lowest first) in *var*."""
    text = _double(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        text = f"{_double(c)} + {var} * ({text})"
    return text
