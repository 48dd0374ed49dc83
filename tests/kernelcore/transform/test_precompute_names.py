"""loopy's keyword names for precompute: ``precompute_outer_inames`` (the
loops the precomputation runs inside) is kernelcore's ``fetch_outer_inames``."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def _diff_kernel():
    knl = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<5}",
        """
        D(i) := a[i+1] - a[i]
        b[i, j] = D(j) * i
        """)
    return lp.add_and_infer_dtypes(knl, {"a": np.float32})


def test_precompute_outer_inames_is_fetch_outer_inames(queue):
    knl = lp.split_iname(_diff_kernel(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.precompute(knl, "D", sweep_inames="j",
                        precompute_outer_inames="i_inner, i_outer", default_tag=None)
    fetch = [insn for insn in knl.default_entrypoint.instructions
             if "D" in str(insn.assignee)]
    assert fetch and {"i_inner", "i_outer"} <= fetch[0].within_inames
    a = np.arange(6, dtype=np.float32) ** 2
    _, (b,) = knl(queue, a=a, n=20)
    expected = np.outer(np.arange(20), np.diff(a)).astype(np.float32)
    np.testing.assert_allclose(host(b), expected)


def test_both_names_refused():
    with pytest.raises(lp.LoopyError, match="not both"):
        lp.precompute(_diff_kernel(), "D", "j", fetch_outer_inames="i",
                      precompute_outer_inames="i")
