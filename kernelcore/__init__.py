"""kernelcore: a loop-domain kernel IR with loopy's API, generating OpenCL C.

Typical use (``import kernelcore as lp``)::

    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    evt, (out,) = knl(queue, a=a)
"""

from __future__ import annotations

import logging as _logging
import os as _os

from kernelcore.callables import (
    ArrayArgDescriptor,
    FixedStrideArrayDimTag,
    InKernelCallable,
    NumpyType,
    ScalarCallable,
    ValueArgDescriptor,
)
from kernelcore.codegen.kernel import (
    CodeGenerationResult,
    generate_code,
    generate_code_v2,
    generate_header,
)
from kernelcore.creation import make_kernel
from kernelcore.diagnostic import (
    AccessOutOfBoundsError,
    AutomaticTestFailure,
    CodeGenerationError,
    InvocationError,
    KernelcoreError,
    KernelcoreWarning,
    LoopyAdvisory,
    LoopyError,
    LoopyWarning,
    MissingBarrierError,
    MissingDefinitionError,
    OpenCLBuildError,
    ParameterFinderWarning,
    ParseError,
    SchedulingError,
    StaticValueFindingError,
    TypeInferenceFailure,
    UnknownNameError,
    UnsatisfiableDomainError,
    WriteRaceConditionWarning,
)
from kernelcore.ir.data import (
    AddressSpace,
    ArrayArg,
    ConstantArg,
    GlobalArg,
    TemporaryVariable,
    ValueArg,
    auto,
)
from kernelcore.ir.expr import Reduction, TypeCast
from kernelcore.ir.instruction import Assignment, CallInstruction, CInstruction, NoOpInstruction
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.options import Options
from kernelcore.preprocess import preprocess_kernel
from kernelcore.runtime.cache import CacheMode, cache_stats, caching_enabled, set_caching_enabled
from kernelcore.runtime.device import default_context, default_queue, profiling_queue
from kernelcore.runtime.launch_slots import CompiledLaunches, Launch, compile_launches
from kernelcore.runtime.launcher_base import set_kernel_argument
from kernelcore.runtime.launchers import (
    HostLauncherI,
    KernelStatistics,
    LauncherI,
    OpenClCopyLauncher,
    OpenClIterativeKernelLauncher,
    OpenClKernelLauncher,
    OpenClKernelLauncherI,
    OpenClKernelListLauncher,
    OpenClKernelParameterGenerator,
    OpenClKernelParameterYielder,
    OpenClParametrizedKernelLauncher,
)
from kernelcore.runtime.make_launcher import make_launcher
from kernelcore.schedule.items import linearization_lines
from kernelcore.schedule.linearize import (
    get_one_linearized_kernel,
    get_one_scheduled_kernel,
    linearize,
)
from kernelcore.statistics import (
    Count,
    CountGranularity,
    MemAccess,
    Op,
    Sync,
    ToCountMap,
    get_mem_access_map,
    get_op_map,
    get_synchronization_map,
    stringify_stats_mapping,
)
from kernelcore.target.base import CFamilyTarget
from kernelcore.target.opencl import OpenCLTarget, PyOpenCLTarget
from kernelcore.testing import auto_test_vs_ref
from kernelcore.transform.data import (
    reduction_arg_to_subst_rule,
    remove_unused_arguments,
    rename_argument,
    tag_array_axes,
)
from kernelcore.transform.ilp import (
    privatize_temporaries_with_inames,
    unprivatize_temporaries_with_inames,
)
from kernelcore.transform.iname import (
    duplicate_inames,
    join_inames,
    prioritize_loops,
    rename_iname,
    split_iname,
    split_reduction_inward,
    split_reduction_outward,
    tag_inames,
)
from kernelcore.transform.instruction import add_dependency, add_nosync, remove_instructions
from kernelcore.transform.parallel import auto_parallelize
from kernelcore.transform.parameters import assume, fix_parameters
from kernelcore.transform.precompute import add_prefetch, buffer_array, precompute
from kernelcore.transform.reduction_ops import register_reduction
from kernelcore.transform.save import save_and_reload_temporaries
from kernelcore.transform.subst import assignment_to_subst, expand_subst, extract_subst
from kernelcore.transform.temporaries import set_temporary_scope
from kernelcore.translation_unit import as_kernel as _as_kernel
from kernelcore.translation_unit import for_each_kernel as _for_each_kernel
from kernelcore.types import add_and_infer_dtypes, add_dtypes, infer_types
from kernelcore.version import MOST_RECENT_LANGUAGE_VERSION, VERSION

__version__ = VERSION


def __getattr__(name: str):
    """``CACHING_ENABLED``: whether the on-disk code cache is on (see
    :func:`set_caching_enabled`), read at each access."""
    if name == "CACHING_ENABLED":
        return caching_enabled()
    raise AttributeError(f"module 'kernelcore' has no attribute '{name}'")


@_for_each_kernel
def set_options(knl: LoopKernel, *args: str, **kwargs: bool) -> LoopKernel:
    """A copy of *knl* (a kernel or a translation unit) with options changed:
    ``set_options(knl, "write_code")`` or
    ``set_options(knl, write_code=True, return_dict=True)``."""
    return knl.copy(options=knl.options.with_updates(*args, **kwargs))


def print_linearization(knl: LoopKernel) -> None:
    """Print the loop/instruction order chosen for *knl* (a kernel or the
    entry point of a translation unit)."""
    print("\n".join(linearization_lines(linearize(_as_kernel(knl)).linearization)))


def configure_logging(logger_name: str, *env_vars: str) -> None:
    """Send the records of logger *logger_name* to stderr at the level
    (``info``, ``debug``, ...) named by the first of *env_vars* that is set."""
    level = next((_os.environ[v] for v in env_vars if _os.environ.get(v)), None)
    if level:
        logger = _logging.getLogger(logger_name)
        logger.setLevel(level.upper())
        if not logger.handlers:
            handler = _logging.StreamHandler()
            handler.setFormatter(_logging.Formatter("[%(name)s] %(message)s"))
            logger.addHandler(handler)


configure_logging("kernelcore", "KERNELCORE_LOG", "LAZYARRAY_LOG")

__all__ = [
    "make_kernel", "LoopKernel", "KernelState", "Options", "set_options", "configure_logging",
    "ArrayArg", "GlobalArg", "ConstantArg", "ValueArg", "TemporaryVariable", "AddressSpace", "auto",
    "Assignment", "NoOpInstruction", "CInstruction", "Reduction", "TypeCast",
    "add_dtypes", "add_and_infer_dtypes", "infer_types",
    "prioritize_loops", "split_iname", "tag_inames", "duplicate_inames",
    "rename_iname", "join_inames", "split_reduction_inward", "split_reduction_outward",
    "reduction_arg_to_subst_rule", "tag_array_axes", "rename_argument", "remove_unused_arguments",
    "add_dependency", "add_nosync", "remove_instructions", "auto_parallelize",
    "set_temporary_scope", "save_and_reload_temporaries", "get_one_scheduled_kernel",
    "expand_subst", "assignment_to_subst", "extract_subst", "add_prefetch", "precompute",
    "privatize_temporaries_with_inames", "unprivatize_temporaries_with_inames",
    "register_reduction", "buffer_array",
    "fix_parameters", "assume",
    "preprocess_kernel", "linearize", "get_one_linearized_kernel", "print_linearization",
    "generate_code_v2", "generate_code", "generate_header", "CodeGenerationResult",
    "OpenCLTarget", "PyOpenCLTarget", "CFamilyTarget",
    "default_context", "default_queue", "profiling_queue", "cache_stats", "set_caching_enabled",
    "make_launcher", "compile_launches", "c_function", "CompiledLaunches", "Launch",
    "set_kernel_argument",
    "LauncherI", "KernelStatistics", "OpenClKernelLauncher",
    "OpenClKernelListLauncher", "OpenClParametrizedKernelLauncher",
    "OpenClIterativeKernelLauncher", "OpenClKernelParameterGenerator",
    "OpenClKernelParameterYielder", "OpenClCopyLauncher", "HostLauncherI",
    "OpenClKernelLauncherI",
    "KernelcoreError", "LoopyError", "ParseError", "UnsatisfiableDomainError",
    "UnknownNameError", "TypeInferenceFailure", "StaticValueFindingError",
    "InvocationError", "OpenCLBuildError", "SchedulingError", "CodeGenerationError",
    "MissingBarrierError", "MissingDefinitionError", "AccessOutOfBoundsError",
    "KernelcoreWarning", "LoopyWarning", "WriteRaceConditionWarning", "__version__",
    "LoopyAdvisory", "ParameterFinderWarning", "MOST_RECENT_LANGUAGE_VERSION",
    "CACHING_ENABLED", "CacheMode",
    "auto_test_vs_ref", "AutomaticTestFailure",
    "get_op_map", "get_mem_access_map", "get_synchronization_map", "ToCountMap",
    "Op", "MemAccess", "Sync", "CountGranularity", "Count", "stringify_stats_mapping",
]

from kernelcore.callable_kernel import CallableKernel  # noqa: E402
from kernelcore.callables import MathCallable  # noqa: E402
from kernelcore.creation import make_copy_kernel  # noqa: E402
from kernelcore.einsum import make_einsum  # noqa: E402
from kernelcore.ir.expr import ResolvedFunction  # noqa: E402
from kernelcore.ir.instruction import MultiAssignmentBase  # noqa: E402
from kernelcore.ir.optional import Optional  # noqa: E402
from kernelcore.ir.subst import SubstitutionRule  # noqa: E402
from kernelcore.persistence import memoize_on_disk  # noqa: E402
from kernelcore.preprocess import realize_reduction  # noqa: E402
from kernelcore.runtime.c_invoke import c_function  # noqa: E402
from kernelcore.runtime.c_invoke import invoke as _run_c  # noqa: E402, F401  (registers ExecutableCTarget's stage)
from kernelcore.target.c import CTarget, ExecutableCTarget  # noqa: E402
from kernelcore.tools import t_unit_to_python  # noqa: E402
from kernelcore.transform.arrays import split_arg_axis, split_array_axis  # noqa: E402
from kernelcore.transform.batch import to_batched  # noqa: E402
from kernelcore.transform.chunk import chunk_iname  # noqa: E402
from kernelcore.transform.data import set_argument_order  # noqa: E402
from kernelcore.transform.fusion import fuse_kernels  # noqa: E402
from kernelcore.transform.iname import rename_inames  # noqa: E402
from kernelcore.transform.iname_nesting import (  # noqa: E402
    get_iname_duplication_options,
    has_schedulable_iname_nesting,
)
from kernelcore.transform.inline import inline_callable_kernel  # noqa: E402
from kernelcore.transform.instruction import (  # noqa: E402
    add_barrier,
    add_inames_to_insn,
    find_instructions,
    find_most_recent_global_barrier,
    get_global_barrier_order,
    remove_inames_from_insn,
    remove_predicates_from_insn,
)
from kernelcore.transform.loop_fusion import (  # noqa: E402
    get_kennedy_unweighted_fusion_candidates,
    rename_inames_in_batch,
)
from kernelcore.transform.pack_args import pack_and_unpack_args_for_call  # noqa: E402
from kernelcore.transform.temporaries import (  # noqa: E402
    alias_temporaries,
    allocate_temporaries_for_base_storage,
    set_temporary_address_space,
    set_temporary_alignment,
)
from kernelcore.translation_unit import (  # noqa: E402
    TranslationUnit,
    for_each_kernel,
    make_function,
    make_program,
    merge,
    register_callable,
    rename_callable,
    resolve_callables,
)
from kernelcore.types import to_loopy_type  # noqa: E402


def infer_unknown_types(program: LoopKernel | TranslationUnit, expect_completion: bool = False
                        ) -> LoopKernel | TranslationUnit:
    """loopy's name of :func:`infer_types`: the types of unknown temporaries,
    outputs and parameters filled in (all of them with *expect_completion*)."""
    return infer_types(program, require_all=expect_completion)


#: loopy's name of :func:`preprocess_kernel` for translation units
preprocess_program = preprocess_kernel
#: loopy's old name of :func:`tag_array_axes`
tag_data_axes = tag_array_axes

__all__ += ["CTarget", "ExecutableCTarget",
            "InKernelCallable", "ScalarCallable", "CallableKernel", "NumpyType",
            "ValueArgDescriptor", "ArrayArgDescriptor", "FixedStrideArrayDimTag",
            "register_callable", "CallInstruction",
            "TranslationUnit", "merge", "make_function", "inline_callable_kernel",
            "pack_and_unpack_args_for_call", "Optional", "memoize_on_disk",
            "add_inames_to_insn",
            "make_program", "resolve_callables", "rename_callable", "for_each_kernel",
            "MathCallable", "ResolvedFunction",
            "fuse_kernels", "split_array_axis", "split_arg_axis",
            "set_temporary_address_space", "set_temporary_alignment", "realize_reduction",
            "make_einsum", "SubstitutionRule", "get_global_barrier_order",
            "find_most_recent_global_barrier", "make_copy_kernel", "to_loopy_type",
            "infer_unknown_types", "preprocess_program",
            "allocate_temporaries_for_base_storage", "t_unit_to_python",
            "set_argument_order", "rename_inames", "add_barrier", "find_instructions",
            "remove_inames_from_insn", "remove_predicates_from_insn", "MultiAssignmentBase",
            "get_kennedy_unweighted_fusion_candidates", "rename_inames_in_batch",
            "to_batched", "chunk_iname", "alias_temporaries", "tag_data_axes",
            "get_iname_duplication_options", "has_schedulable_iname_nesting"]

# What lazyarray builds on beyond loopy's API: expression helpers, kernel
# construction without a translation unit, the program cache and build
# machinery, and per-work-item totals.
from kernelcore.check_bounds import check_bounds as check_array_bounds  # noqa: E402
from kernelcore.creation import make_loop_kernel  # noqa: E402
from kernelcore.index_width import INDEX_LIMIT  # noqa: E402
from kernelcore.ir.expr import (  # noqa: E402
    IdentityMapper,
    WalkMapper,
    collect_accesses,
    find_reductions,
    get_dependencies,
    substitute,
)
from kernelcore.ir.instruction import BarrierInstruction  # noqa: E402
from kernelcore.parse import ParsedInstruction, parse_expression  # noqa: E402
from kernelcore.runtime.build import build_options, compile_program, provide_program  # noqa: E402
from kernelcore.runtime.invoke import get_executor, memory_pool  # noqa: E402
from kernelcore.runtime.once import KeyedLocks, kept, made_once  # noqa: E402
from kernelcore.runtime.store import DiskStore, default_cache_dir  # noqa: E402
from kernelcore.statistics import WorkItemTotals, get_work_item_totals  # noqa: E402
from kernelcore.transform.reduction_ops import reduction_identity  # noqa: E402
from kernelcore.version import source_fingerprint, tree_fingerprint  # noqa: E402

__all__ += ["check_array_bounds", "make_loop_kernel", "INDEX_LIMIT", "IdentityMapper",
            "WalkMapper", "collect_accesses", "find_reductions", "get_dependencies",
            "substitute", "BarrierInstruction", "ParsedInstruction", "parse_expression",
            "build_options", "compile_program", "provide_program", "get_executor",
            "memory_pool", "KeyedLocks", "made_once", "kept", "DiskStore", "default_cache_dir",
            "WorkItemTotals", "get_work_item_totals", "reduction_identity",
            "source_fingerprint", "tree_fingerprint"]

# Submodules that loopy's package makes attributes (``lp.symbolic.CombineMapper``).
from kernelcore import (  # noqa: E402, F401
    diagnostic,
    kernel,
    match,
    options,
    schedule,
    statistics,
    symbolic,
    target,
    transform,
    translation_unit,
    types,
    version,
)

# Transformations mapping inames to new ones (issue 40, L2).
from kernelcore.transform.iname_maps import (  # noqa: E402
    add_inames_for_unused_hw_axes,
    affine_map_inames,
    make_reduction_inames_unique,
    map_domain,
)

__all__ += ["add_inames_for_unused_hw_axes", "affine_map_inames",
            "make_reduction_inames_unique", "map_domain"]

from kernelcore.statistics import gather_access_footprints  # noqa: E402

__all__ += ["gather_access_footprints"]

# Splitting array axes with their inames, and padding (issue 40, L2).
from kernelcore.transform.padding import (  # noqa: E402
    add_padding,
    concatenate_arrays,
    find_padding_multiple,
    set_array_axis_names,
    split_array_dim,
)

__all__ += ["add_padding", "concatenate_arrays", "find_padding_multiple",
            "set_array_axis_names",
            "split_array_dim"]

from kernelcore.transform.instruction import UniqueName, uniquify_instruction_ids  # noqa: E402

__all__ += ["UniqueName", "uniquify_instruction_ids"]

from kernelcore.transform.indices import simplify_indices  # noqa: E402

__all__ += ["simplify_indices"]

from kernelcore.transform.arithmetic import collect_common_factors_on_increment  # noqa: E402

__all__ += ["collect_common_factors_on_increment"]

from kernelcore.ir.tags import LegacyStringInstructionTag  # noqa: E402

__all__ += ["LegacyStringInstructionTag"]
