"""Iname implementation tags: how a loop index is realized in code.

==========  ==========================================================
``None``    a sequential ``for`` loop (also spelled ``"for"``)
``"unr"``   a fully unrolled loop (fixed maximum extent)
``"l.N"``   the work-item index within a work-group, axis N
``"g.N"``   the work-group index, axis N
``"ilp"``   unrolled, with private temporaries expanded per iteration
            (also ``"ilp.unr"``; ``"ilp.seq"`` keeps a loop)
``"vec"``   like ``"ilp"``, generated as OpenCL vector operations (one
            statement for all iterations, ``vloadN``/``vstoreN``) where
            the body allows, else unrolled
==========  ==========================================================

Public names: parse_tag, UnrollTag, LocalIndexTag, GroupIndexTag, IlpTag,
VectorizeTag, is_hw_parallel, is_lane_tag, HW_AXIS_LIMIT, VECTOR_WIDTHS, and
loopy's names: LocalInameTag, GroupInameTag, IlpBaseTag, UnrolledIlpTag,
LoopedIlpTag, InameImplementationTag, HardwareConcurrentTag, ConcurrentTag,
filter_iname_tags_by_type, Iname.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kernelcore.diagnostic import KernelcoreError, ParseError

HW_AXIS_LIMIT = 3

#: the lane counts OpenCL has vector types for (a ``vec`` iname's extent)
VECTOR_WIDTHS = (2, 3, 4, 8, 16)


@dataclass(frozen=True)
class UnrollTag:
    def __str__(self) -> str:
        return "unr"


@dataclass(frozen=True)
class LocalIndexTag:
    axis: int

    def __str__(self) -> str:
        return f"l.{self.axis}"


@dataclass(frozen=True)
class GroupIndexTag:
    axis: int

    def __str__(self) -> str:
        return f"g.{self.axis}"


@dataclass(frozen=True)
class IlpTag:
    unrolled: bool = True

    def __str__(self) -> str:
        return "ilp.unr" if self.unrolled else "ilp.seq"


@dataclass(frozen=True)
class VectorizeTag:
    def __str__(self) -> str:
        return "vec"


Tag = UnrollTag | LocalIndexTag | GroupIndexTag | IlpTag | VectorizeTag | None


def parse_tag(tag: Any) -> Tag:
    """A tag object from its spelling (or pass a tag object through)."""
    if tag is None or isinstance(tag, (UnrollTag, LocalIndexTag, GroupIndexTag, IlpTag,
                                       VectorizeTag)):
        return tag
    if not isinstance(tag, str):
        raise ParseError(f"invalid iname tag {tag!r}")
    t = tag.strip()
    if t in ("for", "None", "", "unr_hint"):    # loopy's unroll hint: a plain loop here
        return None
    if t == "unr":
        return UnrollTag()
    if t in ("ilp", "ilp.unr"):
        return IlpTag(True)
    if t == "ilp.seq":
        return IlpTag(False)
    if t == "vec":
        return VectorizeTag()
    m = re.fullmatch(r"([lg])\.(\d+)", t)
    if m:
        axis = int(m.group(2))
        if axis >= HW_AXIS_LIMIT:
            raise ParseError(f"iname tag {t!r}: OpenCL has only {HW_AXIS_LIMIT} axes")
        return LocalIndexTag(axis) if m.group(1) == "l" else GroupIndexTag(axis)
    raise ParseError(f"unknown iname tag {t!r} (known: for, unr, unr_hint, l.N, g.N, ilp, "
                     "ilp.unr, ilp.seq, vec)")


def is_hw_parallel(tag: Any) -> bool:
    return isinstance(tag, (LocalIndexTag, GroupIndexTag))


def is_lane_tag(tag: Any) -> bool:
    """Whether *tag* makes independent lanes (``ilp``, ``vec``): private
    temporaries get a copy per lane and the loop goes innermost."""
    return isinstance(tag, (IlpTag, VectorizeTag))


def is_unrolled(tag: Any) -> bool:
    return isinstance(tag, (UnrollTag, VectorizeTag)) or (
        isinstance(tag, IlpTag) and tag.unrolled)


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
