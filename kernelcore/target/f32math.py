"""Float32 ``sin``, ``cos``, ``tan``, ``asin``, ``acos``, ``atan``, ``log``,
``log2``, ``log10``, ``log1p``, ``exp2``, ``expm1``, ``sinh``, ``cosh``,
``asinh``, ``acosh``, ``atanh``, ``cbrt``, ``pow``, ``atan2`` and ``hypot`` in
OpenCL C that CPU compilers vectorize, for devices whose built-ins are
scalar calls (PoCL, 2^21 values on two cores: its ``sin`` takes about 40
ms, its ``log`` 49 ms, its ``atan`` 90 ms, its ``cbrt`` 130 ms and its
``pow`` 150 ms, these 1-9 ms; NumPy 2-12 ms).

The helpers compute in double and round once. All but pow are correctly
rounded for every float32 (checked against float64 results rounded to
float32 over random bit patterns and the hard cases).

- sin, cos, tan: the argument is reduced by Payne and Hanek's method: x =
  m 2^s (m the 24-bit significand); x * 2/pi modulo 4 is the sum of m times
  24-bit chunks of 2/pi (:data:`TWO_OVER_PI_CHUNKS`, computed here from pi
  in integer arithmetic), starting at the first chunk whose product is not a
  multiple of 4. Each product is exact in double; the sum keeps its rounding
  errors (two-sum), so an argument near a multiple of pi/2 keeps its
  relative accuracy. sin and cos of the remainder (|r| <= pi/4) are Taylor
  polynomials (through r^13 and r^14), tan their quotient.
- log and its kin: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2
  atanh((m - 1)/(m + 1)) by its series, e ln 2 added in two parts; log1p
  is the log of 1 + x (exact in double) above 2^-29, x below.
- exp2, expm1, sinh, cosh: OpenCL's ``exp`` of a double (which PoCL
  vectorizes), with Taylor polynomials for expm1 and sinh of |x| < 1/16.
- atan: 1/|x| past 1, then pi/4 + atan((t - 1)/(t + 1)) past tan(pi/8),
  then its series; asin and acos through atan; asinh, acosh, atanh through
  log1p of a double (log w * t / (w - 1), w = 1 + t rounded).
- cbrt: a cubic's guess on [1, 8) and four Newton steps.
- atan2 through the double atan; hypot: the square root of exact squares.
- pow: exp(y log|x|) in double, with C99's special values; it alone may
  round a value a float ulp off (rarely: its double error is up to 2e-14).

How they are written, for PoCL (LLVM) to vectorize its work-item loops:
no table (a ``__constant`` table costs gathers; a chunk is picked by
arithmetic on its index), no ``?:`` chains (they become switches), no
per-element choice between a fast and a slow path, the work of each call in
a block of its own, and no two independent computations of the same shape
in one block: clang's SLP pass would pair them into 2-wide vectors, which
the work-item loop vectorizer cannot widen (it then vectorizes nothing).
Where the algorithm has such twins, the second starts from ``0 * (the
first's result)``, which is 0 (the values are finite) but makes it wait.

sin and cos also have versions for vectors of 4, 8 or 16 floats
(:func:`f32_vector_helper`, for ``vec`` loops): a whole vector of arguments
below 2^18 takes a Cody-Waite reduction, others the scalar helper per lane.

Public names: TWO_OVER_PI_CHUNKS, F32_HELPERS, VECTOR_WIDTHS, f32_helper_source,
f32_vector_helper.
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
F32_HELPERS = {"sin": "kc_sin_f32", "cos": "kc_cos_f32", "tan": "kc_tan_f32",
               "log": "kc_log_f32", "log2": "kc_log2_f32", "log10": "kc_log10_f32",
               "log1p": "kc_log1p_f32", "exp2": "kc_exp2_f32", "expm1": "kc_expm1_f32",
               "sinh": "kc_sinh_f32", "cosh": "kc_cosh_f32", "atan": "kc_atan_f32",
               "asin": "kc_asin_f32", "acos": "kc_acos_f32", "asinh": "kc_asinh_f32",
               "acosh": "kc_acosh_f32", "atanh": "kc_atanh_f32", "cbrt": "kc_cbrt_f32",
               "pow": "kc_pow_f32", "atan2": "kc_atan2_f32", "hypot": "kc_hypot_f32"}


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
    the previous product enters as 0 * a (see :data:`_TRIG`)."""
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

_TRIG = f"""#ifndef KC_TRIG_F32
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


def _helper(name: str, params: str, start: str, guard: str, body: str,
            result: str = "y") -> str:
    """The source of float helper *name*(*params*): ``y`` starts as *start*;
    where *guard* holds, the statements *body* (one per line) set it, in a
    block of their own (clang pairs nothing across blocks: see the module's
    documentation); the helper returns *result*."""
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return f"""{_INLINE} float {name}({params})
{{
  float y = {start};
  if ({guard}) {{
{lines}
  }}
  return {result};
}}"""


_TRIG_START = """double q;
double r = kc_trig_reduce_f32(x, &q);
double s = kc_sin_poly(r);
"""
_ODD = "q == 1.0 || q == 3.0"
_SIGN_OF_X = "y = as_float(as_uint(y) ^ (as_uint(x) & 0x80000000u));"
_TRIG_FUNCTIONS = {
    "kc_sin_f32": f"""{_TRIG_START}double v = ({_ODD}) ? kc_cos_poly(r, s) : s;
y = (float) (q >= 2.0 ? -v : v);
{_SIGN_OF_X}""",
    "kc_cos_f32": f"""{_TRIG_START}double v = ({_ODD}) ? s : kc_cos_poly(r, s);
y = (float) (q == 1.0 || q == 2.0 ? -v : v);""",
    "kc_tan_f32": f"""{_TRIG_START}double c = kc_cos_poly(r, s);
y = (float) ({_ODD} ? -c / s : s / c);
{_SIGN_OF_X}""",
}

# log m = 2 atanh(s) = 2 (s + s^3/3 + ...): the terms after s^17/17 are below
# 1e-16 of the sum for |s| <= 0.1716 (m in [sqrt(1/2), sqrt(2)])
_ATANH = [Fraction(1, 2 * k + 1) for k in range(1, 9)]
_LN2 = Fraction(6931471805599453094172321214581765680755, 10 ** 40)
#: ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 bits (so that e * LN2_HI is exact)
_LN2_HI = Fraction(int(_LN2 * 2 ** 32), 2 ** 32)

_LOG = f"""#ifndef KC_LOG_F32
#define KC_LOG_F32
/* log u of a positive normal double u, as e ln 2 + log m (u = m 2^e, m in
   [sqrt(1/2), sqrt(2))): log m returned, e in *exponent. (A float32, its
   subnormals included, is a normal double: no case of their own.) */
{_INLINE} double kc_log_parts(double u, double *exponent)
{{
  long b = as_long(u);
  double m = as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
  double big = (double) (m > 1.4142135623730951);
  m = m * (1.0 - 0.5 * big);
  *exponent = (double) ((b >> 52) - 1023) + big;
  double t = m - 1.0;
  double s = t / (t + 2.0);   /* (t + 2: m + 1 next to m - 1 would pair) */
  double s2 = s * s;
  return 2.0 * s + 2.0 * s * (s2 * ({_horner(_ATANH, "s2")}));
}}

/* log u (u as above) */
{_INLINE} double kc_log_double(double u)
{{
  double e;
  double l = kc_log_parts(u, &e);
  return e * {_double(_LN2_HI)} + fma(e, {_double(_LN2 - _LN2_HI)}, l);
}}

/* a logarithm of x: y (computed) for a positive finite x, else IEEE's value:
   -inf for zeros, NaN for negative numbers and NaN, inf for inf */
{_INLINE} float kc_log_special(float x, float y)
{{
  return x == 0.0f ? -INFINITY : x < 0.0f ? NAN : x == INFINITY ? x : isnan(x) ? x : y;
}}
#endif
"""

_LOG_FUNCTIONS = {
    "kc_log_f32": "y = (float) kc_log_double((double) x);",
    "kc_log2_f32": """double e;
double l = kc_log_parts((double) x, &e);
y = (float) (e + l * 1.4426950408889634);""",
    "kc_log10_f32": "y = (float) (kc_log_double((double) x) * 0.4342944819032518);",
}
# below 2^-29, log1p(x) rounds to x; above, 1 + x is exact in double
_LOG1P = _helper("kc_log1p_f32", "float x", "x", "x > -1.0f && x < INFINITY && "
                 "fabs(x) >= 0x1p-29f", "y = (float) kc_log_double(1.0 + (double) x);",
                 "x == -1.0f ? -INFINITY : x < -1.0f ? NAN : y")

# x^k / k! for k = 2..7: expm1 and sinh of |x| < 1/16 (the first term left
# out is below 2e-11 of the sum, far under a float's half unit)
_EXP_TAYLOR = [Fraction(1, factorial(k)) for k in range(2, 8)]
_SINH_TAYLOR = [Fraction(1, factorial(2 * k + 1)) for k in range(1, 5)]

#: functions of the double exponential (OpenCL's ``exp`` of a double, which
#: PoCL vectorizes), each rounded once to float
_EXP_FUNCTIONS = {
    "kc_exp2_f32": "(float) exp(d * 0.6931471805599453)",
    # (d (1 + ...): -0.0 stays -0.0)
    "kc_expm1_f32": ("(float) (fabs(d) < 0.0625 ? d * (1.0 + d * ("
                     + _horner(_EXP_TAYLOR, "d") + ")) : exp(d) - 1.0)"),
    "kc_sinh_f32": ("(float) (fabs(d) < 0.0625 ? d * (1.0 + d * d * ("
                    + _horner(_SINH_TAYLOR, "d * d") + ")) : 0.5 * (e - 1.0 / e))"),
    "kc_cosh_f32": "(float) (0.5 * (e + 1.0 / e))",
}
#: (1 / e, not exp(-d): clang pairs two calls of exp; in double, e and 1 / e
#: neither overflow nor lose accuracy where the float results are finite)
_WITH_E = ("kc_sinh_f32", "kc_cosh_f32")


# atan u = u - u^3/3 + ... for |u| <= tan(pi/8): the terms after u^33/33 are
# below 1e-14 of the sum
_ATAN = [Fraction((-1) ** k, 2 * k + 1) for k in range(1, 17)]

_ATAN_DOUBLE = f"""#ifndef KC_ATAN_F32
#define KC_ATAN_F32
/* atan d: |d| > 1 by pi/2 - atan(1/|d|), then |t| > tan(pi/8) by pi/4 +
   atan((t - 1)/(t + 1)), then the series; selects, no branches */
{_INLINE} double kc_atan_double(double d)
{{
  double a = fabs(d);
  int inverted = a > 1.0;
  double t = inverted ? 1.0 / a : a;
  int shifted = t > 0.41421356237309503;
  double tm = t - 1.0;
  double u = shifted ? tm / (tm + 2.0) : t;   /* (tm + 2: t + 1 next to t - 1 would pair) */
  double u2 = u * u;
  double r = u + u * u2 * ({_horner(_ATAN, "u2")});
  r = shifted ? 0.7853981633974483 + r : r;
  r = inverted ? 1.5707963267948966 - r : r;
  return copysign(r, d);
}}
#endif
"""

_LOG1P_DOUBLE = """#ifndef KC_LOG1P_DOUBLE
#define KC_LOG1P_DOUBLE
/* log(1 + t) of a double t: log w * t / (w - 1) with w = 1 + t rounded (the
   quotient corrects w's rounding); IEEE's values where 1 + t is not a
   positive finite number */
""" + f"""{_INLINE} double kc_log1p_double(double t)
{{
  double w = 1.0 + t;
  int ordinary = w > 0.0 && w < INFINITY;
  double l = kc_log_double(ordinary ? w : 2.0);
  double r = w == 1.0 ? t : l * (t / (w - 1.0));
  r = ordinary ? r : w == 0.0 ? -INFINITY : w == INFINITY ? w : NAN;
  return isnan(t) ? t : r;
}}
#endif
"""

#: inverse functions, each rounded once to float: (the shared code it needs,
#: the double value; d is x in double, a its absolute value)
_INVERSE_FUNCTIONS = {
    "kc_atan_f32": (_ATAN_DOUBLE, "kc_atan_double(d)"),
    "kc_asin_f32": (_ATAN_DOUBLE, "kc_atan_double(d / sqrt(1.0 - d * d))"),
    "kc_acos_f32": (_ATAN_DOUBLE, "2.0 * kc_atan_double(sqrt((1.0 - d) / (1.0 + d)))"),
    # asinh a = log1p(a + a^2 / (1 + sqrt(1 + a^2))); below 2^-12 it rounds to
    # x, above 2^28 it is log(2a) = log1p(2a - 1) (also for inf)
    "kc_asinh_f32": (_LOG + _LOG1P_DOUBLE, "a < 0x1p-12 ? d : copysign(kc_log1p_double("
                     "a > 0x1p28 ? 2.0 * a - 1.0 : a + a * a / (1.0 + sqrt(1.0 + a * a))), d)"),
    "kc_acosh_f32": (_LOG + _LOG1P_DOUBLE,
                     "d >= 1.0 ? kc_log1p_double(d - 1.0 + sqrt(d * d - 1.0)) : NAN"),
    # atanh a = log1p(2a / (1 - a)) / 2
    "kc_atanh_f32": (_LOG + _LOG1P_DOUBLE, "a < 0x1p-12 ? d : copysign(0.5 * kc_log1p_double("
                     "2.0 * a / (1.0 - a)), d)"),
}


# the cube root: |x| = m' 2^(3q) with m' in [1, 8); a cubic's guess of
# cbrt(m') (within 2%), four Newton steps in double (below 1e-16), 2^q
_NEWTON = "c = (2.0 * c + m / (c * c)) * (1.0 / 3.0);\n"
_CBRT = _helper("kc_cbrt_f32", "float x", "x", "x != 0.0f && isfinite(x)", """double d = x;
long b = as_long(fabs(d));
double e = (double) ((b >> 52) - 1023);
double m = as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
double t = (e + 0.5) * (1.0 / 3.0);
double q = (t + 0x1.8p52) - 0x1.8p52;
q = q > t ? q - 1.0 : q;    /* floor(e / 3) */
double r = e - 3.0 * q;
m = r == 0.0 ? m : r == 1.0 ? 2.0 * m : 4.0 * m;
double c = 0.72148223 + m * (0.32888628 + m * (-0.03472374 + m * 0.00171362));
""" + 4 * _NEWTON + "y = (float) copysign(c * as_double((long) (q + 1023.0) << 52), d);")

# x^p as exp(p log|x|) in double (relative error below 2e-14: at most rarely
# a float ulp off), with C99's (and NumPy's) special values: x^0 and 1^p are
# 1 (NaN too), (-1)^inf is 1, a negative finite x and a non-integer p give
# NaN, an odd integer p keeps the sign of x (zeros and infinities too); |x|
# and |p| are not twins (one widened then made positive, the other the other
# way round: clang would pair them)
_POW = _helper("kc_pow_f32", "float x, float p", "NAN", "!isnan(x) && !isnan(p)", """
double ax = fabs((double) x), ap = (double) fabs(p);
double l = kc_log_double(ax > 0.0 && ax < INFINITY ? ax : 2.0);
l = ax == 0.0 ? -INFINITY : ax == INFINITY ? INFINITY : l;
double v = exp((double) p * l);
double rounded = (ap + 0x1.8p52) - 0x1.8p52;    /* (floats from 2^23 on are integers) */
int integer = ap >= 0x1p23 || rounded == ap;
int odd = integer && ((long) (ap < 0x1p24 ? ap : 0.0) & 1);
v = signbit(x) && odd ? -v : v;
y = x < 0.0f && isfinite(x) && !integer ? NAN : (float) v;""",
                "p == 0.0f || x == 1.0f || (x == -1.0f && isinf(p)) ? 1.0f : y")

# atan2(v, x): atan(|v| / |x|) in double, pi minus it for a negative x (-0
# too), the sign of v; C99's values where |v| / |x| is 0/0 or inf/inf
_ATAN2 = _helper("kc_atan2_f32", "float v, float x", "x + v", "!isnan(x) && !isnan(v)", """
double av = (double) fabs(v), ax = fabs((double) x);    /* (not twins: see pow) */
double a = kc_atan_double(av / ax);
a = av == 0.0 && ax == 0.0 ? 0.0 : a;
a = isinf(av) && isinf(ax) ? 0.7853981633974483 : a;
a = signbit(x) ? 3.141592653589793 - a : a;
y = (float) copysign(a, (double) v);""")

_HYPOT = f"""/* hypot(x, y): sqrt(x^2 + y^2) in double (exact squares, no overflow);
   inf if either is infinite, even with a NaN */
{_INLINE} float kc_hypot_f32(float x, float y)
{{
  double dx = x, dy = y;
  float h = (float) sqrt(dx * dx + dy * dy);
  return isinf(x) || isinf(y) ? INFINITY : h;
}}"""

_SOURCES = {**{name: (_TRIG, _helper(name, "float x", "x - x", "isfinite(x)", body))
               for name, body in _TRIG_FUNCTIONS.items()},
            **{name: (_LOG, _helper(name, "float x", "0.0f", "x > 0.0f && x < INFINITY", body,
                                    "kc_log_special(x, y)"))
               for name, body in _LOG_FUNCTIONS.items()},
            "kc_log1p_f32": (_LOG, _LOG1P),
            **{name: ("", _helper(name, "float x", "x", "!isnan(x)", "double d = x;\n"
                                  + ("double e = exp(d);\n" if name in _WITH_E else "")
                                  + f"y = {value};"))
               for name, value in _EXP_FUNCTIONS.items()},
            **{name: (shared, _helper(name, "float x", "x", "!isnan(x)", "double d = x;\n"
                                      f"double a = fabs(d);\ny = (float) ({value});"))
               for name, (shared, value) in _INVERSE_FUNCTIONS.items()},
            "kc_cbrt_f32": ("", _CBRT),
            "kc_pow_f32": (_LOG, _POW),
            "kc_atan2_f32": (_ATAN_DOUBLE, _ATAN2),
            "kc_hypot_f32": ("", _HYPOT)}


# {{{ vector versions: a fast path for whole vectors of moderate arguments

#: pi/2 to 50 decimals in three parts: P1 of 35 bits (n P1 is exact for the
#: integers n below 2^18), P2 of the next 34 bits, P3 the rest
_HALF_PI = Fraction("3.14159265358979323846264338327950288419716939937510") / 2
_P1 = Fraction(int(_HALF_PI * 2 ** 34), 2 ** 34)
_P2 = Fraction(int((_HALF_PI - _P1) * 2 ** 68), 2 ** 68)
_P3 = _HALF_PI - _P1 - _P2
#: the widths of the vector versions
VECTOR_WIDTHS = (4, 8, 16)
#: per helper: the vector value from the double vectors s, c (sine and cosine
#: polynomials of r) and the quadrant q, and the result for |x| < 2^-12
#: (sin x rounds to x there, its sign kept; cos's polynomial gives 1)
_VECTOR_TRIG = {
    "kc_sin_f32": ("select(s, c, (q & 1) != 0)", "(q & 2) != 0", "isless(ax, 0x1p-12f)"),
    "kc_cos_f32": ("select(c, s, (q & 1) != 0)", "((q + 1) & 2) != 0", None),
}


def f32_vector_helper(helper: str, width: int) -> tuple[str, str] | None:
    """(name, OpenCL C source) of the version of *helper* for vectors of
    *width* floats, or None where there is none. When every lane is below
    2^18 in magnitude it reduces them by Cody and Waite's method in double
    (the same accuracy as the scalar helper's reduction: one rounding of
    r) and evaluates the scalar helper's polynomials; otherwise it runs the
    scalar helper over the lanes in a loop. A work-item's scalar code cannot
    take such a branch for the vector its neighbours form (PoCL's vectorized
    work-item loop computes both sides); explicit vectors can (on PoCL, 2^21
    values: 2.3-2.6x faster below 2^18, about 1.3x slower for vectors with a
    larger lane, ``benchmarks/results/ab-cpu-issue21-sin-vector.md``). The
    scalar helper must be defined before it."""
    if helper not in _VECTOR_TRIG or width not in VECTOR_WIDTHS:
        return None
    pick, negate, tiny = _VECTOR_TRIG[helper]
    name = f"{helper}v{width}"
    f, d, q = f"float{width}", f"double{width}", f"long{width}"
    return name, f"""{_INLINE} {f} {name}({f} x)
{{
  {f} ax = fabs(x);
  if (all(ax < 0x1p18f)) {{      /* (false for NaN and infinities) */
    {d} d = convert_{d}(x);
    {d} n = rint(d * 0.6366197723675814);
    {d} r = fma(-n, {_double(_P1)}, d);  /* (exact) */
    r = fma(-n, {_double(_P2)}, r);
    r = fma(-n, {_double(_P3)}, r);
    {q} q = convert_{q}(n) & 3;
    {d} r2 = r * r;
    {d} s = r + r * r2 * ({_horner(_SIN, "r2")});
    {d} c = 1.0 + r2 * ({_horner(_COS, "r2")});
    {d} v = {pick};
    v = select(v, -v, {negate});
    return {f"select(convert_{f}(v), x, {tiny})" if tiny else f"convert_{f}(v)"};
  }}
  /* (a loop, which clang vectorizes: unrolled, the calls stay scalar) */
  float xs[{width}], ys[{width}];
  vstore{width}(x, 0, xs);
  for (int k = 0; k < {width}; ++k)
    ys[k] = {helper}(xs[k]);
  return vload{width}(0, ys);
}}"""

# }}}


def f32_helper_source(helper: str) -> str | None:
    """The OpenCL C source defining *helper* (a name in :data:`F32_HELPERS`),
    with the code it shares with the others of its family (defined once
    however many of them a program uses); None for other names."""
    found = _SOURCES.get(helper)
    return None if found is None else found[0] + found[1]


__all__ = ["TWO_OVER_PI_CHUNKS", "F32_HELPERS", "VECTOR_WIDTHS", "f32_helper_source",
           "f32_vector_helper"]
