"""Issue 40: loopy's forms that its own test-suite uses, each checked against kernelcore
(and, where a kernel runs, against NumPy)."""

import importlib
import sys

import islpy as isl
import numpy as np
import pymbolic as pmbl
import pytest

import kernelcore as lp
from tests.helpers import ROOT, host


@pytest.mark.parametrize("name", ["diagnostic", "kernel", "match", "options", "schedule",
                                  "statistics", "symbolic", "target", "transform",
                                  "translation_unit", "types", "version"])
def test_submodules_are_package_attributes(name):
    assert getattr(lp, name) is importlib.import_module(f"kernelcore.{name}")


def test_symbolic_names_through_attribute():
    class HasFloorDiv(lp.symbolic.CombineMapper):
        def combine(self, values):
            return any(values)

        def map_floor_div(self, expr):
            return True

        def map_variable(self, expr):
            return False

        def map_constant(self, expr):
            return False

    assert HasFloorDiv()(lp.symbolic.parse("a // 2 + b"))
    assert not HasFloorDiv()(lp.symbolic.parse("a / 2"))
    assert issubclass(lp.diagnostic.ReductionIsNotTriangularError, lp.LoopyError)


def test_loopy_suite_alias_maps_submodules(monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import loopy_suite
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    loopy_suite.install_alias()
    try:
        assert importlib.import_module("loopy") is lp
        assert importlib.import_module("loopy.symbolic") is lp.symbolic
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("loopy.no_such_module")
    finally:
        for name in [n for n in sys.modules if n == "loopy" or n.startswith("loopy.")]:
            del sys.modules[name]


def test_c_kernel_runs_without_queue():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]",
                         [lp.GlobalArg("out", np.float32, shape=lp.auto),
                          lp.GlobalArg("a", np.float32, shape=lp.auto), "..."],
                         target=lp.ExecutableCTarget())
    a = np.arange(16, dtype=np.float32)
    _, (out,) = knl(a=a)
    assert np.array_equal(out, 2 * a)


def test_undeclared_domain_parameter_is_an_argument_to_fix():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "a[i] = 3*i",
                         [lp.GlobalArg("a", shape=(10,), dtype=np.int32)])
    assert knl.default_entrypoint.arg_dict["n"].name == "n"
    _, (a,) = lp.fix_parameters(knl, n=10)(a=np.zeros(10, dtype=np.int32))
    assert np.array_equal(a, 3 * np.arange(10))
    with pytest.raises(lp.LoopyError, match="undeclared variable"):
        lp.make_kernel("{[i]: 0 <= i < 4}", "a[i] = b[i]",
                       [lp.GlobalArg("a", shape=(4,), dtype=np.int32)])


def test_make_kernel_loopy_keywords():
    from pytools.tag import Tag

    class Mark(Tag):
        pass

    knl = lp.make_kernel("[n] -> {[i, j]: 0 <= i, j < n}", "out[i, j] = a[i, j] + 1",
                         loop_priority=frozenset({("j", "i")}), default_order="F",
                         default_offset=lp.auto, fixed_parameters={"n": 3},
                         tags=frozenset({Mark()}))
    k = knl.default_entrypoint
    assert k.loop_priority == (("j", "i"),)
    assert k.tags == frozenset({Mark()})
    assert "n" not in k.all_params()
    assert k.arg_dict["a"].order == "F"
    assert k.without_tags(Mark()).tags == frozenset()
    with pytest.raises(ValueError):
        k.without_tags(Mark()).without_tags(Mark())
    a = np.asfortranarray(np.arange(9.0).reshape(3, 3))
    _, (out,) = knl(a=a)
    assert np.array_equal(out, a + 1)
    with pytest.raises(lp.LoopyError, match="default_offset"):
        lp.make_kernel("{[i]: 0<=i<3}", "out[i] = 1", default_offset=4)


def test_fixed_parameters_size_temporaries():
    knl = lp.make_kernel("[n] -> {[i]: 0 <= i < n}",
                         """
                         <>tmp[i] = i  {id=init}
                         out[i] = 2*tmp[i]  {dep=init}
                         """, fixed_parameters={"n": 5})
    assert knl.default_entrypoint.temporary_variables["tmp"].shape == (5,)
    _, (out,) = knl()
    assert np.array_equal(out, 2 * np.arange(5))
    _, results = lp.make_kernel("{[i]: 0 <= i < 1}", "<>t[i] = i")()
    assert results == ()


def test_positional_instruction_constructors():
    insns = [lp.Assignment("t[i]", "2*a[i]", temp_var_type=lp.Optional(None)),
             lp.NoOpInstruction("mark", depends_on="insn"),
             lp.Assignment("out[i]", "t[i] + 1", "last", "mark")]
    knl = lp.make_kernel("{[i]: 0 <= i < 6}", insns)
    k = knl.default_entrypoint
    assert [i.id for i in k.instructions] == ["insn", "mark", "last"]
    assert k.id_to_insn["last"].within_inames == frozenset({"i"})
    a = np.arange(6.0)
    _, (out,) = knl(a=a)
    assert np.array_equal(out, 2 * a + 1)
    call = lp.CallInstruction("(x, y)", "f(1)")
    assert len(call.assignees) == 2 and call.copy(id="c").id == "c"
    fixed = lp.Assignment("s", 0, within_inames=frozenset(), within_inames_is_final=True)
    assert fixed.within_inames_is_final


def test_reduction_loopy_forms():
    from pymbolic import var
    red = lp.Reduction("sum", "k", var("a")[var("k"), var("i")], allow_simultaneous=True)
    assert red.inames == ("k",)
    knl = lp.make_kernel("{[i, k]: 0 <= i < 3 and 0 <= k < 4}",
                         [lp.Assignment(var("out")[var("i")], red)])
    a = np.arange(12.0).reshape(4, 3)
    _, (out,) = knl(a=a)
    assert np.allclose(out, a.sum(axis=0))


def test_instruction_option_dup():
    knl = lp.make_kernel("{[i, j]: 0 <= i, j < 4}",
                         """
                         for j
                           <> t[i] = a[i]  {id=w, dup=i}
                           out[j, i] = t[i] + j  {dep=w, dup=i->i2}
                         end
                         """)
    k = knl.default_entrypoint
    assert k.id_to_insn["insn"].within_inames == frozenset({"j", "i2"})
    assert "i" not in k.id_to_insn["w"].within_inames
    a = np.arange(4.0)
    _, (out,) = knl(a=a)
    assert np.array_equal(out, a[None, :] + np.arange(4)[:, None])


@pytest.mark.parametrize("target", [None, lp.ExecutableCTarget()])
def test_out_host(target):
    import pyopencl.array as cla
    knl = lp.make_kernel("{[i]: 0 <= i < 5}", "out[i] = 3*i", target=target)
    _, (out,) = knl(None, out_host=True)
    assert isinstance(out, np.ndarray) and np.array_equal(out, 3 * np.arange(5))
    if target is None:
        _, (out,) = knl(None)
        assert isinstance(out, cla.Array)
        knl = lp.make_kernel("{[i]: 0 <= i < 5}", "out[i] = 3*a[i]")
        _, (out,) = knl(None, a=np.ones(5), out_host=False)
        assert isinstance(out, cla.Array) and np.array_equal(out.get(), 3 * np.ones(5))


def test_assumptions_may_name_temporaries():
    knl = lp.make_kernel("{ : }", [lp.Assignment("t", 3), lp.Assignment("out", "t*2")],
                         [lp.TemporaryVariable("t", np.int32),
                          lp.GlobalArg("out", np.int32, shape=())],
                         seq_dependencies=True, target=lp.ExecutableCTarget())
    knl = lp.assume(knl, isl.BasicSet("[t] -> { : t >= 0 }"))
    _, (out,) = knl()
    assert out == 6


def test_mem_access_keys_equal_for_reordered_strides():
    from pymbolic.primitives import Variable
    knl = lp.make_kernel("[n,m,ell] -> {[i,k,j]: 0<=i<n and 0<=k<m and 0<=j<ell}",
                         "c[i, j, k] = 2*a[i, j, k]", name="nc", assumptions="n,m,ell >= 1")
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    mem_map = lp.get_mem_access_map(knl, count_redundant_work=True, subgroup_size=32)
    m, ell = Variable("m"), Variable("ell")
    key = lp.MemAccess("global", np.float32, lid_strides={0: m * ell},
                       gid_strides={0: m * ell * 16}, direction="load", variable="a",
                       count_granularity=lp.CountGranularity.WORKITEM, kernel_name="nc")
    assert mem_map[key].eval_with_dict({"n": 32, "m": 3, "ell": 5}) == 32 * 3 * 5


def test_statistics_within_and_filter_by_other_fields():
    knl = lp.make_kernel("{[i]: 0<=i<10}",
                         """
                         out1[i] = 2.0f * i  {tags=f}
                         out2[i] = 3 * i     {tags=n}
                         """)
    ops = lp.get_op_map(knl, subgroup_size=32, within="tag:f").group_by("dtype")
    assert ops[lp.Op(dtype=np.float32)].eval_with_dict({}) == 10
    assert lp.Op(dtype=np.int32) not in ops
    mem = lp.get_mem_access_map(knl, subgroup_size=32, within="tag:n")
    assert mem.filter_by(variable=["out2"]).eval_and_sum({}) == 10
    assert mem.filter_by(variable=["out1"]).eval_and_sum({}) == 0
    assert ops.filter_by(no_such_field=[np.float32]).eval_and_sum({}) == 0


@pytest.mark.parametrize("tag", ["for", "g.0", "fixed"])
def test_empty_domain_runs_nothing(tag):
    knl = lp.make_kernel("{[i,j]: 0 <= i < n}",
                         """
                         for i
                             c = 1  {id=w}
                         end
                         """, silenced_warnings="write_race(w)")
    if tag == "fixed":
        knl, params = lp.fix_parameters(knl, n=0), {}
    else:
        knl, params = lp.tag_inames(knl, {"i": tag}), {"n": 0}
    c = np.zeros((), np.int32)
    _, (out,) = knl(c=c, **params)
    assert out.shape == () and out == 0


def test_false_domain_and_zero_size_arrays():
    knl = lp.make_kernel("{[i]: false}", "out[i] = 1", [lp.GlobalArg("out", np.int32, shape=(4,))])
    out = np.full(4, 5, np.int32)
    knl(out=out)
    assert (out == 5).all()
    knl = lp.make_kernel("{[i]: 0 <= i < 0}", "<> t[i] = 2*a[i]\nout[i] = t[i]",
                         [lp.GlobalArg("a", np.float32, shape=(0,)), "..."])
    assert knl.default_entrypoint.temporary_variables["t"].shape == (0,)
    assert "t[0]" not in lp.generate_code_v2(knl).device_code()
    _, (out,) = knl(a=np.zeros(0, np.float32))
    assert out.shape == (0,)
    knl = lp.make_kernel("{[i]: 5 <= i < 3}", "out[i] = 2*a[i]", target=lp.ExecutableCTarget())
    _, (out,) = knl(a=np.zeros(0, np.float32))
    assert out.shape == (0,)


def test_writing_a_domain_parameter_or_value_argument_raises():
    knl = lp.make_kernel("{[i, j]: 0 <= i, j < n}",
                         """
                         a = sum((i, j), i*j)
                         n = 15
                         """,
                         [lp.GlobalArg("a", np.float32, shape=()), lp.ValueArg("n", np.int32)],
                         assumptions="n>=1")
    with pytest.raises(RuntimeError, match="writes the domain parameter 'n'.*temporary"):
        lp.generate_code_v2(knl)
    knl = lp.make_kernel("{[i]: 0 <= i < 4}", "out[i] = s {id=r}\ns = 3 {id=w, dep=r}",
                         [lp.ValueArg("s", np.int32), "..."])
    with pytest.raises(lp.LoopyError, match="loopy_kernel: instruction 'w' writes the "
                                            "by-value argument 's'"):
        knl(s=1)


@pytest.mark.parametrize("insn", ["out[i % 4] = a[i]", "out[0] = out[0] + a[i]"])
def test_write_race_warned_again_for_cached_code(insn):
    def make():
        knl = lp.make_kernel("{[i]: 0 <= i < 16}", insn,
                             [lp.GlobalArg("out", np.float32, shape=(4,)), "..."])
        return lp.tag_inames(knl, {"i": "g.0"})

    for _ in range(2):     # the second kernel's code comes from the cache
        with pytest.warns(lp.WriteRaceConditionWarning, match="instruction 'insn' writes 'out'"):
            make()(a=np.ones(16, np.float32), out=np.zeros(4, np.float32))


def test_global_barrier_order():
    knl = lp.make_kernel("{[i, t]: 0 <= i < n and 0 <= t < nt}",
                         """
                         for i
                             for t
                                 ... gbarrier {id=top}
                                 <> z[i] = 2*i  {id=wr, dep=top}
                                 ... gbarrier {dep=wr, id=mid}
                                 out[i] = z[i]  {id=use, dep=mid}
                             end
                             ... nop {id=nop}
                             ... gbarrier {dep=use, id=post}
                         end
                         """)
    assert lp.get_global_barrier_order(knl) == ("top", "mid", "post")
    assert [lp.find_most_recent_global_barrier(knl, i)
            for i in ("nop", "top", "wr", "mid", "use", "post")] == \
        [None, None, "top", "top", "mid", "mid"]
    unordered = lp.make_kernel("{[i]: 0 <= i < 10}", "... gbarrier {id=a}\n... gbarrier {id=b}")
    with pytest.raises(lp.LoopyError, match="'a' and 'b' are not ordered"):
        lp.get_global_barrier_order(unordered)


@pytest.mark.parametrize("old, new", [(None, "f,f,f"), ("f,f,f", "c,c,c")])
def test_make_copy_kernel(old, new):
    a = np.random.default_rng(1).normal(size=(5, 4, 3))
    a = np.asfortranarray(a) if old == "f,f,f" else a
    knl = lp.fix_parameters(lp.make_copy_kernel(new, old), n2=3)
    _, (out,) = knl(input=a)
    assert np.array_equal(out, a)
    assert out.flags.f_contiguous if new == "f,f,f" else out.flags.c_contiguous


def test_loopy_helper_names():
    knl = lp.make_kernel("{[i]: 0 <= i < 4}", "<> t = 2.0f*i\nout[i] = t")
    typed = lp.infer_unknown_types(knl)
    assert typed.default_entrypoint.temporary_variables["t"].dtype == np.float32
    assert lp.to_loopy_type(np.float32) == lp.to_loopy_type(np.dtype(np.float32))
    assert lp.preprocess_program(knl).default_entrypoint.state == lp.KernelState.PREPROCESSED
    assert lp.SubstitutionRule("f", ("x",), 2).name == "f"


@pytest.mark.parametrize("stride, tag", [(1, "for"), (2, "for"), (1, "l.0")])
def test_force_scan(stride, tag):
    knl = lp.make_kernel(f"[n] -> {{[i, j]: 0 <= i < n and 0 <= j <= {stride}*i}}",
                         "out[i] = reduce(sum, j, a[j])", "...")
    knl = lp.tag_inames(lp.fix_parameters(knl, n=8), {"i": tag})
    knl = lp.realize_reduction(knl, force_scan=True)     # types not known yet: later
    knl = lp.add_dtypes(knl, {"a": np.float64})
    a = np.random.default_rng(0).normal(size=8 * stride)
    _, (out,) = knl(a=a[:7 * stride + 1])
    assert np.allclose(out, np.cumsum(a[:7 * stride + 1])[::stride])


@pytest.mark.parametrize("domain, insn, inames, sweep", [
    ("{[i,j]: 0<=i<100 and 1<=j<=2*i}", "a[i] = sum(j, j**2)", None, None),
    ("[n] -> {[i,j,k]: 0<=k<n and 0<=i<=k and 0<=j<=i}", "out[i] = sum(j, a[j])", "i:k", None),
    ("{[i,j,k]: 0<=i<n and 0<=j<=i and i=k}", "out[i] = sum(j, a[j])", None, "i"),
])
def test_force_scan_not_triangular(domain, insn, inames, sweep):
    insn = insn + (f" {{inames={inames}}}" if inames else "")
    knl = lp.add_dtypes(lp.make_kernel(domain, insn), {"a": np.float32} if "a[" in insn
                        and "a[i]" not in insn else {})
    with pytest.raises(lp.diagnostic.ReductionIsNotTriangularError, match="not a scan"):
        lp.realize_reduction(knl, force_scan=True, force_outer_iname_for_scan=sweep)
    if inames:
        lp.realize_reduction(knl, force_scan=True, force_outer_iname_for_scan="i")


def test_instruction_and_kernel_queries():
    knl = lp.make_kernel("{[i, j]: 0 <= i, j < 4}", "out[i] = sum(j, a[i, j]) {id=s}")
    k = knl.default_entrypoint
    insn = k.id_to_insn["s"]
    assert insn.reduction_inames() == frozenset({"j"})
    assert insn.assignees == (insn.assignee,)
    assert k.insn_inames("s") == k.insn_inames(insn) == frozenset({"i"})
    hinted = lp.split_iname(knl, "i", 2, inner_tag="unr_hint")
    a = np.arange(16.0).reshape(4, 4)
    _, (out,) = hinted(a=a)
    assert np.allclose(out, a.sum(axis=1))


def test_match_expressions_and_query_options():
    knl = lp.make_kernel("{[i]: 0 <= i < 8}",
                         """
                         a[i] = 1  {id=w1, tags=x}
                         b[i] = 2  {id=w2, tags=y}
                         c[i] = a[i] + b[i]  {id=r, dep_query=writes:a or writes:b}
                         """)
    k = knl.default_entrypoint
    assert k.id_to_insn["r"].depends_on == frozenset({"w1", "w2"})
    match = lp.match.parse_match("(tag:x or tag:y) and not id:w2")
    assert [i.id for i in k.instructions if match(k, i)] == ["w1"]
    knl = lp.make_kernel("{ [i]: 0<=i<12}",
                         """
                         if i % 3 == 0
                             a[i] = 15  {nosync_query=writes:a}
                         else
                             a[i] = 3  {nosync_query=writes:a}
                         end
                         """)
    knl = lp.tag_inames(knl, {"i": "l.0"})
    _, (a,) = knl()
    assert np.array_equal(a, np.where(np.arange(12) % 3 == 0, 15, 3))


def test_base_storage_shares_memory():
    knl = lp.make_kernel("{ [i] : 0<=i<10 }",
                         """
                         a[i] = 2*i  {id=w}
                         c[i] = b[i]  {dep_query=writes:a}
                         """,
                         temporary_variables={
                             n: lp.TemporaryVariable(n, dtype=np.float64, shape=(10,),
                                                     base_storage="base")
                             for n in "ab"},
                         silenced_warnings=frozenset(["read_no_write(b)"]))
    knl = lp.allocate_temporaries_for_base_storage(lp.preprocess_kernel(knl))
    assert set(knl.default_entrypoint.temporary_variables) == {"a"}
    _, (c,) = knl()
    assert np.array_equal(c, 2 * np.arange(10))
    unlike = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = i\nout[i] = b[i]",
                            [lp.TemporaryVariable("a", np.float64, (4,), base_storage="s"),
                             lp.TemporaryVariable("b", np.int32, (4,), base_storage="s"), ...])
    with pytest.raises(lp.LoopyError, match="'a' and 'b' share base storage 's'"):
        lp.generate_code_v2(unlike)


def test_make_tuple():
    knl = lp.make_kernel([isl.BasicSet("[] -> {[]: }")], "a, b = make_tuple(1, 2.)")
    _, (a, b) = knl()
    assert a == 1 and a.dtype.kind == "i" and b == 2.0 and b.dtype == np.float64
    knl = lp.make_kernel("{[i]: 0 <= i < 5}", "x[i], y[i] = make_tuple(2*i, i*i) {id=t}")
    k = knl.default_entrypoint
    assert sorted(k.id_to_insn) == ["t", "t_1"]
    _, (x, y) = knl()
    assert np.array_equal(x, 2 * np.arange(5)) and np.array_equal(y, np.arange(5) ** 2)
    with pytest.raises(lp.LoopyError, match="read what it assigns"):
        lp.make_kernel("{:}", "a, b = make_tuple(b, a)")


def test_t_unit_to_python_round_trip():
    knl = lp.make_kernel("{[i, j]: 0<=i,j<n}",
                         """
                         f(x) := 2*x
                         y[i] = sin(x[i])     {id=insn0}
                         w = sum(j, f(y[j])) {id=insn2, dep=insn0}
                         """, name="my_kernel")
    knl = lp.split_iname(knl, "i", 4, inner_tag="unr")
    source = lp.t_unit_to_python(knl, var_name="rebuilt")
    namespace = {}
    exec(source, namespace)
    x = np.linspace(0, 1, 10)
    _, (w, y) = namespace["rebuilt"](x=x)
    assert np.allclose(y, np.sin(x)) and np.isclose(w, 2 * np.sin(x).sum())
    callee = lp.make_function("{[i]: 0<=i<n}", "y[i] = sin(x[i])", name="callee")
    caller = lp.make_kernel("{[i]: 0<=i<10}", "[i]: y[i] = callee(10, [i]: x[i])")
    lp.t_unit_to_python(lp.merge([caller, callee]))


def test_add_barrier_and_instruction_edits():
    knl = lp.make_kernel("{[i, j, ii, jj]: 0<=i,j,ii,jj<n}",
                         """
                         out[j, i] = a[i, j]  {id=transpose}
                         out[ii, jj] = 2*out[ii, jj]  {id=double}
                         """, [lp.GlobalArg("out", is_input=False, shape=lp.auto), ...])
    knl = lp.add_barrier(knl, "id:transpose", "id:double", "gb1")
    assert "gb1" in knl.default_entrypoint.id_to_insn["double"].depends_on
    for a, b in (("i", "j"), ("ii", "jj")):
        knl = lp.split_iname(knl, a, 2, outer_tag="g.0", inner_tag="l.0")
        knl = lp.split_iname(knl, b, 2, outer_tag="g.1", inner_tag="l.1")
    a = np.random.default_rng(2).normal(size=(8, 8))
    _, (out,) = knl(a=a)
    assert np.allclose(out, 2 * a.T)
    assert [i.id for i in lp.find_instructions(knl, "id:d*")] == ["double"]

    knl = lp.make_kernel("{[i]: 0<=i<10}", "<> c = i > 5  {id=c}\nb[i] = 1  {if=c, id=b}")
    (pred,) = knl.default_entrypoint.id_to_insn["b"].predicates
    knl = lp.remove_predicates_from_insn(knl, frozenset([pred]), "id:b")
    assert not knl.default_entrypoint.id_to_insn["b"].predicates
    knl = lp.make_kernel("{[i, j]: 0<=i<4 and 0<=j<4}", "for i\n <> t[j] = 1 {id=t}\nend\n"
                         "out[j] = t[j] {dep=t}")
    knl = lp.remove_inames_from_insn(knl, frozenset(["i"]), "id:t")
    assert knl.default_entrypoint.id_to_insn["t"].within_inames == frozenset({"j"})


def test_rename_inames_and_argument_order():
    knl = lp.make_kernel("{[i1, i2, i3]: 0<=i1, i2, i3<10}", "y1[i1] = 2\ny2[i2] = 3\ny3[i3] = 4")
    fused = lp.rename_inames(knl, ["i1", "i2"], "i3", existing_ok=True)
    assert set(fused.default_entrypoint.all_inames()) == {"i3"}
    _, (y1, y2, y3) = fused(out_host=True)
    assert (y1 == 2).all() and (y2 == 3).all() and (y3 == 4).all()
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i,j] = a[i]*b[j]")
    ordered = lp.set_argument_order(knl, "out,a,n,b")
    assert [a.name for a in ordered.default_entrypoint.args] == ["out", "a", "n", "b"]
    with pytest.raises(lp.LoopyError, match="name each once"):
        lp.set_argument_order(knl, "out,a")


def test_device_programs_one_per_launch():
    knl = lp.make_kernel("{[i]: 0<=i<8}", "a[i] = i {id=w}\n... gbarrier {id=g, dep=w}\n"
                         "b[i] = a[7 - i] {dep=g}")
    knl = lp.tag_inames(knl, {"i": "g.0"})
    assert len(lp.generate_code_v2(knl).device_programs) == 2


def test_type_cast_to_struct_is_refused():
    with pytest.raises(lp.LoopyError, match="only numeric and bool"):
        lp.TypeCast(np.dtype([("", "<u4"), ("", "<i4")]), 1)
    assert lp.TypeCast(lp.to_loopy_type(np.float32), 1).dtype == np.float32


def test_exists_in_assumptions_and_domains():
    knl = lp.make_kernel("{[i]: 0<=i<n and exists (q: i = 2q)}", "b[i] = 2*a[i]",
                         [lp.GlobalArg("a, b", np.float64, shape=("n",)), ...],
                         assumptions="n>=1 and (exists zz: n = 16*zz)")
    k = knl.default_entrypoint
    assert k.all_params() == {"n"}
    a = np.arange(16.0)
    b = np.zeros(16)
    knl(a=a, b=b)
    assert np.array_equal(b, np.where(np.arange(16) % 2 == 0, 2 * a, 0))


def test_statements_continue_while_brackets_are_open():
    knl = lp.make_kernel("{[i,j,k]: 0<=i,j,k<4}",
                         """
                         out[i] = sum(j, sum(k,
                                  a[i, j, k]
                                  * 2))  {id=s}
                         z[i] = (a[i, 0, 0]
                                 + 1) if i > 1 else 0
                         """)
    a = np.random.default_rng(3).random((4, 4, 4))
    _, (out, z) = knl(a=a)
    assert np.allclose(out, 2 * a.sum(axis=(1, 2)))
    assert np.allclose(z, np.where(np.arange(4) > 1, a[:, 0, 0] + 1, 0))


@pytest.mark.parametrize("spec", ["ii->i", "ii->", "ij->ji", "iij->ij"])
def test_einsum_repeated_indices(spec):
    a = np.random.default_rng(4).random((4, 4, 4)[:len(spec.split("->")[0])])
    _, (out,) = lp.make_einsum(spec, ("a",))(a=a)
    assert np.allclose(out, np.einsum(spec, a))


@pytest.mark.parametrize("target", [None, lp.ExecutableCTarget()])
def test_big_endian_arguments_are_read_as_values(target):
    a = np.arange(5.0).astype(">f8")
    knl = lp.make_kernel("{[i]: 0<=i<5}", "out[i] = 2*a[i]", target=target)
    _, (out,) = knl(a=a)
    assert np.array_equal(out, 2 * np.arange(5.0))
    typed = lp.add_dtypes(knl, {"a": np.float64, "out": np.float64})
    out = np.zeros(5, ">f8")
    typed(a=a, out=out)
    assert np.array_equal(out, 2 * np.arange(5.0))


def test_single_precision_imaginary_literals():
    knl = lp.make_kernel("{[i]: 0<=i<3}",
                         """
                         <> aa = 5jf
                         out1[i] = aa*i
                         out2[i] = (2jf + 7*a[i])/(32jf + 37*a[i])
                         """)
    _, (out1, out2) = knl(a=np.ones(3, np.float32))
    assert out1.dtype == np.complex64 and np.allclose(out1, 5j * np.arange(3))
    assert out2.dtype == np.complex64 and np.allclose(out2, (2j + 7) / (32j + 37))


def test_schedule_items_at_loopys_path():
    from kernelcore.schedule import Barrier, RunInstruction
    knl = lp.make_kernel("{[i,j]: 0 <= i,j < 10 }",
                         """
                         for i
                             <> a[i] = i  {id=ainit}
                             for j
                                 out[i, j] = a[(i + 1) % 10]  {id=use}
                             end
                         end
                         """)
    knl = lp.linearize(lp.preprocess_kernel(lp.tag_inames(knl, {"i": "l.0"})))
    items = knl.default_entrypoint.linearization
    (barrier,) = [x for x in items if isinstance(x, Barrier)]
    assert barrier.synchronization_kind == "local"
    assert items.index(RunInstruction("ainit")) < items.index(barrier) \
        < items.index(RunInstruction("use"))


@pytest.mark.parametrize("src_order, tmp_order", [("C", "C"), ("F", "C"), ("C", "F")])
def test_private_temporary_initializer(src_order, tmp_order):
    a = np.random.default_rng(5).normal(size=(3, 4)).copy(order=src_order)
    knl = lp.make_kernel("{[i,j]: 0<=i<3 and 0<=j<4}", "out[i,j] = 2*tmp[i,j]",
                         [lp.TemporaryVariable("tmp", initializer=a, shape=lp.auto,
                                               address_space=lp.AddressSpace.PRIVATE,
                                               read_only=True, order=tmp_order), "..."])
    assert knl.default_entrypoint.temporary_variables["tmp"].dtype == np.float64
    _, (out,) = knl(out_host=True)
    assert np.array_equal(out, 2 * a)
    # a global one is a constant of the program (not allocated by the host)
    glob = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = t[i]",
                          [lp.TemporaryVariable("t", initializer=np.arange(4.0), read_only=True,
                                                address_space=lp.AddressSpace.GLOBAL), "..."])
    # global ones are constant data of the program (as in loopy)
    _, (out,) = glob(out_host=True)
    assert np.array_equal(out, np.arange(4.0))


def test_initializer_on_c_local_and_barrier_before_first_kernel():
    eye = np.eye(3)
    knl = lp.make_kernel("{[p, i]: 0 <= p, i <= 2}", "A[p] = sum(i, t0[p, i]*w[i])",
                         [lp.GlobalArg("A, w", np.float64, shape=(3,)),
                          lp.TemporaryVariable("t0", np.float64, (3, 3), read_only=True,
                                               address_space=lp.AddressSpace.LOCAL,
                                               initializer=eye)],
                         target=lp.ExecutableCTarget())
    w = np.array([1.0, 2.0, 3.0])
    _, (out,) = knl(w=w)
    assert np.array_equal(out, w)
    prog = lp.make_kernel("{[i]: 0<=i<10}", "... gbarrier\nout[i] = tmp[i]",
                          [lp.TemporaryVariable("tmp", initializer=np.arange(10), shape=lp.auto,
                                                address_space=lp.AddressSpace.PRIVATE,
                                                read_only=True), "..."],
                          seq_dependencies=True)
    prog = lp.save_and_reload_temporaries(lp.preprocess_kernel(prog))
    assert list(prog.default_entrypoint.temporary_variables) == ["tmp"]
    _, (out,) = prog(out_host=True)
    assert np.array_equal(out, np.arange(10))


def test_array_offset_zero_or_auto(queue):
    knl = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = 2*a[i]",
                         [lp.GlobalArg("a", np.float32, shape=4, offset=lp.auto),
                          lp.GlobalArg("out", np.float32, shape=4, offset=0)])
    assert knl["loopy_kernel"].arg_dict["a"].offset is lp.auto
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(host(knl(queue, a=a)[1][0]), 2 * a)
    with pytest.raises(lp.LoopyError, match="elements >= 0"):
        lp.GlobalArg("a", np.float32, shape=4, offset=-1)


def test_global_temporary_declared_for_atomics(queue):
    knl = lp.make_kernel(
        "{[i, k]: 0<=i<16 and 0<=k<4}",
        """
        t[k] = 0                             {id=zero}
        ... gbarrier                         {id=sync, dep=zero}
        t[i % 4] = t[i % 4] + i              {id=add, atomic, dep=sync}
        ... gbarrier                         {id=sync2, dep=add}
        out[k] = t[k]                        {dep=sync2}
        """,
        [lp.TemporaryVariable("t", np.int32, shape=(4,), address_space="global",
                              for_atomic=True),
         lp.GlobalArg("out", np.int32, shape=(4,))])
    knl = lp.tag_inames(knl, {"i": "g.0"})
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(host(out), np.arange(16).reshape(4, 4).sum(axis=0))


def test_types_from_the_known_terms_as_last_resort(queue):
    # loopy's: 'y = 2*y' with y's type unknown makes y an integer (the 2)
    knl = lp.make_kernel("{[i]: 0<=i<4}", "y[i] = 2*y[i]")
    typed = lp.infer_unknown_types(knl)
    assert typed["loopy_kernel"].arg_dict["y"].dtype.kind == "i"
    knl = lp.make_kernel("{[i]: 0<=i<4}", "s = s + 0.5*i")
    assert lp.infer_unknown_types(knl)["loopy_kernel"].arg_dict["s"].dtype == np.float64
    # a known type still wins
    _, (y,) = lp.make_kernel("{[i]: 0<=i<4}", "y[i] = 2*y[i]")(
        queue, y=np.arange(4, dtype=np.float32))
    assert host(y).dtype == np.float32
    np.testing.assert_allclose(host(y), 2 * np.arange(4))


@pytest.mark.parametrize("options", [{"return_dict": True}, "return_dict",
                                     lp.Options(return_dict=True)])
def test_kernel_options_as_dict_or_string(queue, options):
    knl = lp.make_kernel("{[i]: 0<=i<3}", "out[i] = i", options=options)
    _, out = knl(queue)
    np.testing.assert_array_equal(host(out["out"]), np.arange(3))


def test_indirectly_indexed_array_has_no_shape(queue):
    # loopy's: a 1D array whose accesses are not affine gets no shape
    knl = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = a[idx[i]] + a[abs(2 - i)]",
                         [lp.GlobalArg("a", np.float32), lp.GlobalArg("idx", np.int32,
                                                                      shape=(4,)), ...])
    assert knl["loopy_kernel"].arg_dict["a"].shape is None
    a = np.arange(10, dtype=np.float32) ** 2
    idx = np.array([9, 0, 3, 3], dtype=np.int32)
    _, (out,) = knl(queue, a=a, idx=idx)
    np.testing.assert_allclose(host(out), a[idx] + a[np.abs(2 - np.arange(4))])
    with pytest.raises(lp.LoopyError, match="cannot find the shape"):
        lp.make_kernel("{[i]: 0<=i<4}", "out[i] = b[idx[i], i]")


def test_non_integral_index_is_refused():
    knl = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = a[1.5**i]",
                         [lp.GlobalArg("a", np.float64), "..."])
    with pytest.raises(lp.LoopyError, match="indices must be integers"):
        lp.generate_code_v2(knl)


def test_one_axis_of_unknown_extent_is_no_shape(queue):
    knl = lp.make_kernel("{[i]: k <= i < n}", "a[i] = a[i] + 1",
                         [lp.ValueArg("k, n", np.int32),
                          lp.GlobalArg("a", np.int32, shape=(None,))])
    assert knl["loopy_kernel"].arg_dict["a"].shape is None
    _, (a,) = knl(queue, a=np.zeros(8, np.int32), k=2, n=6)
    np.testing.assert_array_equal(host(a), [0, 0, 1, 1, 1, 1, 0, 0])


def test_shape_string_in_parentheses():
    assert lp.GlobalArg("a", shape="(n, m)").shape == lp.GlobalArg("a", shape="n, m").shape \
        == (pmbl.var("n"), pmbl.var("m"))
    assert lp.GlobalArg("a", shape="(n)").shape == (pmbl.var("n"),)


def test_make_einsum_spec_errors_are_value_errors():
    with pytest.raises(ValueError, match="1 argument names"):
        lp.make_einsum("ij,j->j", ("a",))
    with pytest.raises(ValueError, match="repeated index"):
        lp.make_einsum("ij,j->jj", ("a", "b"))
