"""Keeps the benchmarks from rotting: ``--quick`` runs of
benchmarks/bench_elementwise.py (kernelcore and hand-written bandwidths) and
others, and of benchmarks/suite.py (lazyarray checked and timed on every
workload W1-W9, JSON and Markdown reports written)."""

import importlib.util
import json

import pytest

from tests.helpers import ROOT

WORKLOADS = [f"W{k}" for k in range(1, 10)]
OPTIONAL_PEERS = ("numexpr", "jax", "torch", "tinygrad")


def test_bench_elementwise_quick(run_benchmark_quick):
    data, md, elapsed = run_benchmark_quick("bench_elementwise")
    assert elapsed < 120, f"--quick took {elapsed:.1f} s"
    assert data["environment"]["pyopencl"]
    assert data["results"]
    for entry in data["results"]:
        variants = entry["variants"]
        for name in ("kernelcore", "hand-written"):
            rec = variants[name]
            assert "error" not in rec, rec.get("error")
            assert rec["check"] == "ok"
            assert rec["wall_gbps"] > 0
            assert rec["event_gbps"] is None or rec["event_gbps"] > 0
        assert entry["ratio_wall"] > 0
    assert "kernelcore" in md


def _run_quick(run_benchmark_quick, script: str) -> tuple[dict, str, float]:
    data, md, elapsed = run_benchmark_quick(script)
    assert data["environment"]["command"]
    assert data["results"]
    return data, md, elapsed


@pytest.mark.slow
def test_bench_matmul_quick(run_benchmark_quick):
    data, md, elapsed = _run_quick(run_benchmark_quick, "bench_matmul")
    assert elapsed < 120, f"--quick took {elapsed:.1f} s"
    for entry in data["results"]:
        assert entry["n"] == 64
        variants = entry["variants"]
        for name in ("kernelcore-tiled", "kernelcore-naive", "hand-written"):
            rec = variants[name]
            assert "error" not in rec, rec.get("error")
            assert rec["check"] == "ok"
            assert rec["max_rel_error"] <= 1e-3
            assert rec["wall_gflops"] > 0
            assert rec["gflops"] > 0
            assert rec["event_gflops"] is None or rec["event_gflops"] > 0
        assert variants["numpy-host"]["gflops"] > 0
        assert entry["ratio_vs_hand_written"] > 0
        assert entry["ratio_vs_blas"] > 0
    assert "kernelcore-tiled" in md and "hand-written" in md


@pytest.mark.slow
def test_bench_reduction_quick(run_benchmark_quick):
    data, md, elapsed = _run_quick(run_benchmark_quick, "bench_reduction")
    assert elapsed < 120, f"--quick took {elapsed:.1f} s"
    for entry in data["results"]:
        assert entry["n"] == 2**12
        variants = entry["variants"]
        for name in ("kernelcore-two-stage", "hand-written", "hand-written-copy-vec4"):
            rec = variants[name]
            assert "error" not in rec, rec.get("error")
            assert rec["check"] == "ok"
            assert rec["wall_gbps"] > 0
            assert rec["gbps"] > 0
            assert rec["event_gbps"] is None or rec["event_gbps"] > 0
        assert variants["kernelcore-two-stage"]["rel_error"] <= 1e-4
        assert entry["fraction_of_copy"] > 0
        assert entry["ratio_vs_hand_written"] > 0
    assert "kernelcore-two-stage" in md and "hand-written" in md


@pytest.mark.slow
def test_sweep_quick(tmp_path):
    """benchmarks/sweep.py --quick on two workloads: every point measured for
    lazyarray and the copy, the table written."""
    import subprocess
    import sys
    script = ROOT / "benchmarks" / "sweep.py"
    out = tmp_path / "sweep.json"
    proc = subprocess.run([sys.executable, str(script), "--quick", "--only", "W2,W6",
                           "--budget", "0.2", "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    shapes = {p["name"]: set() for p in data["points"]}
    for p in data["points"]:
        shapes[p["name"]].add(p["shape"])
        assert p["variants"]["lazyarray-jit"]["status"] == "ok"
        assert p["variants"]["lazyarray-jit"]["median_s"] > 0
    assert all(len(s) >= 5 for s in shapes.values()) and set(shapes) == {"W2", "W6"}
    assert "| W6 | 64x64x64 |" in out.with_suffix(".md").read_text()
    merged = tmp_path / "merged.md"
    proc = subprocess.run([sys.executable, str(script), "--plot", str(out), str(out),
                           "--markdown", str(merged)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert merged.read_text().count("| W6 | 64x64x64 |") == 2


def test_dispatch_cost_quick(run_benchmark_quick):
    data, md, _ = run_benchmark_quick("dispatch_cost")
    step = data["step"]
    # a repeated eager step: one graph walk, no planning, its stored values' launches
    assert step["walks"] == 1 and step["planned"] == 0 and step["launches"] == 4
    assert all(row["calls"] > 0 and row["us"] > 0 for row in data["operations"])
    assert "Dispatch cost" in md




def test_suite_quick(run_benchmark_quick):
    data, md, elapsed = run_benchmark_quick("suite", timeout=300)
    if data["environment"]["device"]["kind"] == "cpu":
        # (the CI budget; on a GPU torch.compile and JAX compile for seconds each)
        assert elapsed < 60, f"--quick took {elapsed:.1f} s"
    assert data["ok"] is True
    cases = data["cases"]
    assert sorted({c["workload"] for c in cases}) == WORKLOADS
    for case in cases:
        jit = case["variants"]["lazyarray-jit"]
        assert jit["status"] == "ok", (case["name"], jit)
        assert jit["median_s"] > 0
        assert jit["max_rel_error"] <= case.get("rtol", 1e-4)
        if case["workload"] not in ("W8", "W9"):
            for name in ("hand-written", "copy", "numpy"):
                assert case["variants"][name]["status"] == "ok", (case["name"], name)
            assert case["copy_gbps"] > 0
            assert jit["of_copy"] > 0 and jit["vs_numpy"] > 0 and jit["vs_hand_written"] > 0

    w1 = next(c for c in cases if c["name"] == "W1")["variants"]
    for peer in OPTIONAL_PEERS:
        installed = importlib.util.find_spec(peer) is not None
        assert (w1[peer]["status"] != "not installed") == installed, (peer, w1[peer])
    assert {t["case"] for t in data["targets"]} >= {"W1", "W8 batched", "W9 cold", "W9 warm"}
    # W8 runs each variant in a process of its own
    assert all(c.get("isolated") for c in cases if c["workload"] == "W8")

    assert md.startswith("# lazyarray benchmark suite")
    assert "suite.py --quick" in md and "## Targets" in md
    assert all(f"### {w}" in md for w in WORKLOADS)
