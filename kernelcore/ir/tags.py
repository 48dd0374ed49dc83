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
filter_iname_tags_by_type, Iname, InameTagTable, is_metadata_tag,
LegacyStringInstructionTag.

Besides its implementation tag an iname may carry any number of metadata tags
(:class:`pytools.tag.Tag` instances), which change nothing in the code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from pytools.tag import Tag as _MetadataTag
from pytools.tag import UniqueTag as _UniqueMetadataTag

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


@dataclass(frozen=True)
class LegacyStringInstructionTag(_MetadataTag):
    """A tag written as a string (``a$mytag``, ``{tags=mytag}``), as loopy's."""

    value: str

    def __str__(self) -> str:
        return self.value


def is_metadata_tag(tag: Any) -> bool:
    """Whether *tag* is a metadata tag (a :class:`pytools.tag.Tag`), not an
    implementation tag."""
    return isinstance(tag, _MetadataTag)


def add_metadata_tag(tags: frozenset, tag: Any) -> frozenset:
    """*tags* with *tag* added; a :class:`pytools.tag.UniqueTag` replaces the
    tags of its unique class."""
    if isinstance(tag, _UniqueMetadataTag):
        unique_cls = next((c for c in type(tag).__mro__
                           if _UniqueMetadataTag in c.__bases__), type(tag))
        tags = frozenset(t for t in tags if not isinstance(t, unique_cls))
    return tags | {tag}


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
        """The iname *name* of *kernel* with its implementation and metadata tags."""
        return cls(name, kernel.iname_tags(name))

    def copy(self, **kwargs: Any) -> Iname:
        return replace(self, **kwargs)

    def tags_of_type(self, tag_type: Any) -> frozenset:
        """The tags that are instances of *tag_type*."""
        return frozenset(t for t in self.tags if isinstance(t, tag_type))


class InameTagTable(dict):
    """A kernel's implementation tags by iname (iname -> tag); calling it with an
    iname's name gives all that iname's tags, metadata tags included (loopy's
    ``kernel.iname_tags(iname)``)."""

    def __init__(self, tags: Any = (), metadata: Any = None) -> None:
        super().__init__(tags)
        self.metadata: dict[str, frozenset] = dict(metadata or {})

    def __call__(self, iname: str) -> frozenset:
        tag = self.get(iname)
        impl = frozenset() if tag is None else frozenset([parse_tag(tag)])
        return impl | self.metadata.get(iname, frozenset())
