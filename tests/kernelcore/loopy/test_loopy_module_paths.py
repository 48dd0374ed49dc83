"""Issue 20: kernelcore's modules sit at loopy's paths, so a program whose
``loopy`` imports are renamed to ``kernelcore`` runs; loopy's diagnostics are
there under its names and write races are warnings."""

import importlib
import warnings

import numpy as np
import pytest

import kernelcore as lp

LOOPY_PROGRAM = '''
import numpy as np
import loopy as lp
from loopy.version import LOOPY_USE_LANGUAGE_VERSION_2018_2  # noqa: F401
from loopy.version import MOST_RECENT_LANGUAGE_VERSION, VERSION
from loopy.symbolic import (Reduction, TypeCast, IdentityMapper, WalkMapper,
    CombineMapper, SubstitutionMapper, DependencyMapper, ResolvedFunction,
    SubArrayRef, RuleAwareIdentityMapper, SubstitutionRuleMappingContext, parse)
from loopy.types import to_loopy_type, NumpyType
from loopy.diagnostic import (LoopyError, LoopyWarning, AutomaticTestFailure,
    WriteRaceConditionWarning, StaticValueFindingError, TypeInferenceFailure)
from loopy.target import TargetBase
from loopy.target.opencl import OpenCLTarget
from loopy.target.pyopencl import PyOpenCLTarget
from loopy.target.c import CTarget, ExecutableCTarget
from loopy.kernel import LoopKernel
from loopy.kernel.data import (ArrayArg, GlobalArg, ValueArg, TemporaryVariable,
    AddressSpace, ConstantArg, auto)
from loopy.kernel.instruction import Assignment, CallInstruction, make_assignment
from loopy.kernel.function_interface import (InKernelCallable, ScalarCallable,
    CallableKernel, ArrayArgDescriptor, ValueArgDescriptor)
from loopy.translation_unit import TranslationUnit

lp.set_caching_enabled(False)
assert lp.CACHING_ENABLED is False
lp.set_caching_enabled(True)
assert lp.CACHING_ENABLED is True

knl = lp.make_kernel(
    "{ [i]: 0<=i<n }",
    """
    out[i] = 2*a[i]
    """,
    [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("out", np.float32,
     shape="n"), lp.ValueArg("n", np.int32, approximately=64)],
    lang_version=LOOPY_USE_LANGUAGE_VERSION_2018_2)
knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
assert isinstance(knl.target, (TargetBase, type(None)))
a = np.arange(50, dtype=np.float32)
evt, (out,) = knl(queue, a=a)
assert np.allclose(out.get() if hasattr(out, "get") else out, 2 * a)
assert to_loopy_type(np.float32) == NumpyType(np.dtype(np.float32))
assert issubclass(AutomaticTestFailure, LoopyError)
assert issubclass(WriteRaceConditionWarning, LoopyWarning)
assert isinstance(parse("a[i] + 1"), object)
RESULT = "ran"
'''


def _renamed(source):
    return source.replace("import loopy as lp", "import kernelcore as lp") \
        .replace("from loopy.", "from kernelcore.")


def test_loopy_program_runs_with_imports_renamed(queue):
    namespace = {"queue": queue}
    exec(compile(_renamed(LOOPY_PROGRAM), "<loopy program>", "exec"), namespace)
    assert namespace["RESULT"] == "ran"


@pytest.mark.parametrize("module, names", [
    ("kernelcore.version", ["LOOPY_USE_LANGUAGE_VERSION_2018_2",
                            "LOOPY_USE_LANGUAGE_VERSION_2018_1", "VERSION",
                            "MOST_RECENT_LANGUAGE_VERSION", "FALLBACK_LANGUAGE_VERSION",
                            "LANGUAGE_VERSION_SYMBOLS", "DATA_MODEL_VERSION"]),
    ("kernelcore.symbolic", ["Reduction", "TypeCast", "Literal", "ArrayLiteral",
                             "FunctionIdentifier", "ResolvedFunction", "TaggedVariable",
                             "LinearSubscript", "TypeAnnotation", "SubArrayRef",
                             "IdentityMapper", "WalkMapper", "CombineMapper",
                             "StringifyMapper", "SubstitutionMapper", "DependencyMapper",
                             "RuleAwareIdentityMapper", "RuleAwareSubstitutionMapper",
                             "SubstitutionRuleMappingContext", "get_dependencies",
                             "parse", "aff_to_expr", "pw_aff_to_expr", "aff_from_expr"]),
    ("kernelcore.types", ["to_loopy_type", "NumpyType", "LoopyType", "AtomicType",
                          "OpaqueType"]),
    ("kernelcore.diagnostic", [
        "LoopyError", "LoopyWarning", "LoopyAdvisory", "ParameterFinderWarning",
        "WriteRaceConditionWarning", "CannotBranchDomainTree", "TypeInferenceFailure",
        "AutomaticTestFailure", "StaticValueFindingError", "DependencyTypeInferenceFailure",
        "MissingBarrierError", "MissingDefinitionError", "UnscheduledInstructionError",
        "ReductionIsNotTriangularError", "LoopyTypeError", "ExpressionNotAffineError",
        "ExpressionToAffineConversionError", "VariableAccessNotOrdered",
        "DependencyCycleFound", "UnableToDetermineAccessRangeError",
        "ScheduleDebugInputError", "warn_with_kernel"]),
    ("kernelcore.target", ["TargetBase", "CFamilyTarget", "ASTBuilderBase", "CTarget",
                           "ExecutableCTarget", "OpenCLTarget", "PyOpenCLTarget"]),
    ("kernelcore.kernel", ["LoopKernel", "KernelState"]),
    ("kernelcore.kernel.data", ["ArrayArg", "GlobalArg", "ConstantArg", "ValueArg",
                                "TemporaryVariable", "AddressSpace", "temp_var_scope",
                                "auto", "SubstitutionRule", "filter_iname_tags_by_type",
                                "LocalInameTag", "GroupInameTag", "UnrollTag"]),
    ("kernelcore.kernel.instruction", ["InstructionBase", "Assignment",
                                       "CallInstruction", "BarrierInstruction",
                                       "NoOpInstruction", "make_assignment",
                                       "MultiAssignmentBase", "MemoryOrdering"]),
    ("kernelcore.kernel.function_interface", [
        "InKernelCallable", "ScalarCallable", "CallableKernel", "ArrayArgDescriptor",
        "ValueArgDescriptor", "get_kw_pos_association"]),
    ("kernelcore.translation_unit", ["TranslationUnit", "merge", "make_function"]),
    ("kernelcore.kernel.creation", ["make_kernel", "make_function",
                                    "apply_single_writer_dependency_heuristic"]),
    ("kernelcore", ["CACHING_ENABLED", "set_caching_enabled", "ConstantArg",
                    "AutomaticTestFailure", "LoopyError", "LoopyWarning",
                    "MOST_RECENT_LANGUAGE_VERSION"]),
])
def test_loopy_module_paths_have_loopy_names(module, names):
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{module} lacks {missing}"


def test_kernelcore_is_not_registered_as_loopy():
    import sys
    assert sys.modules.get("loopy") is None or sys.modules["loopy"] is not lp


def test_language_versions():
    from kernelcore.version import LOOPY_USE_LANGUAGE_VERSION_2018_2, MOST_RECENT_LANGUAGE_VERSION
    assert LOOPY_USE_LANGUAGE_VERSION_2018_2 == (2018, 2)
    assert MOST_RECENT_LANGUAGE_VERSION >= LOOPY_USE_LANGUAGE_VERSION_2018_2
    with pytest.raises(lp.LoopyError, match="language version"):
        lp.make_kernel("{[i]: 0<=i<4}", "out[i] = 1", lang_version=(1999, 1))


def test_caching_flag_follows_set_caching_enabled():
    before = lp.CACHING_ENABLED
    try:
        lp.set_caching_enabled(False)
        assert lp.CACHING_ENABLED is False
        lp.set_caching_enabled(True)
        assert lp.CACHING_ENABLED is True
    finally:
        lp.set_caching_enabled(before)


def test_to_loopy_type():
    from kernelcore.types import NumpyType, to_loopy_type
    t = to_loopy_type(np.float64)
    assert isinstance(t, NumpyType) and t.numpy_dtype == np.float64 and t.dtype == t.numpy_dtype
    assert to_loopy_type(t) == t
    assert to_loopy_type(None, allow_none=True) is None
    assert to_loopy_type(lp.auto, allow_auto=True) is lp.auto
    with pytest.raises(lp.LoopyError):
        to_loopy_type(None)
    assert str(t) == "np:dtype('float64')"
    assert to_loopy_type(np.int32).is_integral()


def test_targets_share_loopy_base():
    from kernelcore.target import CFamilyTarget, TargetBase
    for t in (lp.OpenCLTarget(), lp.PyOpenCLTarget(), lp.CTarget(), lp.ExecutableCTarget()):
        assert isinstance(t, TargetBase) and isinstance(t, CFamilyTarget)
    assert lp.PyOpenCLTarget().dtype_to_typename(np.float32) == "float"


def test_make_assignment_and_dependency_mapper():
    from kernelcore.kernel.instruction import make_assignment
    from kernelcore.symbolic import DependencyMapper, parse
    insn = make_assignment("out[i]", "2*a[i]", id="twice", within_inames="i")
    assert isinstance(insn, lp.Assignment) and insn.id == "twice"
    assert insn.within_inames == frozenset(["i"])
    import pymbolic.primitives as prim
    assert DependencyMapper()(parse("a[i] + f(x)")) == {prim.Variable(n) for n in "aix"}


def test_rule_aware_mapper_maps_instructions_and_rules():
    import pymbolic.primitives as prim

    from kernelcore.symbolic import RuleAwareIdentityMapper, SubstitutionRuleMappingContext

    class Rename(RuleAwareIdentityMapper):
        def map_variable(self, expr, expn_state):
            return prim.Variable("b") if expr.name == "a" else expr

    knl = lp.make_kernel("{[i]: 0<=i<n}", """
        f(x) := a[x] + 1
        out[i] = f(i) + a[i]
        """)
    knl = knl.default_entrypoint        # mappers work on kernels, as in loopy
    ctx = SubstitutionRuleMappingContext(knl.substitutions)
    new = ctx.finish_kernel(Rename(ctx).map_kernel(knl))
    assert "b[i]" in str(new.instructions[0].expression)


def test_write_race_is_a_filterable_warning():
    knl = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[0] = a[i]  {id=racy}",
                         [lp.GlobalArg("a", np.float32, shape=16),
                          lp.GlobalArg("out", np.float32, shape=1)])
    knl = lp.tag_inames(knl, {"i": "l.0"})
    with pytest.warns(lp.WriteRaceConditionWarning,
                      match=r"in kernel loopy_kernel: .*'write_race\(racy\)' to "
                      "silenced_warnings kernel attribute to disable"):
        code = lp.generate_code_v2(knl).device_code()
    assert "out[0]" in code
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lp.WriteRaceConditionWarning)
        lp.generate_code_v2(knl)
    with warnings.catch_warnings():
        warnings.simplefilter("error", lp.LoopyWarning)
        with pytest.raises(lp.WriteRaceConditionWarning):
            lp.generate_code_v2(knl)
        # silenced by the kernel attribute, with a wildcard as loopy allows
        quiet = knl.with_kernel(knl.default_entrypoint.copy(
            silenced_warnings=frozenset(["write_race*"])))
        lp.generate_code_v2(quiet)
    assert not issubclass(lp.WriteRaceConditionWarning, Exception) or \
        issubclass(lp.WriteRaceConditionWarning, Warning)


def test_write_race_local_leaves_the_temporary_private(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[j,i] = a[i,j]", name="transpose")
    knl = lp.add_dtypes(knl, {"a": np.float32})
    knl = lp.split_iname(knl, "j", 16, inner_tag="l.1", outer_tag="g.0")
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.1")
    knl = lp.add_prefetch(knl, "a", "i_inner")
    with pytest.warns(lp.WriteRaceConditionWarning, match="j_inner"):
        code = lp.generate_code_v2(knl).device_code()
    assert "__local" not in code
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lp.WriteRaceConditionWarning)
        evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out.get() if hasattr(out, "get") else out, a.T)


def test_single_writer_heuristic_adds_missing_dependencies():
    from kernelcore.kernel.creation import apply_single_writer_dependency_heuristic
    knl = lp.make_kernel("{[i]: 0<=i<4}", """
        <> b[i] = i  {id=init}
        a[i] = 2*b[i]  {id=use}
        """)
    assert "init" in knl["loopy_kernel"].id_to_insn["use"].depends_on
    apply_single_writer_dependency_heuristic(knl, error_if_used=True)   # nothing to add
    bare = knl.with_kernel(knl["loopy_kernel"].copy(instructions=tuple(
        i.copy(depends_on=frozenset()) for i in knl["loopy_kernel"].instructions)))
    with pytest.raises(lp.LoopyError, match="init"):
        apply_single_writer_dependency_heuristic(bare, error_if_used=True)
    fixed = apply_single_writer_dependency_heuristic(bare, warn_if_used=False)
    assert fixed["loopy_kernel"].id_to_insn["use"].depends_on == {"init"}
