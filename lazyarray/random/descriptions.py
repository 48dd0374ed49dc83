"""One-line descriptions of the methods and functions that ``la.random``
forwards to NumPy's generators (their docstrings; NumPy's own documentation
has the details of each distribution).

Public names: DESCRIPTIONS.
"""

from __future__ import annotations

_SAME = ("Arrays come back as lazy arrays, scalars as NumPy returns them; the "
         "numbers are NumPy's for the same seed.")

_WHAT = {
    "beta": "Beta-distributed values in [0, 1] with shape parameters *a* and *b*.",
    "binomial": "Numbers of successes in *n* trials of success probability *p*.",
    "bytes": "*length* random bytes (a Python ``bytes``).",
    "chisquare": "Chi-square values with *df* degrees of freedom.",
    "dirichlet": "Points of the simplex from a Dirichlet distribution of "
                 "concentrations *alpha* (one row per draw).",
    "exponential": "Exponential values of mean *scale*.",
    "f": "Values of Fisher's F distribution with *dfnum* and *dfden* degrees of freedom.",
    "gamma": "Gamma values of shape *shape* and scale *scale*.",
    "geometric": "Numbers of trials of success probability *p* up to the first "
                 "success (at least 1).",
    "get_bit_generator": "The bit generator of NumPy's global legacy state.",
    "gumbel": "Gumbel (extreme value) values of mode *loc* and scale *scale*.",
    "hypergeometric": "Numbers of good items among *nsample* drawn without "
                      "replacement from *ngood* good and *nbad* bad ones.",
    "integers": "Integers of *dtype* uniform in [low, high) ([low, high] with "
                "*endpoint*; [0, low) without *high*).",
    "laplace": "Laplace (double exponential) values around *loc* of scale *scale*.",
    "logistic": "Logistic values around *loc* of scale *scale*.",
    "lognormal": "Values whose logarithm is normal of mean *mean* and standard "
                 "deviation *sigma*.",
    "logseries": "Integers (at least 1) of the logarithmic series distribution of "
                 "parameter *p*.",
    "multinomial": "Counts of the outcomes of *n* trials with outcome "
                   "probabilities *pvals* (one row per draw).",
    "multivariate_hypergeometric": "Counts drawn without replacement from groups "
                                   "of *colors* items (one row per draw).",
    "multivariate_normal": "Points of a normal distribution with mean vector "
                           "*mean* and covariance matrix *cov* (one row per draw).",
    "negative_binomial": "Numbers of failures before *n* successes of success "
                         "probability *p*.",
    "noncentral_chisquare": "Noncentral chi-square values (*df* degrees of "
                            "freedom, noncentrality *nonc*).",
    "noncentral_f": "Noncentral F values (*dfnum*, *dfden* degrees of freedom, "
                    "noncentrality *nonc*).",
    "normal": "Normal (Gaussian) values of mean *loc* and standard deviation *scale*.",
    "pareto": "Pareto II (Lomax) values of shape *a*.",
    "permuted": "A copy of *x* whose slices along *axis* are shuffled each on "
                "its own (all elements with ``axis=None``); into *out* if given.",
    "poisson": "Poisson counts of mean *lam*.",
    "power": "Values in [0, 1] of density proportional to ``x**(a - 1)``.",
    "rand": "float64 values uniform in [0, 1) of shape *dims* (a float without dims).",
    "randint": "Integers uniform in [low, high) ([0, low) without *high*) of *dtype*.",
    "randn": "Standard normal values of shape *dims* (a float without dims).",
    "random": "float64 values uniform in [0, 1) of shape *size*.",
    "random_integers": "Integers uniform in [low, high], both ends included "
                       "([1, low] without *high*); NumPy deprecates it for "
                       "``randint(low, high + 1)``.",
    "random_sample": "float64 values uniform in [0, 1) of shape *size*.",
    "ranf": "float64 values uniform in [0, 1) of shape *size* (``random_sample``).",
    "rayleigh": "Rayleigh values of mode *scale*.",
    "sample": "float64 values uniform in [0, 1) of shape *size* (``random_sample``).",
    "set_bit_generator": "Make *bitgen* the bit generator of NumPy's global legacy state.",
    "standard_cauchy": "Cauchy (Lorentz) values of mode 0 and scale 1.",
    "standard_exponential": "Exponential values of mean 1.",
    "standard_gamma": "Gamma values of shape *shape* and scale 1.",
    "standard_normal": "Normal values of mean 0 and variance 1.",
    "standard_t": "Student's t values with *df* degrees of freedom.",
    "tomaxint": "Integers uniform in [0, the largest C long].",
    "triangular": "Values of the triangular distribution on [left, right] with "
                  "its peak at *mode*.",
    "uniform": "float64 values uniform in [low, high).",
    "vonmises": "Angles in [-pi, pi] of the von Mises distribution of mode *mu* "
                "and concentration *kappa*.",
    "wald": "Inverse Gaussian (Wald) values of mean *mean* and scale *scale*.",
    "weibull": "Weibull values of shape *a* and scale 1.",
    "zipf": "Integers (at least 1) of the Zipf distribution of parameter *a*.",
}

#: the docstring of each forwarded name
DESCRIPTIONS = {name: f"{what}\n\n{_SAME}" for name, what in _WHAT.items()}
