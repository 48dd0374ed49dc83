"""loopy's ``with {options}`` blocks (options for every statement inside;
``id_prefix`` names their ids), and rules without arguments in the indices
of assignees (``i := ii + 1``; ``out[i] = ...``)."""

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.diagnostic import ParseError


def _shifted():
    return lp.make_kernel(
        "{[ii]: 0<=ii<n-2}",
        """
        i := ii + 1
        for ii
            with {id_prefix=first}
                <> t[0] = a[i-1]
                t[1] = a[i+1]
            end
            with {id_prefix=second, dep=first*}
                out[i] = t[0] + t[1]
            end
        end
        """)


def test_with_block_ids_and_dependencies():
    knl = _shifted().default_entrypoint
    ids = sorted(i.id for i in knl.instructions)
    assert ids == ["first", "first_0", "second"]
    second = knl.id_to_insn["second"]
    assert {"first", "first_0"} <= second.depends_on


def test_rule_without_arguments_in_an_assignee_index(queue):
    knl = lp.add_dtypes(_shifted(), {"a": np.float32})
    a = np.arange(10, dtype=np.float32)
    out = np.zeros(9, np.float32)       # (written at 1..n-2: its shape is n - 1)
    _, (out,) = knl(queue, a=a, out=out)
    np.testing.assert_allclose(out[1:], a[:-2] + a[2:])


@pytest.mark.parametrize("header", ["with {id=x}", "with", "with {priority=2}"])
def test_malformed_with_blocks(header):
    with pytest.raises(ParseError):
        lp.make_kernel("{[i]: 0<=i<4}", f"{header}\n  out[i] = 1\nend")
