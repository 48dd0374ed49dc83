"""Error reporting: each kernelcore error class is raised for the problem it
describes, derives from the advertised builtin exception type and carries a
message that names the problem.

Where the contract does not pin down *when* a problem is detected (kernel
creation, transformation, code generation or call time), the test runs the
whole pipeline inside the ``pytest.raises`` block via :func:`full_pipeline`.
"""

import numpy as np
import pytest

import kernelcore as lp

# {{{ helpers

def full_pipeline(knl, queue, dtypes=None, **call_kwargs):
    """Type the kernel, generate code for it and run it."""
    if dtypes:
        knl = lp.add_dtypes(knl, dtypes)
        lp.generate_code_v2(knl).device_code()
    return knl(queue, **call_kwargs)


def doubling_kernel(**kwargs):
    return lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]", **kwargs)

# }}}


# {{{ class hierarchy

@pytest.mark.parametrize("name,builtin", [
    ("ParseError", ValueError),
    ("UnsatisfiableDomainError", ValueError),
    ("UnknownNameError", NameError),
    ("TypeInferenceFailure", TypeError),
    ("StaticValueFindingError", ValueError),
    ("InvocationError", ValueError),
    ("OpenCLBuildError", RuntimeError),
    ("SchedulingError", RuntimeError),
    ])
def test_error_class_hierarchy(name, builtin):
    cls = getattr(lp, name)
    assert issubclass(cls, lp.KernelcoreError)
    assert issubclass(cls, builtin)


def test_error_aliases():
    assert lp.LoopyError is lp.KernelcoreError
    assert issubclass(lp.KernelcoreError, Exception)
    assert lp.LoopyWarning is lp.KernelcoreWarning
    assert issubclass(lp.KernelcoreWarning, Warning)

# }}}


# {{{ parse errors

@pytest.mark.parametrize("domain", [
    "{ [i]: 0<=i<n ",          # unterminated
    "{ [i: 0<=i<n }",          # unbalanced bracket
    "{ [i]: 0<=i<n and }",     # dangling conjunction
    ])
def test_malformed_domain(domain):
    with pytest.raises(lp.ParseError) as excinfo:
        lp.make_kernel(domain, "out[i] = 2*a[i]")
    assert isinstance(excinfo.value, ValueError)
    msg = str(excinfo.value)
    assert "domain" in msg.lower() or domain.strip() in msg, msg


@pytest.mark.parametrize("insn", [
    "out[i] = = 2*a[i]",
    "out[i 2*a[i]",
    "out[i] = 2*a[i",
    "out[i] = 2*a[i] +",
    ])
def test_malformed_instruction(insn):
    with pytest.raises(lp.ParseError) as excinfo:
        lp.make_kernel("{ [i]: 0<=i<n }", insn)
    assert isinstance(excinfo.value, ValueError)
    msg = str(excinfo.value)
    # the message points at the offending text: the whole instruction, or
    # the part of it that fails to parse
    rhs = insn.split("=", 1)[-1].strip(" =")
    assert (insn in msg or "instruction" in msg.lower() or rhs in msg), msg


def test_unknown_instruction_option():
    with pytest.raises(lp.ParseError, match="zz_bogus_opt"):
        lp.make_kernel("{ [i]: 0<=i<n }",
                       "out[i] = 2*a[i] {id=ok, zz_bogus_opt=3}")


def test_unterminated_for_block():
    with pytest.raises(lp.ParseError) as excinfo:
        lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            for i
                out[i] = 2*a[i]
            """)
    msg = str(excinfo.value).lower()
    assert "end" in msg or "for" in msg, msg


def test_unterminated_if_block():
    with pytest.raises(lp.ParseError) as excinfo:
        lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            for i
                if a[i] > 0
                    out[i] = a[i]
            end
            """)
    msg = str(excinfo.value).lower()
    assert "end" in msg or "if" in msg, msg


def test_end_without_for():
    with pytest.raises(lp.ParseError) as excinfo:
        lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            out[i] = 2*a[i]
            end
            """)
    assert "end" in str(excinfo.value).lower()

# }}}


# {{{ unsatisfiable domains

@pytest.mark.parametrize("domain,assumptions", [
    ("{[i]: 5<=i<3}", ""),
    ("{[i, j]: 0<=i<4 and i<j<i}", ""),
    ("{[i]: 0<=i<n}", "n<=0"),
    ])
def test_unsatisfiable_domain_runs_nothing(queue, domain, assumptions):
    # loopy's semantics: a domain empty for every parameter value is a loop
    # that never runs
    knl = lp.make_kernel(domain, "out[i] = 2*a[i]",
                         [lp.GlobalArg("out, a", np.float32, shape=(4,)), "..."],
                         assumptions=assumptions)
    out = np.full(4, 7, np.float32)
    params = {"n": 0} if "n" in knl.default_entrypoint.arg_dict else {}
    knl(queue, a=np.zeros(4, np.float32), out=out, **params)
    assert (out == 7).all()


def test_parametric_domain_is_not_unsatisfiable():
    # empty only for some parameter values (n <= 0): must be accepted
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2*a[i]")
    lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float32})).device_code()

# }}}


# {{{ unknown names

def test_prioritize_loops_unknown_iname(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i,j] = 2*a[i,j]")
    with pytest.raises(lp.UnknownNameError, match="zz_nope") as excinfo:
        knl = lp.prioritize_loops(knl, "i,zz_nope")
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros((3, 3), np.float32))
    assert isinstance(excinfo.value, NameError)


def test_fix_parameters_unknown_name(queue):
    knl = doubling_kernel()
    with pytest.raises(lp.UnknownNameError, match="zz_nope"):
        knl = lp.fix_parameters(knl, zz_nope=16)
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))


def test_add_dtypes_unknown_name():
    knl = doubling_kernel()
    with pytest.raises(lp.UnknownNameError, match="zz_nope"):
        knl = lp.add_dtypes(knl, {"zz_nope": np.float32, "a": np.float32})
        lp.generate_code_v2(knl).device_code()


def test_undeclared_variable_without_ellipsis(queue):
    with pytest.raises(lp.UnknownNameError, match="zz_undeclared") as ei:
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            "out[i] = a[i] + zz_undeclared[i]",
            kernel_data=[
                lp.GlobalArg("a", np.float32, shape=("n",)),
                lp.GlobalArg("out", np.float32, shape=("n",)),
                lp.ValueArg("n", np.int32),
                ])
        full_pipeline(knl, queue, a=np.zeros(3, np.float32))
    assert isinstance(ei.value, NameError)


def test_for_block_over_undeclared_iname(queue):
    with pytest.raises(lp.UnknownNameError, match="zz_k"):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            for zz_k
                out[zz_k] = 1
            end
            """)
        full_pipeline(knl, queue, {"out": np.float32},
                      out=np.zeros(3, np.float32))


def test_reduction_over_undeclared_iname(queue):
    with pytest.raises(lp.UnknownNameError, match="zz_k"):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            "out[i] = sum(zz_k, a[i])")
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))


def test_dependency_on_nonexistent_instruction(queue):
    with pytest.raises(lp.KernelcoreError, match="zz_missing_id"):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            "out[i] = 2*a[i]  {dep=zz_missing_id}")
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))

# }}}


# {{{ malformed kernels

def test_duplicate_instruction_id(queue):
    with pytest.raises(lp.KernelcoreError, match="zz_dup"):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            out[i] = 2*a[i]  {id=zz_dup}
            out2[i] = 3*a[i]  {id=zz_dup}
            """)
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))


def test_iname_declared_in_two_domains(queue):
    with pytest.raises(lp.KernelcoreError, match="zz_i"):
        knl = lp.make_kernel(
            ["{ [zz_i]: 0<=zz_i<n }", "{ [zz_i]: 0<=zz_i<m }"],
            "out[zz_i] = 2*a[zz_i]")
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32), m=3)


def test_assignment_to_iname(queue):
    with pytest.raises(lp.KernelcoreError, match="zz_i"):
        knl = lp.make_kernel(
            "{ [zz_i]: 0<=zz_i<n }",
            """
            out[zz_i] = 2*a[zz_i]
            zz_i = 3
            """)
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))

# }}}


# {{{ types

def test_conflicting_temporary_dtypes(queue):
    with pytest.raises(lp.TypeInferenceFailure, match="zz_tmp") as ei:
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            <float32> zz_tmp = a[i]  {id=w1}
            <int32> zz_tmp = 2  {id=w2, dep=w1}
            out[i] = zz_tmp  {dep=w2}
            """)
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))
    assert isinstance(ei.value, TypeError)


def test_unknown_dtype_annotation():
    with pytest.raises(lp.KernelcoreError, match="zz_badtype"):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            <zz_badtype> t = a[i]
            out[i] = t
            """)
        lp.generate_code_v2(
            lp.add_dtypes(knl, {"a": np.float32})).device_code()


def test_code_generation_needs_dtypes():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*zz_untyped[i]")
    # the message names the variable whose type is unknown
    with pytest.raises(lp.TypeInferenceFailure, match="zz_untyped|out"):
        lp.generate_code_v2(knl).device_code()


def test_wrong_dtype_for_declared_argument(queue):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = 2*zz_intarg[i]",
        kernel_data=[lp.GlobalArg("zz_intarg", np.int32, shape=("n",)),
                     "..."])
    with pytest.raises(lp.InvocationError, match="zz_intarg") as ei:
        knl(queue, zz_intarg=np.zeros(5, np.float64))
    assert isinstance(ei.value, ValueError)
    assert "type" in str(ei.value).lower()

# }}}


# {{{ call-time errors

def test_inconsistent_argument_shapes(queue):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = zz_left[i] + zz_right[i]",
        kernel_data=[
            lp.GlobalArg("zz_left", np.float64, shape=("n",)),
            lp.GlobalArg("zz_right", np.float64, shape=("n",)),
            "..."])
    with pytest.raises(lp.InvocationError) as ei:
        knl(queue, zz_left=np.zeros(10), zz_right=np.zeros(12))
    msg = str(ei.value)
    assert "zz_left" in msg or "zz_right" in msg, msg
    assert "shape" in msg.lower(), msg


def test_shape_inconsistent_with_given_parameter(queue):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = 2*zz_vec[i]",
        kernel_data=[lp.GlobalArg("zz_vec", np.float64, shape=("n",)),
                     "..."])
    with pytest.raises(lp.InvocationError, match="zz_vec") as ei:
        knl(queue, zz_vec=np.zeros(12), n=10)
    assert "shape" in str(ei.value).lower()


def test_passed_output_with_wrong_shape(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "zz_result[i] = 2*a[i]")
    with pytest.raises(lp.InvocationError, match="zz_result") as ei:
        knl(queue, a=np.zeros(5), zz_result=np.zeros(4))
    assert "shape" in str(ei.value).lower()


def test_wrong_number_of_dimensions(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*zz_vec[i]")
    with pytest.raises(lp.InvocationError, match="zz_vec"):
        knl(queue, zz_vec=np.zeros((4, 3)))


def test_missing_required_argument(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*zz_input[i]")
    with pytest.raises(lp.InvocationError, match="zz_input") as ei:
        knl(queue)
    assert isinstance(ei.value, ValueError)


def test_missing_parameter_not_derivable_from_shapes(queue):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<zzm }",
        "out[i] = 2*a[i]",
        kernel_data=[lp.GlobalArg("a", np.float64, shape=("n",)),
                     lp.ValueArg("n", np.int32), "..."])
    with pytest.raises(lp.InvocationError, match="zzm"):
        knl(queue, a=np.zeros(5))


def test_unknown_keyword_argument(queue):
    knl = doubling_kernel()
    with pytest.raises((lp.InvocationError, TypeError), match="zz_extra"):
        knl(queue, a=np.zeros(3), zz_extra=np.zeros(3))

# }}}


# {{{ code generation / build errors

def test_unknown_function_names_the_function(queue):
    with pytest.raises(lp.KernelcoreError, match="zz_nofunc"):
        knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = zz_nofunc(a[i])")
        knl = lp.add_dtypes(knl, {"a": np.float32})
        lp.generate_code_v2(knl).device_code()


def test_device_compiler_failure(queue):
    """An argument named like a C keyword is either rejected by kernelcore
    up front (with a message naming it) or makes the device compiler fail,
    in which case OpenCLBuildError shows the offending source."""
    with pytest.raises(lp.KernelcoreError) as ei:
        knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*double[i]")
        knl(queue, double=np.zeros(4))
    msg = str(ei.value)
    assert "double" in msg, msg
    if isinstance(ei.value, lp.OpenCLBuildError):
        assert isinstance(ei.value, RuntimeError)
        # the failing source lines are shown
        assert "__kernel" in msg or "out[i]" in msg, msg

# }}}


# {{{ scheduling

def test_dependency_cycle(queue):
    with pytest.raises(lp.SchedulingError) as ei:
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            out[i] = 2*a[i]  {id=zz_first, dep=zz_second}
            out2[i] = 3*a[i]  {id=zz_second, dep=zz_first}
            """)
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))
    assert isinstance(ei.value, RuntimeError)
    msg = str(ei.value)
    assert ("cycl" in msg.lower()
            or ("zz_first" in msg and "zz_second" in msg)), msg


def test_self_dependency_cycle_of_three(queue):
    with pytest.raises(lp.SchedulingError):
        knl = lp.make_kernel(
            "{ [i]: 0<=i<n }",
            """
            x[i] = a[i]  {id=s1, dep=s3}
            y[i] = a[i]  {id=s2, dep=s1}
            z[i] = a[i]  {id=s3, dep=s2}
            """)
        full_pipeline(knl, queue, {"a": np.float32},
                      a=np.zeros(3, np.float32))

# }}}


# {{{ static value finding

def test_shape_from_indirect_index(queue):
    # as loopy: a 1D array indexed indirectly gets no shape (a plain pointer)
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = zz_data[idx[i]]")
    assert knl["loopy_kernel"].arg_dict["zz_data"].shape is None
    zz = np.arange(5, dtype=np.float32)
    idx = np.array([4, 0, 2], np.int32)
    _, (out,) = full_pipeline(knl, queue, {"zz_data": np.float32, "idx": np.int32},
                              zz_data=zz, idx=idx)
    np.testing.assert_array_equal(out, zz[idx])
    # with two axes, there is no such fallback
    with pytest.raises(lp.StaticValueFindingError, match="zz_data") as ei:
        lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = zz_data[idx[i], i]")
    assert isinstance(ei.value, ValueError)


def test_indirect_index_with_explicit_shape_works(queue):
    """The remedy suggested by the tutorial: give the shape explicitly."""
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = data[idx[i]]",
        kernel_data=[lp.GlobalArg("data", np.float64, shape=("m",)),
                     lp.ValueArg("m", np.int32), "..."])
    data = np.arange(5.0)
    idx = np.array([4, 0, 2, 2], dtype=np.int32)
    evt, (out,) = knl(queue, data=data, idx=idx)
    np.testing.assert_array_equal(out, data[idx])

# }}}

# vim: foldmethod=marker


def test_kernel_named_after_a_keyword_counts_but_does_not_compile():
    """loopy makes (and counts) a kernel called ``local``; its code cannot be
    OpenCL C, so generating it is refused."""
    knl = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = 2.0f*i", name="local")
    ops = lp.get_op_map(knl, subgroup_size=32)
    assert ops.filter_by(name=["mul"]).eval_and_sum({}) == 4
    with pytest.raises(lp.ParseError, match="reserved"):
        lp.generate_code_v2(knl)
