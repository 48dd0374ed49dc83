"""Data moved between statements of one work-item needs no global barrier:
when the elements one work-item writes are never those another reads (rows
split among work-groups), kernelcore runs the kernel as one launch; when
they may be, it still asks for a barrier."""

import numpy as np
import pymbolic.primitives as prim
import pytest

import kernelcore as lp
from kernelcore.check_overlap import accesses_may_meet_across
from tests.helpers import host


def _rows(read_row: str):
    knl = lp.make_kernel(
        "{[j, i, i2]: 0<=j<m and 0<=i,i2<8}",
        f"""
        for j
          for i
            z[j, i] = 2*y[j, i] {{id=copy, dep=*}}
          end
          for i2
            y[j, i2] = z[{read_row}, 7 - i2] {{id=back, dep=*copy}}
          end
        end
        """,
        [lp.GlobalArg("y, z", np.float32, shape=("m", 8)), "..."])
    return lp.tag_inames(knl, {"j": "g.0"})


def test_rows_of_their_own_work_group_need_no_barrier(queue):
    knl = _rows("j")
    y = np.arange(40, dtype=np.float32).reshape(5, 8)
    z = np.zeros_like(y)
    _, (y_out, _z_out) = knl(queue, y=y.copy(), z=z)
    np.testing.assert_allclose(host(y_out), 2 * y[:, ::-1])


def test_rows_of_other_work_groups_need_a_barrier():
    with pytest.raises(lp.MissingBarrierError):
        lp.generate_code_v2(lp.add_dtypes(_rows("m - 1 - j"), {"m": np.int32}))


def test_overlap_across_work_items():
    knl = _rows("j").default_entrypoint
    copy, back = knl.id_to_insn["copy"], knl.id_to_insn["back"]
    j, i, i2, m = (prim.Variable(n) for n in ("j", "i", "i2", "m"))
    assert not accesses_may_meet_across(knl, back, (j, i2), copy, (j, i), ["j"])
    assert accesses_may_meet_across(knl, back, (m - 1 - j, i2), copy, (j, i), ["j"])
    # an index that is not affine: assumed to meet
    assert accesses_may_meet_across(knl, back, (j * j, i2), copy, (j, i), ["j"])
