"""Small programs written the way their authors write NumPy, run by ``scripts_suite.py``.

Each module has ``run(np, n)`` (the whole program on the array module *np*,
at size scale *n*, returning a small result), ``SIZES`` (``{"small": textbook
n, "large": n with 16 times the elements}``), ``RTOL`` and ``ATOL`` (how
closely two array modules' results must agree) and, where a jitted step is
natural, ``run_jit(la, n)``.
"""

from __future__ import annotations

#: the scripts, in the order of the suite's table
SCRIPTS = (
    "linear_convection_1d", "burgers_1d", "heat_1d", "diffusion_2d", "convection_2d",
    "laplace_2d", "poisson_2d", "cavity_flow", "channel_flow", "gray_scott",
    "game_of_life", "nbody", "kmeans", "knn", "softmax_regression", "mlp",
    "image_filters", "sliding_windows", "one_liners", "monte_carlo_pi", "course_loops_1d",
)
