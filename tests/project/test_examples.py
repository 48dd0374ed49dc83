"""The example scripts a scientist would write run and agree with NumPy
(each checks its eager and jitted results against NumPy and exits 1 if not)."""

import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("script, args", [
    ("pde_timestep.py", ["--n", "24", "--steps", "12"]),
    ("particles.py", ["--n", "24", "--steps", "12"]),
])
def test_example_runs_and_agrees_with_numpy(script, args):
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "agree with NumPy" in done.stdout
    # one trace for every dt (none where the host tier is forced: NumPy runs the step)
    traces = 0 if os.environ.get("LAZYARRAY_TIER") == "host" else 1
    assert f"traced step {traces} time(s)" in done.stdout
