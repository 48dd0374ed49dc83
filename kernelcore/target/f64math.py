"""Float64 ``log``, ``log2``, ``log10``, ``log1p``, ``pow``, ``exp2``, ``expm1``,
``sinh``, ``cosh``, ``tanh``, ``atan``, ``atan2``, ``asin``, ``acos``,
``cbrt`` and ``hypot`` in OpenCL C that CPU compilers vectorize,
for devices whose double built-ins are scalar calls (PoCL; its double
``exp`` vectorizes and stays the built-in).

There is no wider type to compute in, so the helpers carry a value and its
rounding error (double-double: ``h + lo``) through the steps that need it
and round once at the end; each result is within one ulp of the correctly
rounded value (mostly within half an ulp: see the tests).

- log and its kin: u = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2
  atanh(s), s = (m - 1)/(m + 1), s and the series' first terms in
  double-double (about 2^-68 relative: pow needs it), e ln 2 added in two
  parts. log1p: the log of w = 1 + x rounded, plus the rounding error of w
  over w.
- exp of a double-double t (pow's y log|x|, expm1's and tanh's argument):
  k = rint(t / ln 2), r = t - k ln 2 (exact with an FMA), exp(r) - 1 as r +
  r^2 (1/2 + r/6 + ...), scaled by 2^k in two steps (no premature overflow,
  one rounding into subnormals).
- pow: exp(y log|x|) as above, with C99's special values; exp2: exp(x ln
  2); tanh = E/(E + 2) with E = expm1(2|x|) in double-double; expm1 from
  the same parts (its half: 2^1024 rounded down is a double); sinh and
  cosh from expm1 |x| (of |x| - ln 2 past 22).
- atan: 1/t past 1, (t - 1)/(t + 1) past tan(pi/8) (both in
  double-double), then the series through u^45; atan2 from atan of the
  quotient in double-double, with C99's special values; asin and acos from
  atan of double-double arguments.
- cbrt: Newton steps from a cubic's guess, the last with its residual in
  double-double; hypot: the square root of a^2 + b^2 in double-double,
  scaled by a power of 2 (no overflow, no loss in subnormals).

sin, cos and tan keep the built-ins: with a Payne-Hanek reduction that PoCL
vectorizes (52-bit chunks of 2/pi picked by select stages, exact products
split on fixed grids; git history, "float64 sin, cos, tan") they were
within 0.64 ulp but slower than PoCL's scalar ones (81 against 52 ms for
2^21 values: the chains that keep clang's SLP pass from pairing its steps
leave the reduction latency-bound).

How they are written follows :mod:`kernelcore.target.f32math` (no tables,
no ``?:`` chains, no per-element fast or slow path, the work of a call in a
block of its own, and no two independent computations of the same shape in
one block, which clang's SLP pass would pair: the second of such twins
starts from ``0 * (the first's result)``).

Public names: F64_HELPERS, f64_helper_source.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

from kernelcore.target.f64atan import ACOS_F64, ASIN_F64, ATAN2_F64, ATAN_CORE, ATAN_F64
from kernelcore.target.f64parts import _EXACT, _INLINE, _atanh_of_inverse, _horner, _split

_LN2 = 2 * _atanh_of_inverse(3)
_LN10 = 3 * _LN2 + 2 * _atanh_of_inverse(9)     # ln 10 = ln 8 + ln(5/4)


# {{{ double-double pieces, logarithm and exponential

_LN2_42 = _split(_LN2, 42)        # (e ln2_hi is exact for |e| < 2^11)
_LN2_53 = _split(_LN2)
_INV_LN2 = _split(1 / _LN2)
_INV_LN10 = _split(1 / _LN10)
_LOG10_2_42 = _split(_LN2 / _LN10, 42)
_THIRD, _FIFTH = _split(Fraction(1, 3)), _split(Fraction(1, 5))
# 2 atanh s = 2s (1 + z/3 + z^2/5 + z^3 Q(z)), z = s^2 <= 0.0295: the terms
# from z^13 on are below 2^-70 of the sum
_ATANH_TAIL = [Fraction(1, 2 * k + 7) for k in range(10)]
# exp r = 1 + r + r^2/2 + r^3 E(r), |r| <= 0.3466: the terms from r^15 on are
# below 2^-65
_EXP_TAIL = [Fraction(1, factorial(k)) for k in range(3, 15)]

_CORE = f"""#ifndef KC_F64_CORE
#define KC_F64_CORE
/* v rounded to an integer, for |v| < 2^51 (PoCL's rint and floor of
   doubles go through 32-bit integers: several times slower) */
{_INLINE} double kc_round_small(double v)
{{
{_EXACT}
  return (v + 0x1.8p52) - 0x1.8p52;
}}

/* v rounded to an integer (ties to even), any v */
{_INLINE} double kc_round(double v)
{{
{_EXACT}
  double big = copysign(0x1p52, v);
  return fabs(v) < 0x1p52 ? (v + big) - big : v;
}}

/* the rounding error of s = a + b (two-sum) */
{_INLINE} double kc_f64_sum_err(double a, double b, double s)
{{
{_EXACT}
  double v = s - a;
  return (a - (s - v)) + (b - v);
}}

/* log u of a positive finite u (subnormals too) as e ln 2 + h + *lo, h
   returned, e in *exponent, h + *lo within about 2^-68 of log m */
{_INLINE} double kc_log_dd(double u, double *lo, double *exponent)
{{
{_EXACT}
  int sub = u < 0x1p-1022;
  u = sub ? u * 0x1p54 : u;
  long b = as_long(u);
  double m = as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
  int big = m > 1.4142135623730951;
  m = big ? 0.5 * m : m;
  *exponent = (double) ((b >> 52) - 1023) + (big ? 1.0 : 0.0) - (sub ? 54.0 : 0.0);
  double f = m - 1.0;                     /* (exact) */
  double d = 2.0 + f;
  double dl = f - (d - 2.0);              /* d + dl = 2 + f exactly */
  double s = f / d;
  double sl = (fma(-s, d, f) - s * dl) / d;
  double z = s * s;
  double zl = fma(s, s, -z);
  double q = z * ({_horner(_ATANH_TAIL, "z")});
  double a = {_FIFTH[0]} + q;
  double al = ({_FIFTH[0]} - a + q) + {_FIFTH[1]};
  double p = z * a;
  double pl = fma(z, a, -p) + fma(z, al, zl * a);
  double c = {_THIRD[0]} + p;
  double cl = ({_THIRD[0]} - c + p) + (pl + {_THIRD[1]});
  double t = z * c;
  double tl = fma(z, c, -t) + fma(z, cl, zl * c);
  double s2 = 2.0 * s;
  double w = s2 * t;
  double wl = fma(s2, t, -w) + fma(s2, tl, 2.0 * sl * (1.0 + z * (1.0 + z)));
  double h = s2 + w;
  *lo = (w - (h - s2)) + wl;
  return h;
}}

/* exp(r + rl) - 1 of |r| <= 0.35 (rl tiny) as r + r^2/2 rounded (returned)
   plus *rest */
{_INLINE} double kc_expm1_parts(double r, double rl, double *rest)
{{
{_EXACT}
  double r2 = r * r;
  double h2 = 0.5 * r2;
  double p = r + h2;
  double c = r * r2 * ({_horner(_EXP_TAIL, "r")});
  *rest = ((r - p) + h2) + (fma(r, r, -r2) * 0.5 + c + rl * (1.0 + r + (h2 + c)));
  return p;
}}

/* 2^k as a double, for an integer k in [-1022, 1023] */
{_INLINE} double kc_pow2(double k)
{{
{_EXACT}
  return as_double((long) (k + 1023.0) << 52);
}}

/* exp(t + tl) for |t| <= 760 (tl below ulp(t)): inf past the largest
   double, rounded once into subnormals */
{_INLINE} double kc_exp_dd(double t, double tl)
{{
{_EXACT}
  double k = kc_round_small(t * {_INV_LN2[0]});
  double r = fma(-k, {_LN2_53[0]}, t);     /* (exact) */
  double rest;
  double p = kc_expm1_parts(r, fma(-k, {_LN2_53[1]}, tl), &rest);
  double s = 1.0 + p;
  double k1 = kc_round_small(0.5 * k - 0.25);     /* floor(k / 2) */
  return (s + (((1.0 - s) + p) + rest)) * kc_pow2(k1) * kc_pow2(k - k1);
}}

/* half of expm1(t + tl) for -60 <= t <= 709.79 (tl below ulp(t); the value
   may be 2^1024 rounded) as h + *lo (h returned): 2^(k-1) - 1/2 (and its
   rounding error) plus 2^(k-1) expm1(r) */
{_INLINE} double kc_expm1_dd(double t, double tl, double *lo)
{{
{_EXACT}
  double k = kc_round_small(t * {_INV_LN2[0]});
  double r = fma(-k, {_LN2_53[0]}, t);
  double rest;
  double p = kc_expm1_parts(r, fma(-k, {_LN2_53[1]}, tl), &rest);
  double scale = kc_pow2(k - 1.0);
  double a = scale - 0.5;
  double b = scale * p;
  double h = a + b;
  /* (twins: the second error's sum starts from 0 * the first) */
  double e1 = kc_f64_sum_err(a, b, h);
  double e2 = kc_f64_sum_err(fma(0.0, e1, scale), -0.5, a);
  double l = e1 + (e2 + scale * rest);
  double v = h + l;                     /* (normalized: |l| is below |h|) */
  *lo = (h - v) + l;
  return v;
}}
#endif
"""

_SPECIAL_LOG = ("x == 0.0 ? -INFINITY : x < 0.0 ? NAN : x == INFINITY ? x : isnan(x) ? x : y")


def _log_helper(name: str, body: str) -> str:
    """A logarithm of positive finite x computed by *body* (setting y from
    h + lo = log m and the exponent e), IEEE's values elsewhere."""
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return f"""{_INLINE} double {name}(double x)
{{
{_EXACT}
  double y = 0.0;
  if (x > 0.0 && x < INFINITY) {{
    double lo, e;
    double h = kc_log_dd(x, &lo, &e);
{lines}
  }}
  return {_SPECIAL_LOG};
}}"""


# e ln2_hi + h (exact sum's error kept: |e ln2_hi| >= |h| unless e = 0)
_NATURAL = f"""double big = e * {_LN2_42[0]};
double r = big + h;
y = r + ((h - (r - big)) + (lo + e * {_LN2_42[1]}));"""

_LOG_SOURCES = {
    "kc_log_f64": _log_helper("kc_log_f64", _NATURAL),
    "kc_log2_f64": _log_helper("kc_log2_f64", f"""double p = h * {_INV_LN2[0]};
double pl = fma(h, {_INV_LN2[0]}, -p) + fma(h, {_INV_LN2[1]}, lo * {_INV_LN2[0]});
double r = e + p;
y = r + ((p - (r - e)) + pl);"""),
    "kc_log10_f64": _log_helper("kc_log10_f64", f"""double p = h * {_INV_LN10[0]};
double pl = fma(h, {_INV_LN10[0]}, -p) + fma(h, {_INV_LN10[1]}, lo * {_INV_LN10[0]});
double big = e * {_LOG10_2_42[0]};
double r = big + p;
y = r + ((p - (r - big)) + (pl + e * {_LOG10_2_42[1]}));"""),
    # log1p x = log w + log(1 + c / w), w = 1 + x rounded, c its rounding error
    "kc_log1p_f64": f"""{_INLINE} double kc_log1p_f64(double x)
{{
{_EXACT}
  double y = x;
  if (x > -1.0 && x < INFINITY && x != 0.0) {{
    double w = 1.0 + x;
    double c = kc_f64_sum_err(1.0, x, w);
    double lo, e;
    double h = kc_log_dd(w, &lo, &e);
    double cw = c / w;          /* log(w + c) = log w + cw - cw^2/2 */
    double hc = h + cw;
    lo += kc_f64_sum_err(h, cw, hc) + (fma(-cw, w, c) / w - 0.5 * cw * cw);
    h = hc;
{chr(10).join("    " + line for line in _NATURAL.splitlines())}
  }}
  return x == -1.0 ? -INFINITY : x < -1.0 ? NAN : y;
}}""",
}

# x^p = exp(p log|x|) with log|x| in double-double; C99's special values: x^0
# and 1^p are 1 (NaN too), (-1)^inf is 1, a negative finite x and a
# non-integer p give NaN, an odd integer p keeps the sign of x (zeros and
# infinities too); log 0 = -inf and log inf = inf make p log|x| infinite
_POW = f"""{_INLINE} double kc_pow_f64(double x, double p)
{{
{_EXACT}
  double y = NAN;
  if (!isnan(x) && !isnan(p)) {{
    double ax = fabs(x);
    int ordinary = ax > 0.0 && ax < INFINITY;
    double lo, e;
    double h = kc_log_dd(ordinary ? ax : 2.0, &lo, &e);
    double big = e * {_LN2_42[0]};
    double l = big + h;
    double ll = (h - (l - big)) + (lo + e * {_LN2_42[1]});
    double t = p * l;
    double tl = fma(p, l, -t) + p * ll;
    tl = fabs(t) < 760.0 ? tl : 0.0;
    t = ordinary ? t : (ax == 0.0 ? -p : p) * INFINITY;
    double v = kc_exp_dd(fmin(fmax(t, -760.0), 760.0), tl);
    double ap = fabs(p);
    int integer = kc_round(ap) == ap;
    double hp = 0.5 * ap;
    int odd = integer && ap < 0x1p53 && kc_round(hp) != hp;
    v = signbit(x) && odd ? -v : v;
    y = x < 0.0 && isfinite(x) && !integer ? NAN : v;
  }}
  return p == 0.0 || x == 1.0 || (x == -1.0 && isinf(p)) ? 1.0 : y;
}}"""

# expm1: the double-double expm1 summed (-1 below -60, inf past the largest
# double's logarithm), x itself below 2^-54 (zeros keep their sign)
_EXPM1 = f"""{_INLINE} double kc_expm1_f64(double x)
{{
{_EXACT}
  double y = x;
  if (fabs(x) >= 0x1p-54) {{          /* (below, x is expm1 x rounded) */
    double lo;
    double h = kc_expm1_dd(fmin(fmax(x, -60.0), 709.79), 0.0, &lo);
    y = 2.0 * (h + lo);
  }}
  return x > 709.79 ? INFINITY : y;
}}"""

# tanh |x| = E / (E + 1), E = expm1(2|x|) / 2 in double-double (|x| >= 20:
# 1), NaN kept
_TANH = f"""{_INLINE} double kc_tanh_f64(double x)
{{
{_EXACT}
  double y = x;
  if (fabs(x) >= 0x1p-27) {{          /* (below, x is tanh x rounded) */
    double lo;
    double h = kc_expm1_dd(2.0 * fmin(fabs(x), 20.0), 0.0, &lo);
    double n = h + lo;
    double nl = lo - (n - h);
    double d = n + 1.0;
    double dl = kc_f64_sum_err(n, 1.0, d) + nl;
    double q = n / d;
    y = copysign(q + (fma(-q, d, n) + (nl - q * dl)) / d, x);
  }}
  return y;
}}"""

# sinh and cosh of a = |x| from N = expm1(t) / 2 in double-double: t = a
# below 22 (sinh = N + N/(2N + 1), cosh = N + 1/2 + (1/2)/(2N + 1)), t = a - ln
# 2 past it (both e^a / 2 = 2N + 1 within an ulp's fraction); inf past the
# largest finite value (sinh: signed), NaN kept; sinh of |x| below 2^-27 is x
_HYPERBOLIC = {"kc_sinh_f64": ("x", "copysign((double) INFINITY, x)", """double q = h / d;
double ql = (fma(-q, d, h) + (lo - q * dl)) / d;
double v = h + q;
v += (q - (v - h)) + (lo + ql);
y = big ? w : v;
y = x < 0.0 ? -y : y;"""), "kc_cosh_f64": ("1.0", "INFINITY", """double q = 0.5 / d;
double ql = (fma(-q, d, 0.5) - q * dl) / d;
double u = h + 0.5;
double v = u + q;
v += ((q - (v - u)) + (kc_f64_sum_err(h, 0.5, u) + lo)) + ql;
y = big ? w : v;""")}


def _hyperbolic(name: str, tiny: str, huge: str, body: str) -> str:
    """sinh or cosh (*body* sets y from N = h + lo, d + dl = 2N + 1 and w, the
    value past 22); *tiny* below 2^-27, *huge* past the largest value."""
    lines = "\n".join(f"    {line}" for line in body.splitlines())
    return f"""{_INLINE} double {name}(double x)
{{
{_EXACT}
  double y = x;
  if (fabs(x) >= 0x1p-27 && !isnan(x)) {{
    double a = fabs(x);
    int big = a > 22.0;
    double t = big ? a - {_LN2_53[0]} : a;
    double tl = big ? ((a - t) - {_LN2_53[0]}) - {_LN2_53[1]} : 0.0;
    double lo;
    double h = kc_expm1_dd(fmin(t, 709.79), tl, &lo);
    double w = 2.0 * (h + (lo + 0.5));
    double d = 2.0 * h + 1.0;
    double dl = kc_f64_sum_err(2.0 * h, 1.0, d) + 2.0 * lo;
{lines}
  }}
  return fabs(x) < 0x1p-27 ? {tiny} : fabs(x) > 710.4758600739439 ? {huge} : y;
}}"""


# exp2 x = exp(x ln 2), x ln 2 in double-double (2^n exact)
_EXP2 = f"""{_INLINE} double kc_exp2_f64(double x)
{{
{_EXACT}
  double c = fmin(fmax(x, -1100.0), 1100.0);
  double t = c * {_LN2_53[0]};
  double v = kc_exp_dd(t, fma(c, {_LN2_53[0]}, -t) + c * {_LN2_53[1]});
  return isnan(x) ? x : v;
}}"""

# }}}

# {{{ cbrt, hypot

# cbrt: |x| = m' 2^(3q), m' in [1, 8) (subnormals scaled by 2^54 first); a
# cubic's guess of cbrt m' (within 2%), four Newton steps, then one with
# the residual c^3 - m' in double-double; 2^q and the sign last
_CBRT_F64 = f"""{_INLINE} double kc_cbrt_f64(double x)
{{
{_EXACT}
  double y = x;
  if (x != 0.0 && isfinite(x)) {{
    double a = fabs(x);
    int sub = a < 0x1p-1022;
    a = sub ? a * 0x1p54 : a;
    long b = as_long(a);
    double e = (double) ((b >> 52) - 1023);
    double m = as_double((b & 0x000fffffffffffffL) | 0x3ff0000000000000L);
    double q = kc_round_small((e + 0.5) * (1.0 / 3.0) - 0.5);    /* floor(e / 3) */
    m *= kc_pow2(e - 3.0 * q);
    double c = 0.72148223 + m * (0.32888628 + m * (-0.03472374 + m * 0.00171362));
    c = (2.0 * c + m / (c * c)) * (1.0 / 3.0);
    c = (2.0 * c + m / (c * c)) * (1.0 / 3.0);
    c = (2.0 * c + m / (c * c)) * (1.0 / 3.0);
    c = (2.0 * c + m / (c * c)) * (1.0 / 3.0);
    double c2 = c * c;
    double c2l = fma(c, c, -c2);
    double c3 = c2 * c;
    double res = (fma(c2, c, -c3) + c2l * c) + (c3 - m);     /* c^3 - m (c3 - m exact) */
    c -= res / (3.0 * c2);
    y = copysign(c * kc_pow2(q - (sub ? 18.0 : 0.0)), x);
  }}
  return y;
}}"""

# hypot: the larger magnitude a scaled into [1, 2) and the smaller b by the
# same power of 2 (in two steps: 2^-1074 and 2^1023 are scaled too),
# a^2 + b^2 in double-double, its square root corrected once; inf where
# either is infinite (even with a NaN)
_HYPOT_F64 = f"""{_INLINE} double kc_hypot_f64(double x, double y)
{{
{_EXACT}
  double a = fmax(fabs(x), fabs(y)), b = fmin(fabs(x), fabs(y));
  double v = a;
  if (a > 0.0 && a < INFINITY) {{
    double e = (double) ((as_long(a) >> 52) - 1023);
    double e1 = kc_round_small(0.5 * e - 0.25);               /* floor(e / 2) */
    double down1 = kc_pow2(-e1), down2 = kc_pow2(e1 - e);   /* (not multiplied: twins) */
    a = a * down1 * down2;
    b = b * down1 * down2;
    double p = a * a;
    double q = fma(b, b, 0.0 * p);            /* (b^2 after a^2: twins) */
    double s = p + q;
    double sl = (((p - s) + q) + fma(a, a, -p)) + fma(b, b, -q);
    double h = sqrt(s);
    h += (fma(-h, h, s) + sl) / (2.0 * h);
    v = h * kc_pow2(e1) * kc_pow2(e - e1);
  }}
  return isinf(x) || isinf(y) ? INFINITY : isnan(x) || isnan(y) ? x + y : v;
}}"""

# }}}

#: the helper function of each function name
F64_HELPERS = {"log": "kc_log_f64", "log2": "kc_log2_f64", "log10": "kc_log10_f64",
               "log1p": "kc_log1p_f64", "pow": "kc_pow_f64", "expm1": "kc_expm1_f64",
               "tanh": "kc_tanh_f64", "sinh": "kc_sinh_f64", "cosh": "kc_cosh_f64",
               "exp2": "kc_exp2_f64", "atan": "kc_atan_f64", "atan2": "kc_atan2_f64",
               "asin": "kc_asin_f64", "acos": "kc_acos_f64", "cbrt": "kc_cbrt_f64",
               "hypot": "kc_hypot_f64"}

_SOURCES = {**{name: (_CORE, source) for name, source in _LOG_SOURCES.items()},
            "kc_pow_f64": (_CORE, _POW), "kc_expm1_f64": (_CORE, _EXPM1),
            "kc_tanh_f64": (_CORE, _TANH), "kc_exp2_f64": (_CORE, _EXP2),
            "kc_atan_f64": (_CORE + ATAN_CORE, ATAN_F64),
            "kc_atan2_f64": (_CORE + ATAN_CORE, ATAN2_F64),
            "kc_asin_f64": (_CORE + ATAN_CORE, ASIN_F64),
            "kc_acos_f64": (_CORE + ATAN_CORE, ACOS_F64), "kc_cbrt_f64": (_CORE, _CBRT_F64),
            # (guarded: complex abs helpers include it too)
            "kc_hypot_f64": (_CORE, "#ifndef KC_HYPOT_F64\n#define KC_HYPOT_F64\n"
                             + _HYPOT_F64 + "\n#endif"),
            **{name: (_CORE, _hyperbolic(name, *parts)) for name, parts in _HYPERBOLIC.items()}}


def f64_helper_source(helper: str) -> str | None:
    """The OpenCL C source defining *helper* (a name in :data:`F64_HELPERS`),
    with the code it shares with the others (defined once however many of
    them a program uses); None for other names."""
    found = _SOURCES.get(helper)
    return None if found is None else found[0] + found[1]


__all__ = ["F64_HELPERS", "f64_helper_source"]
