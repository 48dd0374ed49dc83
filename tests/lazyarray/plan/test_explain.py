"""la.explain and la.to_dot describe the plan that evaluation then follows;
with ``profile=True`` they add bytes and flops counted from kernelcore's
statistics (checked against hand counts), measured times, and the device's
roofline, measured once and cached."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray import roofline
from lazyarray import target as la_target
from lazyarray.explain import kernel_profiles
from tests.helpers import counting

FAKE = roofline.Peaks("fake device", 10e9, (("float32", 100e9), ("float64", 50e9)))


def test_explain_lists_the_kernels_that_run(queue):
    x = la.asarray(np.linspace(0, 1, 1200, dtype=np.float32).reshape(4, 300))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    text = la.explain(softmax, print_it=False)
    assert text.startswith("3 kernel(s) for true_divide (4, 300) float32")
    assert "[reduction]" in text and "[result]" in text
    assert "(kernel 0)" in text
    with counting() as ran:
        softmax.get()
    assert ran.launches == 3
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




@pytest.fixture
def fake_peaks(monkeypatch):
    """Peaks without measuring (the measurement has its own test)."""
    monkeypatch.setattr(roofline, "_PEAKS", {})
    monkeypatch.setattr(roofline, "_measure", lambda queue: FAKE)
    monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")


def _vector(n, seed=0):
    return la.asarray(np.random.default_rng(seed).random(n, dtype=np.float32))


def test_elementwise_counts_match_hand_counts(queue, fake_peaks):
    n = 1000
    a, b = _vector(n), _vector(n, 1)
    [p] = kernel_profiles(a * b + a, repeat=3)
    assert p.flops == 2 * n and p.flop_dtype == "float32"       # a multiply and an add
    # a and b read once, the result written once (a's second reference is
    # accessed but not moved again)
    assert p.moved_bytes == 3 * 4 * n
    assert p.accessed_bytes >= p.moved_bytes
    assert p.seconds > 0 and p.peak_bandwidth == 10e9 and p.peak_flops == 100e9
    assert p.bound == "memory"
    assert p.roofline_seconds == pytest.approx(12 * n / 10e9)
    assert p.fraction == pytest.approx(p.roofline_seconds / p.seconds)


def test_reduction_counts_match_hand_counts(queue, fake_peaks):
    n = 1 << 14
    a, b = _vector(n), _vector(n, 1)
    x = (a * b).sum()
    [p] = kernel_profiles(x, repeat=3)
    # n multiplies and n accumulator updates, plus the combination of the
    # partial sums of a split reduction (at most a few hundred)
    assert 2 * n <= p.flops <= 2 * n + 2048
    # both vectors read once; partial sums written and read back (a few kB)
    assert 8 * n <= p.moved_bytes <= 8 * n + 16384
    assert not la.explain(x, print_it=False).endswith("already computed")  # (x not computed)


@pytest.mark.parametrize("units", [4, 132])
def test_matmul_counts_match_hand_counts(queue, fake_peaks, layout_kind, device_layouts, units):
    device_layouts(layout_kind, units)
    n = 64
    rng = np.random.default_rng(0)
    A = la.asarray(rng.random((n, n), dtype=np.float32))
    B = la.asarray(rng.random((n, n), dtype=np.float32))
    profiles = kernel_profiles(A @ B, repeat=3)
    flops = sum(p.flops for p in profiles)
    if layout_kind == "cpu":
        assert flops == 2 * n ** 3
    else:
        # GPU layouts split each sum over the work-items of a group (and over
        # groups, with many compute units) and also add the partial sums:
        # a few adds per result element on top (counted, as they run)
        assert 2 * n ** 3 < flops <= 2 * n ** 3 + 16 * n * n
    # each matrix is read n times over (counted accesses), but moves once
    assert sum(p.moved_bytes for p in profiles) >= 3 * 4 * n * n
    assert sum(p.accessed_bytes for p in profiles) >= 2 * 4 * n ** 3


def test_explain_profile_reports_each_kernel(queue, fake_peaks):
    x = la.asarray(np.linspace(0, 1, 64 * 300, dtype=np.float32).reshape(64, 300))
    y = (x - x.mean(axis=0)).sum(axis=1)
    text = la.explain(y, print_it=False, profile=True, repeat=2)
    kernels = int(text.split()[0])
    assert text.count("profile: ") == kernels >= 2
    assert "roofline:" in text and "% of the peak 10 GB/s" in text
    assert "furthest from its roof: kernel" in text
    assert np.allclose(y.get(), (x.get() - x.get().mean(0)).sum(1), rtol=1e-4)


def test_peaks_are_measured_once_and_kept_on_disk(queue, tmp_path, monkeypatch):
    monkeypatch.setattr(roofline, "_PEAKS", {})
    monkeypatch.setenv("LAZYARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "1")
    measured = []

    def measure(q):
        measured.append(q)
        return FAKE
    monkeypatch.setattr(roofline, "_measure", measure)
    assert roofline.device_peaks() == FAKE
    assert roofline.device_peaks() == FAKE
    assert len(measured) == 1
    roofline._PEAKS.clear()                 # a new process: read from the disk
    assert roofline.device_peaks() == FAKE and len(measured) == 1
    assert roofline.device_peaks(remeasure=True) == FAKE and len(measured) == 2


def test_peaks_are_measured_on_the_device(queue, monkeypatch):
    monkeypatch.setattr(roofline, "_PEAKS", {})
    monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")
    peaks = roofline.device_peaks()
    assert peaks.bandwidth > 1e8
    assert peaks.flop_rate(np.float32) > 1e8
    assert peaks.flop_rate(np.complex64) == peaks.flop_rate(np.float32)
