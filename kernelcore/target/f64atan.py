"""Float64 ``atan``, ``atan2``, ``asin`` and ``acos`` that CPU compilers
vectorize (see :mod:`kernelcore.target.f64math`): atan of t reduced to
|u| <= tan(pi/8) by 1/t past 1 and (t - 1)/(t + 1) past tan(pi/8), both in
double-double, then its series; atan2 from atan of the quotient in
double-double, with C99's special values; asin and acos from atan of
double-double arguments.

Public names: ATAN_CORE, ATAN_F64, ATAN2_F64, ASIN_F64, ACOS_F64.
"""

from __future__ import annotations

from fractions import Fraction

from kernelcore.target.f64parts import _EXACT, _INLINE, _horner, _pi, _split

# {{{ atan, atan2

_HALF_PI = _split(_pi(300) / 2)
_QUARTER_PI = _split(_pi(300) / 4)
_PI_DD = _split(_pi(300))
# atan u = u + u^3 P(u^2) for |u| <= tan(pi/8): the terms from u^47 on are
# below 2^-60 of the sum
_ATAN = [Fraction((-1) ** k, 2 * k + 1) for k in range(1, 23)]

ATAN_CORE = f"""#ifndef KCATAN_F64
#define KCATAN_F64
/* atan(t + tl) of t >= 0 (inf too; tl below ulp(t)) as h + *lo: 1/t past
   1 (pi/2 minus the rest), then (v - 1)/(v + 1) past tan(pi/8) (pi/4 plus
   the rest), then the series; in double-double */
{_INLINE} double kc_atan_dd(double t, double tl, double *lo)
{{
{_EXACT}
  int inverted = t > 1.0;
  t = fmin(t, 0x1p1000);
  double r = 1.0 / t;
  double rl = (fma(-r, t, 1.0) - r * tl) / t;
  double vh = inverted ? r : t, vl = inverted ? rl : tl;
  int shifted = vh > 0.41421356237309503;
  double n = vh - 1.0;
  double nl = kc_f64_sum_err(vh, -1.0, n) + vl;
  double d = vh + 1.0;
  double dl = (vh - (d - 1.0)) + vl;          /* (|vh| <= 1) */
  double q = n / d;
  double ql = (fma(-q, d, n) + (nl - q * dl)) / d;
  double uh = shifted ? q : vh, ul = shifted ? ql : vl;
  double z = uh * uh;
  double tail = uh * z * ({_horner(_ATAN, "z")}) + ul * (1.0 - z * (1.0 - z));
  double bh = shifted ? {_QUARTER_PI[0]} : 0.0;
  double s = bh + uh;
  double rest = (uh - (s - bh)) + ((shifted ? {_QUARTER_PI[1]} : 0.0) + tail);
  double ih = {_HALF_PI[0]} - s;
  double il = (({_HALF_PI[0]} - ih) - s) + ({_HALF_PI[1]} - rest);
  double h = inverted ? ih : s, l = inverted ? il : rest;
  double v = h + l;
  *lo = (h - v) + l;
  return v;
}}
#endif
"""

ATAN_F64 = f"""{_INLINE} double kc_atan_f64(double x)
{{
{_EXACT}
  double lo;
  double v = kc_atan_dd(fabs(x), 0.0, &lo);
  v = x < 0.0 ? -v : v;
  return fabs(x) < 0x1p-27 || isnan(x) ? x : v;
}}"""

# atan2(y, x): atan(|y| / |x|) (the quotient in double-double), pi minus it
# for a negative x (-0 too), the sign of y; |y| / |x| is 0 for a zero y and
# 1 for two infinities (C99's values)
ATAN2_F64 = f"""{_INLINE} double kc_atan2_f64(double y, double x)
{{
{_EXACT}
  double a = fabs(y), b = fabs(x);
  int infinities = isinf(a) && isinf(b);
  double q = a == 0.0 ? 0.0 : infinities ? 1.0 : a / b;
  double ql = q > 0.0 && q < INFINITY && b < INFINITY ? fma(-q, b, a) / b : 0.0;
  double lo;
  double v = kc_atan_dd(q, ql, &lo);
  double w = {_PI_DD[0]} - v;
  w += (({_PI_DD[0]} - w) - v) + ({_PI_DD[1]} - lo);
  v = signbit(x) ? w : v;
  v = signbit(y) ? -v : v;
  return isnan(x) || isnan(y) ? x + y : v;
}}"""

# asin a = atan(a / sqrt(1 - a^2)) and acos x = 2 atan(sqrt((1 - x)/(1 + x))),
# the arguments of atan in double-double (1 - a^2 exact as a double-double);
# NaN outside [-1, 1]
ASIN_F64 = f"""{_INLINE} double kc_asin_f64(double x)
{{
{_EXACT}
  double a = fabs(x);
  double y = NAN;
  if (a <= 1.0) {{
    double p = a * a;
    double wh = 1.0 - p;
    double wl = ((1.0 - wh) - p) - fma(a, a, -p);
    double sh = sqrt(wh);
    double sl = sh > 0.0 ? (fma(-sh, sh, wh) + wl) / (2.0 * sh) : 0.0;
    double q = a / sh;
    double ql = sh > 0.0 ? (fma(-q, sh, a) - q * sl) / sh : 0.0;
    double lo;
    y = kc_atan_dd(q, ql, &lo);
    y = x < 0.0 ? -y : y;
  }}
  return a < 0x1p-27 || isnan(x) ? x : y;
}}"""

ACOS_F64 = f"""{_INLINE} double kc_acos_f64(double x)
{{
{_EXACT}
  double y = NAN;
  if (fabs(x) <= 1.0) {{
    double n = 1.0 - x;
    double nl = kc_f64_sum_err(1.0, -x, n);
    double d = 1.0 + x;
    double dl = (1.0 - (d - x)) + (x - (d - (d - x)));   /* (two-sum written out: nl's twin) */
    double q = n / d;
    double ql = d > 0.0 ? (fma(-q, d, n) + (nl - q * dl)) / d : 0.0;
    double sh = sqrt(q);
    double sl = sh > 0.0 && q < INFINITY ? (fma(-sh, sh, q) + ql) / (2.0 * sh) : 0.0;
    double lo;
    y = 2.0 * kc_atan_dd(sh, sl, &lo);
  }}
  return isnan(x) ? x : y;
}}"""


__all__ = ["ATAN_CORE", "ATAN_F64", "ATAN2_F64", "ASIN_F64", "ACOS_F64"]
