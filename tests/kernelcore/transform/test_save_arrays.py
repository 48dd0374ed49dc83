"""save_and_reload_temporaries with arrays: a local array is kept per
work-group, a private array per work-item, across a global barrier; the
kernels compute what NumPy does."""

from __future__ import annotations

import warnings

import numpy as np

import kernelcore as lp


def _run(queue, knl):
    knl = lp.save_and_reload_temporaries(knl)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no write race is reported
        _, (out,) = knl(queue, out_host=True)
    return knl, out


def test_local_array_survives_a_global_barrier(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<8 }", """
        for i, j
            <>t[2*j] = j + 10*i
            t[2*j+1] = j
            ... gbarrier
            out[i, j] = t[2*(7-j)] + 3*t[2*j+1]
        end
        """, seq_dependencies=True)
    knl = lp.set_temporary_address_space(knl, "t", "local")
    knl = lp.tag_inames(knl, {"i": "g.0", "j": "l.0"})
    knl, out = _run(queue, knl)
    # one copy per work-group (8 groups of 16 elements)
    assert knl.default_entrypoint.temporary_variables["t_save_slot"].shape == (8, 16)
    i, j = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(out, (7 - j) + 10 * i + 3 * j)


def test_private_array_survives_a_global_barrier(queue):
    knl = lp.make_kernel(["{ [i]: 0<=i<6 }", "{ [k, m]: 0<=k,m<3 }"], """
        for i
            for k
                <>p[k] = i*i + k   {id=w}
            end
            ... gbarrier {id=g, dep=w}
            for m
                out[i, m] = p[2 - m]  {dep=g}
            end
        end
        """)
    knl = lp.tag_inames(knl, {"i": "g.0"})
    knl = lp.set_temporary_address_space(knl, "p", "private")
    knl, out = _run(queue, knl)
    assert knl.default_entrypoint.temporary_variables["p_save_slot"].shape == (6, 3)
    i, m = np.meshgrid(np.arange(6), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(out, i * i + 2 - m)
