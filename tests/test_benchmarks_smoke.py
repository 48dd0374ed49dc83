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
    assert elapsed < 30, f"--quick took {elapsed:.1f} s"

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
