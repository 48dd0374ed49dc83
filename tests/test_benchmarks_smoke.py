"""Keeps benchmarks/bench_elementwise.py from rotting: a --quick run must succeed
and report kernelcore and hand-written bandwidths."""

import json
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_elementwise.py"


def test_bench_elementwise_quick(tmp_path):
    json_path = tmp_path / "elementwise.json"
    md_path = tmp_path / "elementwise.md"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(json_path),
         "--markdown", str(md_path)],
        capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert elapsed < 120, f"--quick took {elapsed:.1f} s"

    data = json.loads(json_path.read_text())
    assert data["quick"] is True
    assert data["environment"]["device"]["name"]
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
    assert "kernelcore" in md_path.read_text()


BENCH_DIR = Path(__file__).resolve().parent.parent / "benchmarks"


def _run_quick(script: str, tmp_path: Path) -> tuple[dict, str, float]:
    json_path = tmp_path / f"{script}.json"
    md_path = tmp_path / f"{script}.md"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(BENCH_DIR / f"{script}.py"), "--quick", "--json",
         str(json_path), "--markdown", str(md_path)],
        capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(json_path.read_text())
    assert data["quick"] is True
    assert data["environment"]["device"]["name"]
    assert data["environment"]["command"]
    assert data["results"]
    return data, md_path.read_text(), elapsed


def test_bench_matmul_quick(tmp_path):
    data, md, elapsed = _run_quick("bench_matmul", tmp_path)
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


def test_bench_reduction_quick(tmp_path):
    data, md, elapsed = _run_quick("bench_reduction", tmp_path)
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
