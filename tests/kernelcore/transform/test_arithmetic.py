"""collect_common_factors_on_increment: factors common to the terms added
to an accumulator are applied once where it is read."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def _kernel():
    knl = lp.make_kernel(
        "{[i,j]: 0<=i,j<n}",
        """
        <float32> acc = 0 {id=init, inames=i}
        acc = acc + alpha[i]*a[i,j]*b[j]*b[j] {id=up1, dep=init}
        acc = acc + alpha[i]*a[j,i]*b[j] {id=up2, dep=init, nosync=up1}
        out[i] = acc {dep=up1:up2}
        """)
    return lp.add_and_infer_dtypes(knl, {"a,alpha,b": np.float32})


def test_common_factor_moves_to_the_read(queue):
    knl = lp.collect_common_factors_on_increment(_kernel(), "acc")
    k = knl.default_entrypoint
    # alpha[i] is taken out; b[j] varies in the j loop the read is not in
    assert str(k.id_to_insn["up1"].expression) == "acc + a[i, j]*b[j]*b[j]"
    assert str(k.id_to_insn["up2"].expression) == "acc + a[j, i]*b[j]"
    out_insn = next(i for i in k.instructions if "out" in i.assignee_names())
    assert str(out_insn.expression) == "alpha[i]*acc"
    rng = np.random.default_rng(1)
    a = rng.random((7, 7), dtype=np.float32)
    alpha, b = rng.random(7, dtype=np.float32), rng.random(7, dtype=np.float32)
    _, (out,) = knl(queue, a=a, alpha=alpha, b=b)
    np.testing.assert_allclose(host(out), alpha * (a @ (b * b) + a.T @ b), rtol=1e-5)


def test_no_common_factor_is_an_error():
    knl = lp.make_kernel("{[j]: 0<=j<4}", """
        <float32> acc = 0 {id=init}
        acc = acc + b[j] {id=up, dep=init}
        out[0] = acc {dep=up}
        """)
    with pytest.raises(lp.LoopyError, match="no factor in common"):
        lp.collect_common_factors_on_increment(knl, "acc")
