"""A compiled function's new kernels are built as one OpenCL program
(lazyarray.run.together), and a later process finds that program for each
kernel's recipe."""

import json
import os
import subprocess
import sys

import numpy as np
import pyopencl.array as cla
import pytest

import lazyarray as la
from kernelcore.runtime import build
from lazyarray.arraycontext.freeze import compute_together
from lazyarray.run import default_queue, together
from lazyarray.run.together import build_together, merged_source, recipe_name

_HELPER = "inline int twice(int a) { return 2 * a; }"
_SOURCES = [
    (f"#define ONE 1\n{_HELPER}\n__kernel void k(__global int *out)\n"
     "{\n  out[get_global_id(0)] = twice(ONE);\n}\n", ["k"]),
    (f"#define ONE 1\n{_HELPER}\n__kernel void k(__global int *out)\n"
     "{\n  out[get_global_id(0)] = twice(ONE) + 5;\n}\n", ["k"]),
]


def test_merged_source_keeps_shared_text_once_and_renames_kernels():
    merged = merged_source(_SOURCES)
    assert merged.count(_HELPER) == 1 and merged.count("#define ONE 1") == 1
    assert "void k__k0(" in merged and "void k__k1(" in merged
    assert recipe_name("k__k1") == "k" and recipe_name("lazyarray_kernel") == "lazyarray_kernel"
    queue = default_queue()
    kernels = build_together(queue.context, _SOURCES)
    assert kernels is not None and [len(k) for k in kernels] == [1, 1]
    out = cla.empty(queue, 4, np.int32)
    for (kernel,), expected in zip(kernels, (2, 7)):
        kernel(queue, (4,), None, out.data)
        np.testing.assert_array_equal(out.get(), expected)


def test_programs_that_do_not_merge_are_left_alone():
    clash = [(_SOURCES[0][0], ["k"]),
             ("inline int twice(int a) { return 3 * a; }\n__kernel void k(__global int *out)"
              "\n{\n  out[0] = twice(1);\n}\n", ["k"])]
    assert build_together(default_queue().context, clash) is None
    assert build_together(default_queue().context, []) is None


def test_one_program_is_built_through_the_same_path():
    """A lone program is built from source as a merged one is (no binary
    asked of it), and runs."""
    queue = default_queue()
    kernels = build_together(queue.context, _SOURCES[1:])
    assert kernels is not None and len(kernels) == 1
    out = cla.empty(queue, 3, np.int32)
    kernels[0][0](queue, (3,), None, out.data)
    np.testing.assert_array_equal(out.get(), 7)


def test_values_computed_together_build_their_new_kernels_as_one_program(monkeypatch):
    """``freeze``'s values (shared work first, then each) are planned before
    any runs and their new kernels built as one program, not one by one
    through kernelcore."""
    builds, alone = [], []
    program, kernelcore_program = together.build_program, build.compile_program
    monkeypatch.setattr(together, "build_program", lambda ctx, source: (
        builds.append(source.count("__kernel")), program(ctx, source))[1])
    monkeypatch.setattr(build, "compile_program", lambda ctx, source: (
        alone.append(1), kernelcore_program(ctx, source))[1])
    x = np.linspace(0.25, 3.5, 613)
    a = la.asarray(x)
    shared = la.arctan2(a, a[::-1] + 2) * la.hypot(a, 1.5) - la.expm1(a / 7)
    roots = [la.sum(shared * a), la.tanh(shared[::-1]) - la.arcsinh(a), la.max(la.log1p(shared))]
    values = compute_together([r.node for r in roots])
    expected = np.arctan2(x, x[::-1] + 2) * np.hypot(x, 1.5) - np.expm1(x / 7)
    np.testing.assert_allclose(values[0].get(), np.sum(expected * x), rtol=1e-12)
    np.testing.assert_allclose(values[1].get(), np.tanh(expected[::-1]) - np.arcsinh(x),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(values[2].get(), np.max(np.log1p(expected)), rtol=1e-12)
    assert len(builds) == 1 and builds[0] >= 3 and not alone


_CHILD = """
import json
import numpy as np
import pytest
import lazyarray as la
from kernelcore.runtime import build
from lazyarray.arraycontext.compile import CompiledFunction
from lazyarray.arraycontext.traversal import PlainWalker
from lazyarray.run import together
from lazyarray.run.cache import STATS

builds = []
def counting(original):
    def counted(ctx, source):
        builds.append(source.count("__kernel"))
        return original(ctx, source)
    return counted
build.compile_program = counting(build.compile_program)
together.build_program = counting(together.build_program)
from lazyarray.run import launch
launch.compile_program = counting(launch.compile_program)

w = la.asarray(np.linspace(0, 2, 999))

def f(t, u):
    g = u[::-1] * t
    # (w's part reads no argument: computed once, when tracing)
    return {"a": la.sum(g) + u, "b": la.exp(g) - la.max(u) + la.cumsum(la.cos(w))}

u = np.linspace(-1, 1, 999)
# (kernel by kernel: a small program is otherwise one sequential kernel)
out = CompiledFunction(f, PlainWalker(), None, single_launch=False)(0.5, la.asarray(u))
print(json.dumps({"a": out["a"].get().tolist(), "b": out["b"].get().tolist(),
                  "builds": builds, "recipe_hits": STATS["disk_hits"]}))
"""


def _child(tmp_path) -> dict:
    env = dict(os.environ, LAZYARRAY_CACHE_DIR=str(tmp_path / "la"),
               KERNELCORE_CACHE_DIR=str(tmp_path / "kc"))
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_compiled_function_builds_one_program_and_a_later_process_finds_it(tmp_path):
    """The first process builds the function's kernels, with those of the
    work hoisted out of the trace, as one program (one build holding them
    all); the second loads every recipe and builds that
    one program again (from source: PoCL's cache serves it), not a program
    per kernel."""
    u = np.linspace(-1, 1, 999)
    g = u[::-1] * 0.5
    first, second = _child(tmp_path), _child(tmp_path)
    for run in (first, second):
        np.testing.assert_allclose(run["a"], np.sum(g) + u, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(run["b"], np.exp(g) - np.max(u) + np.cumsum(
            np.cos(np.linspace(0, 2, 999))), rtol=1e-12, atol=1e-12)
    assert len(first["builds"]) == 1 and first["builds"][0] >= 3
    assert second["recipe_hits"] >= 3 and second["builds"] == first["builds"]


def _fma_source(pragma: str) -> str:
    return (f"{pragma}\n__kernel void k(__global double *out, __global const double *x)\n"
            "{\n  out[0] = x[0] * x[1] + x[2];\n}\n")


def test_each_program_keeps_its_own_contraction_setting():
    """A program stating ``FP_CONTRACT ON`` (or nothing: OpenCL's default)
    merged after one stating ``OFF`` (and the reverse) computes as built
    alone: the setting is stated again before each program's code, not
    kept once as repeated text is."""
    off = _fma_source("#pragma OPENCL FP_CONTRACT OFF")
    on = _fma_source("#pragma OPENCL FP_CONTRACT ON")
    plain = _fma_source("")
    merged = merged_source([(off, ["k"]), (on, ["k"]), (plain, ["k"]), (off, ["k"])])
    states = [line for line in merged.splitlines() if "FP_CONTRACT" in line]
    assert states == ["#pragma OPENCL FP_CONTRACT ON", "#pragma OPENCL FP_CONTRACT OFF",
                      "#pragma OPENCL FP_CONTRACT ON", "#pragma OPENCL FP_CONTRACT ON",
                      "#pragma OPENCL FP_CONTRACT ON", "#pragma OPENCL FP_CONTRACT ON",
                      "#pragma OPENCL FP_CONTRACT OFF"]
    queue = default_queue()
    run = _fma_runner(queue)
    programs = [on, off, on, off, plain]
    kernels = build_together(queue.context, [(s, ["k"]) for s in programs])
    assert kernels is not None
    alone = [run(build.compile_program(queue.context, s, keep_binary=False).k)
             for s in programs]
    assert [run(k) for (k,) in kernels] == alone
    assert alone[1] == 0.0


def _fma_runner(queue):
    """A function running a one-work-item kernel ``k(out, x)`` on inputs
    whose x[0] * x[1] rounds to 1 in double precision (fused with + x[2] =
    -1, it keeps -2**-60), giving ``out[0]``."""
    x = cla.to_device(queue, np.array([1 + 2.0 ** -30, 1 - 2.0 ** -30, -1.0]))
    out = cla.empty(queue, 1, np.float64)

    def run(kernel) -> float:
        kernel(queue, (1,), None, out.data, x.data)
        return float(out.get()[0])
    return run


def _helper_source(pragma: str, helper: str, body: str) -> str:
    return (f"{pragma}\n{helper}\n__kernel void k(__global double *out, __global const double *x)"
            f"\n{{\n  out[0] = {body};\n}}\n")


def test_shared_helpers_under_different_contraction_settings():
    """An integer helper shared by programs of different settings is kept
    once (one program); a floating-point one would compute under one
    setting for both: those programs are merged per setting instead, each
    kernel computing as built alone."""
    queue = default_queue()
    run = _fma_runner(queue)
    index = "inline int pick(int a) { return a % 3; }"
    shared = [(_helper_source(f"#pragma OPENCL FP_CONTRACT {s}", index,
                              "x[pick(3)] * x[pick(4)] + x[pick(5)]"), ["k"])
              for s in ("OFF", "ON")]
    assert merged_source(shared).count(index) == 1
    kernels = build_together(queue.context, shared)
    assert kernels is not None and kernels[0][0].program == kernels[1][0].program
    fma = "inline double fma3(double a, double b, double c) { return a * b + c; }"
    clash = [(_helper_source(f"#pragma OPENCL FP_CONTRACT {s}", fma, "fma3(x[0], x[1], x[2])"),
              ["k"]) for s in ("OFF", "ON", "OFF")]
    with pytest.raises(together.SettingsClash):
        merged_source(clash)
    for programs in (shared, clash):
        kernels = build_together(queue.context, programs)
        assert kernels is not None
        alone = [run(build.compile_program(queue.context, s, keep_binary=False).k)
                 for s, _ in programs]
        assert [run(k) for (k,) in kernels] == alone
    assert kernels[0][0].program == kernels[2][0].program != kernels[1][0].program


def test_include_guarded_helpers_merge_as_whole_blocks():
    """Helpers inside ``#ifndef``/``#endif`` guards (kernelcore's math
    helpers) are kept once as whole blocks: the merged program's
    conditionals stay balanced (two guards in one program lost an
    ``#endif`` when lines were kept once each) and it builds."""
    guards = ("#ifndef KC_A\n#define KC_A\ninline int kc_a(int v) { return v + 1; }\n#endif\n"
              "#ifndef KC_B\n#define KC_B\ninline int kc_b(int v) { return 2 * v; }\n#endif\n")
    programs = [(guards + f"__kernel void k(__global int *out) {{ out[0] = {body}; }}\n", ["k"])
                for body in ("kc_a(3)", "kc_b(5)")]
    merged = merged_source(programs)
    conditionals = [line.split()[0] for line in merged.splitlines() if line.startswith("#if")
                    or line.startswith("#endif")]
    assert conditionals == ["#ifndef", "#endif", "#ifndef", "#endif"]
    queue = default_queue()
    kernels = build_together(queue.context, programs)
    assert kernels is not None
    out = cla.empty(queue, 1, np.int32)
    results = []
    for (kernel,) in kernels:
        kernel(queue, (1,), None, out.data)
        results.append(int(out.get()[0]))
    assert results == [4, 10]
