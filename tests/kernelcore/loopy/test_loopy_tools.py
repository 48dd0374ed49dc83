"""loopy's ``loopy.tools`` helpers in kernelcore: persistent hashing of kernels,
lazily unpickling containers, ``Optional``, ``memoize_on_disk``;
``loopy.kernel.tools.SetTrie`` and ``loopy.schedule.tree.Tree``."""

from __future__ import annotations

import pickle
import uuid

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.kernel.tools import SetTrie
from kernelcore.schedule.tree import Tree
from kernelcore.tools import (
    LazilyUnpicklingDict,
    LazilyUnpicklingList,
    LazilyUnpicklingListWithEqAndPersistentHashing,
    LoopyKeyBuilder,
)


class Tracked:
    """Counts how often instances are unpickled."""

    loads = 0

    def __init__(self, value):
        self.value = value

    def __getstate__(self):
        return {"value": self.value}

    def __setstate__(self, state):
        type(self).loads += 1
        self.value = state["value"]

    def update_persistent_hash(self, key_hash, key_builder):
        key_builder.rec(key_hash, repr(self.value))


def _value(t):
    return t.value


def _value_repr(t):
    return repr(t.value)


def test_key_builder_keys_kernels_by_content():
    def make(factor):
        return lp.make_kernel("{[i]: 0<=i<10}", f"y[i] = {factor}*i")
    kb = LoopyKeyBuilder()
    knl = make(2)
    assert kb(knl) == kb(pickle.loads(pickle.dumps(knl))) == kb(make(2))
    assert kb(knl) != kb(make(3))
    assert kb([1, "a"]) == kb([1, "a"]) != kb([1, "b"])


def test_lazily_unpickling_containers():
    Tracked.loads = 0
    d = pickle.loads(pickle.dumps(LazilyUnpicklingDict({"a": Tracked(1), "b": Tracked(2)})))
    assert sorted(d) == ["a", "b"] and Tracked.loads == 0
    assert d["b"].value == 2 and Tracked.loads == 1
    assert dict(d)["a"].value == 1 and Tracked.loads == 2
    lst = pickle.loads(pickle.dumps(LazilyUnpicklingList([Tracked(5), Tracked(6)])))
    assert len(lst) == 2 and Tracked.loads == 2
    assert [t.value for t in lst] == [5, 6] and Tracked.loads == 4

    def keyed(values):
        return LazilyUnpicklingListWithEqAndPersistentHashing(
            [Tracked(v) for v in values], eq_key_getter=_value,
            persistent_hash_key_getter=_value_repr)
    Tracked.loads = 0
    a, b = (pickle.loads(pickle.dumps(keyed([1, 2]))) for _ in range(2))
    assert a == b and a == [Tracked(1), Tracked(2)] and a != keyed([1, 3])
    kb = LoopyKeyBuilder()
    assert kb(a) == kb([Tracked(1), Tracked(2)]) != kb(keyed([2, 1]))
    assert Tracked.loads == 0


def test_optional():
    assert not lp.Optional().has_value
    with pytest.raises(AttributeError):
        lp.Optional().value  # noqa: B018
    assert lp.Optional(None).has_value and lp.Optional(None).value is None
    assert lp.Optional(1) == lp.Optional(1) != lp.Optional(2)
    assert lp.Optional() != lp.Optional(None)
    assert pickle.loads(pickle.dumps(lp.Optional(3))).value == 3
    kb = LoopyKeyBuilder()
    assert kb(lp.Optional()) != kb(lp.Optional(None))


def test_memoize_on_disk_calls_once_per_argument():
    calls = []

    @lp.memoize_on_disk
    def scaled(values, factor, token):
        calls.append(factor)
        return np.asarray(values) * factor
    token = uuid.uuid4().hex         # (nothing on disk from earlier runs)
    first = scaled((1, 2), 2, token)
    assert scaled((1, 2), 2, token) is first
    np.testing.assert_array_equal(scaled((1, 2), 3, token), [3, 6])
    assert calls == [2, 3]


def test_set_trie_nests_sets_like_loops():
    trie = SetTrie()
    for key in ({"i", "j", "k"}, {"i", "j", "l"}, {"i", "m"}):
        trie.add_or_update(key)
    found = []
    trie.descend(found.append)
    assert found == [["i"], ["j"], ["k"], ["l"], ["m"]]
    trie.add_or_update({"i", "j"})          # a path already there
    with pytest.raises(ValueError):
        trie.add_or_update({"i", "l"})      # 'l' is below 'j'
    with pytest.raises(ValueError):
        trie.add_or_update({"i", "k", "m"})  # under two branches


def test_schedule_tree():
    tree = Tree.from_root("").add_node("a", parent="").add_node("b", parent="a")
    tree = tree.add_node("c", parent="a")
    assert [tree.depth(n) for n in ("", "a", "b")] == [0, 1, 2]
    assert tree.children("a") == ("b", "c") and tree.parent("b") == "a"
    renamed = tree.replace_node("a", "x")
    assert "a" not in renamed and renamed.children("x") == ("b", "c") and "a" in tree
    moved = renamed.move_node("b", new_parent="")
    assert moved.depth("b") == 1 and moved.children("x") == ("c",)
    with pytest.raises(ValueError):
        moved.move_node("x", new_parent="c")     # below itself
    with pytest.raises(ValueError):
        moved.add_node("c", parent="")
