"""Operation, memory-access and synchronization statistics.

Follows the tutorial section "Obtaining Performance Statistics": every number
it states is checked, and so is the shape of the printed maps. Beyond the
tutorial, counts of a few small kernels (a reduction over a box, a triangular
domain, a parallel kernel) are compared with an instrumented pure-Python run
of their loops that counts every arithmetic operation and array access it
performs, and the ToCountMap helpers, granularities and options are exercised.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections import Counter

import islpy as isl
import numpy as np
import pymbolic.primitives as prim
import pytest
from pymbolic.mapper.evaluator import EvaluationMapper

import kernelcore as lp
from kernelcore.statistics import CountGranularity as CG
from kernelcore.statistics import count as point_count
from tests.helpers import host

PARAMS = {"n": 256, "m": 256, "l": 8}


# {{{ the tutorial's kernels

def tutorial_kernel():
    knl = lp.make_kernel(
        "[n,m,l] -> {[i,k,j]: 0<=i<n and 0<=k<m and 0<=j<l}",
        """
        c[i, j, k] = a[i,j,k]*b[i,j,k]/3.0+a[i,j,k]
        e[i, k] = g[i,k]*(2+h[i,k+1])
        """)
    return lp.add_and_infer_dtypes(
        knl, dict(a=np.float32, b=np.float32, g=np.float64, h=np.float64))


def stencil_kernel():
    knl = lp.make_kernel(
        "[] -> {[i,k,j]: 0<=i<50 and 1<=k<98 and 0<=j<10}",
        ["""
        c[i,j,k] = 2*a[i,j,k]
        e[i,j,k] = c[i,j,k+1]+c[i,j,k-1]
        """],
        [lp.TemporaryVariable("c", lp.auto, shape=(50, 10, 99)), "..."])
    knl = lp.add_and_infer_dtypes(knl, dict(a=np.int32))
    return lp.split_iname(knl, "k", 128, inner_tag="l.0")


@pytest.fixture(scope="module")
def knl():
    return tutorial_kernel()


@pytest.fixture(scope="module")
def op_map(knl):
    return lp.get_op_map(knl, subgroup_size=32)


@pytest.fixture(scope="module")
def mem_map(knl):
    return lp.get_mem_access_map(knl, subgroup_size=32)

# }}}


# {{{ counting operations

def test_tutorial_op_counts(op_map):
    def ev(dtype, name):
        return op_map[lp.Op(dtype, name, CG.SUBGROUP)].eval_with_dict(PARAMS)

    assert ev(np.float32, "add") == 524288
    assert ev(np.float32, "div") == 524288
    assert ev(np.float32, "mul") == 524288
    assert ev(np.float64, "add") == 65536
    assert ev(np.float64, "mul") == 65536
    assert ev(np.int32, "add") == 65536
    # nothing else is counted (no f64 div, no subtraction key)
    assert len(op_map) == 6
    with pytest.raises(KeyError):       # as in loopy: a missing key is no zero
        ev(np.float64, "div")


def test_tutorial_op_map_printing(op_map):
    text = lp.stringify_stats_mapping(op_map)
    lines = text.split("\n")
    assert text.endswith("\n")
    assert lines[0].startswith("Op(np:dtype('float32'), add, subgroup) : ")
    assert lines[0].endswith("n * m * l : n > 0 and m > 0 and l > 0 }")
    assert lines[1].startswith("Op(np:dtype('float32'), div, subgroup) : ")
    assert lines[5].startswith("Op(np:dtype('int32'), add, subgroup) : ")


def test_tutorial_filter_and_group(op_map):
    assert op_map.filter_by(dtype=[np.float32]).eval_and_sum(PARAMS) == 1572864

    op_map_dtype = op_map.group_by("dtype")
    text = lp.stringify_stats_mapping(op_map_dtype)
    assert text.startswith("Op(np:dtype('float32'), None, None) : ")
    assert "Op(np:dtype('float64'), None, None) : " in text
    assert op_map_dtype[lp.Op(dtype=np.float32)].eval_with_dict(PARAMS) == 1572864
    assert op_map_dtype[lp.Op(dtype=np.float64)].eval_with_dict(PARAMS) == 2 * 65536
    assert "3 * n * m * l" in text

# }}}


# {{{ counting memory accesses

def test_tutorial_mem_counts(mem_map):
    text = lp.stringify_stats_mapping(mem_map)
    assert text.startswith(
        "MemAccess(global, np:dtype('float32'), {}, {}, load, a, subgroup) : ")
    assert text.endswith("\n")

    def ev(dtype, direction, var):
        return mem_map[lp.MemAccess("global", dtype, {}, {}, direction, var,
                                    CG.SUBGROUP)].eval_with_dict(PARAMS)

    assert ev(np.float32, "load", "a") == 1048576
    assert ev(np.float32, "store", "c") == 524288
    assert ev(np.float64, "load", "g") == 65536
    assert ev(np.float64, "store", "e") == 65536
    assert ev(np.float32, "load", "b") == 524288
    assert ev(np.float64, "load", "h") == 65536


def test_tutorial_bytes(mem_map):
    bytes_map = mem_map.to_bytes()
    assert lp.stringify_stats_mapping(bytes_map).startswith(
        "MemAccess(global, np:dtype('float32'), {}, {}, load, a, subgroup) : ")
    global_ld_st_bytes = bytes_map.filter_by(mtype=["global"]).group_by("direction")
    assert lp.stringify_stats_mapping(global_ld_st_bytes).split("\n")[0].startswith(
        "MemAccess(None, None, None, None, load, None, None) : ")
    assert "MemAccess(None, None, None, None, store, None, None) : " in \
        lp.stringify_stats_mapping(global_ld_st_bytes)
    loaded = global_ld_st_bytes[lp.MemAccess(direction="load")].eval_with_dict(PARAMS)
    stored = global_ld_st_bytes[lp.MemAccess(direction="store")].eval_with_dict(PARAMS)
    assert (loaded, stored) == (7340032, 2621440)


@pytest.mark.parametrize("outer_tag,inner_tag,strides", [
    ("l.1", "l.0", {0: 1, 1: 128}),
    ("l.0", "l.1", {0: 128, 1: 1}),
])
def test_tutorial_parallel_strides(knl, outer_tag, inner_tag, strides):
    kp = lp.split_iname(knl, "k", 128, outer_tag=outer_tag, inner_tag=inner_tag)
    mem_map = lp.get_mem_access_map(kp, subgroup_size=32)
    text = lp.stringify_stats_mapping(mem_map)
    s = "{" + ", ".join(f"{k}: {v}" for k, v in strides.items()) + "}"
    expected_lines = [
        f"MemAccess(global, np:dtype('float32'), {s}, {{}}, load, a, workitem) : ",
        f"MemAccess(global, np:dtype('float32'), {s}, {{}}, load, b, workitem) : ",
        f"MemAccess(global, np:dtype('float32'), {s}, {{}}, store, c, workitem) : ",
        f"MemAccess(global, np:dtype('float64'), {s}, {{}}, load, g, workitem) : ",
        f"MemAccess(global, np:dtype('float64'), {s}, {{}}, load, h, workitem) : ",
        f"MemAccess(global, np:dtype('float64'), {s}, {{}}, store, e, workitem) : ",
    ]
    lines = text.split("\n")
    assert len(lines) == 7 and lines[-1] == ""
    for line, start in zip(lines, expected_lines):
        assert line.startswith(start)

    def ev(dtype, direction, var):
        return mem_map[lp.MemAccess("global", dtype, strides, {}, direction, var,
                                    CG.WORKITEM)].eval_with_dict(PARAMS)

    assert ev(np.float32, "load", "a") == 1048576
    assert ev(np.float32, "store", "c") == 524288
    assert ev(np.float64, "load", "g") == 65536
    assert ev(np.float64, "store", "e") == 65536

    def f(key):
        return key.dtype == np.dtype(np.float32) and key.lid_strides[0] > 1

    expected = 2097152 if strides[0] > 1 else 0
    assert mem_map.filter_by_func(f).eval_and_sum(PARAMS) == expected

# }}}


# {{{ counting synchronization

def test_tutorial_sync_launch(knl):
    sync_map = lp.get_synchronization_map(knl)
    assert lp.stringify_stats_mapping(sync_map) == "kernel_launch : { 1 }\n"
    assert sync_map["kernel_launch"].eval_with_dict(PARAMS) == 1


def test_tutorial_sync_barriers():
    knl = stencil_kernel()
    code, _ = lp.generate_code(lp.preprocess_kernel(knl))
    assert "reqd_work_group_size(97, 1, 1)" in code
    assert code.count("barrier(CLK_LOCAL_MEM_FENCE)") == 2
    sync_map = lp.get_synchronization_map(knl)
    assert lp.stringify_stats_mapping(sync_map) == \
        "barrier_local : { 1000 }\nkernel_launch : { 1 }\n"
    assert sync_map["barrier_local"].eval_with_dict({}) == 50 * 10 * 2


def test_sync_global_barrier_two_launches():
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        tmp[i] = 2*x[i]  {id=w}
        ... gbarrier  {id=gb, dep=w}
        y[i] = tmp[i] + 1  {dep=gb}
        """,
        [lp.TemporaryVariable("tmp", np.float32, shape="n",
                              address_space=lp.AddressSpace.GLOBAL), "..."])
    knl = lp.add_and_infer_dtypes(knl, dict(x=np.float32))
    sync = lp.get_synchronization_map(knl)
    assert sync["kernel_launch"].eval_with_dict({"n": 10}) == 2
    assert sync["barrier_global"].eval_with_dict({"n": 10}) == 1
    # a global temporary counts as global memory
    mem = lp.get_mem_access_map(knl, subgroup_size=32)
    per_var = mem.filter_by(variable=["tmp"]).group_by("direction").eval({"n": 10})
    assert per_var[lp.MemAccess(direction="load")] == 10
    assert per_var[lp.MemAccess(direction="store")] == 10

# }}}


# {{{ ToCountMap and Count behaviour

def test_count_map_helpers(op_map, mem_map):
    # missing keys raise KeyError (as in loopy); sum and eval agree with eval_and_sum
    assert lp.Op(np.complex64, "pow", CG.SUBGROUP) not in op_map
    with pytest.raises(KeyError):
        op_map[lp.Op(np.complex64, "pow", CG.SUBGROUP)]
    total = op_map.sum()
    assert total.eval_with_dict(PARAMS) == op_map.eval_and_sum(PARAMS) \
        == 3 * 524288 + 3 * 65536
    evaluated = op_map.eval(PARAMS)
    assert evaluated[lp.Op(np.float32, "add", CG.SUBGROUP)] == 524288
    doubled = op_map + op_map
    assert doubled.eval_and_sum(PARAMS) == 2 * op_map.eval_and_sum(PARAMS)
    assert set(doubled.keys()) == set(op_map.keys())
    # filter_by with several fields / single values
    loads = mem_map.filter_by(direction="load", dtype=[np.float64, np.float32])
    assert loads.eval_and_sum(PARAMS) == 1048576 + 524288 + 2 * 65536
    assert mem_map.filter_by(variable=["zzz"]).eval_and_sum(PARAMS) == 0
    grouped = mem_map.group_by("variable", "direction")
    assert grouped[lp.MemAccess(variable="a", direction="load")].eval_with_dict(
        PARAMS) == 1048576
    with pytest.raises(AttributeError):
        mem_map.group_by("nonsense")
    # keys compare by value and hash consistently
    k1 = lp.MemAccess("global", np.float32, {1: 128, 0: 1}, {}, "load", "a", CG.WORKITEM)
    k2 = lp.MemAccess("global", np.dtype("float32"), {0: 1, 1: 128}, {}, "load", "a",
                      CG.WORKITEM)
    assert k1 == k2 and hash(k1) == hash(k2)
    assert str(k1) == ("MemAccess(global, np:dtype('float32'), {0: 1, 1: 128}, {}, "
                       "load, a, workitem)")
    assert str(lp.Op(np.float32, "add", CG.SUBGROUP)) == \
        "Op(np:dtype('float32'), add, subgroup)"
    with pytest.raises(ValueError):
        lp.Op(np.float32, "add", "per-warp")


def test_count_evaluation_needs_params_and_caches(op_map):
    c = op_map[lp.Op(np.float32, "add", CG.SUBGROUP)]
    assert isinstance(c, lp.Count)
    assert set(c.param_names()) == {"n", "m", "l"}
    with pytest.raises(lp.KernelcoreError):
        c.eval_with_dict({"n": 3})
    assert c.eval_with_dict({"n": 3, "m": 4, "l": 5, "unused": 1}) == 60
    assert c._cache  # evaluations are remembered
    assert c.eval_with_dict({"n": 0, "m": 4, "l": 5}) == 0
    assert (2 * c + 1).eval_with_dict({"n": 3, "m": 4, "l": 5}) == 121


def test_count_within_subscripts_and_redundant_work():
    knl = lp.make_kernel("{[i, j]: 0<=i<n and 0<=j<8}",
                         "out[i, j] = a[2*i + 1, j] * 3")
    knl = lp.add_and_infer_dtypes(knl, dict(a=np.float32))
    p = {"n": 17}
    with_sub = lp.get_op_map(knl, subgroup_size=32).eval(p)
    without = lp.get_op_map(knl, subgroup_size=32, count_within_subscripts=False).eval(p)
    assert with_sub[lp.Op(np.int32, "mul", CG.SUBGROUP)] == 17 * 8
    assert with_sub[lp.Op(np.int32, "add", CG.SUBGROUP)] == 17 * 8
    assert lp.Op(np.int32, "mul", CG.SUBGROUP) not in without
    assert without[lp.Op(np.float32, "mul", CG.SUBGROUP)] == 17 * 8

    # an instruction that uses only the g.0 axis, in a kernel whose grid also
    # has a g.1 axis of 3 groups: redundant work multiplies by 3
    knl2 = lp.make_kernel(["{[i]: 0<=i<n}", "{[q]: 0<=q<3}"],
                          """
                          y[i] = 2*x[i]
                          z[q] = 5*w[q]
                          """)
    knl2 = lp.add_and_infer_dtypes(knl2, dict(x=np.float32, w=np.float64))
    knl2 = lp.tag_inames(knl2, {"i": "g.0", "q": "g.1"})
    # each instruction is repeated along the other axis: intended here
    knl2 = knl2.with_kernel(knl2.default_entrypoint.copy(
        silenced_warnings=frozenset(["write_race"])))
    once = lp.get_op_map(knl2, subgroup_size=32).eval({"n": 10})
    red = lp.get_op_map(knl2, subgroup_size=32, count_redundant_work=True).eval({"n": 10})
    assert once[lp.Op(np.float32, "mul", CG.SUBGROUP)] == 10
    assert red[lp.Op(np.float32, "mul", CG.SUBGROUP)] == 30
    assert once[lp.Op(np.float64, "mul", CG.SUBGROUP)] == 3
    assert red[lp.Op(np.float64, "mul", CG.SUBGROUP)] == 30


def test_subgroup_granularity_with_local_axes():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "y[i] = x[i] + s[0]")
    knl = lp.add_and_infer_dtypes(knl, dict(x=np.float32, s=np.float32))
    knl = lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
    p = {"n": 640}
    ops = lp.get_op_map(knl, subgroup_size=32).eval(p)
    # 10 groups, 2 sub-groups of 32 in each work-group of 64
    assert ops[lp.Op(np.float32, "add", CG.SUBGROUP)] == 20
    mem = lp.get_mem_access_map(knl, subgroup_size=16)
    x_key = lp.MemAccess("global", np.float32, {0: 1}, {0: 64}, "load", "x", CG.WORKITEM)
    s_key = lp.MemAccess("global", np.float32, {}, {}, "load", "s", CG.SUBGROUP)
    assert mem[x_key].eval_with_dict(p) == 640
    # the uniform load of s[0]: once per sub-group, 4 sub-groups per group
    assert mem[s_key].eval_with_dict(p) == 40
    with pytest.raises(ValueError, match="subgroup_size"):
        lp.get_op_map(knl).eval_and_sum(p)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        guessed = lp.get_op_map(knl, subgroup_size="guess")
    assert any("32" in str(x.message) for x in w)
    assert guessed.eval(p)[lp.Op(np.float32, "add", CG.SUBGROUP)] == 20


def test_local_memory_and_misc_ops():
    knl = stencil_kernel()
    mem = lp.get_mem_access_map(knl, subgroup_size=32)
    local = mem.filter_by(mtype=["local"])
    # 500 iterations of (i, j); the work-group of 97 is 4 sub-groups of 32
    assert local[lp.MemAccess("local", np.int32, {0: 1}, {}, "store", "c",
                              CG.SUBGROUP)].eval_with_dict({}) == 500 * 4
    assert local[lp.MemAccess("local", np.int32, {0: 1}, {}, "load", "c",
                              CG.SUBGROUP)].eval_with_dict({}) == 2 * 500 * 4
    glob = mem.filter_by(mtype="global").eval({})
    assert glob[lp.MemAccess("global", np.int32, {0: 1}, {}, "load", "a",
                             CG.WORKITEM)] == 50 * 10 * 97

    k2 = lp.make_kernel("{[i]: 0<=i<n}",
                        """
                        y[i] = x[i] ** 2 + exp(x[i]) - (x[i] - 1) / 4 + max(x[i], 0)
                        q[i] = (u[i] >> 1) | (u[i] & 3) ^ ~u[i]
                        """)
    k2 = lp.add_and_infer_dtypes(k2, dict(x=np.float64, u=np.int32))
    ops = lp.get_op_map(k2, subgroup_size=32).eval({"n": 9})
    f8, i4 = np.float64, np.int32
    assert ops[lp.Op(f8, "pow", CG.SUBGROUP)] == 9
    assert ops[lp.Op(f8, "func:exp", CG.SUBGROUP)] == 9
    assert ops[lp.Op(f8, "add", CG.SUBGROUP)] == 4 * 9
    assert ops[lp.Op(f8, "div", CG.SUBGROUP)] == 9
    assert ops[lp.Op(f8, "mul", CG.SUBGROUP)] == 0
    assert ops[lp.Op(i4, "shift", CG.SUBGROUP)] == 9
    assert ops[lp.Op(i4, "bw", CG.SUBGROUP)] == 4 * 9

# }}}


# {{{ brute-force cross-check: an instrumented Python run of the loops

class Tracked:
    """A value of a known dtype whose arithmetic is recorded in a counter."""

    def __init__(self, log, dtype, weak=False):
        self.log, self.dtype, self.weak = log, np.dtype(dtype), weak

    def _result(self, other, true_div=False):
        if isinstance(other, Tracked):
            if self.weak and not other.weak:
                dt, weak = other.dtype, False
            elif other.weak and not self.weak:
                dt, weak = self.dtype, False
            else:
                dt, weak = np.result_type(self.dtype, other.dtype), self.weak
        else:
            value = {"b": True, "i": 0, "u": 0, "f": 0.0, "c": 0j}[self.dtype.kind] \
                if self.weak else None
            if self.weak:
                dt = np.result_type(value, other)
                dt = np.dtype(np.int32) if dt.kind in "iu" else dt
            else:
                dt = np.result_type(self.dtype, other)
            weak = self.weak
        if true_div and dt.kind in "biu":
            dt = np.dtype(np.float64)
        return dt, weak

    def _op(self, other, name, true_div=False):
        dt, weak = self._result(other, true_div)
        self.log[(dt, name)] += 1
        return Tracked(self.log, dt, weak)

    def __add__(self, other):
        return self._op(other, "add")

    __radd__ = __add__

    def __mul__(self, other):
        if not isinstance(other, Tracked) and other == -1:
            return self          # negation is free
        return self._op(other, "mul")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._op(other, "div", true_div=True)

    def __rtruediv__(self, other):
        return self._op(other, "div", true_div=True)

    def __pow__(self, other):
        return self._op(other, "pow")


class Instrumented(EvaluationMapper):
    """Evaluate instruction expressions on Tracked values, recording array
    loads and stores by variable name."""

    def __init__(self, knl, env, ops, accesses):
        super().__init__(env)
        self.knl, self.ops, self.accesses = knl, ops, accesses
        self.arrays = {a.name: a.dtype for a in knl.args if hasattr(a, "shape")}

    def map_constant(self, expr):
        if isinstance(expr, np.generic):
            return Tracked(self.ops, expr.dtype)
        return expr

    def map_sum(self, expr):
        return functools.reduce(operator.add, [self.rec(c) for c in expr.children])

    def map_product(self, expr):
        return functools.reduce(operator.mul, [self.rec(c) for c in expr.children])

    def map_subscript(self, expr):
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        for i in idx:
            self.rec(i)
        self.accesses[(expr.aggregate.name, "load")] += 1
        return Tracked(self.ops, self.arrays[expr.aggregate.name])

    def map_call(self, expr):
        args = [self.rec(p) for p in expr.parameters]
        dt = args[0].dtype if args[0].dtype.kind == "f" else np.dtype(np.float64)
        self.ops[(dt, "func:" + expr.function.name)] += 1
        return Tracked(self.ops, dt)

    def store(self, assignee, value):
        if isinstance(assignee, prim.Subscript):
            idx = assignee.index if isinstance(assignee.index, tuple) \
                else (assignee.index,)
            for i in idx:
                self.rec(i)
            self.accesses[(assignee.aggregate.name, "store")] += 1
        else:
            self.context[assignee.name] = value


def brute_force(knl, params, ranges, order):
    """Run every instruction of the preprocessed *knl* over nested Python loops
    (``ranges[iname](env) -> iterable``, nested in *order*) and count."""
    pknl = lp.preprocess_kernel(knl)
    ops, accesses = Counter(), Counter()
    for insn in pknl.instructions:
        inames = [i for i in order if i in insn.within_inames]

        def loop(env, rest):
            if not rest:
                yield env
                return
            for v in ranges[rest[0]](env):
                yield from loop({**env, rest[0]: v}, rest[1:])

        for env in loop(dict(params), inames):
            ctx = {k: Tracked(ops, np.int32, weak=True) for k in list(env)}
            for tv, t in pknl.temporary_variables.items():
                ctx[tv] = Tracked(ops, t.dtype)
            mapper = Instrumented(pknl, ctx, ops, accesses)
            mapper.store(insn.assignee, mapper.rec(insn.expression))
    return ops, accesses


def stats_by(knl, params, subgroup_size=32):
    """Exact counts (not loopy's estimate without barvinok)."""
    ops = lp.get_op_map(knl, subgroup_size=subgroup_size, exact_counts=True)
    ops = {(k.dtype, k.name): v for k, v in ops.eval(params).items() if v}
    mem = lp.get_mem_access_map(knl, subgroup_size=subgroup_size,
                                exact_counts=True).filter_by(
        mtype="global").group_by("variable", "direction").eval(params)
    mem = {(k.variable, k.direction): v for k, v in mem.items() if v}
    return ops, mem


def reduction_kernel():
    knl = lp.make_kernel(
        ["{[i, j]: 0<=i<n and 0<=j<m}", "{[k]: 0<=k<p}"],
        """
        out[i, j] = sum(k, a[i, k] * b[k, j] - 2*a[i, k])
        y[i] = 3*x[2*i + 1]**2 + sin(x[i]) / (x[i] + 1)
        """)
    return lp.add_and_infer_dtypes(knl, dict(a=np.float32, b=np.float32, x=np.float64))


def triangular_kernel():
    knl = lp.make_kernel(
        ["{[i]: 0<=i<n}", "{[j]: 0<=j<=i}"],
        """
        s[i] = sum(j, L[i, j]*v[j]) - v[i]/2
        t[i] = sum(j, L[i, j] + i*j)
        """,
        [lp.GlobalArg("L", np.float64, shape="n, n"), "..."])
    return lp.add_and_infer_dtypes(knl, dict(v=np.float64))


@pytest.mark.parametrize("params", [
    {"n": 3, "m": 4, "p": 5}, {"n": 7, "m": 2, "p": 11}, {"n": 1, "m": 9, "p": 1}])
def test_brute_force_reduction(params):
    knl = reduction_kernel()
    ranges = {"i": lambda e: range(e["n"]), "j": lambda e: range(e["m"]),
              "k": lambda e: range(e["p"])}
    ops, acc = brute_force(knl, params, ranges, ["i", "j", "k"])
    got_ops, got_mem = stats_by(knl, params)
    assert got_ops == dict(ops)
    assert got_mem == dict(acc)
    assert got_ops[(np.dtype(np.float64), "func:sin")] == params["n"]


@pytest.mark.parametrize("n", [1, 5, 13])
def test_brute_force_triangular(n):
    knl = triangular_kernel()
    ranges = {"i": lambda e: range(e["n"]), "j": lambda e: range(e["i"] + 1)}
    ops, acc = brute_force(knl, {"n": n}, ranges, ["i", "j"])
    got_ops, got_mem = stats_by(knl, {"n": n})
    assert got_ops == dict(ops)
    assert got_mem == dict(acc)
    assert got_mem[("L", "load")] == n * (n + 1)


@pytest.mark.parametrize("n", [64, 100, 7])
def test_brute_force_parallel(n):
    """Per-work-item memory counts of a split, g.0/l.0-tagged kernel equal the
    loop run; its operations are per sub-group (one per group of 32 here)."""
    knl = lp.make_kernel("{[i]: 0<=i<n}", "y[i] = 2*x[i] + x[i + 1]*x[i]")
    knl = lp.add_and_infer_dtypes(knl, dict(x=np.float32))
    ref_ops, ref_acc = brute_force(knl, {"n": n}, {"i": lambda e: range(e["n"])}, ["i"])
    kp = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    mem = lp.get_mem_access_map(kp, subgroup_size=32, exact_counts=True)
    for key in mem:
        assert key.count_granularity == CG.WORKITEM
        assert key.lid_strides == {0: 1} and key.gid_strides == {0: 32}
    got = mem.group_by("variable", "direction").eval({"n": n})
    assert {(k.variable, k.direction): v for k, v in got.items()} == dict(ref_acc)
    ops = lp.get_op_map(kp, subgroup_size=32, exact_counts=True).eval({"n": n})
    groups = -(-n // 32)
    for (dtype, name), count in ref_ops.items():
        if dtype == np.float32:
            per_item = count // n
            assert ops[lp.Op(dtype, name, CG.SUBGROUP)] == per_item * groups


def test_brute_force_random_boxes():
    """Random extents of a 3-deep box with an inner reduction."""
    rng = np.random.default_rng(7)
    knl = lp.make_kernel(
        ["{[i, j]: 0<=i<n and 0<=j<m}", "{[k]: 0<=k<p}"],
        "z[i, j] = sum(k, a[i, k]*b[k, j] + 1.5) / (1 + c[j])")
    knl = lp.add_and_infer_dtypes(knl, dict(a=np.float32, b=np.float32, c=np.float32))
    ranges = {"i": lambda e: range(e["n"]), "j": lambda e: range(e["m"]),
              "k": lambda e: range(e["p"])}
    op_map = lp.get_op_map(knl, subgroup_size=32)
    for _ in range(3):
        params = {name: int(rng.integers(1, 9)) for name in "nmp"}
        ops, acc = brute_force(knl, params, ranges, ["i", "j", "k"])
        got = {(k.dtype, k.name): v for k, v in op_map.eval(params).items() if v}
        assert got == dict(ops)
        _, got_mem = stats_by(knl, params)
        assert got_mem == dict(acc)

# }}}


# {{{ counting the points of large sets

@pytest.mark.parametrize("text", [
    "{[g, h, l, m]: 0<=g<32 and 0<=h<2 and 0<=l<16 and 0<=m<4 and 128g+64h+4l+m<=4000}",
    "{[i, j]: 0<=i<300 and 0<=j<=i}",
    "{[i, j]: (0<=i<3000 and 0<=j<5) or (10<=i<20 and 0<=j<3000)}",
    "{[i, j]: 0<=i<300 and 0<=j<300 and (i + j) mod 7 = 0}",
    "{[i, j, k]: 0<=i<40 and 0<=j<40 and 0<=k<40 and i + j + k <= 50 and k mod 2 = 1}",
    "{[i]: 5<=i<5}",
])
def test_point_counts_equal_enumeration(text):
    import islpy as isl

    from kernelcore.statistics.counts import count_points
    s = isl.Set(text)
    assert count_points(s) == s.count_val().to_python()


def test_loopy_estimate_without_barvinok():
    """Without barvinok loopy counts a non-box domain by its bounding box (and
    kernelcore by default too); a box is counted exactly either way."""
    knl = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<m and i<j}", "a[i, j] = b[i,j] * 2",
                         assumptions="n,m >= 1")
    knl = lp.add_and_infer_dtypes(knl, {"b": np.float64})
    params = {"m": 13, "n": 200}
    exact = sum(1 for i in range(200) for j in range(13) if i < j)
    for flag, expected in ((True, exact), (False, 12 * 12)):
        ops = lp.get_op_map(knl, subgroup_size=32, exact_counts=flag)
        assert ops.filter_by(name=["mul"]).eval_and_sum(params) == expected
    default = lp.get_op_map(knl, subgroup_size=32).filter_by(name=["mul"])
    estimated = not hasattr(isl.BasicSet, "card")
    assert default.eval_and_sum(params) == (12 * 12 if estimated else exact)
    box = lp.add_and_infer_dtypes(lp.make_kernel("{[i]: 0<=i<n}", "a[i] = b[i] * 2"),
                                  {"b": np.float64})
    assert lp.get_op_map(box, subgroup_size=32, exact_counts=False).filter_by(
        name=["mul"]).eval_and_sum({"n": 7}) == 7


def test_access_footprints_and_their_counts():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "c[2*i] = a[i] + a[i + 1]",
                         assumptions="n >= 1")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    fp = lp.gather_access_footprints(knl)
    assert set(fp) == {("c", "write"), ("a", "read")}
    assert point_count(knl, fp["a", "read"]).eval_with_dict({"n": 50}) == 51
    # stride 2: the estimate divides the bounding box by it
    assert point_count(knl, fp["c", "write"]).eval_with_dict({"n": 50}) == 50
    assert point_count(knl, fp["c", "write"].remove_divs()).eval_with_dict({"n": 50}) == 99
    # a data-dependent index has no footprint
    indirect = lp.add_and_infer_dtypes(lp.make_kernel("{[i]: 0<=i<n}", "c[i] = a[idx[i]]"),
                                       {"a": np.float32, "idx": np.int32})
    with pytest.raises(lp.LoopyError, match="failed to gather footprint"):
        lp.gather_access_footprints(indirect)
    assert set(lp.gather_access_footprints(indirect, ignore_uncountable=True)) == {
        ("c", "write"), ("idx", "read")}


def test_counts_of_a_4096_cube_of_tiled_iterations_are_exact():
    """A 4000^3 product in 128-wide tiles (a tile guard in every loop) is
    counted exactly; enumerating its 6.4e10 points took hours."""
    n = 4000
    knl = lp.make_kernel(f"{{[i, j, k]: 0<=i, j, k<{n}}}", "c[i, j] = sum(k, a[i, k]*b[k, j])")
    knl = lp.add_and_infer_dtypes(knl, dict(a=np.float32, b=np.float32))
    for name, tag in (("i", 1), ("j", 0)):
        knl = lp.split_iname(knl, name, 128, outer_tag=f"g.{tag}")
        knl = lp.split_iname(knl, f"{name}_inner", 16, outer_tag="ilp", inner_tag=f"l.{tag}")
    ops = lp.get_op_map(knl, subgroup_size=32, count_redundant_work=True,
                        exact_counts=True).eval({})
    per_subgroup = {k.name: v for k, v in ops.items() if k.dtype == np.float32}
    # (each work-item does its multiply-adds; a sub-group of 32 counts once)
    assert per_subgroup["mul"] * 32 == per_subgroup["add"] * 32 == n ** 3

# }}}


def test_work_group_size_of_a_parameter():
    """A local axis as long as a parameter: per-work-item counts need no
    constant work-group size, per-sub-group ones do (as in loopy)."""
    knl = lp.make_kernel("{[i, k]: 0<=i<n and 0<=k<m}", "e[i, k] = 2*g[i, k]",
                         assumptions="n,m >= 1")
    knl = lp.add_and_infer_dtypes(knl, {"g": np.float64})
    knl = lp.tag_inames(knl, {"k": "l.0", "i": "g.0"})
    mem = lp.get_mem_access_map(knl, count_redundant_work=True, subgroup_size=32)
    loads = mem.filter_by(direction=["load"], variable=["g"])
    assert loads.eval_and_sum({"n": 5, "m": 7}) == 35
    with pytest.raises(lp.LoopyError, match="not a constant"):
        lp.get_op_map(knl, subgroup_size=32).eval_and_sum({"n": 5, "m": 7})


def test_tagged_variables_in_mem_access_keys(queue):
    """``a$tag`` tags a variable: the kernel runs as without tags, and its
    accesses are counted under keys with those tags (as in loopy)."""
    knl = lp.make_kernel("{[i, k]: 0<=i<8 and 0<=k<4}",
                         "c$res[i] = sum(k, a$ld[i, k]*b[k])", name="mv")
    knl = lp.add_and_infer_dtypes(knl, {"a, b": np.float32})
    mem = lp.get_mem_access_map(knl, subgroup_size=32)
    tags = {k.variable: k.variable_tags for k in mem}
    assert tags["a"] == {lp.LegacyStringInstructionTag("ld")}
    assert tags["c"] == {lp.LegacyStringInstructionTag("res")}
    assert tags["b"] is None
    rng = np.random.default_rng(2)
    a, b = rng.random((8, 4), np.float32), rng.random(4, np.float32)
    _, (c,) = knl(queue, a=a, b=b)
    np.testing.assert_allclose(host(c), a @ b, rtol=1e-5)
