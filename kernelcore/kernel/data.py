"""Kernel arguments, temporaries and iname tags at loopy's module path
(``loopy.kernel.data``), defined in :mod:`kernelcore.ir.data`,
:mod:`kernelcore.ir.tags` and :mod:`kernelcore.ir.subst`.

Public names: auto, AddressSpace, temp_var_scope, KernelArgument, ArrayArg,
GlobalArg, ConstantArg, ValueArg, TemporaryVariable, SubstitutionRule,
InameImplementationTag, UnrollTag, LocalInameTag, LocalIndexTag, GroupInameTag,
GroupIndexTag, IlpBaseTag, UnrolledIlpTag, LoopedIlpTag, VectorizeTag,
HardwareConcurrentTag, ConcurrentTag, filter_iname_tags_by_type, Iname.
"""

from kernelcore.ir.data import (
    AddressSpace,
    ArrayArg,
    ConstantArg,
    GlobalArg,
    KernelArgument,
    TemporaryVariable,
    ValueArg,
    auto,
    temp_var_scope,
)
from kernelcore.ir.subst import SubstitutionRule
from kernelcore.ir.tags import (
    ConcurrentTag,
    GroupInameTag,
    GroupIndexTag,
    HardwareConcurrentTag,
    IlpBaseTag,
    Iname,
    InameImplementationTag,
    LocalInameTag,
    LocalIndexTag,
    LoopedIlpTag,
    UnrolledIlpTag,
    UnrollTag,
    VectorizeTag,
    filter_iname_tags_by_type,
)

__all__ = ["auto", "AddressSpace", "temp_var_scope", "KernelArgument", "ArrayArg",
           "GlobalArg", "ConstantArg", "ValueArg", "TemporaryVariable", "SubstitutionRule",
           "InameImplementationTag", "UnrollTag", "LocalInameTag", "LocalIndexTag",
           "GroupInameTag", "GroupIndexTag", "IlpBaseTag", "UnrolledIlpTag",
           "LoopedIlpTag", "VectorizeTag", "HardwareConcurrentTag", "ConcurrentTag",
           "filter_iname_tags_by_type", "Iname"]
