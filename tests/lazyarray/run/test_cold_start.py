"""Cold start: ``import lazyarray`` and small work on the host tier import
neither OpenCL nor kernelcore (nor islpy, pymbolic); the first device
operation loads them. Long kernel builds print one progress line; the
compiler's warnings about generated code stay off stderr unless debug
logging asks for them.

Each test runs a fresh Python process (what is imported is the process's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

HEAVY = ("pyopencl", "kernelcore", "islpy", "pymbolic")


def _run(code: str, tmp_path, **env: str) -> subprocess.CompletedProcess:
    """Run *code* as a script in a fresh process (on the device tier unless
    *env* says otherwise, with an empty kernel cache) and return it."""
    environment = dict(os.environ, KERNELCORE_CACHE_DIR=str(tmp_path / "cache"),
                       **{"LAZYARRAY_TIER": "device", **env})
    for name in ("LAZYARRAY_LOG", "KERNELCORE_LOG", "LAZYARRAY_QUIET"):
        if name not in env:
            environment.pop(name, None)
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    result = subprocess.run([sys.executable, str(script)], env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def test_small_work_imports_no_device_stack(tmp_path):
    code = f"""
        import json, sys
        import numpy as np
        import lazyarray
        heavy = {HEAVY!r}
        loaded = lambda: sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        after_import = loaded()
        x = lazyarray.zeros(10) + 1
        total = float(x.sum())
        lazyarray.synchronize()
        # (a 100 x 100 grid is small on every device: no need to ask one)
        grid = lazyarray.asarray(np.ones((100, 100))) * 2
        grid[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1])
        assert float(lazyarray.abs(grid).max()) == 2.0
        after_small = loaded()
        device = float(lazyarray.asarray(np.ones(100000)).sum())
        print(json.dumps([after_import, after_small, total, type(x).__name__, device,
                          "pyopencl" in sys.modules]))
        """
    result = _run(code, tmp_path, LAZYARRAY_TIER="auto")
    after_import, after_small, total, kind, device, opencl = json.loads(result.stdout)
    assert after_import == []
    assert after_small == []
    assert (total, kind) == (10.0, "HostArray")
    # the first device operation loads the device stack and computes
    assert device == 100000.0 and opencl


def test_a_later_process_places_host_arrays_without_asking_the_device(tmp_path):
    # arrays beyond 65,536 elements are kept on the host or moved to the device
    # by the device's kind: the first process asks OpenCL and remembers it, a
    # later one of the same environment places them without loading OpenCL
    code = f"""
        import json, sys
        import numpy as np
        import lazyarray as la
        la.random.seed(123)
        x, y = la.random.rand(100_000), la.random.rand(100_000)
        inside = int(la.sum(x**2 + y**2 <= 1.0))
        np.random.seed(123)
        a, b = np.random.rand(100_000), np.random.rand(100_000)
        print(json.dumps([inside, int(np.sum(a**2 + b**2 <= 1.0)), type(x).__name__,
                          sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})]))
        """
    env = {"LAZYARRAY_TIER": "auto", "LAZYARRAY_CACHE_DIR": str(tmp_path / "cache")}
    first = json.loads(_run(code, tmp_path, **env).stdout)
    second = json.loads(_run(code, tmp_path, **env).stdout)
    assert first[0] == first[1] == second[0] == second[1]
    assert first[3] != [] and first[2] == second[2]
    kind = (tmp_path / "cache" / "lazyarray-device-v1")
    remembered = [f.read_text() for f in kind.iterdir()]
    assert remembered in (["cpu"], ["gpu"])
    # (on a GPU such arrays go to the device, which loads OpenCL anyway)
    assert (second[3] == []) == (remembered == ["cpu"])


def test_namespaces_load_without_device(tmp_path):
    # every public module of the namespace, la.jit and la.explain of host work
    code = f"""
        import json, sys
        import lazyarray as la
        from lazyarray import fft, linalg, random   # noqa: F401
        f = la.jit(lambda a: a + 1)
        text = la.explain(la.arange(5) * 2, print_it=False)
        r = la.random.default_rng(0).random(8)
        print(json.dumps([sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r}),
                          text.split(":")[0], type(r).__name__]))
        """
    loaded, text, kind = json.loads(_run(code, tmp_path, LAZYARRAY_TIER="auto").stdout)
    assert loaded == []
    assert text == "0 kernel(s)" and kind == "HostArray"


def test_numpy_namespaces_load_on_first_use(tmp_path):
    # la.random, la.fft, la.linalg and la.lib (and NumPy's random and fft
    # modules under them) load when a program first reads them
    code = """
        import json, sys
        import numpy as np
        import lazyarray as la
        watched = ("numpy.random", "numpy.fft", "lazyarray.random", "lazyarray.fft",
                   "lazyarray.linalg", "lazyarray.lib")
        loaded = lambda: [m for m in watched if m in sys.modules]
        after_import = loaded()
        x = la.asarray(np.arange(8.0))
        values = [float(la.linalg.norm(x)), float(la.fft.fft(x).real[0]),
                  la.random.default_rng(0).random(2).shape[0],
                  la.lib.stride_tricks.sliding_window_view(x, 3).shape[0]]
        print(json.dumps([after_import, loaded(), values]))
        """
    after_import, loaded, values = json.loads(_run(code, tmp_path, LAZYARRAY_TIER="auto").stdout)
    assert after_import == []
    assert len(loaded) == 6
    assert values == [float(np.linalg.norm(np.arange(8.0))), 28.0, 2, 6]


def test_progress_line_of_long_builds(tmp_path):
    # every build counts as long (PROGRESS_AFTER = 0): one line per computation
    # that builds kernels, naming the user's line or the jitted function; none
    # for kernels built before, or once silenced
    code = """
        import numpy as np
        import lazyarray as la
        from lazyarray.run import progress
        progress.PROGRESS_AFTER = 0.0
        x = la.asarray(np.arange(3000.0))
        y = float(((x * 2.5 - 1) ** 2).sum())
        y = float(((x * 2.5 - 1) ** 2).sum())
        step = la.jit(lambda a: la.sin(a) * 3)
        step(x).get()
        step(x).get()
        la.set_progress(False)
        float((la.cos(x) * 4).max())
        """
    lines = [line for line in _run(code, tmp_path).stderr.splitlines()
             if line.startswith("lazyarray: building")]
    assert len(lines) == 2, lines
    assert lines[0].startswith("lazyarray: building ")
    assert lines[0].endswith("for y = float(((x * 2.5 - 1) ** 2).sum()) (script.py:7) ...")
    assert lines[1] == "lazyarray: building 1 kernel for <lambda>() (la.jit) ..."


def test_progress_line_quiet(tmp_path):
    code = """
        import numpy as np
        import lazyarray as la
        from lazyarray.run import progress
        progress.PROGRESS_AFTER = 0.0
        print(la.run.progress.progress_enabled())
        float((la.asarray(np.arange(3000.0)) * 1.75).sum())
        """
    result = _run(code, tmp_path, LAZYARRAY_QUIET="1")
    assert result.stdout.strip() == "False"
    assert "lazyarray: building" not in result.stderr


_WARNING_SOURCE = """
    // %(salt)s (a new source: the driver's own cache would keep its log to itself)
    __kernel void f(__global float *a) { int i = 0; if (i = 1) a[0] = 1.0f; }
    """

_BUILD = f"""
    import random, warnings
    import pyopencl as cl
    import kernelcore
    from kernelcore.runtime.build import compile_program
    warnings.simplefilter("always")
    queue = kernelcore.default_queue()
    source = {textwrap.dedent(_WARNING_SOURCE)!r} % {{"salt": random.getrandbits(64)}}
    program = compile_program(queue.context, source)
    # (whether this device's compiler has anything to say about the source)
    plain = cl.Program(queue.context, source.replace("//", "// plain")).build()
    said = bool(plain.get_build_info(queue.device, cl.program_build_info.LOG).strip())
    print(said)
    """


def test_compiler_warnings_stay_off_stderr(tmp_path):
    # (the plain build's own warnings are pyopencl's: told apart by the marker)
    code = _BUILD.replace("print(said)", "import sys; sys.stderr.flush(); print(said)")
    code = code.replace("plain = cl.Program",
                        "import os; os.write(2, b'--- plain build\\n')\n    plain = cl.Program")
    result = _run(code, tmp_path)
    ours = result.stderr.split("--- plain build")[0]
    assert "warning" not in ours.lower(), ours
    assert "CompilerWarning" not in ours


def test_compiler_warnings_logged_at_debug(tmp_path):
    result = _run(_BUILD, tmp_path, LAZYARRAY_LOG="debug")
    if result.stdout.strip() == "True":       # (a compiler that warns about the source)
        assert "[kernelcore.runtime.build] compiler output for" in result.stderr
        assert "assignment" in result.stderr
