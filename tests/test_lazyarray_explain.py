"""la.explain and la.to_dot describe the plan that evaluation then follows."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray import target as la_target
from lazyarray.run import STATS


def test_explain_lists_the_kernels_that_run(queue):
    x = la.asarray(np.linspace(0, 1, 1200, dtype=np.float32).reshape(4, 300))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    text = la.explain(softmax, print_it=False)
    assert text.startswith("3 kernel(s) for true_divide (4, 300) float32")
    assert "[reduction]" in text and "[result]" in text
    assert "(kernel 0)" in text
    before = STATS["launches"]
    softmax.get()
    assert STATS["launches"] - before == 3
    assert "already computed" in la.explain(softmax, print_it=False)


def test_explain_names_the_recompute_rule(queue, monkeypatch):
    monkeypatch.setattr(la_target, "device_profile", lambda device: ("cpu", 2))   # limit 4
    u = la.asarray(np.ones(16, np.float32))
    for _ in range(3):
        u = u[:-3] + u[1:-2] + u[2:-1] + u[3:]      # four reads of the previous step
    text = la.explain(u, print_it=False)
    assert text.startswith("3 kernel(s)")
    assert "recompute rule: read 4 times per element (limit 4)" in text


def test_explain_shows_code_on_request(queue, capsys):
    la.explain(la.asarray(np.ones(3)) + 1, show_code=True)
    out = capsys.readouterr().out
    # (the scalar is an argument: a new value reuses the kernel)
    assert "__kernel void" in out and "in0[" in out and "+ s1;" in out
    assert "reads s1: const 1.0 () float64 (a kernel argument)" in out


def test_to_dot_marks_stored_values(tmp_path):
    x = la.asarray(np.ones((2, 3), np.float32))
    source = la.to_dot(x.sum(axis=0) * 2, path=tmp_path / "g.dot")
    assert source.startswith("digraph lazyarray {")
    assert (tmp_path / "g.dot").read_text() == source
    boxed = [line for line in source.splitlines() if "shape=box" in line]
    assert len(boxed) == 2                       # the sum and the result
    assert any("sum over axes [0]" in line for line in boxed)


def test_to_dot_rendering_needs_graphviz(tmp_path, monkeypatch):
    import shutil
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="graphviz"):
        la.to_dot(la.asarray(np.ones(2)), path=tmp_path / "g.svg")
