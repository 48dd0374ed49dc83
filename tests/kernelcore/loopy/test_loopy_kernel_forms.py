"""Issue 40: more of loopy's forms from its test_loopy.py, checked on kernelcore
(and against NumPy where a kernel runs)."""

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.match import ObjTagged
from kernelcore.symbolic import Reduction, parse
from tests.helpers import host


def test_fixed_parameter_makes_private_shape_constant(queue):
    # z's shape n+1 becomes 16 once n is fixed: a private array again
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        <> z[i] = a[i]            {id=w}
        z[i + 1] = 0              {id=w2, dep=w}
        out[i] = 2*z[i]           {dep=w2}
        """, [lp.GlobalArg("a, out", np.float64, shape=("n",)), ...])
    knl = lp.fix_parameters(knl, n=15)
    assert knl["loopy_kernel"].temporary_variables["z"].shape == (16,)
    a = np.arange(15.0)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), 2 * a)


def test_temporary_may_be_called_gid(queue):
    knl = lp.make_kernel("{[i]: 0<=i<8}", "<int32> gid = i // 4\nout[i] = gid",
                         seq_dependencies=True)
    knl = lp.tag_inames(knl, {"i": "l.0"})
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(host(out), np.arange(8) // 4)


def test_substitutions_given_when_making_the_kernel(queue):
    rule = lp.SubstitutionRule("foo", (), 3.0)
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = foo() * i",
                         substitutions={"foo": rule})
    _, (a,) = knl(queue)
    np.testing.assert_allclose(host(a), 3.0 * np.arange(4))
    scaled = lp.SubstitutionRule("scaled", ("x",), parse("2*x"))
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = scaled(i)",
                         substitutions={"scaled": scaled})
    np.testing.assert_array_equal(host(knl(queue)[1][0]), 2 * np.arange(4))
    with pytest.raises(lp.LoopyError, match="both"):
        lp.make_kernel("{[i]: 0<=i<4}", "foo := 5\na[i] = foo() * i",
                       substitutions={"foo": rule})


def test_obj_tagged_matches_instruction_tags():
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = i {tags=one}\nb[i] = i {tags=two}")
    found = lp.find_instructions(knl, ObjTagged("two"))
    assert [insn.assignee_names() for insn in found] == [frozenset({"b"})]
    assert ObjTagged("x") == ObjTagged("x")


def test_parse_gives_explicit_reductions():
    expr = parse("reduce(argmax, i, reduce(argmax, j, i, j))")
    assert isinstance(expr, Reduction) and expr.inames == ("i",)
    inner = expr.expr
    assert isinstance(inner, Reduction) and inner.operation == "argmax"
    assert inner.expr == (parse("i"), parse("j"))
    total = parse("simul_reduce(sum, (i, j), a[i, j])")
    assert total.inames == ("i", "j") and total.allow_simultaneous
    assert not isinstance(parse("f(i, j, k)"), Reduction)


def test_all_params_is_a_set():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m and i mod 2 = 0}", "")
    k = knl["loopy_kernel"]
    assert k.all_params() == {"n", "m"}
    assert k.ordered_params() == ("n", "m")


def test_nosync_scopes_parsed_and_printed():
    knl = lp.make_kernel(
        "{[i]: 0 <= i < 10}",
        """
        <>t = 1 {id=insn1,nosync=insn1}
        t = 3   {id=insn3,nosync=insn1@local:insn3@global}
        t = 4   {id=insn4,nosync_query=id:insn*@local}
        """)
    insns = knl["loopy_kernel"].id_to_insn
    assert insns["insn3"].no_sync_with == {("insn1", "local"), ("insn3", "global")}
    # a query leaves the instruction itself out
    assert insns["insn4"].no_sync_with == {("insn1", "local"), ("insn3", "local")}
    assert "id=insn3, no_sync_with=insn1@local:insn3@global" in str(knl)
    with pytest.raises(lp.LoopyError, match="scope"):
        lp.make_kernel("{[i]: 0 <= i < 10}", "<>t = 1 {id=a,nosync=a@nowhere}")


def test_reduction_ids_and_dependency_free_initializer(queue):
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        <> flag = 1 {id=flagset}
        if flag == 1
            result = result + simul_reduce(sum, i, i*i)   {id=first}
            result = result + simul_reduce(sum, i, 2*i*i) {id=second}
        end
        """, [lp.GlobalArg("result", np.int64, shape=()), ...])
    pp = lp.preprocess_kernel(knl)["loopy_kernel"]
    inits = [insn for insn in pp.instructions if insn.id.endswith("_init")]
    assert sorted(insn.id for insn in inits) == ["first_i_init", "second_i_init"]
    assert all(not insn.depends_on and not insn.predicates for insn in inits)
    assert {"first_i_update", "second_i_update"} <= set(pp.id_to_insn)
    _, (result,) = knl(queue, result=np.zeros((), np.int64), n=10)
    assert host(result) == 3 * sum(i * i for i in range(10))


def test_loop_invariant_predicate_guards_the_loop(queue):
    knl = lp.make_kernel(
        "{ [l,i] : 0<=l,i<42 }",
        """
        if l > 0
            b[l] = sum(i, l*a[i])
        end
        """, [lp.GlobalArg("a", np.float32, shape=(42,)),
              lp.GlobalArg("b", np.float32, shape=(42,))])
    knl = lp.tag_inames(knl, "l:g.0")
    code = lp.generate_code_v2(knl).device_code()
    assert code.index("if") < code.index("for")
    assert code.count("if (") == 1
    a = np.arange(42, dtype=np.float32)
    b = np.full(42, -1, np.float32)
    _, (b,) = knl(queue, a=a, b=b)
    expected = np.arange(42) * a.sum()
    expected[0] = -1
    np.testing.assert_allclose(host(b), expected)


def test_predicate_written_in_the_loop_stays_inside(queue):
    # 'go' changes inside the loop: its test cannot move out
    knl = lp.make_kernel(
        "{[i]: 0<=i<6}",
        """
        <> go = 1 {id=start}
        for i
            if go == 1
                out[i] = i {id=w, dep=start}
                go = i < 2 {id=g, dep=w}
            end
        end
        """, [lp.GlobalArg("out", np.int32, shape=(6,)),
              lp.TemporaryVariable("go", np.int32)])
    code = lp.generate_code_v2(knl).device_code()
    assert code.index("for") < code.index("if")
    _, (out,) = knl(queue, out=np.full(6, -1, np.int32))
    np.testing.assert_array_equal(host(out), [0, 1, 2, -1, -1, -1])


def test_c_instruction_ids_given_by_make_kernel():
    c = lp.CInstruction("i", "f();", assignees="phi")
    assert c.id is None
    knl = lp.make_kernel("{[i]: 0<=i<4}", [c, lp.Assignment("a[i]", "phi[i]")],
                         [lp.TemporaryVariable("phi", np.float32, shape=(4,)), ...])
    assert [insn.id for insn in knl["loopy_kernel"].instructions] == ["insn", "insn_0"]


def test_return_from_kernel_mapping_and_block_boundaries():
    from kernelcore.schedule.tools import get_block_boundaries, get_return_from_kernel_mapping
    knl = lp.make_kernel("{[i,j]: 0<=i,j<10}",
                         "<> tmp[i] = i\n... gbarrier\nout[j] = tmp[9-j]",
                         seq_dependencies=True)
    knl = lp.linearize(lp.preprocess_kernel(knl)).default_entrypoint
    items = knl.linearization
    mapping = get_return_from_kernel_mapping(knl)
    returns = [k for k, item in enumerate(items)
               if isinstance(item, lp.schedule.ReturnFromKernel)]
    assert len(returns) == 2 and set(mapping) == set(range(len(items)))
    between = returns[0] + 1          # the global barrier: in no device kernel
    assert mapping[between] is None
    assert all(mapping[k] == returns[0] for k in range(returns[0] + 1))
    assert all(mapping[k] == returns[1] for k in range(between + 1, len(items)))
    bounds = get_block_boundaries(items)
    assert bounds[0] == returns[0] and bounds[returns[0]] == 0
    assert isinstance(items[bounds[1]], lp.schedule.LeaveLoop)


def test_temp_var_type_as_optional_or_deprecated(recwarn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        none = lp.Assignment("x", 1, temp_var_type=lp.Optional())
        inferred = lp.Assignment("x", 1, temp_var_type=lp.Optional(None))
        typed = lp.Assignment("x", 1, temp_var_type=lp.Optional(np.dtype(np.int32)))
        call = lp.CallInstruction("(x,)", parse("f(1)"), temp_var_types=(lp.Optional(),))
        # copies keep the declared type without a warning
        assert inferred.copy(id="y").temp_var_type is lp.auto
    assert none.temp_var_type is None and call.temp_var_type is None
    assert typed.temp_var_type == np.int32
    for value in (lp.auto, None, np.dtype(np.int32)):
        with pytest.warns(DeprecationWarning):
            insn = lp.Assignment("x", 1, temp_var_type=value)
        assert insn.temp_var_type is value
        with pytest.warns(DeprecationWarning):
            lp.CallInstruction("(x,)", parse("f(1)"), temp_var_types=(value,))


def test_declared_temporary_through_optional(queue):
    insns = [lp.Assignment("t", "2*i", temp_var_type=lp.Optional(np.dtype(np.int32)),
                           id="w"),
             lp.Assignment("out[i]", "t + 1", depends_on="w")]
    knl = lp.make_kernel("{[i]: 0<=i<4}", insns)
    assert knl["loopy_kernel"].temporary_variables["t"].dtype == np.int32
    np.testing.assert_array_equal(host(knl(queue)[1][0]), 2 * np.arange(4) + 1)


def test_iname_duplication_options(queue):
    knl = lp.make_kernel("{[i,j]: 0<=i,j<n}",
                         """
                         mat1[i,j] = mat1[i,j] + 1 {inames=i:j, id=i1}
                         mat2[j] = mat2[j] + 1 {inames=j, id=i2}
                         mat3[i] = mat3[i] + 1 {inames=i, id=i3}
                         """)
    assert not lp.has_schedulable_iname_nesting(knl)
    options = list(lp.get_iname_duplication_options(knl))
    assert sorted(options) == [("i", "id:i1"), ("i", "id:i3"), ("j", "id:i1"),
                               ("j", "id:i2")]
    for iname, within in options:
        fixed = lp.duplicate_inames(knl, iname, within)
        assert lp.has_schedulable_iname_nesting(fixed)
    fixed = lp.add_dtypes(lp.duplicate_inames(knl, "i", "id:i3"), {"mat1,mat2,mat3": np.int32})
    mats = [np.zeros((3, 3), np.int32), np.zeros(3, np.int32), np.arange(3, dtype=np.int32)]
    _, out = fixed(queue, mat1=mats[0], mat2=mats[1], mat3=mats[2], n=3)
    np.testing.assert_array_equal(host(out[0]), np.ones((3, 3)))
    np.testing.assert_array_equal(host(out[1]), np.ones(3))
    np.testing.assert_array_equal(host(out[2]), np.arange(3) + 1)
    # loops shared by all instructions, or used apart, nest fine; parallel ones need none
    ok = lp.make_kernel("{[i,j,k]: 0<=i,j,k<4}",
                        "a[i,j] = 1 {inames=i:j}\nb[i] = 1 {inames=i}\nc[k] = 1 {inames=k}")
    assert lp.has_schedulable_iname_nesting(ok)
    assert lp.has_schedulable_iname_nesting(lp.tag_inames(knl, {"i": "l.0"}))
    five = lp.make_kernel("{[i,j,k,l,m]:0<=i,j,k,l,m<n}",
                          """
                          mat1[l,m,i,j,k] = mat1[l,m,i,j,k] + 1 {inames=i:j:k:l:m}
                          mat2[l,m,j,k] = mat2[l,m,j,k] + 1 {inames=j:k:l:m}
                          mat3[l,m,k] = mat3[l,m,k] + 11 {inames=k:l:m}
                          mat4[l,m,i] = mat4[l,m,i] + 1 {inames=i:l:m}
                          """)
    options = list(lp.get_iname_duplication_options(five))
    assert len(options) == 10 and all(i in "ijk" for i, _ in options)


def test_prefetch_serves_assignee_indices(queue):
    knl = lp.make_kernel(
        "{ [n,k,l,k2,l2]: 0<=n<nel and 0<=k,k2<3 and 0<=l,l2<2 }",
        """
        for n
            <> tmp[k,l] = a[amap[n, k],l]                {id=get}
            out[amap[n,k2], l2] = 2*tmp[k2,l2]            {id=put, dep=get}
        end
        """,
        [lp.GlobalArg("a,out", np.float64, "ndofs,2"),
         lp.GlobalArg("amap", np.int32, "nel,3"), ...])
    # k2 is swept by no one: the fetch covers every value it takes
    pre = lp.add_prefetch(knl, "amap", "k")
    for insn in pre["loopy_kernel"].instructions:
        if insn.id == "put":
            assert "amap" not in lp.symbolic.get_dependencies(insn.assignee)
    rng = np.random.default_rng(0)
    amap = rng.permutation(12).astype(np.int32).reshape(4, 3)
    a = rng.random((12, 2))
    _, (out,) = pre(queue, a=a, amap=amap, out=np.zeros((12, 2)))
    np.testing.assert_allclose(host(out), 2 * a)


def test_ilp_copies_of_local_and_private_temporaries(queue):
    knl = lp.make_kernel(
        "{[i,j]: 0<=i<16 and 0<=j<17 }",
        """
        <> a[i] = 5+i+j        {id=w}
        <> p = 2*j             {id=wp}
        out[i, j] = a[i] + p   {dep=w:wp}
        """, [lp.GlobalArg("out", np.int32, shape=(16, 17)), ...])
    knl = lp.tag_inames(knl, {"i": "l.0", "j": "ilp"})
    pp = lp.preprocess_kernel(knl)["loopy_kernel"]
    # one copy per ilp iteration, along a last axis (as loopy's)
    assert pp.temporary_variables["a"].shape == (16, 17)
    assert pp.temporary_variables["p"].shape == (17,)
    _, (out,) = knl(queue)
    i, j = np.meshgrid(np.arange(16), np.arange(17), indexing="ij")
    np.testing.assert_array_equal(host(out), 5 + i + j + 2 * j)


def test_instructions_are_a_list_and_unscheduled_ones_are_refused():
    prog = lp.linearize(lp.preprocess_kernel(
        lp.make_kernel("{ [i]: 0 <= i < 10 }", "out[i] = i {id=insn1}")))
    knl = prog["loopy_kernel"]
    assert isinstance(knl.instructions, list)
    assert isinstance(knl.copy(instructions=tuple(knl.instructions)).instructions, list)
    insns = knl.instructions[:]
    insns.append(insns[0].copy(id="insn2", depends_on=frozenset({"insn1"})))
    with pytest.raises(lp.diagnostic.UnscheduledInstructionError, match="insn2"):
        lp.generate_code_v2(prog.with_kernel(knl.copy(instructions=insns)))
    lp.generate_code_v2(prog)       # the kernel as linearized is fine


@pytest.mark.parametrize(("second", "barrier"), [("2*i", False), ("2*i+1", False),
                                                 ("2*i+2", True)])
def test_local_barrier_only_where_work_items_meet(queue, second, barrier):
    knl = lp.make_kernel(
        "{[i]: 0<=i<128}",
        f"""
        a[2*i] = i            {{id=first}}
        a[{second}] = 1000 + i  {{id=second, dep=first}}
        out[2*i] = a[2*i]     {{id=o1, dep=second}}
        out[2*i+1] = a[2*i+1] {{id=o2, dep=second}}
        """,
        [lp.TemporaryVariable("a", np.int32, shape=(258,),
                              address_space=lp.AddressSpace.LOCAL),
         lp.GlobalArg("out", np.int32, shape=(256,))])
    knl = lp.tag_inames(knl, "i:l.0")
    lin = lp.linearize(lp.preprocess_kernel(knl))["loopy_kernel"].linearization
    ids = [getattr(item, "insn_id", None) for item in lin]
    between = lin[ids.index("first") + 1:ids.index("second")]
    assert any(isinstance(item, lp.schedule.Barrier) for item in between) == barrier
    expected = np.zeros(258, np.int32)
    expected[0:256:2] = np.arange(128)
    if second == "2*i":
        expected[0:256:2] = 1000 + np.arange(128)
    elif second == "2*i+1":
        expected[1:256:2] = 1000 + np.arange(128)
    else:
        expected[2:258:2] = 1000 + np.arange(128)
    _, (out,) = knl(queue, out=np.zeros(256, np.int32))
    # (odd elements never written in the last case: compare the written ones)
    got = host(out)
    np.testing.assert_array_equal(got[0::2], expected[0:256:2])
    if second == "2*i+1":
        np.testing.assert_array_equal(got[1::2], expected[1:256:2])


def test_write_race_across_ilp_iterations_warned(queue):
    import warnings
    racy = lp.tag_inames(lp.make_kernel("{[i,j]: 0<=i,j<n}", "a[i] = 5+i+j",
                                        [lp.GlobalArg("a", np.float32, shape=("n",)),
                                         ...]), {"j": "ilp"})
    with pytest.warns(lp.WriteRaceConditionWarning, match="ilp"):
        lp.linearize(lp.preprocess_kernel(racy))
    fine = lp.tag_inames(lp.make_kernel("{[i,j]: 0<=i,j<4}", "a[i, j] = 5+i+j"),
                         {"j": "ilp"})
    silenced = racy["loopy_kernel"].copy(silenced_warnings=frozenset({"write_race(insn)"}))
    with warnings.catch_warnings():
        warnings.simplefilter("error", lp.WriteRaceConditionWarning)
        lp.linearize(lp.preprocess_kernel(fine))
        lp.linearize(lp.preprocess_kernel(silenced))
    _, (a,) = fine(queue)
    np.testing.assert_array_equal(host(a), 5 + np.add.outer(np.arange(4), np.arange(4)))


@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_arg_reduction_reports_any_index_expression(queue, op):
    knl = lp.make_kernel(
        "{[i,k]: 0<=i<5 and 0<=k<7}",
        f"""
        <> m, <> at = {op}(k, a[i,k], 10*b[i,k])
        <> m2, <> kk = {op}(k, a[i,k], k)
        out[i] = at + m
        pos[i] = kk + m2
        """, [lp.GlobalArg("a,b", np.float32, shape=(5, 7)),
              lp.GlobalArg("out", np.float32, shape=(5,)),
              lp.GlobalArg("pos", np.float32, shape=(5,))])
    rng = np.random.default_rng(1)
    a, b = rng.random((5, 7), dtype=np.float32), rng.random((5, 7), dtype=np.float32)
    _, (out, pos) = knl(queue, a=a, b=b)
    k = getattr(a, op)(axis=1)
    best = a[np.arange(5), k]
    np.testing.assert_allclose(host(out), 10 * b[np.arange(5), k] + best, rtol=1e-6)
    np.testing.assert_allclose(host(pos), k + best, rtol=1e-6)


def test_save_refuses_copies_on_other_parallel_axes(queue):
    def make(dup_tag):
        knl = lp.make_kernel("{[i,j]: 0 <= i < 4 and 0 <= j < 8}",
                             "<>a[j] = j\n... gbarrier\nout[i,j] = 2*a[j]",
                             seq_dependencies=True)
        knl = lp.tag_inames(knl, {"i": "g.0", "j": "l.0"})
        knl = lp.duplicate_inames(knl, "j", within="writes:out", tags={"j": dup_tag})
        return lp.set_temporary_address_space(knl, "a", "local")
    # written by one work-group, read by four: which copy each reloads is ambiguous
    with pytest.raises(lp.LoopyError, match="ambiguous"):
        lp.save_and_reload_temporaries(make("l.0"))
    # the same axes (another iname with the same tag) are fine
    knl = lp.make_kernel("{[i,j]: 0 <= i < 4 and 0 <= j < 8}",
                         "<>a[j] = j + i\n... gbarrier\nout[i,j] = 2*a[j]",
                         seq_dependencies=True)
    knl = lp.tag_inames(knl, {"i": "g.0", "j": "l.0"})
    knl = lp.duplicate_inames(knl, "j", within="writes:out", tags={"j": "l.0"})
    knl = lp.save_and_reload_temporaries(lp.set_temporary_address_space(knl, "a", "local"))
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(host(out), 2 * np.add.outer(np.arange(4), np.arange(8)))


def test_variable_size_private_temporaries():
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i] = sum(j, a[i,j])",
                         [lp.GlobalArg("a", np.float64, shape=("n", "n")), ...],
                         target=lp.ExecutableCTarget())
    knl = lp.add_prefetch(knl, "a[:,:]", default_tag=None)
    fetch = knl["loopy_kernel"].temporary_variables["a_fetch"]
    assert [str(s) for s in fetch.shape] == ["n", "n"]
    code = lp.generate_code_v2(knl).device_code()
    assert "a_fetch[n * n]" in code         # a variable-length array (C99), as loopy's
    a = np.random.default_rng(2).random((5, 5))
    _, (out,) = knl(a=a)
    np.testing.assert_allclose(out, a.sum(axis=1))
    # temporaries sharing base storage, of a parametric length
    shared = lp.make_kernel(
        "{ [i] : 0<=i<n }", "a[i] = 2*i {id=w}\nc[i] = a[i] + 1 {dep=w}",
        [lp.TemporaryVariable("a", np.float64, shape=("n",), base_storage="base"),
         lp.TemporaryVariable("b", np.float64, shape=("n",), base_storage="base"),
         lp.GlobalArg("c", np.float64, shape=("n",)), ...],
        target=lp.ExecutableCTarget())
    _, (c,) = lp.allocate_temporaries_for_base_storage(lp.preprocess_kernel(shared))(n=4)
    np.testing.assert_allclose(c, 2 * np.arange(4) + 1)


def test_overridden_grid_sizes(queue):
    knl = lp.make_kernel(
        "{[i]: 0 <= i < 10}",
        """
        for i
            a[i] = i                {id=a}
            ... lbarrier            {id=barrier}
            b[i + 1] = 2*a[i]       {nosync=a}
        end
        """,
        [lp.TemporaryVariable("a", np.float32, shape=(10,),
                              address_space=lp.AddressSpace.LOCAL),
         lp.GlobalArg("b", np.float32, shape=(11,))], seq_dependencies=True)
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0")
    k = knl["loopy_kernel"]
    groups, local = k.get_grid_sizes_for_insn_ids({"a"})
    assert local[0].get_pieces()[0][1].get_constant_val().to_python() == 10

    def wider(insn_ids, callables_table, ignore_auto=True):
        g, _ = k.get_grid_sizes_for_insn_ids(insn_ids, callables_table)
        return g, (16,)

    wide = knl.with_kernel(k.copy(overridden_get_grid_sizes_for_insn_ids=wider))
    code = lp.generate_code_v2(wide).device_code()
    assert "reqd_work_group_size(16, 1, 1)" in code
    _, (b,) = wide(queue, b=np.zeros(11, np.float32))
    np.testing.assert_allclose(host(b), np.r_[0, 2 * np.arange(10)])


@pytest.mark.parametrize("target", [None, lp.ExecutableCTarget()], ids=["opencl", "c"])
def test_global_constant_data_declared_once(queue, target):
    rng = np.random.default_rng(17)
    a, cnst = rng.normal(size=16), rng.normal(size=16)
    knl = lp.make_kernel(
        "{[i, ii]: 0<=i, ii<16}",
        """
        out[i] = a[i]+cnst[i]           {id=first}
        out[ii] = 2*out[ii]+cnst[ii]    {id=second}
        """,
        [lp.TemporaryVariable("cnst", initializer=cnst,
                              address_space=lp.AddressSpace.GLOBAL, read_only=True),
         lp.GlobalArg("a, out", np.float64, shape=(16,)), ...], target=target)
    assert knl["loopy_kernel"].temporary_variables["cnst"].shape == (16,)
    knl = lp.add_barrier(knl, "id:first", "id:second")
    if target is None:
        knl = lp.split_iname(knl, "i", 2, outer_tag="g.0", inner_tag="l.0")
        knl = lp.split_iname(knl, "ii", 2, outer_tag="g.0", inner_tag="l.0")
    code = lp.generate_code_v2(knl)
    assert code.device_code().count(" cnst[16] = {") == 1
    _, (out,) = knl(queue, a=a) if target is None else knl(a=a)
    np.testing.assert_allclose(host(out), 2 * (a + cnst) + cnst, rtol=1e-15)
    written = lp.make_kernel("{[i]: 0<=i<4}", "c[i] = 1",
                             [lp.TemporaryVariable("c", initializer=np.zeros(4),
                                                   address_space="global")], target=target)
    with pytest.raises(lp.LoopyError, match="constant"):
        lp.generate_code_v2(written)
