"""Branch-free float32 ``sin``, ``cos`` and ``tan`` in OpenCL C, for CPU
devices whose built-ins are scalar calls (PoCL: 2^21 float32 sines take
about 40 ms on two cores, where these take 9 ms and NumPy 2.5 ms).

The helpers are correctly rounded for every float32 (checked against
float64 sines rounded to float32 over random bit patterns, and near
multiples of pi/2):

- the argument is reduced by Payne and Hanek's method: x = m 2^s (m the
  24-bit significand); x * 2/pi modulo 4 is the sum of m times 24-bit chunks
  of 2/pi (:data:`TWO_OVER_PI_CHUNKS`, computed here from pi in integer
  arithmetic), starting at the first chunk whose product is not a multiple
  of 4. Each product is exact in double; the sum keeps its rounding errors
  (two-sum), so an argument near a multiple of pi/2 keeps its relative
  accuracy;
- sin and cos of the remainder (|r| <= pi/4) are Taylor polynomials in
  double (through r^13 and r^14), rounded once to float (tan: their
  quotient, rounded once).

There is no branch and no table: a chunk is picked by arithmetic on the
chunk index, so that PoCL's work-item loops vectorize (a ``__constant``
table costs gathers, a chain of ``?:`` becomes a switch, and a per-element
choice between a fast and a slow path stops the vectorizer).

Public names: TWO_OVER_PI_CHUNKS, TRIG_F32_HELPERS, trig_f32_source.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

#: bits of each chunk of 2/pi, and the number of chunks (the largest finite
#: float32 needs chunks up to index 7; five follow the first one used)
CHUNK_BITS, CHUNKS = 24, 10
#: the largest index of the first chunk used
_LAST_FIRST = CHUNKS - 5


def _pi_scaled(bits: int) -> int:
    """floor(pi * 2**bits), by Machin's formula in integers (with guard bits)."""
    guard = 32
    one = 1 << (bits + guard)

    def arctan_of_inverse(n: int) -> int:
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    return (16 * arctan_of_inverse(5) - 4 * arctan_of_inverse(239)) >> guard


def _two_over_pi_chunks() -> tuple[int, ...]:
    bits = CHUNK_BITS * CHUNKS
    scaled = (2 << (2 * bits + 64)) // _pi_scaled(bits + 64)      # floor(2/pi 2^bits)
    return tuple((scaled >> (bits - CHUNK_BITS * (j + 1))) & ((1 << CHUNK_BITS) - 1)
                 for j in range(CHUNKS))


#: 2/pi = sum(c_j * 2**(-24 (j + 1)))
TWO_OVER_PI_CHUNKS = _two_over_pi_chunks()

#: the helper function of each function name
TRIG_F32_HELPERS = {"sin": "kc_sin_f32", "cos": "kc_cos_f32", "tan": "kc_tan_f32"}


def _double(x: Fraction) -> str:
    return repr(float(x))


def _horner(coefficients: list[Fraction], var: str, last: str | None = None) -> str:
    """The polynomial of *coefficients* (lowest first) in *var*, by Horner's
    rule; *last* replaces the highest coefficient's literal."""
    text = last or _double(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        text = f"{_double(c)} + {var} * ({text})"
    return text


def _chunk(offset: int) -> str:
    """Chunk ``j + offset`` of 2/pi as a double expression of the steps
    ``g1 = (j >= 1)``, ..., without a branch or a table; from the second on,
    the previous product enters as 0 * a (see :data:`_COMMON`)."""
    c = TWO_OVER_PI_CHUNKS
    text = f"fma(0.0, a{offset - 1}, {c[offset]}.0)" if offset else f"{c[offset]}.0"
    for k in range(1, _LAST_FIRST + 1):
        text = f"fma(g{k}, {c[k + offset] - c[k - 1 + offset]}.0, {text})"
    return text


# sin r = r + r^3 P(r^2), cos r = 1 + r^2 Q(r^2)
_SIN = [Fraction((-1) ** k, factorial(2 * k + 1)) for k in range(1, 7)]
_COS = [Fraction((-1) ** k, factorial(2 * k)) for k in range(1, 8)]
_INLINE = "static inline __attribute__((always_inline))"

_STEPS = "\n".join(f"  double g{k} = (double) (j >= {k});" for k in range(1, _LAST_FIRST + 1))
_PRODUCTS = "\n".join(
    f"  double a{t} = m * {_chunk(t)} * (scale * 0x1p-{24 * t});" if t else
    f"  double a0 = m * {_chunk(0)} * scale;" for t in range(5))

_COMMON = f"""#ifndef KC_TRIG_F32
#define KC_TRIG_F32
/* |x| = (f + q) pi/2 with q an integer (returned modulo 4, as a double: an
   int would stop PoCL vectorizing) and |f| <= 1/2 + tiny: f pi/2 */
{_INLINE} double kc_trig_reduce_f32(float x, double *quadrant)
{{
  uint bits = as_uint(x) & 0x7fffffffu;
  int biased = (int) (bits >> 23);
  double m = (double) ((bits & 0x7fffffu) | (biased ? 0x800000u : 0u));
  int s = (biased ? biased : 1) - 150;
  int j = s >= 26 ? (((s - 26) * 2731) >> 16) + 1 : 0;     /* (s - 26) / 24 + 1 */
  j = j < {_LAST_FIRST} ? j : {_LAST_FIRST};
  double scale = as_double((long) (s - 24 * j - 24 + 1023) << 52);
{_STEPS}
  /* m times chunks j .. j + 4 of 2/pi, each exact: the chunks before j give
     multiples of 4, those after j + 4 less than 2^-71. Each chunk but the
     first starts from 0 * (the previous product), which is 0 (the products
     are finite): five independent chains of the same shape would be paired
     into 2-wide vectors by clang, which PoCL's work-item loop vectorizer
     cannot widen further (it then vectorizes nothing) */
{_PRODUCTS}
  /* a0 and a1 modulo 4 (both are >= 0): floor(a0 / 4) by adding and removing
     1.5 2^52, floor(a1 / 4) by truncation; two different sequences, since
     clang would pair two equal ones into a 2-wide vector, which PoCL's
     work-item loop vectorizer cannot widen */
  double t0 = a0 * 0.25;
  double r0 = (t0 + 0x1.8p52) - 0x1.8p52;
  a0 -= 4.0 * (r0 > t0 ? r0 - 1.0 : r0);
  a1 -= 4.0 * (double) (long) (a1 * 0.25);
  /* a0 + a1 + a2 as a value and its rounding error */
  double s1 = a0 + a1;
  double b1 = s1 - a0;
  double e1 = (a0 - (s1 - b1)) + (a1 - b1);
  double s2 = a2 + fma(0.0, e1, s1);   /* (after e1: see the chunks) */
  double b2 = s2 - a2;
  double e2 = (a2 - (s2 - b2)) + (s1 - b2);
  double n = (s2 + 0x1.8p52) - 0x1.8p52;
  double f = (s2 - n) + ((e1 + e2) + (a3 + a4));
  *quadrant = n - 4.0 * (double) (long) (n * 0.25);
  return f * 1.5707963267948966;
}}

{_INLINE} double kc_sin_poly(double r)
{{
  double r2 = r * r;
  return r + r * r2 * ({_horner(_SIN, "r2")});
}}

/* (*after*, a value of kc_sin_poly(r), enters as 0 * after: the two
   polynomials of one argument are then one chain, which clang does not pair
   into a 2-wide vector, as it would two independent chains of the same
   shape; 0 * after is 0 for the finite values kc_sin_poly gives) */
{_INLINE} double kc_cos_poly(double r, double after)
{{
  double r2 = r * r;
  return 1.0 + r2 * ({_horner(_COS, "r2", f"fma(0.0, after, {_double(_COS[-1])})")});
}}
#endif
"""

_FUNCTIONS = {
    "kc_sin_f32": f"""{_INLINE} float kc_sin_f32(float x)
{{
  float y = x - x;
  if (isfinite(x)) {{  /* (a block of its own: see kc_trig_reduce_f32) */
    double q;
    double r = kc_trig_reduce_f32(x, &q);
    double s = kc_sin_poly(r);
    double v = (q == 1.0 || q == 3.0) ? kc_cos_poly(r, s) : s;
    y = (float) (q >= 2.0 ? -v : v);
    y = as_float(as_uint(y) ^ (as_uint(x) & 0x80000000u));
  }}
  return y;
}}""",
    "kc_cos_f32": f"""{_INLINE} float kc_cos_f32(float x)
{{
  float y = x - x;
  if (isfinite(x)) {{  /* (a block of its own: see kc_trig_reduce_f32) */
    double q;
    double r = kc_trig_reduce_f32(x, &q);
    double s = kc_sin_poly(r);
    double v = (q == 1.0 || q == 3.0) ? s : kc_cos_poly(r, s);
    y = (float) (q == 1.0 || q == 2.0 ? -v : v);
  }}
  return y;
}}""",
    "kc_tan_f32": f"""{_INLINE} float kc_tan_f32(float x)
{{
  float y = x - x;
  if (isfinite(x)) {{  /* (a block of its own: see kc_trig_reduce_f32) */
    double q;
    double r = kc_trig_reduce_f32(x, &q);
    double s = kc_sin_poly(r);
    double c = kc_cos_poly(r, s);
    y = (float) (q == 1.0 || q == 3.0 ? -c / s : s / c);
    y = as_float(as_uint(y) ^ (as_uint(x) & 0x80000000u));
  }}
  return y;
}}"""}


def trig_f32_source(helper: str) -> str | None:
    """The OpenCL C source defining *helper* (a name in
    :data:`TRIG_F32_HELPERS`), with the reduction both helpers share (defined
    once however many of them a program uses); None for other names."""
    function = _FUNCTIONS.get(helper)
    return None if function is None else _COMMON + function


__all__ = ["TWO_OVER_PI_CHUNKS", "TRIG_F32_HELPERS", "trig_f32_source"]
