"""The disk caches under damage and concurrency, and what their keys cover.

* Entries of kernelcore's code cache and of lazyarray's recipe cache with
  flipped bits (at every byte of a real entry), truncated, replaced by
  garbage or moved to another key are detected, logged and rebuilt; results
  stay equal to NumPy's.
* Database files with flipped bits, truncated or replaced by garbage are
  replaced; no exception reaches the caller.
* Processes writing the same keys at the same time leave a consistent store.
* The code key covers registered callables (their class's code, the globals
  it reads, their fields), silenced warnings, options and the target: the
  same kernel text with another callable never runs the first one's code, in
  one process or from the disk cache in the next.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kernelcore as lp
import lazyarray as la
from kernelcore.runtime import cache as code_cache
from kernelcore.runtime.store import DiskStore
from lazyarray.run import cache as recipe_cache

# {{{ helpers


def _rows(path: str) -> dict[str, tuple]:
    with sqlite3.connect(path) as conn:
        return {k: (d, c) for k, d, c in conn.execute("SELECT key, digest, content FROM entries")}


def _write_row(path: str, key: str, digest, content) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT OR REPLACE INTO entries VALUES (?, ?, ?)", (key, digest, content))
    conn.close()


def _flipped(data: bytes, position: int) -> bytes:
    """*data* with bit ``position % 8`` of byte *position* inverted."""
    return data[:position] + bytes([data[position] ^ (1 << position % 8)]) + data[position + 1:]


def _isolated_code_cache(monkeypatch, directory) -> DiskStore:
    store = DiskStore("kernelcore-code-v2", str(directory))
    monkeypatch.setattr(code_cache, "_DISK", {"store": store})
    monkeypatch.setattr(code_cache, "_MEMORY", {})
    return store


def _stencil_kernel():
    knl = lp.make_kernel("{ [i]: 0<=i<n-2 }", "out[i] = a[i] - 2*a[i+1] + a[i+2]",
                         [lp.GlobalArg("a", np.float32, shape=("n",)),
                          lp.GlobalArg("out", np.float32, shape=("n-2",)), "..."])
    return knl


def _stencil(a: np.ndarray) -> np.ndarray:
    return a[:-2] - 2 * a[1:-1] + a[2:]

# }}}


# {{{ damaged entries

def test_every_flipped_bit_of_a_code_entry_is_detected(tmp_path, monkeypatch, caplog):
    from kernelcore.codegen.kernel import generate_code_v2
    from kernelcore.runtime.invoke import cached_code, get_executor
    store = _isolated_code_cache(monkeypatch, tmp_path)
    a = np.random.default_rng(1).random(100, dtype=np.float32)
    typed = get_executor(_stencil_kernel(), {"a": a}).knl
    key, code = cached_code(typed)
    (digest, content), = _rows(store.path).values()
    record = digest.encode() + content
    damaged = []
    for position in range(len(record)):
        bad = _flipped(record, position)
        damaged.append((bad[:len(digest)].decode("latin-1"), bad[len(digest):]))
    damaged += [(digest, content[:n]) for n in (0, 1, len(content) // 2, len(content) - 1)]
    damaged += [(digest, os.urandom(len(content))), (digest, "text"), (None, content)]
    for bad_digest, bad_content in damaged:
        _write_row(store.path, key, bad_digest, bad_content)
        code_cache._MEMORY.clear()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="kernelcore.runtime.store"):
            assert code_cache.code_cache_get(key) is None
        assert "damaged cache entry" in caplog.text
    # the damaged entry is generated again and stored intact
    generated = []
    code_cache._MEMORY.clear()
    rebuilt = code_cache.code_for(key, lambda: generated.append(1) or generate_code_v2(typed))
    assert generated == [1] and rebuilt.device_code() == code.device_code()
    code_cache._MEMORY.clear()
    assert code_cache.code_cache_get(key).device_code() == code.device_code()


def test_an_entry_moved_to_another_key_is_detected(tmp_path, monkeypatch, caplog):
    """A digest covers the key: an intact entry read under another key is damage."""
    store = DiskStore("moved", str(tmp_path))
    store.put("first", {"stencil": [1, -2, 1]})
    store.put("second", {"stencil": [1, 2, 1]})
    rows = _rows(store.path)
    _write_row(store.path, "second", *rows["first"])
    with caplog.at_level(logging.WARNING, logger="kernelcore.runtime.store"):
        assert store.get("second") is None
        assert store.get("first") == {"stencil": [1, -2, 1]}
    assert "damaged cache entry" in caplog.text


#: damage to the stored entry of the stencil (digest, content, where its
#: source starts): its detection is checked for every kind and every byte in
#: one process above; the new process is checked by default for a flipped bit
_DAMAGES = {
    "flipped bit": lambda digest, content, source: (digest, _flipped(content, source + 2)),
    "truncated": lambda digest, content, source: (digest, content[:-9]),
    "digest": lambda digest, content, source: (_flipped(digest.encode(), 3).decode(), content),
    "garbage": lambda digest, content, source: (digest, b"\x80\x05junk"),
}


@pytest.mark.parametrize("damage", [
    "flipped bit", *(pytest.param(d, marks=pytest.mark.slow) for d in list(_DAMAGES)[1:])])
def test_damaged_code_entries_are_rebuilt_in_a_new_process(tmp_path, damage):
    """Across processes: the stencil is right after the damage, and the entry
    is regenerated (not loaded) and then loaded again."""
    script = """
import json, numpy as np, kernelcore as lp
knl = lp.make_kernel("{ [i]: 0<=i<n-2 }", "out[i] = a[i] - 2*a[i+1] + a[i+2]",
                     [lp.GlobalArg("a", np.float32, shape=("n",)),
                      lp.GlobalArg("out", np.float32, shape=("n-2",)), "..."])
a = np.random.default_rng(2).random(300, dtype=np.float32)
evt, (out,) = knl(None, a=a)
s = lp.cache_stats()
print(json.dumps({"ok": bool(np.allclose(out, a[:-2] - 2 * a[1:-1] + a[2:], atol=1e-6)),
                  "codegen": s["codegen"], "disk_hits": s["disk_hits"]}))
"""
    env = dict(os.environ, KERNELCORE_CACHE_DIR=str(tmp_path))

    def child() -> tuple[dict, str]:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr

    first, _ = child()
    assert first == {"ok": True, "codegen": 1, "disk_hits": 0}
    path = str(tmp_path / "kernelcore-code-v2.sqlite")
    (key, (digest, content)), = _rows(path).items()
    source = content.find(b"a[")      # in the stencil's source text
    assert source > 0
    _write_row(path, key, *_DAMAGES[damage](digest, content, source))
    report, stderr = child()
    assert report == {"ok": True, "codegen": 1, "disk_hits": 0}, stderr
    assert "damaged cache entry" in stderr
    report, _ = child()
    assert report == {"ok": True, "codegen": 0, "disk_hits": 1}


def test_flipped_bits_in_a_recipe_never_run(tmp_path, monkeypatch, caplog, fresh_kernels):
    """A lazyarray stencil whose stored recipe has a flipped bit (at positions
    spread over the whole entry) is right, and its recipe stored again."""
    monkeypatch.setenv("LAZYARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(recipe_cache, "_DISK", {})
    x = np.random.default_rng(3).random(500).astype(np.float32)

    def stencil() -> np.ndarray:
        fresh_kernels()
        a = la.asarray(x)
        return np.asarray(a[2:] - 2 * a[1:-1] + a[:-2])

    np.testing.assert_allclose(stencil(), _stencil(x), atol=1e-6)
    path = str(tmp_path / "lazyarray-recipes-v2.sqlite")
    (key, (digest, content)), = _rows(path).items()
    record = digest.encode() + content
    hits = recipe_cache.STATS["disk_hits"]
    for position in range(0, len(record), max(1, len(record) // 40)):
        bad = _flipped(record, position)
        _write_row(path, key, bad[:len(digest)].decode("latin-1"), bad[len(digest):])
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="kernelcore.runtime.store"):
            np.testing.assert_allclose(stencil(), _stencil(x), atol=1e-6)
        assert "damaged cache entry" in caplog.text
        assert recipe_cache.STATS["disk_hits"] == hits        # never loaded
        assert _rows(path)[key][0] == digest                   # stored again
    np.testing.assert_allclose(stencil(), _stencil(x), atol=1e-6)
    assert recipe_cache.STATS["disk_hits"] == hits + 1

# }}}


# {{{ damaged files

def _filled_store(directory) -> tuple[DiskStore, dict]:
    store = DiskStore("filled", str(directory))
    values = {f"key{k}": {"k": k, "data": np.arange(50 * k, dtype=np.float64) / 3}
              for k in range(40)}
    for key, value in values.items():
        assert store.put(key, value)
    return store, values


def _check_usable(store: DiskStore, values: dict) -> None:
    """Every read is a miss or the stored value; writes work again."""
    for key, value in values.items():
        got = store.get(key)
        assert got is None or (got["k"] == value["k"]
                               and np.array_equal(got["data"], value["data"]))
    assert store.put("after", [1, 2, 3])
    assert store.get("after") == [1, 2, 3]


def test_database_files_with_flipped_bits(tmp_path, caplog):
    store, values = _filled_store(tmp_path)
    store._close()
    pristine = Path(store.path).read_bytes()
    positions = sorted(set(range(0, 120, 3))
                       | set(range(0, len(pristine), max(1, len(pristine) // 150))))
    for position in positions:
        with open(store.path, "wb") as f:
            f.write(_flipped(pristine, position))
        _check_usable(DiskStore("filled", str(tmp_path)), values)


@pytest.mark.parametrize("damage", ["empty", "header", "half", "last byte", "garbage"])
def test_truncated_or_garbage_database_files(tmp_path, caplog, damage):
    store, values = _filled_store(tmp_path)
    store._close()
    data = Path(store.path).read_bytes()
    damaged = {"empty": b"", "header": data[:50], "half": data[:len(data) // 2],
               "last byte": data[:-1], "garbage": os.urandom(len(data))}[damage]
    with open(store.path, "wb") as f:
        f.write(damaged)
    with caplog.at_level(logging.WARNING, logger="kernelcore.runtime.store"):
        _check_usable(DiskStore("filled", str(tmp_path)), values)
    if damage == "garbage":
        assert "damaged" in caplog.text


def test_unreadable_cache_directory_is_a_miss(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = DiskStore("x", str(blocker))
    with caplog.at_level(logging.WARNING, logger="kernelcore.runtime.store"):
        assert store.get("k") is None
        assert not store.put("k", 1)
    assert "unusable" in caplog.text

# }}}


# {{{ concurrent writers

_WRITER = """
import sys
import numpy as np
from kernelcore.runtime.store import DiskStore
store = DiskStore("shared", sys.argv[1])
rng = np.random.default_rng(int(sys.argv[2]))
for _ in range(3):
    for k in rng.permutation(30):
        value = {"k": int(k), "data": np.arange(3000 + 10 * k) * float(k)}
        assert store.put(f"key{k}", value)
        got = store.get(f"key{k}")
        assert got["k"] == k and np.array_equal(got["data"], value["data"])
print("done")
"""


def test_processes_writing_the_same_keys_at_once(tmp_path):
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(seed)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for seed in range(4)]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0 and "done" in out, err[-3000:]
    path = str(tmp_path / "shared.sqlite")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = DiskStore("shared", str(tmp_path))
    for k in range(30):
        got = store.get(f"key{k}")
        assert got["k"] == k and np.array_equal(got["data"], np.arange(3000 + 10 * k) * k)


_LAZY = """
import json, sys
import numpy as np
import lazyarray as la
from lazyarray.lower import kernel as lower
from lazyarray.run import cache
lowered = []
from lazyarray.run import steps as runtime
def counting(original):
    def build(node, inputs, *rest, **options):
        lowered.append(type(node).__name__)
        return original(node, inputs, *rest, **options)
    return build
# (shape-specific kernels, and flat ones taking their sizes as arguments)
runtime.build_kernel = counting(lower.build_kernel)
runtime.build_flat_kernel = counting(runtime.build_flat_kernel)
x = np.linspace(-2, 2, 4000, dtype=np.float32).reshape(40, 100)
a = la.asarray(x)
checks = [np.allclose(np.asarray(a[:, 2:] - 2 * a[:, 1:-1] + a[:, :-2]),
                      x[:, 2:] - 2 * x[:, 1:-1] + x[:, :-2], atol=1e-5),
          np.allclose(np.asarray(np.exp(a).sum(axis=0)), np.exp(x).sum(axis=0), rtol=1e-5),
          np.allclose(np.asarray(a @ a.T), x @ x.T, rtol=1e-4, atol=1e-4)]
print(json.dumps({"ok": all(checks), "lowered": len(lowered),
                  "hits": cache.STATS["disk_hits"]}))
"""


def test_processes_filling_one_cold_cache_at_once(tmp_path):
    """Three processes plan, build and store the same kernels at the same
    time; a fourth one loads all of them."""
    def start(name):
        # (the device tier: the small arrays plan and build kernels whatever
        # tier the tests around this one left in the environment)
        env = dict(os.environ, KERNELCORE_CACHE_DIR=str(tmp_path / "cache"),
                   LAZYARRAY_CACHE_DIR=str(tmp_path / "cache"), LAZYARRAY_TIER="device",
                   POCL_CACHE_DIR=str(tmp_path / f"pocl-{name}"))
        return subprocess.Popen([sys.executable, "-c", _LAZY], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def report(process) -> dict:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-3000:]
        return json.loads(out.strip().splitlines()[-1])

    first = [report(p) for p in [start(k) for k in range(3)]]
    assert all(r["ok"] and r["lowered"] for r in first)
    last = report(start("last"))
    assert last == {"ok": True, "lowered": 0, "hits": first[0]["lowered"] + first[0]["hits"]}

# }}}


# {{{ what the code key covers

class _Preamble(lp.ScalarCallable):
    """``f(v)``: a float function whose body a subclass's BODY gives."""

    BODY = "v"

    def with_types(self, arg_id_to_dtype, callables_table):
        t = arg_id_to_dtype.get(0)
        if t is None:
            return self, callables_table
        return self.copy(name_in_target="f_impl", arg_id_to_dtype={0: t, -1: t}), \
            callables_table

    def generate_preambles(self, target):
        yield ("50_f", f"inline float f_impl(float v) {{ return {self.BODY}; }}")


class _Cube(_Preamble):
    BODY = "v * v * v"


class _PlusOne(_Preamble):
    BODY = "v + 1.0f"


class _Scale(_Preamble):
    """A callable with a field of its own: ``f(v) = factor * v``."""

    init_arg_names = _Preamble.init_arg_names + ("factor",)

    def __init__(self, name, factor, arg_id_to_dtype=None, arg_id_to_descr=None,
                 name_in_target=None):
        super().__init__(name, arg_id_to_dtype, arg_id_to_descr, name_in_target)
        self._set(factor=factor)

    def generate_preambles(self, target):
        yield ("50_f", f"inline float f_impl(float v) {{ return {self.factor:.1f}f * v; }}")


def _calling_f():
    return lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = f(a[i])")


def test_the_same_text_with_another_callable_runs_that_callable(queue):
    a = np.linspace(-1, 1, 9).astype(np.float32)
    for callable, want in [(_Cube(name="f"), a ** 3), (_PlusOne(name="f"), a + 1),
                           (_Scale(name="f", factor=2), 2 * a),
                           (_Scale(name="f", factor=3), 3 * a), (_Cube(name="f"), a ** 3)]:
        knl = lp.register_callable(_calling_f(), "f", callable)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_the_key_changes_with_what_changes_code_or_checks():
    from kernelcore.runtime.cache import kernel_key
    base = lp.add_dtypes(lp.register_callable(_calling_f(), "f", _Cube(name="f")),
                         {"a": np.float32})
    variants = {
        "callable class": lp.register_callable(base, "f", _PlusOne(name="f")),
        "callable field": lp.register_callable(base, "f", _Scale(name="f", factor=2)),
        "silenced warnings": base.with_kernel(base.default_entrypoint.copy(
            silenced_warnings=frozenset(["write_race(x)"]))),
        "options": lp.set_options(base, skip_arg_checks=True),
        "assumptions": lp.assume(base, "n >= 4"),
        "target": base.copy(target=lp.ExecutableCTarget()),
        "target settings": base.copy(target=lp.ExecutableCTarget(cflags=("-O0",))),
    }
    keys = {name: kernel_key(k) for name, k in variants.items()}
    keys["base"] = kernel_key(base)
    assert len(set(keys.values())) == len(keys), keys
    again = lp.add_dtypes(lp.register_callable(_calling_f(), "f", _Cube(name="f")),
                          {"a": np.float32})
    assert kernel_key(again) == keys["base"]      # equal kernels share code


def test_silenced_warnings_are_not_taken_from_the_cache(queue):
    def wrap(silenced):
        knl = lp.make_kernel("{ [i]: 0 <= i < 16 }", "out[0] = a[i]  {id=wrap}",
                             [lp.GlobalArg("a", np.float32, shape=16),
                              lp.GlobalArg("out", np.float32, shape=1)],
                             silenced_warnings=silenced)
        return lp.tag_inames(knl, {"i": "l.0"})

    a = np.arange(16, dtype=np.float32)
    evt, (out,) = wrap(["write_race(wrap)"])(queue, a=a)
    assert set(np.asarray(out).tolist()) <= set(a.tolist())
    with pytest.raises(lp.WriteRaceConditionWarning):
        wrap(None)(queue, a=a)


_CALLABLE_CHILD = """
import json, sys
import numpy as np
import kernelcore as lp

BODY = sys.argv[1]


class F(lp.ScalarCallable):
    def with_types(self, arg_id_to_dtype, callables_table):
        t = arg_id_to_dtype.get(0)
        if t is None:
            return self, callables_table
        return self.copy(name_in_target="f_impl", arg_id_to_dtype={0: t, -1: t}), \\
            callables_table

    def generate_preambles(self, target):
        yield ("50_f", "inline float f_impl(float v) { return " + BODY + "; }")


knl = lp.register_callable(lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = f(a[i])"),
                           "f", F(name="f"))
a = np.linspace(-1, 1, 9).astype(np.float32)
evt, (out,) = knl(None, a=a)
print(json.dumps({"out": np.asarray(out).tolist(), "codegen": lp.cache_stats()["codegen"]}))
"""


def test_a_callable_changed_between_processes_is_not_taken_from_disk(tmp_path):
    """Same module, same class name, same method code: the global the
    method reads differs, so the next process does not load the first
    one's code."""
    env = dict(os.environ, KERNELCORE_CACHE_DIR=str(tmp_path))

    def child(body: str) -> dict:
        done = subprocess.run([sys.executable, "-c", _CALLABLE_CHILD, body], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    a = np.linspace(-1, 1, 9).astype(np.float32)
    for body, want, codegen in [("v * v * v", a ** 3, 1), ("v + 1.0f", a + 1, 1),
                                ("v * v * v", a ** 3, 0), ("v + 1.0f", a + 1, 0)]:
        report = child(body)
        np.testing.assert_allclose(report["out"], want, rtol=1e-6)
        assert report["codegen"] == codegen

# }}}
