"""Kernel arguments, temporaries and iname tags at loopy's module path
(``loopy.kernel.data``).

Public names: auto, AddressSpace, temp_var_scope, KernelArgument, ArrayArg,
GlobalArg, ConstantArg, ValueArg, TemporaryVariable, SubstitutionRule,
InameImplementationTag, UnrollTag, LocalInameTag, LocalIndexTag, GroupInameTag,
GroupIndexTag, IlpBaseTag, UnrolledIlpTag, LoopedIlpTag, VectorizeTag,
HardwareConcurrentTag, ConcurrentTag, filter_iname_tags_by_type, Iname.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import (
    AddressSpace,
    ArrayArg,
    ConstantArg,
    GlobalArg,
    KernelArgument,
    TemporaryVariable,
    ValueArg,
    auto,
)
from kernelcore.ir.subst import SubstitutionRule
from kernelcore.ir.tags import (
    GroupIndexTag,
    IlpTag,
    LocalIndexTag,
    UnrollTag,
    VectorizeTag,
    parse_tag,
)

#: loopy's older name of :class:`AddressSpace`
temp_var_scope = AddressSpace

# loopy's tag class names
LocalInameTag = LocalIndexTag
GroupInameTag = GroupIndexTag
IlpBaseTag = IlpTag
InameImplementationTag = (UnrollTag, LocalIndexTag, GroupIndexTag, IlpTag, VectorizeTag)
HardwareConcurrentTag = (LocalIndexTag, GroupIndexTag)
ConcurrentTag = (LocalIndexTag, GroupIndexTag, IlpTag, VectorizeTag)


def UnrolledIlpTag() -> IlpTag:
    """The ``ilp`` / ``ilp.unr`` tag."""
    return IlpTag(True)


def LoopedIlpTag() -> IlpTag:
    """The ``ilp.seq`` tag."""
    return IlpTag(False)


def filter_iname_tags_by_type(tags: Iterable[Any], tag_type: Any,
                              max_num: int | None = None, min_num: int | None = None
                              ) -> set[Any]:
    """The tags of *tags* that are instances of *tag_type* (a class or a
    tuple of classes), checked to be between *min_num* and *max_num* many."""
    result = {t for t in tags if isinstance(t, tag_type)}
    if max_num is not None and len(result) > max_num:
        raise KernelcoreError(f"cannot have more than {max_num} tags of type(s) {tag_type}")
    if min_num is not None and len(result) < min_num:
        raise KernelcoreError(f"must have at least {min_num} tags of type(s) {tag_type}")
    return result


@dataclass(frozen=True)
class Iname:
    """A loop index and its tags (``kernel.inames[name]`` in loopy)."""

    name: str
    tags: frozenset = frozenset()

    @classmethod
    def of(cls, kernel: Any, name: str) -> Iname:
        """The iname *name* of *kernel* with its implementation tag."""
        tag = kernel.iname_tags.get(name)
        return cls(name, frozenset() if tag is None else frozenset([parse_tag(tag)]))


__all__ = ["auto", "AddressSpace", "temp_var_scope", "KernelArgument", "ArrayArg",
           "GlobalArg", "ConstantArg", "ValueArg", "TemporaryVariable", "SubstitutionRule",
           "InameImplementationTag", "UnrollTag", "LocalInameTag", "LocalIndexTag",
           "GroupInameTag", "GroupIndexTag", "IlpBaseTag", "UnrolledIlpTag",
           "LoopedIlpTag", "VectorizeTag", "HardwareConcurrentTag", "ConcurrentTag",
           "filter_iname_tags_by_type", "Iname"]
