"""TF32 rounding (kernelcore's ``round_tf32``) and the tensor-core product's
kernel: rounding bit-exact against NumPy's model of ``cvt.rna.tf32.f32`` on
the OpenCL and C targets; the kernel's tiling and PTX as designed (it runs on
NVIDIA GPUs only: ``benchmarks/ab_sgemm_gpu.py tf32`` checks its values)."""

import numpy as np
import pytest

import kernelcore as lp
from lazyarray.lower.tensorcore import (
    BK, BM, BN, THREADS, round_tf32, tensor_core_shapes, tf32_kernel)


def _values() -> np.ndarray:
    rng = np.random.default_rng(0)
    spread = (rng.standard_normal(20000) * 10.0 ** rng.uniform(-40, 38, 20000))
    bits = rng.integers(0, 2 ** 32, 5000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38, 1e-45,
               1 + 2 ** -11, 1 + 2 ** -12, -(1 + 2 ** -11), 1 + 3 * 2 ** -12]
    with np.errstate(over="ignore"):
        return np.concatenate([spread.astype(np.float32), bits, np.float32(special)])


def test_numpy_model_rounds_to_ten_mantissa_bits_ties_away():
    x = np.float32([1 + 2 ** -11, -(1 + 2 ** -11), 1 + 2 ** -12, 1 + 3 * 2 ** -11, 3.4028235e38])
    np.testing.assert_array_equal(
        round_tf32(x), np.float32([1 + 2 ** -10, -(1 + 2 ** -10), 1, 1 + 2 ** -9, np.inf]))
    y = round_tf32(_values())
    finite = np.isfinite(y)
    assert not (y[finite].view(np.uint32) & 0x1FFF).any()
    assert np.isnan(round_tf32(np.float32([np.nan]))).all()


@pytest.mark.parametrize("target", ["opencl", "c"])
def test_round_tf32_is_bit_exact(queue, target):
    args = [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("out", np.float32, shape="n"),
            lp.ValueArg("n", np.int32)]
    extra = {"target": lp.ExecutableCTarget()} if target == "c" else {}
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = round_tf32(a[i])", args, **extra)
    a = _values()
    _, (out,) = knl(queue if target == "opencl" else None, a=a, n=np.int32(a.size))
    ref = round_tf32(a)
    nan = np.isnan(a)
    np.testing.assert_array_equal(out.view(np.uint32)[~nan], ref.view(np.uint32)[~nan])
    assert np.isnan(out[nan]).all()


def test_round_tf32_takes_float32_only():
    knl = lp.make_kernel("{[i]: 0 <= i < 4}", "out[i] = round_tf32(a[i])",
                         [lp.GlobalArg("a", np.float64, shape=(4,)),
                          lp.GlobalArg("out", np.float64, shape=(4,))])
    with pytest.raises(lp.KernelcoreError, match="round_tf32.*float32"):
        lp.generate_code_v2(knl)


def test_tensor_core_kernel_tiles_and_instructions():
    assert tensor_core_shapes(256, 384, 64) and not tensor_core_shapes(256, 384, 40)
    knl = tf32_kernel(256, 384, 64)
    code = lp.generate_code_v2(knl).device_code()
    assert f"reqd_work_group_size({THREADS}, 1, 1)" in code
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in code
    assert "cvt.rna.tf32.f32" in code
    # one group per BM x BN block of the result
    assert knl.get_grid_size_upper_bounds_as_exprs()[0] == (384 // BN, 256 // BM)
    assert f"k0 < 64; k0 += {BK}" in code
