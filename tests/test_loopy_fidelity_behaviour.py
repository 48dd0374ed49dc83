"""Issue 20: behaviour loopy programs rely on: the SCHEDULE section of a
printed linearized kernel, grid sizes as loopy returns them, and the
transformations loopy users reach for."""

import numpy as np

import kernelcore as lp


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def _rotate():
    knl = lp.make_kernel(
        "[n] -> {[i] : 0<=i<n}",
        """
        for i
           <>tmp = arr[i] {id=maketmp,dep=*}
           ... gbarrier {id=bar,dep=*maketmp}
           arr[(i + 1) % n] = tmp {id=rotate,dep=*bar}
        end
        """,
        [lp.GlobalArg("arr", shape=("n",), dtype=np.int32), "..."],
        name="rotate_v2", assumptions="n mod 16 = 0")
    return lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")


def test_printed_linearized_kernel_has_schedule_section():
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(_rotate()))
    text = str(knl)
    sched = text[text.index("SCHEDULE:"):].splitlines()
    assert sched[1] == "   0: CALL KERNEL rotate_v2(extra_args=[], extra_inames=[])"
    assert sched[2].startswith("   1:     tmp = arr[") and sched[2].endswith("{id=maketmp}")
    assert sched[3] == "   2: RETURN FROM KERNEL rotate_v2"
    assert sched[4].startswith("   3: ... gbarrier")
    assert sched[5] == "   4: CALL KERNEL rotate_v2_0(extra_args=[], extra_inames=[])"
    assert sched[6].endswith("= tmp  {id=rotate}")
    assert sched[7] == "   6: RETURN FROM KERNEL rotate_v2_0"

    knl = lp.get_one_scheduled_kernel(lp.save_and_reload_temporaries(knl))
    text = str(knl)
    sched = text[text.index("SCHEDULE:"):]
    assert "CALL KERNEL rotate_v2(extra_args=['tmp_save_slot'], extra_inames=[])" in sched
    assert "{id=tmp.save}" in sched


def test_schedule_nests_loops():
    knl = lp.make_kernel("{[i,j]: 0<=i,j<n}", "out[i] = sum(j, a[i,j])")
    knl = lp.get_one_scheduled_kernel(lp.preprocess_kernel(
        lp.add_dtypes(knl, {"a": np.float32})))
    text = str(knl)
    lines = text[text.index("SCHEDULE:"):].splitlines()
    assert any(line.endswith(": CALL KERNEL loopy_kernel(extra_args=[], extra_inames=[])")
               for line in lines)
    assert any(line.endswith("    for i") for line in lines)
    assert any(line.endswith("        for j") for line in lines)
    assert any(line.endswith("        end j") for line in lines)


def test_grid_size_upper_bounds_as_loopy():
    import islpy as isl
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    glob, loc = knl.get_grid_size_upper_bounds()
    assert all(isinstance(x, isl.PwAff) for x in glob + loc)
    assert str(glob[0]) == "[n] -> { [(floor((127 + n)/128))] }"
    assert str(loc[0]) == "[n] -> { [(128)] }"
    # loopy's signature: the callables table, ignore_auto, return_dict
    g2, l2 = knl.get_grid_size_upper_bounds(None, ignore_auto=True, return_dict=True)
    assert set(g2) == {0} and str(l2[0]) == str(loc[0])
    ge, le = knl.get_grid_size_upper_bounds_as_exprs()
    assert le == (128,)
    from pymbolic import evaluate
    assert evaluate(ge[0], {"n": 1000}) == 8
