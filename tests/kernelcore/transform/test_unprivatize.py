"""unprivatize_temporaries_with_inames: a private temporary loses the axis a
loop indexes it with (the loop's iterations then share one copy); the
kernel still computes what NumPy does."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim
import pytest

import kernelcore as lp
from tests.helpers import host


def _matvec(acc_index):
    return lp.make_kernel(
        ["{[i]: 0<=i<6}", "{[m]: 0<=m<4}", "{[k]: 0<=k<5}"],
        f"""
        for m, i
            <> acc{acc_index} = 0
            for k
                acc{acc_index} = acc{acc_index} + a[m, i, k] * vec[k]
            end
            out[m, i] = acc{acc_index}
        end
        """, [lp.GlobalArg("a", np.float64, shape=(4, 6, 5)),
              lp.GlobalArg("vec", np.float64, shape=(5,)), ...],
        seq_dependencies=True)


def test_unprivatize_drops_the_axis_and_keeps_results(queue):
    knl = lp.unprivatize_temporaries_with_inames(_matvec("[m]"), {"m"}, {"acc"})
    entry = knl.default_entrypoint
    assert entry.temporary_variables["acc"].shape == ()
    assert all("acc[" not in str(insn) for insn in entry.instructions)
    rng = np.random.default_rng(5)
    a, vec = rng.random((4, 6, 5)), rng.random(5)
    _, (out,) = knl(queue, a=a, vec=vec)
    np.testing.assert_allclose(host(out), a @ vec)


def test_unprivatize_keeps_other_axes():
    knl = lp.unprivatize_temporaries_with_inames(_matvec("[m, i]"), "m")
    assert knl.default_entrypoint.temporary_variables["acc"].shape in ((6,), lp.auto)
    text = str(knl.default_entrypoint)
    assert "acc[i]" in text and "acc[m" not in text


def test_unprivatize_refuses_inconsistent_axes():
    knl = lp.make_kernel(
        "{[i, j, k]: 0<=i, j<4 and 0<=k<3}",
        """
        <> t[i, j] = 0 {id=init}
        t[j, i] = t[i, j] + k {id=upd, dep=init}
        out[i, j] = t[i, j] {dep=upd}
        """)
    with pytest.raises(lp.LoopyError, match="one and the same axis"):
        lp.unprivatize_temporaries_with_inames(knl, {"i"}, {"t"})


def test_privatize_and_unprivatize_give_equal_kernels():
    """Kernels compare structurally (as in loopy): privatizing and
    unprivatizing give the kernels written that way by hand."""
    domains = ["{[i]: 0<=i<10}", "{[imatrix]: 0<=imatrix<20}", "{[k]: 0<=k<30}"]
    source = """
        for imatrix, i
            <> acc[imatrix] = 0
            for k
                acc[imatrix] = acc[imatrix] + a[imatrix, i, k] * vec[k]
            end
        end
        """
    private = lp.make_kernel(domains, source, name="rt", seq_dependencies=True)
    shared = lp.make_kernel(domains, source.replace("acc[imatrix]", "acc"), name="rt",
                            seq_dependencies=True)
    assert private != shared
    assert lp.unprivatize_temporaries_with_inames(private, {"imatrix"}, {"acc"}) == shared
    assert lp.privatize_temporaries_with_inames(shared, {"imatrix"}, {"acc"}) == private
    assert shared.default_entrypoint == shared.default_entrypoint.copy()
    assert shared.default_entrypoint != private.default_entrypoint


def test_privatize_over_a_loop_of_parameter_length(queue):
    """A loop of parametric length gives the temporary a parametric axis (as in
    loopy); in global memory the kernel runs."""
    knl = lp.make_kernel("{[i]: 0<=i<n}", """
        <> t = 2*a[i] {id=w}
        out[i] = t + 1 {dep=w}
        """)
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float64})
    knl = lp.privatize_temporaries_with_inames(knl, "i", "t")
    assert knl.default_entrypoint.temporary_variables["t"].shape == (prim.Variable("n"),)
    knl = lp.set_temporary_address_space(knl, "t", "global")
    a = np.arange(7.0)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), 2 * a + 1)
