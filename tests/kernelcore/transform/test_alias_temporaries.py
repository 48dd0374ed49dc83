"""alias_temporaries: temporaries backed by one piece of storage, used one
after the other; the kernel still computes what NumPy does."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.diagnostic import KernelcoreError
from tests.helpers import host


def _three_local_buffers():
    # each buffer is read reversed, by another work item than the one that wrote it
    knl = lp.make_kernel(
        "{[i, j, k, m]: 0<=i,j,k,m<16}",
        """
        <> t2[i] = 2*a[i]  {id=w2}
        x[j] = t2[15 - j]  {id=r2, dep=w2}
        <> t3[k] = 3*a[k]  {id=w3}
        y[k] = t3[15 - k]  {id=r3, dep=w3}
        <> t4[m] = 4*a[m]  {id=w4}
        z[m] = t4[15 - m]  {id=r4, dep=w4}
        """, [lp.GlobalArg("a", np.float32, shape=(16,)), ...])
    knl = lp.tag_inames(knl, {"i": "l.0", "j": "l.0", "k": "l.0", "m": "l.0"})
    for name in ("t2", "t3", "t4"):
        knl = lp.set_temporary_address_space(knl, name, "local")
    return knl


def test_aliased_local_buffers_match_numpy(queue):
    knl = lp.alias_temporaries(_three_local_buffers(), ["t2", "t3", "t4"])
    entry = knl.default_entrypoint
    bases = {entry.temporary_variables[n].base_storage for n in ("t2", "t3", "t4")}
    assert len(bases) == 1 and None not in bases
    assert {"r2", "w2"} <= entry.id_to_insn["w3"].depends_on
    assert {"r3", "w3"} <= entry.id_to_insn["r4"].depends_on | entry.id_to_insn["w4"].depends_on
    code = lp.generate_code_v2(knl).device_code()
    assert "t3[" not in code and "t4[" not in code  # one allocation
    a = np.arange(16, dtype=np.float32) + 1
    _, (x, y, z) = knl(queue, a=a)
    np.testing.assert_array_equal(host(x), 2 * a[::-1])
    np.testing.assert_array_equal(host(y), 3 * a[::-1])
    np.testing.assert_array_equal(host(z), 4 * a[::-1])


def test_base_name_prefix_and_no_synchronization():
    knl = lp.alias_temporaries(_three_local_buffers(), "t2, t3", base_name_prefix="shared",
                               synchronize_for_exclusive_use=False)
    entry = knl.default_entrypoint
    assert entry.temporary_variables["t2"].base_storage == "shared"
    assert entry.temporary_variables["t3"].base_storage == "shared"
    assert entry.temporary_variables["t4"].base_storage is None
    assert entry.id_to_insn["w3"].depends_on == frozenset()


def test_uses_in_the_wrong_order_are_refused():
    with pytest.raises(KernelcoreError, match="order"):
        lp.alias_temporaries(
            lp.add_dependency(_three_local_buffers(), "id:w2", "id:r3"), ["t2", "t3"])


def test_one_instruction_using_two_aliased_temporaries_is_refused():
    knl = lp.make_kernel("{[i]: 0<=i<4}", "<> s[i] = a[i]\n<> t[i] = s[i]\nout[i] = t[i]",
                         [lp.GlobalArg("a", np.float32, shape=(4,)), ...])
    with pytest.raises(KernelcoreError, match="both"):
        lp.alias_temporaries(knl, ["s", "t"])


def test_unknown_temporary_is_refused():
    with pytest.raises(lp.UnknownNameError):
        lp.alias_temporaries(_three_local_buffers(), ["t2", "nope"])
