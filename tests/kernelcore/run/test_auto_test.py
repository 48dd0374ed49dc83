"""Reference testing: ``lp.auto_test_vs_ref`` checks a transformed kernel against
its untransformed version and times it."""

import numpy as np
import pyopencl as cl
import pytest

import kernelcore as lp
from kernelcore.testing import default_check_result

# keep the timing loop short in tests
FAST = dict(timing_budget=0.01, warmup_rounds=1)


def _elementwise(factor=2, dtype=np.float32, name="scale"):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {factor}*a[i]", name=name)
    return lp.add_dtypes(knl, {"a": dtype})


def _transpose(dtype=np.float32):
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[j,i] = a[i,j]", name="transpose")
    return lp.add_dtypes(knl, {"a": dtype})


def _tiled_transpose(knl):
    knl = lp.split_iname(knl, "j", 16, inner_tag="l.1", outer_tag="g.0")
    return lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.1")


def _assert_timing(result):
    assert result["elapsed_wall"] > 0
    assert result["timing_rounds"] >= 1
    for key in ("elapsed_event", "elapsed_event_marker"):
        assert key in result
        assert result[key] is None or result[key] >= 0
    assert result["elapsed_event"] is not None and result["elapsed_event"] > 0


# {{{ correct transformations pass

@pytest.mark.parametrize("n", [1, 1000, 1027])
def test_split_elementwise_passes(ctx, n, capsys):
    ref = _elementwise()
    test = lp.split_iname(ref, "i", 128, outer_tag="g.0", inner_tag="l.0")
    result = lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": n}, **FAST)
    _assert_timing(result)
    assert result["checked"]
    assert result["ref_elapsed_wall"] > 0
    out = capsys.readouterr().out
    assert "__kernel" in out  # print_code defaults to True
    assert "elapsed:" in out and "ref: elapsed:" in out


@pytest.mark.parametrize("n", [16, 37])
def test_tiled_transpose_passes(ctx, n):
    ref = _transpose()
    result = lp.auto_test_vs_ref(ref, ctx, _tiled_transpose(ref), parameters={"n": n},
                                 quiet=True, **FAST)
    _assert_timing(result)


def test_tiled_transpose_with_prefetch_passes(ctx):
    ref = _transpose(np.float64)
    test = lp.add_prefetch(_tiled_transpose(ref), "a", ["i_inner", "j_inner"])
    result = lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 37}, quiet=True, **FAST)
    _assert_timing(result)


def test_parallel_row_sum_float64_passes(ctx):
    ref = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i] = sum(j, a[i,j])",
                         name="rowsum")
    ref = lp.add_dtypes(ref, {"a": np.float64})
    test = lp.split_iname(ref, "i", 32, outer_tag="g.0", inner_tag="l.0")
    result = lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 70, "m": 33},
                                 quiet=True, **FAST)
    _assert_timing(result)


def test_different_layout_passes(ctx):
    """A test kernel that stores an array in Fortran order gets the same logical data."""
    ref = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[i,j] + i",
                         name="layout")
    ref = lp.add_dtypes(ref, {"a": np.float32})
    test = lp.tag_array_axes(ref, "a", "f,f")
    test = lp.split_iname(test, "i", 8, outer_tag="g.0", inner_tag="l.0")
    lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 19, "m": 5}, quiet=True, **FAST)


def test_in_out_array_checked_after_first_run(ctx):
    """An array both read and written gets random data; timing runs keep updating
    it, but the check uses the first run."""
    ref = lp.make_kernel("{ [i]: 0<=i<n }", "a[i] = a[i] + 1", name="incr")
    ref = lp.add_dtypes(ref, {"a": np.float32})
    test = lp.split_iname(ref, "i", 64, outer_tag="g.0", inner_tag="l.0")
    lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 200}, quiet=True,
                        timing_budget=0.01, warmup_rounds=3)


def test_integer_output_exact(ctx):
    def knl(k):
        knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = a[i] + {k}", name="iadd")
        return lp.add_dtypes(knl, {"a": np.int32})

    ref = knl(1)
    good = lp.split_iname(ref, "i", 16, outer_tag="g.0", inner_tag="l.0")
    lp.auto_test_vs_ref(ref, ctx, good, parameters={"n": 100}, quiet=True, **FAST)
    with pytest.raises(lp.AutomaticTestFailure, match=r"'out'.*100 of 100 entries differ"):
        lp.auto_test_vs_ref(ref, ctx, knl(2), parameters={"n": 100}, quiet=True, **FAST)


def test_scalar_output_compared(ctx):
    def knl(k):
        return lp.make_kernel("{ [i]: 0<=i<10 }", f"out = sum(i, 2*i) + {k}", name="tot")

    lp.auto_test_vs_ref(knl(0), ctx, knl(0), quiet=True, **FAST)
    with pytest.raises(lp.AutomaticTestFailure, match="'out'"):
        lp.auto_test_vs_ref(knl(0), ctx, knl(1), quiet=True, **FAST)


def test_without_test_kernel_only_times(ctx):
    ref = _elementwise()
    result = lp.auto_test_vs_ref(ref, ctx, parameters={"n": 500}, quiet=True, **FAST)
    _assert_timing(result)
    assert not result["checked"]
    assert "ref_elapsed_wall" not in result

# }}}


# {{{ wrong test kernels fail

def test_wrong_factor_fails(ctx):
    ref = _elementwise(2)
    wrong = lp.split_iname(_elementwise(3), "i", 128, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(lp.AutomaticTestFailure) as excinfo:
        lp.auto_test_vs_ref(ref, ctx, wrong, parameters={"n": 1000}, quiet=True, **FAST)
    msg = str(excinfo.value)
    assert "'out'" in msg
    assert "max error" in msg
    assert isinstance(excinfo.value, lp.KernelcoreError)
    assert issubclass(lp.AutomaticTestFailure, lp.LoopyError)


def _skips_last():
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n-1 }", "out[i] = 2*a[i]",
        [lp.GlobalArg("a", np.float32, "n"), lp.GlobalArg("out", np.float32, "n"),
         lp.ValueArg("n", np.int32)], name="scale")
    return lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")


def test_unwritten_last_element_fails(ctx):
    ref = _elementwise()
    with pytest.raises(lp.AutomaticTestFailure,
                       match=r"'out'.*left 1 of 100 entries unwritten.*index 99"):
        lp.auto_test_vs_ref(ref, ctx, _skips_last(), parameters={"n": 100}, quiet=True,
                            **FAST)


def test_unwritten_last_element_fails_without_sentinel(ctx):
    """With fills_entire_output=False outputs start from the same random data; the
    missing last element still differs from the reference's."""
    ref = _elementwise()
    with pytest.raises(lp.AutomaticTestFailure, match=r"'out'.*max error"):
        lp.auto_test_vs_ref(ref, ctx, _skips_last(), parameters={"n": 100}, quiet=True,
                            fills_entire_output=False, **FAST)


def test_partial_output_allowed_when_both_partial(ctx):
    """Both kernels leave the last element alone: fine without the sentinel check
    and by default (as in loopy), reported when the reference is said to fill its
    output."""
    ref = lp.make_kernel(
        "{ [i]: 0<=i<n-1 }", "out[i] = 2*a[i]",
        [lp.GlobalArg("a", np.float32, "n"), lp.GlobalArg("out", np.float32, "n"),
         lp.ValueArg("n", np.int32)], name="scale")
    test = _skips_last()
    lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 100}, quiet=True,
                        fills_entire_output=False, **FAST)
    lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 100}, quiet=True, **FAST)
    with pytest.raises(lp.AutomaticTestFailure, match="reference kernel left 1 of 100"):
        lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": 100}, quiet=True,
                            fills_entire_output=True, **FAST)
    with pytest.raises(lp.AutomaticTestFailure, match="wrote 1 of 100 entries the reference"):
        lp.auto_test_vs_ref(ref, ctx, _elementwise(), parameters={"n": 100}, quiet=True,
                            **FAST)

# }}}


# {{{ options

def test_check_result_hook(ctx):
    calls = []

    def accept_all(result, ref_result):
        calls.append((result.copy(), ref_result.copy()))
        return True, "whatever"

    ref = _elementwise(2)
    wrong = _elementwise(3)
    lp.auto_test_vs_ref(ref, ctx, wrong, parameters={"n": 50}, check_result=accept_all,
                        quiet=True, **FAST)
    assert len(calls) == 1
    result, ref_result = calls[0]
    assert result.shape == ref_result.shape == (50,)
    np.testing.assert_allclose(result, 1.5 * ref_result, rtol=1e-6)

    def reject_all(result, ref_result):
        return False, "rejected by hook"

    with pytest.raises(lp.AutomaticTestFailure, match=r"'out'.*rejected by hook"):
        lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 50}, check_result=reject_all,
                            quiet=True, **FAST)


def test_op_count_rates(ctx, capsys):
    n = 4096
    ref = _elementwise()
    test = lp.split_iname(ref, "i", 128, outer_tag="g.0", inner_tag="l.0")
    result = lp.auto_test_vs_ref(ref, ctx, test, parameters={"n": n},
                                 op_count=[n / 1e9, 2 * 4 * n / 1e9],
                                 op_label=["GFlops", "GB"], print_code=False, **FAST)
    assert set(result["rates"]) == {"GFlops/s", "GB/s"}
    assert result["rates"]["GFlops/s"] == pytest.approx(n / 1e9 / result["elapsed_wall"])
    assert result["rates"]["GB/s"] == pytest.approx(8 * result["rates"]["GFlops/s"])
    assert result["ref_rates"]["GFlops/s"] > 0
    out = capsys.readouterr().out
    assert "GFlops/s" in out and "GB/s" in out
    assert "__kernel" not in out


def test_print_options(ctx, capsys):
    ref = _elementwise()
    lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, print_ref_code=True,
                        print_code=False, **FAST)
    out = capsys.readouterr().out
    assert "Reference code:" in out and "__kernel" in out
    lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, print_ref_code=True,
                        quiet=True, **FAST)
    assert capsys.readouterr().out == ""


def test_timing_grows_until_budget(ctx):
    ref = _elementwise()
    result = lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, quiet=True,
                                 timing_budget=0.05, warmup_rounds=0)
    assert result["timing_rounds"] * result["elapsed_wall"] >= 0.05 or \
        result["timing_rounds"] == 1 << 14
    capped = lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, quiet=True,
                                 timing_budget=10, max_timing_rounds=4)
    assert capped["timing_rounds"] == 4

# }}}


# {{{ errors

def test_missing_dtypes_error(ctx):
    ref = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    with pytest.raises(lp.TypeInferenceFailure, match=r"'a'.*add_dtypes"):
        lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, quiet=True, **FAST)
    with pytest.raises(lp.TypeInferenceFailure, match="test kernel"):
        lp.auto_test_vs_ref(_elementwise(), ctx, ref, parameters={"n": 10}, quiet=True,
                            **FAST)


def test_missing_parameter_error(ctx):
    ref = _elementwise()
    with pytest.raises(lp.KernelcoreError, match=r"shape of 'a'.*parameters"):
        lp.auto_test_vs_ref(ref, ctx, ref, quiet=True, **FAST)


def test_argument_mismatch_error(ctx):
    ref = _elementwise(dtype=np.float32)
    with pytest.raises(lp.KernelcoreError, match="argument 'a' differs"):
        lp.auto_test_vs_ref(ref, ctx, _elementwise(dtype=np.float64),
                            parameters={"n": 10}, quiet=True, **FAST)
    other = lp.add_dtypes(lp.make_kernel("{ [i]: 0<=i<n }", "b[i] = 2*a[i]"),
                          {"a": np.float32})
    with pytest.raises(lp.KernelcoreError, match="different arguments"):
        lp.auto_test_vs_ref(ref, ctx, other, parameters={"n": 10}, quiet=True, **FAST)


def test_blacklisted_reference_vendors(ctx):
    vendors = [p.vendor for p in cl.get_platforms()]
    with pytest.raises(lp.KernelcoreError, match="no device for the reference"):
        lp.auto_test_vs_ref(_elementwise(), ctx, _elementwise(), parameters={"n": 10},
                            blacklist_ref_vendors=vendors, quiet=True, **FAST)


def test_entrypoint_names(ctx):
    ref = _elementwise(name="scale")
    lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, ref_entrypoint="scale",
                        test_entrypoint="scale", quiet=True, **FAST)
    with pytest.raises(lp.KernelcoreError, match="not 'other'"):
        lp.auto_test_vs_ref(ref, ctx, ref, parameters={"n": 10}, ref_entrypoint="other",
                            quiet=True, **FAST)

# }}}


# {{{ default comparison

def test_default_check_result_tolerances(rng):
    ref32 = rng.random(100).astype(np.float32)
    ok, _ = default_check_result(ref32 * np.float32(1 + 1e-6), ref32)
    assert ok
    ok, msg = default_check_result(ref32 * np.float32(1 + 1e-3), ref32)
    assert not ok and "max error" in msg

    ref64 = rng.random(100)
    assert default_check_result(ref64 * (1 + 1e-14), ref64)[0]
    assert not default_check_result(ref64 * (1 + 1e-9), ref64)[0]

    with_nan = ref64.copy()
    with_nan[3] = np.nan
    assert not default_check_result(with_nan, ref64)[0]
    assert default_check_result(with_nan, with_nan.copy())[0]

    ints = rng.integers(0, 10, 20)
    assert default_check_result(ints, ints.copy())[0]
    off = ints.copy()
    off[5] += 1
    ok, msg = default_check_result(off, ints)
    assert not ok and "1 of 20" in msg and "index 5" in msg

# }}}
