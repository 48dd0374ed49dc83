"""Keeps benchmarks/suite.py from rotting: a --quick run must check and time
lazyarray on every workload W1-W9 and write its JSON and Markdown reports."""

import importlib.util

WORKLOADS = [f"W{k}" for k in range(1, 10)]
OPTIONAL_PEERS = ("numexpr", "jax", "torch", "tinygrad")


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
