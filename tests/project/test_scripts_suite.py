"""The script suite's programs (benchmarks/scripts/) give NumPy's answers
with lazyarray's default tier, plain and with their ``la.jit`` steps, at the
textbook and the 16x sizes (the runner's own check, here in CI)."""

import sys

import numpy as np
import pytest

import lazyarray as la
from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from scripts_common import compare, load_script, script_names


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("name", script_names())
def test_the_script_agrees_with_numpy(name, size):
    module = load_script(name)
    n = module.SIZES[size]
    want = module.run(np, n)
    variants = [module.run] + ([module.run_jit] if hasattr(module, "run_jit") else [])
    for run in variants:
        with la.tier("auto"):
            problem = compare(run(la, n), want, module.RTOL, module.ATOL)
        assert problem is None, f"{name} ({run.__name__}, {size}): {problem}"
