"""Persistent hashing, lazily unpickled containers and memoization, as loopy's
``loopy.tools`` has them.

Public names: LoopyKeyBuilder, LazilyUnpicklingDict,
LazilyUnpicklingList, LazilyUnpicklingListWithEqAndPersistentHashing,
memoize_on_disk (``Optional`` is :mod:`kernelcore.ir.optional`'s).

:class:`LoopyKeyBuilder` is a :class:`pytools.persistent_dict.KeyBuilder` that
also keys kernelcore's objects (kernels, translation units, ...: by their
content, :func:`kernelcore.runtime.fingerprint.describe`) and lists (by their
items). The lazily unpickling containers keep each element pickled after a
round trip through :mod:`pickle` until it is asked for.
"""

from __future__ import annotations

import functools
import logging
import pickle
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from pytools.persistent_dict import KeyBuilder, WriteOncePersistentDict

from kernelcore.runtime.cache import caching_enabled
from kernelcore.runtime.fingerprint import describe

logger = logging.getLogger(__name__)

_UNSET = object()


class LoopyKeyBuilder(KeyBuilder):
    """Persistent hashes of kernelcore's objects (by content) and of lists,
    besides what :class:`~pytools.persistent_dict.KeyBuilder` takes."""

    def rec(self, key_hash: Any, key: Any) -> Any:
        module = type(key).__module__ or ""
        if module == "kernelcore" or module.startswith("kernelcore.") and not hasattr(
                key, "update_persistent_hash"):
            key_hash.update(describe(key).encode())
            return key_hash
        return super().rec(key_hash, key)

    def update_for_list(self, key_hash: Any, key: list) -> None:
        for item in key:
            self.rec(key_hash, item)

    def update_for_dict(self, key_hash: Any, key: dict) -> None:
        for k in sorted(key, key=repr):
            self.rec(key_hash, (k, key[k]))


class _Pickled:
    """An element kept as its pickle until it is asked for."""

    def __init__(self, data: bytes):
        self.data = data

    def load(self) -> Any:
        return pickle.loads(self.data)


def _pickled(value: Any) -> _Pickled:
    return value if isinstance(value, _Pickled) else _Pickled(pickle.dumps(value))


class LazilyUnpicklingDict(MutableMapping):
    """A dictionary whose values, after being pickled, are unpickled one at a
    time, when asked for."""

    def __init__(self, mapping: Mapping | None = None):
        self._map: dict = dict(mapping or {})

    def __getitem__(self, key: Any) -> Any:
        value = self._map[key]
        if isinstance(value, _Pickled):
            value = self._map[key] = value.load()
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        self._map[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._map[key]

    def __iter__(self) -> Iterator:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __getstate__(self) -> dict:
        return {"map": {k: _pickled(v).data for k, v in self._map.items()}}

    def __setstate__(self, state: dict) -> None:
        self._map = {k: _Pickled(v) for k, v in state["map"].items()}


class LazilyUnpicklingList:
    """A list whose elements, after being pickled, are unpickled one at a
    time, when asked for."""

    def __init__(self, items: Any = ()):
        self._items: list = list(items)

    def __getitem__(self, index: int) -> Any:
        value = self._items[index]
        if isinstance(value, _Pickled):
            value = self._items[index] = value.load()
        return value

    def __setitem__(self, index: int, value: Any) -> None:
        self._items[index] = value

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator:
        for k in range(len(self._items)):
            yield self[k]

    def append(self, value: Any) -> None:
        self._items.append(value)

    def __add__(self, other: Any) -> LazilyUnpicklingList:
        return type(self)(list(self) + list(other))

    def __getstate__(self) -> dict:
        return {"items": [_pickled(v).data for v in self._items]}

    def __setstate__(self, state: dict) -> None:
        self._items = [_Pickled(v) for v in state["items"]]


class LazilyUnpicklingListWithEqAndPersistentHashing(LazilyUnpicklingList):
    """A :class:`LazilyUnpicklingList` that compares (with such lists and plain
    lists) and hashes persistently without unpickling: each element's
    ``eq_key_getter(element)`` and ``persistent_hash_key_getter(element)`` are
    kept beside its pickle. An element keyed this way must hash as an object
    whose ``update_persistent_hash`` hashes its persistent-hash key."""

    def __init__(self, items: Any = (), eq_key_getter: Callable[[Any], Any] = repr,
                 persistent_hash_key_getter: Callable[[Any], Any] = repr):
        super().__init__(items)
        self.eq_key_getter = eq_key_getter
        self.persistent_hash_key_getter = persistent_hash_key_getter
        self._eq_keys: list = [eq_key_getter(v) for v in self._items]
        self._hash_keys: list = [persistent_hash_key_getter(v) for v in self._items]

    def __setitem__(self, index: int, value: Any) -> None:
        super().__setitem__(index, value)
        self._eq_keys[index] = self.eq_key_getter(value)
        self._hash_keys[index] = self.persistent_hash_key_getter(value)

    def append(self, value: Any) -> None:
        super().append(value)
        self._eq_keys.append(self.eq_key_getter(value))
        self._hash_keys.append(self.persistent_hash_key_getter(value))

    def __add__(self, other: Any) -> LazilyUnpicklingListWithEqAndPersistentHashing:
        return type(self)(list(self) + list(other), self.eq_key_getter,
                          self.persistent_hash_key_getter)

    def _keys_of(self, other: Any) -> list | None:
        if isinstance(other, LazilyUnpicklingListWithEqAndPersistentHashing):
            return other._eq_keys
        if isinstance(other, list):
            return [self.eq_key_getter(v) for v in other]
        return None

    def __eq__(self, other: object) -> bool:
        keys = self._keys_of(other)
        return NotImplemented if keys is None else self._eq_keys == keys

    def __ne__(self, other: object) -> bool:
        keys = self._keys_of(other)
        return NotImplemented if keys is None else self._eq_keys != keys

    __hash__ = None  # type: ignore[assignment]

    def update_persistent_hash(self, key_hash: Any, key_builder: KeyBuilder) -> None:
        # as a list of elements hashing their keys (LoopyKeyBuilder.update_for_list)
        for key in self._hash_keys:
            inner = key_builder.new_hash()
            key_builder.rec(inner, key)
            key_hash.update(inner.digest())

    def __getstate__(self) -> dict:
        return {**super().__getstate__(), "eq_keys": self._eq_keys,
                "hash_keys": self._hash_keys, "eq_key_getter": self.eq_key_getter,
                "persistent_hash_key_getter": self.persistent_hash_key_getter}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._eq_keys, self._hash_keys = state["eq_keys"], state["hash_keys"]
        self.eq_key_getter = state["eq_key_getter"]
        self.persistent_hash_key_getter = state["persistent_hash_key_getter"]


_MEMO: dict[str, Any] = {}
_MEMO_LOCK = threading.Lock()
_DISK: list[WriteOncePersistentDict] = []


def _disk() -> WriteOncePersistentDict | None:
    if not _DISK:
        try:
            _DISK.append(WriteOncePersistentDict("kernelcore-memoize-on-disk-v1",
                                                 key_builder=LoopyKeyBuilder()))
        except OSError as e:        # no writable cache folder: memory only
            logger.info("memoize_on_disk: no disk cache (%s)", e)
            return None
    return _DISK[0]


def memoize_on_disk(func: Callable) -> Callable:
    """*func* with its results kept, keyed by :class:`LoopyKeyBuilder` hashes of
    its arguments, in this process and on disk (while ``CACHING_ENABLED``)."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not caching_enabled():
            return func(*args, **kwargs)
        key = LoopyKeyBuilder()((func.__module__, func.__qualname__, args,
                                 tuple(sorted(kwargs.items()))))
        with _MEMO_LOCK:
            if key in _MEMO:
                return _MEMO[key]
        disk = _disk()
        result = _UNSET
        if disk is not None:
            try:
                result = disk[key]
            except KeyError:
                pass
        if result is _UNSET:
            result = func(*args, **kwargs)
            if disk is not None:
                try:
                    disk[key] = result
                except Exception as e:      # an unpicklable result: memory only
                    logger.info("memoize_on_disk: %s not stored on disk (%s)",
                                func.__qualname__, e)
        with _MEMO_LOCK:
            return _MEMO.setdefault(key, result)
    return wrapper
