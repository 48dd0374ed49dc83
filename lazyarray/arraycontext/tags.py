"""Tags on lazy arrays: array tags and per-axis tags, kept on the array handle
(beside its graph node, never in the node or its structure key, so tagged
and untagged arrays of one structure share their planned kernels).

:class:`TaggedArray` is a :class:`~lazyarray.LazyArray` with ``tags`` and
``axes`` (each axis an :class:`Axis` with its own ``tags``), the interface of
pytato's arrays and arraycontext's ``TaggableCLArray``. Operations on a
tagged array give plain lazy arrays: tags describe one value, they do not
flow through arithmetic. :func:`tags_of` and :func:`axes_of` read any array
(no tags on a plain one).

Public names: Axis, TaggedArray, tags_of, axes_of,
tagged, with_axis_tagged, normalize_tags.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pytools.tag import Tag, Taggable

from lazyarray.graph import Node
from lazyarray.handle import LazyArray

_NO_TAGS: frozenset[Tag] = frozenset()


def normalize_tags(tags: Any) -> frozenset[Tag]:
    """*tags* (None, one tag or an iterable of tags) as a frozenset."""
    if tags is None:
        return _NO_TAGS
    if isinstance(tags, Tag):
        return frozenset((tags,))
    if isinstance(tags, Iterable):
        result = frozenset(tags)
        for t in result:
            if not isinstance(t, Tag):
                raise TypeError(f"not a tag: {t!r}")
        return result
    raise TypeError(f"not a tag or a collection of tags: {tags!r}")


class Axis(Taggable):
    """One axis of a tagged array: its *tags*."""

    def __init__(self, tags: frozenset[Tag] = _NO_TAGS):
        self.tags = frozenset(tags)

    def _with_new_tags(self, tags: frozenset[Tag]) -> Axis:
        return Axis(tags)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Axis) and other.tags == self.tags

    def __hash__(self) -> int:
        return hash(("Axis", self.tags))

    def __repr__(self) -> str:
        return f"Axis({set(self.tags) or '{}'})"


class TaggedArray(LazyArray):
    """A lazy array with ``tags`` (a frozenset of :class:`pytools.tag.Tag`)
    and ``axes`` (one :class:`Axis` per dimension). It holds the same graph
    node as the array it was made from."""

    def __init__(self, node: Node, tags: frozenset[Tag] = _NO_TAGS,
                 axes: tuple[Axis, ...] | None = None):
        super().__init__(node)
        self.tags = frozenset(tags)
        if axes is None:
            axes = tuple(Axis() for _ in range(len(node.shape)))
        if len(axes) != len(node.shape):
            raise ValueError(f"{len(axes)} axes given for an array of {len(node.shape)}")
        self.axes = tuple(axes)

    def tags_of_type(self, tag_t: type) -> frozenset[Tag]:
        """The tags that are instances of *tag_t*."""
        return frozenset(t for t in self.tags if isinstance(t, tag_t))

    def tags_not_of_type(self, tag_t: type) -> frozenset[Tag]:
        """The tags that are not instances of *tag_t*."""
        return frozenset(t for t in self.tags if not isinstance(t, tag_t))

    def tagged(self, tags: Any) -> TaggedArray:
        """A tagged copy of the handle with *tags* added."""
        return tagged(self, tags)

    def without_tags(self, tags: Any, verify_existence: bool = True) -> TaggedArray:
        """A copy of the handle without *tags*."""
        drop = normalize_tags(tags)
        if verify_existence and not drop <= self.tags:
            raise ValueError(f"tags {set(drop - self.tags)} are not present")
        return TaggedArray(self.node, self.tags - drop, self.axes)

    def with_tagged_axis(self, iaxis: int, tags: Any) -> TaggedArray:
        """A copy of the handle with *tags* added to axis *iaxis*."""
        return with_axis_tagged(self, iaxis, tags)


def tags_of(x: Any) -> frozenset[Tag]:
    """The tags of *x* (none for an untagged array or a scalar)."""
    return frozenset(getattr(x, "tags", _NO_TAGS) or _NO_TAGS)


def axes_of(x: Any) -> tuple[Axis, ...]:
    """The axes of *x* with their tags (untagged axes for a plain array)."""
    axes = getattr(x, "axes", None)
    ndim = len(getattr(x, "shape", ()))
    if axes is None or len(axes) != ndim:
        return tuple(Axis() for _ in range(ndim))
    return tuple(a if isinstance(a, Axis) else Axis(frozenset(getattr(a, "tags", ())))
                 for a in axes)


def tagged(x: LazyArray, tags: Any) -> TaggedArray:
    """A handle on *x*'s value with *tags* added to *x*'s own (*x* unchanged)."""
    return TaggedArray(x.node, tags_of(x) | normalize_tags(tags), axes_of(x))


def with_axis_tagged(x: LazyArray, iaxis: int, tags: Any) -> TaggedArray:
    """A handle on *x*'s value with *tags* added to axis *iaxis*."""
    axes = list(axes_of(x))
    if not -len(axes) <= iaxis < len(axes):
        raise IndexError(f"axis {iaxis} out of range for an array of {len(axes)} axes")
    axes[iaxis] = Axis(axes[iaxis].tags | normalize_tags(tags))
    return TaggedArray(x.node, tags_of(x), tuple(axes))


__all__ = ["Axis", "TaggedArray", "tags_of", "axes_of",
           "tagged", "with_axis_tagged", "normalize_tags"]
