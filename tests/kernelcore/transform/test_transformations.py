"""Kernel transformations: split_iname, prioritize_loops, tag_inames (unrolling),
slabs, duplicate_inames, fix_parameters, assume and the other transformations of
the tutorial (a missing one fails its test).

The tutorial examples are checked two ways: the results are compared with
NumPy, and the structural facts the tutorial states (loop names, nesting order,
absence or presence of guards, number of unrolled copies) are read off the
generated OpenCL C -- by parsing it loosely, not by comparing text.

A Hypothesis test applies random sequences of transformations to a few kernel
families and checks that the results never change.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import kernelcore as lp
from tests.helpers import ROOT, host

# {{{ helpers

def device_code(knl, dtypes=None):
    if dtypes:
        knl = lp.add_dtypes(knl, dtypes)
    return lp.generate_code_v2(knl).device_code()



def kernel_body(code):
    """The text between the braces of the (single) device function."""
    start = code.index("{", code.index("__kernel"))
    end = _match(code, start, "{", "}")
    return code[start + 1:end]


def _match(text, pos, open_ch, close_ch):
    """Index of the bracket closing the one at *pos*."""
    assert text[pos] == open_ch
    depth = 0
    for k in range(pos, len(text)):
        if text[k] == open_ch:
            depth += 1
        elif text[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k
    raise AssertionError(f"unbalanced {open_ch}{close_ch} in generated code")


def _skip_ws(text, pos):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def statement_end(text, pos):
    """End index (exclusive) of the C statement starting at (or after) *pos*:
    a block, ``for (...) stmt``, ``if (...) stmt [else stmt]`` or ``expr;``."""
    pos = _skip_ws(text, pos)
    if text[pos] == "{":
        return _match(text, pos, "{", "}") + 1
    m = re.match(r"(for|if|while)\s*\(", text[pos:])
    if m:
        paren = pos + m.end() - 1
        end = statement_end(text, _match(text, paren, "(", ")") + 1)
        if m.group(1) == "if":
            nxt = _skip_ws(text, end)
            if re.match(r"else\b", text[nxt:]):
                end = statement_end(text, nxt + 4)
        return end
    return text.index(";", pos) + 1


_FOR_RE = re.compile(
    r"for\s*\(\s*int\s+(?P<iname>\w+)\s*=\s*(?P<lower>[^;]*);"
    r"\s*(?P=iname)\s*(?P<cmp><=|<)\s*(?P<upper>[^;]*);")


def for_loops(code):
    """[(iname, lower, comparison, upper, start index, end index)] of all loops,
    in order of appearance (= nesting order for a single nest)."""
    result = []
    for m in _FOR_RE.finditer(code):
        end = statement_end(code, m.start())
        result.append((m.group("iname"), m.group("lower").strip(), m.group("cmp"),
                       m.group("upper").strip(), m.start(), end))
    return result


def loop_order(code):
    return [lp_[0] for lp_ in for_loops(code)]


def loop_text(code, iname):
    """The text of the first ``for`` loop over *iname* (header and body)."""
    for name, _, _, _, start, end in for_loops(code):
        if name == iname:
            return code[start:end]
    raise AssertionError(f"no for loop over {iname!r} in:\n{code}")


def if_count(text):
    return len(re.findall(r"\bif\s*\(", text))


def assignments_to(name, text):
    """Statements assigning to an element of *name* (``name[...] = ...``)."""
    return re.findall(rf"\b{name}\s*\[[^\]]*\]\s*=(?!=)", text)


def is_nested_in(code, outer, inner):
    """Whether the loop over *inner* is inside the loop over *outer*."""
    for name, _, _, _, start, end in for_loops(code):
        if name == outer:
            return re.search(rf"for\s*\(\s*int\s+{inner}\b", code[start:end]) is not None
    return False


def zero_fill_kernel(assumptions="n>=1"):
    return lp.make_kernel("{ [i]: 0<=i<n }", "a[i] = 0", assumptions=assumptions)


def check_zero_fill(queue, knl, sizes, rng):
    for n in sizes:
        a = rng.standard_normal(n).astype(np.float32) + 5
        evt, (out,) = knl(queue, a=a)
        out = host(out)
        assert out.shape == (n,)
        assert np.all(out == 0), (n, out)


def run_isolated(func_name, *args, timeout=300, crash_log=False):
    """Run ``func_name(queue, *args)`` of this module in a fresh interpreter, so
    that generated code that crashes (out-of-bounds access) cannot take the
    test session down. Fails with the child's output if it does not succeed."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import tests.conftest  # (its hypothesis profiles)
        import kernelcore as lp
        import {__name__} as mod
        mod.{func_name}(lp.default_queue(), *{args!r})
        print("KC-CHILD-OK")
        """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    log_path = None
    if crash_log:
        fd, log_path = tempfile.mkstemp(prefix="kc-last-example-", suffix=".txt")
        os.close(fd)
        env["KC_TEST_CRASH_LOG"] = log_path
    try:
        proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
        last = ""
        if log_path and proc.returncode != 0:
            with open(log_path) as f:
                last = f.read()
    finally:
        if log_path:
            os.unlink(log_path)
    if proc.returncode != 0 or "KC-CHILD-OK" not in proc.stdout:
        out = (proc.stdout + proc.stderr)[-6000:]
        extra = f"\nlast example before the crash:\n{last}" if last and \
            proc.returncode < 0 else ""
        pytest.fail(f"{func_name}{args!r} failed in child process "
                    f"(exit status {proc.returncode}):\n{out}{extra}", pytrace=False)



F32 = {"a": np.float32}

# }}}


# {{{ split_iname + prioritize_loops (tutorial)

def test_split_iname_names_and_nesting(queue, rng):
    knl = zero_fill_kernel()
    knl = lp.split_iname(knl, "i", 16)
    assert "i_outer" in knl.all_inames()
    assert "i_inner" in knl.all_inames()
    assert "i" not in knl.all_inames()

    knl = lp.prioritize_loops(knl, "i_outer,i_inner")
    code = device_code(knl, F32)
    assert loop_order(code) == ["i_outer", "i_inner"]
    assert is_nested_in(code, "i_outer", "i_inner")
    # the inner loop runs at most 16 times: its bound mentions 15 (min(15, ...)
    # or a conditional with 15)
    inner = [lp_ for lp_ in for_loops(code) if lp_[0] == "i_inner"][0]
    assert inner[1] == "0"
    assert "15" in inner[3]
    # the subscript is rebuilt from the new inames
    (stmt,) = assignments_to("a", code)
    assert "i_outer" in stmt and "i_inner" in stmt and "16" in stmt
    assert not re.search(r"\bi\b", kernel_body(code).replace("int i_", ""))

    check_zero_fill(queue, knl, [1, 2, 15, 16, 17, 31, 32, 33, 100], rng)


def test_split_inner_nested_outside_outer(queue, rng):
    knl = zero_fill_kernel()
    knl = lp.split_iname(knl, "i", 16)
    knl = lp.prioritize_loops(knl, "i_inner,i_outer")
    code = device_code(knl, F32)
    assert loop_order(code) == ["i_inner", "i_outer"]
    assert is_nested_in(code, "i_inner", "i_outer")
    # bounds on i are obeyed: the i_outer loop bound depends on i_inner, or the
    # statement is guarded
    outer_loop = [lp_ for lp_ in for_loops(code) if lp_[0] == "i_outer"][0]
    assert "i_inner" in outer_loop[3] or if_count(kernel_body(code)) >= 1
    check_zero_fill(queue, knl, [1, 2, 15, 16, 17, 31, 32, 33, 100], rng)


@pytest.mark.parametrize("prio", ["i_outer,i_inner", "i_inner,i_outer"])
def test_split_results_all_values_written_once(queue, prio):
    """Every element of a split loop is visited exactly once: the values
    written are the indices themselves."""
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 3*a[i] + i",
                         assumptions="n>=1")
    knl = lp.split_iname(knl, "i", 7)
    knl = lp.prioritize_loops(knl, prio)
    for n in [1, 6, 7, 8, 13, 14, 15, 50]:
        a = np.arange(n, dtype=np.float64) * 0.5
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), 3 * a + np.arange(n))


def test_tiling_with_divisibility_assumption(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i,j<n }",
        "out[i,j] = a[j,i]",
        assumptions="n mod 16 = 0 and n >= 1")
    knl = lp.split_iname(knl, "i", 16)
    knl = lp.split_iname(knl, "j", 16)
    knl = lp.prioritize_loops(knl, "i_outer,j_outer,i_inner")
    code = device_code(knl, F32)
    assert loop_order(code) == ["i_outer", "j_outer", "i_inner", "j_inner"]
    assert is_nested_in(code, "i_outer", "j_outer")
    assert is_nested_in(code, "j_outer", "i_inner")
    assert is_nested_in(code, "i_inner", "j_inner")
    loops = {lp_[0]: lp_ for lp_ in for_loops(code)}
    for inner in ("i_inner", "j_inner"):
        _, lower, cmp, upper, _, _ = loops[inner]
        assert lower == "0"
        assert (cmp, upper) in (("<=", "15"), ("<", "16")), loops[inner]
    # no conditionals at all: the assumptions make every tile full
    assert if_count(kernel_body(code)) == 0
    assert "?" not in kernel_body(code)

    for n in [16, 32, 48]:
        a = rng.standard_normal((n, n)).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a.T)


def test_tiling_without_assumption_is_correct(queue, rng):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[j,i]")
    knl = lp.split_iname(knl, "i", 16)
    knl = lp.split_iname(knl, "j", 16)
    knl = lp.prioritize_loops(knl, "i_outer,j_outer,i_inner")
    for n, m in [(0, 0), (0, 5), (5, 0), (1, 1), (15, 17), (16, 16), (33, 20)]:
        a = rng.standard_normal((m, n)).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a.T)

# }}}


# {{{ unrolling (tutorial)

def _unrolled_fill(assumptions, slabs=(0, 0)):
    knl = zero_fill_kernel(assumptions)
    knl = lp.split_iname(knl, "i", 4, slabs=slabs)
    knl = lp.tag_inames(knl, dict(i_inner="unr"))
    return lp.prioritize_loops(knl, "i_outer,i_inner")


def test_unroll_with_divisibility_assumption(queue, rng):
    knl = _unrolled_fill("n>=0 and n mod 4 = 0")
    code = device_code(knl, F32)
    body = kernel_body(code)
    # only the outer loop remains, holding four straight-line copies
    assert loop_order(code) == ["i_outer"]
    assert "i_inner" not in body
    outer = loop_text(code, "i_outer")
    assert len(assignments_to("a", outer)) == 4
    assert len(assignments_to("a", body)) == 4
    assert if_count(body) == 0
    # the copies write 4*i_outer + 0, 1, 2, 3
    offsets = set()
    for stmt in assignments_to("a", body):
        m = re.search(r"\[(.*)\]", stmt)
        offsets.add(eval(m.group(1), {"i_outer": 10}))
    assert offsets == {40, 41, 42, 43}

    check_zero_fill(queue, knl, [0, 4, 8, 12, 100], rng)


def test_unroll_tag_spellings_agree():
    base = zero_fill_kernel("n>=0 and n mod 4 = 0")
    via_dict = lp.tag_inames(lp.split_iname(base, "i", 4), {"i_inner": "unr"})
    via_str = lp.tag_inames(lp.split_iname(base, "i", 4), "i_inner:unr")
    shortcut = lp.split_iname(base, "i", 4, inner_tag="unr")
    codes = {device_code(k, F32) for k in (via_dict, via_str, shortcut)}
    assert len(codes) == 1


def test_split_outer_tag_shortcut():
    base = zero_fill_kernel("n>=0")
    a = lp.split_iname(base, "i", 4, outer_tag="unr")
    assert "i_outer: unr" in str(a)
    b = lp.split_iname(base, "i", 4, inner_tag="unr", outer_tag="for")
    text = str(b)
    assert "i_inner: unr" in text
    assert re.search(r"i_outer: (None|for)\b", text)


def test_print_shows_iname_tags(capsys):
    knl = zero_fill_kernel("n>=0 and n mod 4 = 0")
    knl = lp.split_iname(knl, "i", 4, inner_tag="unr")
    print(knl)
    out = capsys.readouterr().out
    assert "INAME IMPLEMENTATION TAGS" in out
    lines = [ln.strip() for ln in out.splitlines()]
    assert "i_inner: unr" in lines
    assert "i_outer: None" in lines


def test_unroll_without_divisibility_assumption_guards_copies(queue, rng):
    knl = _unrolled_fill("n>=0")
    code = device_code(knl, F32)
    body = kernel_body(code)
    assert loop_order(code) == ["i_outer"]
    assert "i_inner" not in body
    assert len(assignments_to("a", body)) == 4
    # at least the last three copies are guarded
    assert if_count(loop_text(code, "i_outer")) >= 3
    check_zero_fill(queue, knl, list(range(0, 10)) + [33], rng)


def test_unroll_writes_exactly_the_domain(queue):
    """Guarded unrolled copies must not write past the end (n not a multiple)."""
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 1", assumptions="n>=0")
    knl = lp.split_iname(knl, "i", 4, inner_tag="unr")
    for n in range(0, 11):
        a = np.arange(n, dtype=np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a + 1)


def test_slabs_bulk_without_guards_final_with_guards(queue, rng):
    knl = zero_fill_kernel("n>=0")
    knl = lp.split_iname(knl, "i", 4, slabs=(0, 1), inner_tag="unr")
    knl = lp.prioritize_loops(knl, "i_outer,i_inner")
    code = device_code(knl, F32)
    body = kernel_body(code)
    assert "i_inner" not in body
    # the bulk slab is the (only) for loop: four unguarded copies
    assert loop_order(code) == ["i_outer"]
    bulk = loop_text(code, "i_outer")
    assert len(assignments_to("a", bulk)) == 4
    assert if_count(bulk) == 0
    # the final slab follows the loop: four more copies, with guards
    final = body[body.index(bulk) + len(bulk):]
    assert len(assignments_to("a", final)) == 4
    assert if_count(final) >= 3
    assert len(assignments_to("a", body)) == 8

    check_zero_fill(queue, knl, list(range(0, 13)) + [101], rng)


def check_slabs_each_iteration_once(queue, slabs):
    """Each iteration must run exactly once, also when the outer loop is shorter
    than the peeled slabs (a reduction counts double executions)."""
    for factor in (1, 3, 4):
        # the reduction iname has its own domain, so m = 0 gives zeros (in one
        # shared domain an empty j range would leave out[i] unwritten, as in loopy)
        knl = lp.make_kernel(["{ [i]: 0<=i<n }", "{ [j]: 0<=j<m }"],
                             "out[i] = sum(j, a[i,j])")
        knl = lp.split_iname(knl, "j", factor, slabs=slabs, inner_tag="unr")
        for m in list(range(1, 10)) + [0]:
            a = np.ones((2, m))
            evt, (out,) = knl(queue, a=a, out=np.full(2, -12345.0))
            np.testing.assert_array_equal(
                host(out), np.full(2, float(m)),
                err_msg=f"reduction, split factor={factor}, slabs={slabs}, m={m}")

    # a sequential loop accumulating into one value
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         ["<> s = 0 {id=init}",
                          "s = s + a[i] {id=acc, dep=init}",
                          "out[0] = s {dep=acc}"])
    knl = lp.split_iname(knl, "i", 4, slabs=slabs)
    for n in list(range(1, 10)) + [0]:
        evt, (out,) = knl(queue, a=np.ones(n), out=np.zeros(1))
        assert host(out)[0] == n, f"accumulation, split factor=4, slabs={slabs}, n={n}"


@pytest.mark.parametrize("slabs", [(0, 1), (1, 0), (1, 1), (2, 2)])
def test_slabs_each_iteration_once(slabs):
    # in a child process: a wrong slab may read out of bounds and crash
    run_isolated("check_slabs_each_iteration_once", slabs)


def test_unroll_whole_unbounded_loop_fails_naming_iname():
    knl = lp.tag_inames(zero_fill_kernel("n>=0"), {"i": "unr"})
    with pytest.raises(lp.KernelcoreError, match=r"\bi\b"):
        device_code(knl, F32)


def test_unroll_fixed_size_loop(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<5 }", "out[i] = a[i]*a[i]")
    knl = lp.tag_inames(knl, "i:unr")
    code = device_code(knl, {"a": np.float64})
    assert loop_order(code) == []
    assert len(assignments_to("out", code)) == 5
    a = np.arange(5.0)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a * a)

# }}}


# {{{ duplicate_inames

def _two_insn_kernel():
    return lp.make_kernel(
        "{ [i]: 0<=i<n }",
        ["out1[i] = 2*a[i] {id=foo}",
         "out2[i] = a[i] + 1 {id=bar}"])


def _check_two_insn(queue, knl, sizes=(0, 1, 5, 16, 37)):
    for n in sizes:
        a = np.arange(n, dtype=np.float64) - 3
        evt, (o1, o2) = knl(queue, a=a)
        np.testing.assert_array_equal(host(o1), 2 * a)
        np.testing.assert_array_equal(host(o2), a + 1)


def test_duplicate_inames_two_loop_nests(queue):
    knl = _two_insn_kernel()
    _check_two_insn(queue, knl)
    dup = lp.duplicate_inames(knl, "i", within="id:foo", new_inames="i_copy")
    assert "i_copy" in dup.all_inames()
    assert "i" in dup.all_inames()
    assert dup.id_to_insn["foo"].within_inames == frozenset({"i_copy"})
    assert dup.id_to_insn["bar"].within_inames == frozenset({"i"})
    code = device_code(dup, {"a": np.float64})
    assert sorted(loop_order(code)) == ["i", "i_copy"]
    assert not is_nested_in(code, "i", "i_copy")
    assert not is_nested_in(code, "i_copy", "i")
    assert len(assignments_to("out1", loop_text(code, "i_copy"))) == 1
    assert len(assignments_to("out2", loop_text(code, "i"))) == 1
    _check_two_insn(queue, dup)


def test_duplicate_inames_default_name_and_list_form(queue):
    knl = _two_insn_kernel()
    dup = lp.duplicate_inames(knl, ["i"], within="id:bar")
    new = set(dup.all_inames()) - {"i"}
    assert len(new) == 1
    (new_name,) = new
    assert dup.id_to_insn["bar"].within_inames == frozenset({new_name})
    _check_two_insn(queue, dup)


def test_duplicate_then_transform_copies_differently(queue):
    knl = _two_insn_kernel()
    knl = lp.duplicate_inames(knl, "i", within="id:foo", new_inames=["ii"])
    knl = lp.split_iname(knl, "ii", 4, inner_tag="unr")
    knl = lp.split_iname(knl, "i", 3)
    code = device_code(knl, {"a": np.float64})
    assert set(loop_order(code)) == {"ii_outer", "i_outer", "i_inner"}
    _check_two_insn(queue, knl, sizes=(0, 1, 2, 3, 4, 5, 11, 12, 13))


def test_split_iname_within(queue):
    knl = _two_insn_kernel()
    knl = lp.split_iname(knl, "i", 4, within="id:foo")
    # the default names of the new inames, and the other instruction keeps 'i'
    assert knl.id_to_insn["foo"].within_inames == frozenset({"i_outer", "i_inner"})
    assert knl.id_to_insn["bar"].within_inames == frozenset({"i"})
    _check_two_insn(queue, knl)


def test_split_iname_within_results(queue):
    knl = _two_insn_kernel()
    knl = lp.split_iname(knl, "i", 4, within="id:foo", inner_tag="unr")
    code = device_code(knl, {"a": np.float64})
    assert "i" in loop_order(code)
    _check_two_insn(queue, knl)

# }}}


# {{{ fix_parameters, assume

def test_fix_parameters(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i] + n")
    fixed = lp.fix_parameters(knl, n=8)
    assert "n" not in fixed.all_params()
    assert "n" not in fixed.arg_dict
    code = device_code(fixed, {"a": np.float32})
    assert not re.search(r"\bn\b", code)
    a = np.arange(8, dtype=np.float32)
    evt, (out,) = fixed(queue, a=a)
    np.testing.assert_array_equal(host(out), 2 * a + 8)


def test_fix_parameters_then_unroll_whole_loop(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] - 1")
    knl = lp.fix_parameters(knl, n=5)
    knl = lp.tag_inames(knl, {"i": "unr"})
    code = device_code(knl, {"a": np.float64})
    assert loop_order(code) == []
    assert len(assignments_to("out", code)) == 5
    a = np.arange(5.0)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a - 1)


def test_fix_parameters_two_params(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[i,j]*m")
    knl = lp.fix_parameters(knl, n=3, m=4)
    assert not set(knl.all_params()) & {"n", "m"}
    a = np.arange(12.0).reshape(3, 4)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 4 * a)


def test_fix_unknown_parameter_names_it():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]")
    with pytest.raises(lp.KernelcoreError, match="nonexistent_p"):
        lp.fix_parameters(knl, nonexistent_p=3)


def test_assume_divisibility_removes_guards(queue, rng):
    knl = zero_fill_kernel("n>=0")
    knl = lp.assume(knl, "n mod 4 = 0")
    knl = lp.split_iname(knl, "i", 4, inner_tag="unr")
    code = device_code(knl, F32)
    assert if_count(kernel_body(code)) == 0
    assert len(assignments_to("a", code)) == 4
    check_zero_fill(queue, knl, [0, 4, 12, 40], rng)

    # same code as with the assumption given at creation
    direct = lp.split_iname(zero_fill_kernel("n>=0 and n mod 4 = 0"), "i", 4,
                            inner_tag="unr")
    assert if_count(kernel_body(device_code(direct, F32))) == 0


def test_assume_on_kernel_without_assumptions(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "a[i] = 0")
    knl = lp.assume(knl, "n >= 1 and n mod 16 = 0")
    knl = lp.split_iname(knl, "i", 16)
    code = device_code(knl, F32)
    inner = [lp_ for lp_ in for_loops(code) if lp_[0] == "i_inner"][0]
    assert (inner[2], inner[3]) in (("<=", "15"), ("<", "16"))
    assert if_count(kernel_body(code)) == 0
    check_zero_fill(queue, knl, [16, 32], rng)

# }}}


# {{{ invalid requests

def _knl_i():
    return lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]")


@pytest.mark.parametrize("op", [
    lambda k: lp.split_iname(k, "zz", 4),
    lambda k: lp.tag_inames(k, {"zz": "unr"}),
    lambda k: lp.tag_inames(k, "zz:l.0"),
    lambda k: lp.prioritize_loops(k, "i,zz"),
    lambda k: lp.duplicate_inames(k, "zz"),
    ], ids=["split", "tag-dict", "tag-str", "prioritize", "duplicate"])
def test_unknown_iname_raises_naming_it(op):
    with pytest.raises(lp.KernelcoreError, match="zz"):
        op(_knl_i())


@pytest.mark.parametrize("bad", ["q.7", "l.x", "gg.0", "unrolled"])
def test_bad_tag_text_raises(bad):
    with pytest.raises(lp.KernelcoreError, match=re.escape(bad)):
        lp.tag_inames(_knl_i(), {"i": bad})
    with pytest.raises(lp.KernelcoreError, match=re.escape(bad)):
        lp.split_iname(_knl_i(), "i", 4, inner_tag=bad)


@pytest.mark.parametrize("tag", ["l.0", "g.0"])
def test_split_parallel_tagged_iname_raises(tag):
    knl = lp.tag_inames(lp.make_kernel("{ [ip]: 0<=ip<n }", "out[ip] = a[ip]"),
                        {"ip": tag})
    with pytest.raises(lp.KernelcoreError, match="ip"):
        lp.split_iname(knl, "ip", 4)


@pytest.mark.parametrize("factor", [0, -2])
def test_split_bad_factor_raises(factor):
    with pytest.raises(lp.KernelcoreError):
        lp.split_iname(_knl_i(), "i", factor)


def test_split_existing_name_raises():
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i,j] = a[i,j]")
    with pytest.raises(lp.KernelcoreError, match="j"):
        lp.split_iname(knl, "i", 4, outer_iname="j")


def test_conflicting_parallel_tags_raise_naming_iname():
    knl = lp.tag_inames(_knl_i(), {"i": "l.0"})
    with pytest.raises(lp.KernelcoreError, match=r"\bi\b"):
        lp.tag_inames(knl, {"i": "g.0"})


def test_transformations_return_copies():
    knl = _knl_i()
    before = str(knl)
    lp.split_iname(knl, "i", 4, inner_tag="unr")
    lp.tag_inames(knl, {"i": "unr"})
    lp.prioritize_loops(knl, "i")
    lp.duplicate_inames(knl, "i")
    lp.assume(knl, "n >= 3")
    lp.fix_parameters(knl, n=3)
    assert str(knl) == before
    assert knl.all_inames() == ("i",)

# }}}


# {{{ transformations being added (skipped until present)

def _knl_2d():
    return lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = 2*a[i,j] + j")


def _check_2d(queue, knl, sizes=((0, 0), (1, 1), (3, 5), (17, 4))):
    for n, m in sizes:
        a = np.arange(n * m, dtype=np.float64).reshape(n, m)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), 2 * a + np.arange(m)[None, :])


def test_rename_iname(queue):
    knl = lp.rename_iname(_knl_2d(), "i", "row")
    assert "row" in knl.all_inames()
    assert "i" not in knl.all_inames()
    code = device_code(knl, {"a": np.float64})
    assert "row" in loop_order(code)
    _check_2d(queue, knl)
    # the renamed iname can be transformed further
    _check_2d(queue, lp.split_iname(knl, "row", 4, inner_tag="unr"))


def test_rename_iname_keeps_tags(queue):
    knl = lp.split_iname(_knl_2d(), "j", 4, inner_tag="unr")
    knl = lp.rename_iname(knl, "j_inner", "jj")
    assert re.search(r"^jj: unr$", str(knl), re.M)
    _check_2d(queue, knl)


def test_rename_iname_errors():
    with pytest.raises(lp.KernelcoreError, match="zz"):
        lp.rename_iname(_knl_2d(), "zz", "yy")
    with pytest.raises(lp.KernelcoreError, match="j"):
        lp.rename_iname(_knl_2d(), "i", "j")


def test_rename_iname_existing_ok_merges(queue):
    knl = lp.make_kernel("{ [i,k]: 0<=i,k<n }",
                         ["out1[i] = 2*a[i] {id=w1}", "out2[k] = a[k] + 1 {id=w2}"])
    merged = lp.rename_iname(knl, "k", "i", existing_ok=True)
    assert "k" not in merged.all_inames()
    assert merged.id_to_insn["w2"].within_inames == frozenset({"i"})
    for n in (0, 1, 9):
        a = np.arange(n, dtype=np.float64)
        evt, (o1, o2) = merged(queue, a=a)
        np.testing.assert_array_equal(host(o1), 2 * a)
        np.testing.assert_array_equal(host(o2), a + 1)


def test_join_inames(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<8 }", "out[i,j] = 2*a[i,j] + j")
    joined = lp.join_inames(knl, ["i", "j"], new_iname="ij")
    assert "ij" in joined.all_inames()
    assert "i" not in joined.all_inames()
    assert "j" not in joined.all_inames()
    code = device_code(joined, {"a": np.float64})
    assert loop_order(code) == ["ij"]
    for n in (0, 1, 5):
        a = np.arange(n * 8, dtype=np.float64).reshape(n, 8)
        evt, (out,) = joined(queue, a=a)
        np.testing.assert_array_equal(host(out), 2 * a + np.arange(8)[None, :])


def test_join_inames_then_parallelize(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<8 }", "out[i,j] = a[i,j] + 1")
    knl = lp.join_inames(knl, "i,j", new_iname="ij")
    knl = lp.split_iname(knl, "ij", 16, outer_tag="g.0", inner_tag="l.0")
    for n in (0, 1, 2, 3, 11):
        a = np.arange(n * 8, dtype=np.float32).reshape(n, 8)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a + 1)


def test_join_inames_index_is_the_joined_loop(queue):
    # an array read in the joined loops' own order is indexed by the joined
    # loop (not 12*(f // 12) + 3*((f // 3) % 4) + f % 3); other orders keep
    # the decomposition, and every element is right
    knl = lp.make_kernel("{ [i,j,k]: 0<=i<n and 0<=j<4 and 0<=k<3 }",
                         "out[i,j,k] = 2*a[i,j,k] + a[i,3-j,k] + b[k,j]")
    knl = lp.join_inames(knl, ["i", "j", "k"], new_iname="f")
    knl = lp.split_iname(knl, "f", 16, inner_tag="l.0")
    code = device_code(knl, {"a": np.float64, "b": np.float64})
    assert re.search(r"out\[lid\(0\) \+ f_outer \* 16\]", code), code
    assert re.search(r"2\.0 \* a\[lid\(0\) \+ f_outer \* 16\]", code), code
    b = np.arange(12, dtype=np.float64).reshape(3, 4) * 100
    for n in (0, 1, 5):
        a = np.arange(n * 12, dtype=np.float64).reshape(n, 4, 3)
        evt, (out,) = knl(queue, a=a, b=b)
        np.testing.assert_array_equal(host(out), 2 * a + a[:, ::-1, :] + b.T[None])


def test_join_inames_with_tag(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i<4 and 0<=j<8 }", "out[i,j] = a[i,j] * 3")
    knl = lp.join_inames(knl, ["i", "j"], new_iname="ij", tag="l.0")
    code = device_code(knl, {"a": np.float32})
    assert loop_order(code) == []
    assert re.search(r"reqd_work_group_size\(\s*32\s*,\s*1\s*,\s*1\s*\)", code)
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 3 * a)


def _red_knl():
    # reduction inames in their own domains: empty ranges give the identity
    return lp.make_kernel(["{ [k]: 0<=k<n }", "{ [i,j]: 0<=i<p and 0<=j<q }"],
                          "out[k] = sum((i, j), a[k,i,j])")


RED_SIZES = [(1, 1, 1), (3, 4, 5), (2, 1, 6)]
RED_EMPTY_SIZES = [(0, 2, 2), (2, 0, 3), (2, 3, 0)]


def _check_red(queue, knl, sizes=RED_SIZES):
    for n, p, q in sizes:
        a = np.arange(n * p * q, dtype=np.float64).reshape(n, p, q)
        evt, (out,) = knl(queue, a=a, out=np.full(n, -12345.0))
        np.testing.assert_array_equal(host(out), a.sum(axis=(1, 2)),
                                      err_msg=f"n={n} p={p} q={q}")


def _the_reduction(knl):
    (insn,) = [i for i in knl.instructions if "out" in i.assignee_names()]
    red = insn.expression
    assert isinstance(red, lp.Reduction)
    return red


@pytest.mark.parametrize("which", ["split_reduction_inward", "split_reduction_outward"])
def test_split_reduction(queue, which):
    transform = getattr(lp, which)
    knl = transform(_red_knl(), "j")
    outer = _the_reduction(knl)
    inner = outer.expr
    assert isinstance(inner, lp.Reduction)
    if which == "split_reduction_inward":
        assert tuple(outer.inames) == ("i",)
        assert tuple(inner.inames) == ("j",)
    else:
        assert tuple(outer.inames) == ("j",)
        assert tuple(inner.inames) == ("i",)
    _check_red(queue, knl)


@pytest.mark.parametrize("which", ["split_reduction_inward", "split_reduction_outward",
                                   None])
def test_split_reduction_empty_ranges(queue, which):
    """An empty range of either reduction iname gives the sum's identity."""
    knl = _red_knl()
    if which is not None:
        knl = getattr(lp, which)(knl, "j")
    _check_red(queue, knl, RED_EMPTY_SIZES)


def test_tag_array_axes_fortran(queue):
    import pyopencl.array as cla
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = 2*a[i,j]")
    knl = lp.tag_array_axes(knl, "a", "f,f")
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 2 * a)
    # a C-ordered device array does not fit the declared layout
    a_c = cla.to_device(queue, np.ascontiguousarray(a))
    with pytest.raises(lp.KernelcoreError):
        knl(queue, a=a_c)
    a_f = cla.to_device(queue, a)
    evt, (out,) = knl(queue, a=a_f)
    np.testing.assert_array_equal(host(out), 2 * a)


def test_tag_array_axes_explicit_order(queue):
    import pyopencl.array as cla
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[i,j] + 1")
    knl = lp.tag_array_axes(knl, "out", "N0,N1")   # axis 1 varies fastest: Fortran
    out = cla.to_device(queue, np.asfortranarray(np.zeros((3, 5))))
    a = np.arange(15.0).reshape(3, 5)
    evt, (res,) = knl(queue, a=a, out=out)
    np.testing.assert_array_equal(host(res), a + 1)


def test_rename_argument(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.rename_argument(knl, "a", "inp")
    assert "inp" in knl.arg_dict
    assert "a" not in knl.arg_dict
    code = device_code(knl, {"inp": np.float32})
    assert re.search(r"\binp\b", code) and not re.search(r"\ba\b", kernel_body(code))
    x = np.arange(6, dtype=np.float32)
    evt, (out,) = knl(queue, inp=x)
    np.testing.assert_array_equal(host(out), 2 * x)
    with pytest.raises((lp.KernelcoreError, TypeError)):
        knl(queue, a=x)


def test_rename_argument_errors():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + b[i]")
    with pytest.raises(lp.KernelcoreError, match="zz"):
        lp.rename_argument(knl, "zz", "c")
    with pytest.raises(lp.KernelcoreError, match="b"):
        lp.rename_argument(knl, "a", "b")


def test_remove_unused_arguments(queue):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }", "out[i] = 2*a[i]",
        [lp.GlobalArg("a", np.float64, shape=("n",)),
         lp.GlobalArg("unused", np.float64, shape=("n",)),
         lp.ValueArg("unused_scalar", np.int32),
         "..."])
    assert "unused" in knl.arg_dict
    knl = lp.remove_unused_arguments(knl)
    assert "unused" not in knl.arg_dict
    assert "unused_scalar" not in knl.arg_dict
    assert {"a", "out"} <= set(knl.arg_dict)
    a = np.arange(4.0)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 2 * a)


def _seq_knl():
    return lp.make_kernel(
        "{ [i]: 0<=i<n }",
        ["out1[i] = a[i] {id=w1}",
         "out2[i] = 2*a[i] {id=w2}"])


def test_add_dependency(queue):
    knl = lp.add_dependency(_seq_knl(), "id:w1", "w2")
    assert "w2" in knl.id_to_insn["w1"].depends_on
    code = device_code(knl, {"a": np.float32})
    assert code.index("out2[") < code.index("out1[")
    a = np.arange(5, dtype=np.float32)
    evt, (o1, o2) = knl(queue, a=a)
    np.testing.assert_array_equal(host(o1), a)
    np.testing.assert_array_equal(host(o2), 2 * a)


def test_add_dependency_cycle_is_reported():
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         ["t[i] = a[i] {id=w1}", "out[i] = t[i] {id=w2, dep=w1}"])
    knl = lp.add_dependency(knl, "id:w1", "w2")
    with pytest.raises(lp.KernelcoreError, match="w1|w2"):
        device_code(knl, {"a": np.float32, "t": np.float32})


def test_remove_instructions(queue):
    knl = lp.remove_instructions(_seq_knl(), {"w2"})
    assert "w2" not in knl.id_to_insn
    assert "w1" in knl.id_to_insn
    code = device_code(knl, {"a": np.float32, "out2": np.float32})
    assert not assignments_to("out2", code)
    a = np.arange(5, dtype=np.float32)
    sentinel = np.full(5, -7, dtype=np.float32)
    evt, result = knl(queue, a=a, out2=sentinel.copy())
    np.testing.assert_array_equal(host(result[0]), a)


def test_remove_instructions_drops_dependencies(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         ["out1[i] = a[i] {id=w1}",
                          "out2[i] = 3*a[i] {id=w2, dep=w1}"])
    knl = lp.remove_instructions(knl, ["w1"])
    assert "w1" not in knl.id_to_insn
    assert "w1" not in knl.id_to_insn["w2"].depends_on
    a = np.arange(3, dtype=np.float32)
    evt, result = knl(queue, a=a, out1=np.zeros(3, np.float32))
    np.testing.assert_array_equal(host(result[-1]), 3 * a)

# }}}


# {{{ differential hypothesis test: transformations never change results

FAMILIES = {
    # 1-D elementwise, shifted and reversed reads, two instructions
    "1d": dict(
        domain="{ [i]: 0<=i<n }",
        insns=["out1[i] = 3*a[i + 2] - b[i] {id=w1}",
               "out2[i] = a[i] + b[n - 1 - i] {id=w2}"],
        shapes=lambda n, m: {"a": (n + 2,), "b": (n,)},
        out_shapes=lambda n, m: {"out1": (n,), "out2": (n,)},
        ref=lambda d, n, m: (3 * d["a"][2:] - d["b"], d["a"][:n] + d["b"][::-1]),
        reduction_inames=()),
    # 2-D elementwise with a transposed read and a broadcast
    "2d": dict(
        domain="{ [i,j]: 0<=i<n and 0<=j<m }",
        insns=["out1[i,j] = 2*a[i,j] + bt[j,i] {id=w1}",
               "out2[j,i] = a[i,j] - v[j] {id=w2}"],
        shapes=lambda n, m: {"a": (n, m), "bt": (m, n), "v": (m,)},
        out_shapes=lambda n, m: {"out1": (n, m), "out2": (m, n)},
        ref=lambda d, n, m: (2 * d["a"] + d["bt"].T, (d["a"] - d["v"][None, :]).T),
        reduction_inames=()),
    # small reduction plus an elementwise instruction
    "red": dict(
        domain=["{ [i]: 0<=i<n }", "{ [k]: 0<=k<m }"],
        insns=["out1[i] = sum(k, a[i,k]*x[k]) {id=w1}",
               "out2[i] = 2*b[i] + 1 {id=w2}"],
        shapes=lambda n, m: {"a": (n, m), "x": (m,), "b": (n,)},
        out_shapes=lambda n, m: {"out1": (n,), "out2": (n,)},
        ref=lambda d, n, m: (d["a"] @ d["x"] if m else np.zeros(n), 2 * d["b"] + 1),
        reduction_inames=("k",)),
}

_BASE_KERNELS: dict = {}
SENTINEL = -12345.0


def base_kernel(family):
    if family not in _BASE_KERNELS:
        f = FAMILIES[family]
        _BASE_KERNELS[family] = lp.make_kernel(f["domain"], f["insns"])
    return _BASE_KERNELS[family]


def make_inputs(family, n, m, seed):
    rng = np.random.default_rng(seed)
    shapes = FAMILIES[family]["shapes"](n, m)
    # small integers: every order of summation gives the exact same float64
    return {name: rng.integers(-8, 9, size=shape).astype(np.float64)
            for name, shape in shapes.items()}


def make_outputs(family, n, m):
    # prefilled with a value no result can have, so unwritten elements show
    return {name: np.full(shape, SENTINEL)
            for name, shape in FAMILIES[family]["out_shapes"](n, m).items()}


def run_family(queue, knl, family, n, m, seed):
    data = make_inputs(family, n, m, seed)
    evt, outs = knl(queue, **data, **make_outputs(family, n, m))
    return data, [host(o) for o in outs]


@st.composite
def transform_sequences(draw, family, max_ops):
    """A kernel of *family* with a random sequence of transformations applied,
    and a description of that sequence."""
    knl = base_kernel(family)
    unrollable: set[str] = set()
    log = []
    n_ops = draw(st.integers(1, max_ops))
    for _ in range(n_ops):
        inames = sorted(knl.all_inames())
        untagged = [n for n in inames if knl.iname_tags.get(n) is None]
        op = draw(st.sampled_from(["split", "split", "tag", "prioritize", "duplicate"]))
        if op == "split":
            iname = draw(st.sampled_from(inames))
            factor = draw(st.integers(1, 8))
            slabs = draw(st.sampled_from([(0, 0), (0, 1), (1, 1)]))
            unroll_inner = factor <= 4 and draw(st.booleans())
            inner_tag = "unr" if unroll_inner else None
            knl = lp.split_iname(knl, iname, factor, slabs=slabs, inner_tag=inner_tag)
            outer, inner = f"{iname}_outer", f"{iname}_inner"
            if factor <= 4:
                unrollable.add(inner)
            if iname in unrollable:
                unrollable.discard(iname)
                if factor <= 4:
                    unrollable.add(outer)
            log.append(f"split_iname({iname!r}, {factor}, slabs={slabs}, "
                       f"inner_tag={inner_tag!r})")
        elif op == "tag":
            candidates = sorted(unrollable & set(untagged))
            if candidates and draw(st.booleans()):
                iname, tag = draw(st.sampled_from(candidates)), "unr"
            else:
                iname, tag = draw(st.sampled_from(untagged or inames)), "for"
                if knl.iname_tags.get(iname) is not None:
                    continue
            knl = lp.tag_inames(knl, {iname: tag})
            log.append(f"tag_inames({{{iname!r}: {tag!r}}})")
        elif op == "prioritize":
            if len(inames) < 2:
                continue
            order = draw(st.permutations(inames))
            size = draw(st.integers(2, len(inames)))
            prio = ",".join(order[:size])
            knl = lp.prioritize_loops(knl, prio)
            log.append(f"prioritize_loops({prio!r})")
        else:
            used = sorted(knl.id_to_insn["w2"].within_inames)
            if not used:
                continue
            iname = draw(st.sampled_from(used))
            new = f"{iname}_dup"
            if new in inames:
                continue
            knl = lp.duplicate_inames(knl, iname, within="id:w2", new_inames=[new])
            if iname in unrollable:
                unrollable.add(new)
            log.append(f"duplicate_inames({iname!r}, within='id:w2', "
                       f"new_inames=[{new!r}])")
    return Transformed(knl, tuple(log))


class Transformed:
    """A transformed kernel, shown (in Hypothesis reports) as the list of
    transformations that produced it."""

    def __init__(self, knl, log):
        self.knl = knl
        self.log = log

    def __repr__(self):
        return "[" + "; ".join(self.log) + "]"


SIZES_N = st.sampled_from([2, 3, 4, 5, 7, 8, 9, 13, 16, 17])
SIZES_M = st.sampled_from([0, 1, 2, 3, 4, 5, 8, 9])


def _differential(queue, data, family, max_ops):
    drawn = data.draw(transform_sequences(family, max_ops), label="transformations")
    knl, log = drawn.knl, drawn.log
    n = data.draw(SIZES_N, label="n")
    m = data.draw(SIZES_M, label="m")
    base = base_kernel(family)
    crash_log = os.environ.get("KC_TEST_CRASH_LOG")
    for k, (nn, mm) in enumerate([(0, m), (1, 1), (n, m), (n, 0)]):
        inputs, expected = run_family(queue, base, family, nn, mm, seed=k)
        ref = FAMILIES[family]["ref"](inputs, nn, mm)
        for e, r in zip(expected, ref):
            np.testing.assert_array_equal(
                e, r, err_msg=f"the UNTRANSFORMED {family} kernel disagrees with NumPy "
                f"for n={nn} m={mm}")
        if crash_log:
            with open(crash_log, "w") as f:
                f.write(f"family={family} n={nn} m={mm}\n" + "\n".join(log) + "\n")
        _, got = run_family(queue, knl, family, nn, mm, seed=k)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(
                g, e, err_msg=f"family={family} n={nn} m={mm}\n" + "\n".join(log))


def check_random_transformations(queue, family, max_examples, max_ops, shrink):
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)

    @settings(max_examples=max_examples, phases=phases)
    @given(data=st.data())
    def run(data):
        _differential(queue, data, family, max_ops)

    run()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_random_transformations_preserve_results(family):
    # no shrinking here, to keep a failing run short: the slow variant below
    # (--runslow) shrinks failures to a minimal transformation sequence; 15
    # examples (each compiles kernels of its own), the slow variant runs 400
    run_isolated("check_random_transformations", family, 15, 4, False, crash_log=True)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_random_transformations_preserve_results_many(family):
    run_isolated("check_random_transformations", family, 400, 7, True, timeout=1800,
                 crash_log=True)

# vim: foldmethod=marker
