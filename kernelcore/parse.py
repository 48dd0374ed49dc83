"""The instruction language: text -> parsed statements (pymbolic expressions).

Public names: parse_expression, parse_instructions, ParsedInstruction.

Grammar (one statement per line; ``#`` starts a comment)::

    [<dtype>] lhs = rhs [{opt, opt=value, ...}]     assignment (``<>`` declares a
                                                    temporary of inferred type)
    [i,j]: lhs = rhs                                explicit loop indices
    for i[, j]  ...  end                            loop block
    if cond  ...  [elif cond ...] [else ...]  end   conditional block
    name[(arg, ...)] := expr                        substitution rule
    ... nop [{...}]                                 no-op (dependency anchor)
    ... lbarrier / ... gbarrier                     local / global barrier

Options: ``id=``, ``dep=a:b`` (``dep=*a`` disables the single-writer heuristic),
``priority=``, ``tags=a:b``, ``nosync=a:b``, ``inames=i:j``, ``if=cond``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.parser import _PREC_COMPARISON, _if, _imaginary, _not
from pymbolic.parser import Parser as _PymbolicParser
from pytools.lex import ParseError as _LexParseError

from kernelcore.diagnostic import ParseError
from kernelcore.ir.expr import IdentityMapper, SubArrayRef, TaggedVariable, get_dependencies
from kernelcore.ir.tags import LegacyStringInstructionTag


class _Parser(_PymbolicParser):
    """pymbolic's parser with C-style literal suffixes (``2.5f``), imaginary
    literals, ``if`` as a function name and ``not`` binding looser than
    comparisons."""

    def parse_float(self, s: str):
        low = s.lower()
        if low.endswith("jf"):          # a single-precision imaginary literal
            return np.complex64(complex(s[:-2].replace("d", "e").replace("D", "e") + "j"))
        if low.endswith("j"):
            return complex(s[:-1].replace("d", "e").replace("D", "e") + "j")
        if low.endswith("f") and not low.endswith("inf"):
            return np.float32(float(s[:-1]))
        if low.endswith("l"):
            return np.float64(float(s[:-1].replace("d", "e").replace("D", "e")))
        return float(s.replace("d", "e").replace("D", "e"))

    def parse_terminal(self, pstate):
        if pstate.next_tag() is _imaginary:
            return self.parse_float(pstate.next_str_and_advance())
        if pstate.next_tag() is _if:
            return prim.Variable(pstate.next_str_and_advance())
        return super().parse_terminal(pstate)

    def parse_prefix(self, pstate):
        if pstate.is_next(_not):
            pstate.advance()
            return prim.LogicalNot(self.parse_expression(pstate, _PREC_COMPARISON - 1))
        return super().parse_prefix(pstate)


_parser = _Parser()


_SWEEP = re.compile(r"([(,]\s*)\[\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*\]\s*:")
_SAR_PREFIX = "_kc_subarray_ref_"


def _mark_subarray_refs(text: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """*text* with each call argument ``[j, k]: expr`` (loopy's sub-array
    reference) written as a call of a marker function, and the swept inames
    of each marker."""
    swept: dict[str, tuple[str, ...]] = {}
    while True:
        m = _SWEEP.search(text)
        if m is None:
            return text, swept
        start = m.end()
        depth, k = 0, start
        while k < len(text):
            c = text[k]
            if c in "([":
                depth += 1
            elif c in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif c == "," and depth == 0:
                break
            k += 1
        name = f"{_SAR_PREFIX}{len(swept)}"
        swept[name] = tuple(n.strip() for n in m.group(2).split(","))
        text = f"{text[:m.start()]}{m.group(1)}{name}({text[start:k]}){text[k:]}"


class _CallRewriter(IdentityMapper):
    """``if(c, a, b)`` -> conditional expression; sub-array markers ->
    :class:`~kernelcore.ir.expr.SubArrayRef`."""

    def __init__(self, swept: dict[str, tuple[str, ...]] | None = None):
        self.swept = swept or {}

    def map_call(self, expr):
        params = tuple(self.rec(p) for p in expr.parameters)
        fname = expr.function.name if isinstance(expr.function, prim.Variable) else None
        if fname in self.swept:
            if len(params) != 1:
                raise ParseError("a sub-array reference '[j]: a[i, j]' takes one array "
                                 "access")
            return SubArrayRef(tuple(prim.Variable(n) for n in self.swept[fname]),
                               params[0])
        if isinstance(expr.function, prim.Variable) and expr.function.name == "if":
            if len(params) != 3:
                raise ParseError(f"if() takes 3 arguments (condition, then, else), "
                                 f"got {len(params)}")
            return prim.If(*params)
        return prim.Call(expr.function, params)

    def map_variable(self, expr):
        if _TAG_MARK not in expr.name:
            return expr
        name, *tags = expr.name.split(_TAG_MARK)
        return TaggedVariable(name, frozenset(LegacyStringInstructionTag(t) for t in tags))

    def map_constant(self, expr):
        return expr


_TAGGED = re.compile(r"\b([A-Za-z_]\w*)((?:\$[A-Za-z_]\w*)+)")
_TAG_MARK = "_kc_tag_"


def _mark_tags(text: str) -> str:
    """``name$tag1$tag2`` written as one name the parser takes."""
    return _TAGGED.sub(lambda m: m.group(1) + m.group(2).replace("$", _TAG_MARK), text)


def parse_expression(text: str) -> Any:
    """Parse one expression of the instruction language (``name$tag`` tags a
    variable)."""
    if "$" in text:
        text = _mark_tags(text)
    marked, swept = _mark_subarray_refs(text) if "]" in text else (text, {})
    try:
        expr = _parser(marked)
    except (_LexParseError, ValueError, TypeError, AssertionError) as e:
        hint = (" (a call with keyword arguments: pass its arguments by position, as "
                "loopy does not take keywords either)" if _KEYWORD_ARG.search(text) else "")
        raise ParseError(f"cannot parse expression {text!r}: {str(e) or 'syntax error'}"
                         f"{hint}") from None
    return _CallRewriter(swept)(expr)


#: ``f(..., name=...)``: a keyword argument in a call
_KEYWORD_ARG = re.compile(r"[(,]\s*[A-Za-z_]\w*\s*=(?!=)")


@dataclass
class ParsedInstruction:
    """One statement as written, before names and types are resolved."""

    kind: str                      # "assign", "call", "nop", "lbarrier" or "gbarrier"
    assignee: Any = None
    expression: Any = None
    temp_var_type: Any = None      # None: no declaration; "auto" or a dtype
    id: str | None = None
    depends_on: tuple[str, ...] = ()
    depends_on_is_final: bool = False
    priority: int = 0
    tags: frozenset[str] = frozenset()
    no_sync_with: frozenset = frozenset()
    block_inames: frozenset[str] = frozenset()
    explicit_inames: frozenset[str] | None = None
    predicates: frozenset = frozenset()
    source: str = ""
    extra: dict = field(default_factory=dict)


_ASSIGN_EQ = re.compile(r"(?<![=<>!])=(?!=)")


def _split_options(line: str) -> tuple[str, str | None]:
    line = line.rstrip()
    if line.endswith("}"):
        depth = 0
        for k in range(len(line) - 1, -1, -1):
            if line[k] == "}":
                depth += 1
            elif line[k] == "{":
                depth -= 1
                if depth == 0:
                    return line[:k].rstrip(), line[k + 1:-1]
        raise ParseError(f"unbalanced braces in instruction {line!r}")
    return line, None


def _nosync_entry(text: str) -> tuple[str, str]:
    """``ID[@SCOPE]`` of a ``nosync`` option as ``(ID, SCOPE)``, the scope
    ``any`` unless given."""
    name, _, scope = text.strip().partition("@")
    scope = scope.strip() or "any"
    if scope not in ("local", "global", "any"):
        raise ParseError(f"nosync scope must be local, global or any, got {scope!r}")
    return name.strip(), scope


def _apply_options(pi: ParsedInstruction, opts: str) -> None:
    for item in (s.strip() for s in opts.split(",")):
        if not item:
            continue
        key, _, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key == "id":
            pi.id = value
        elif key == "id_prefix":    # (loopy's 'with' blocks: ids made from it)
            pi.extra["id_prefix"] = value
        elif key == "dep":
            if value.startswith("*"):
                pi.depends_on_is_final = True
                value = value[1:]
            pi.depends_on += tuple(v.strip() for v in value.split(":") if v.strip())
        elif key == "priority":
            try:
                pi.priority = int(value)
            except ValueError:
                raise ParseError(f"priority must be an integer, got {value!r} "
                                 f"in {pi.source!r}") from None
        elif key == "tags":
            pi.tags = pi.tags | {v.strip() for v in value.split(":") if v.strip()}
        elif key == "nosync":
            pi.no_sync_with = pi.no_sync_with | {
                _nosync_entry(v) for v in value.split(":") if v.strip()}
        elif key == "inames":
            pi.explicit_inames = frozenset(v.strip() for v in value.split(":") if v.strip())
        elif key == "if":
            pi.predicates = pi.predicates | {parse_expression(value)}
        elif key == "mem_kind":
            if value not in ("local", "global"):
                raise ParseError(f"mem_kind must be local or global, got {value!r}")
            pi.extra["mem_kind"] = value
        elif key == "atomic":
            pi.extra["atomic"] = True
        elif key in ("groups", "conflicts"):       # loopy's instruction groups
            pi.extra[key] = frozenset(v.strip() for v in value.split(":") if v.strip())
        elif key in ("dep_query", "nosync_query"):     # instruction matches, see match.py
            pi.extra[key] = value
        elif key == "dup":          # dup=i:j->j2: the instruction's own copies of inames
            pi.extra["dup"] = pi.extra.get("dup", ()) + tuple(
                (old.strip(), new.strip() or None)
                for old, _, new in (v.partition("->") for v in value.split(":") if v.strip()))
        else:
            raise ParseError(f"unknown instruction option '{key}' in {pi.source!r} "
                             "(known: id, id_prefix, dep, dep_query, priority, tags, nosync, "
                             "nosync_query, inames, if, mem_kind, atomic, dup, groups, "
                             "conflicts)")


_HEAD = re.compile(r"^\s*(?:\[(?P<inames>[^\]]*)\]\s*:\s*)?(?:<(?P<type>[^<>]*)>\s*)?(?P<rest>.*)$",
                   re.S)


_TEMP_DECL = re.compile(r"^\s*<([^<>]*)>(.*)$", re.S)


def _declared_type(text: str, line: str):
    """The type of a temporary declared ``<text>``: "auto" when empty, else a dtype."""
    tname = text.strip()
    if not tname:
        return "auto"
    try:
        return np.dtype(tname)
    except TypeError:
        raise ParseError(f"unknown type <{tname}> in {line.strip()!r}") from None


_RULE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*:=(.*)$", re.S)


def _parse_statement(line: str, block_inames, predicates) -> ParsedInstruction:
    rule = _RULE.match(line)
    if rule:
        args = tuple(a.strip() for a in (rule.group(2) or "").split(",") if a.strip())
        return ParsedInstruction(kind="subst", source=line.strip(),
                                 assignee=rule.group(1), expression=parse_expression(
                                     rule.group(3)), extra={"arguments": args})
    body, opts = _split_options(line)
    pi = ParsedInstruction(kind="assign", source=line.strip(),
                           block_inames=frozenset(block_inames),
                           predicates=frozenset(predicates))
    if body.strip().startswith("..."):
        word = body.strip()[3:].strip()
        if word not in ("nop", "lbarrier", "gbarrier"):
            raise ParseError(f"unknown special instruction '... {word}' in {line.strip()!r} "
                             "(known: nop, lbarrier, gbarrier)")
        pi.kind = word
    else:
        m = _HEAD.match(body)
        assert m is not None
        if m.group("inames") is not None:
            pi.explicit_inames = frozenset(
                s.strip() for s in m.group("inames").split(",") if s.strip())
        if m.group("type") is not None:
            pi.temp_var_type = _declared_type(m.group("type"), line)
        rest = m.group("rest")
        eq = _ASSIGN_EQ.search(rest)
        if eq is None:
            call = _result_less_call(rest)
            if call is None:
                raise ParseError(f"not an assignment (no '='): {line.strip()!r}")
            pi.kind, pi.expression = "call", call     # 'f(x[i])': a call without results
            if opts is not None:
                _apply_options(pi, opts)
            return pi
        lhs_text, rhs_text = rest[:eq.start()], rest[eq.end():]
        if not lhs_text.strip() or not rhs_text.strip():
            raise ParseError(f"assignment with an empty side: {line.strip()!r}")
        parts = _split_top_level(lhs_text)
        if len(parts) > 1:
            # a later assignee may declare its own temporary: 'out[i], <>flag = ...'
            for k, part in enumerate(parts[1:], 1):
                decl = _TEMP_DECL.match(part)
                if decl is not None:
                    pi.extra.setdefault("assignee_types", {})[k] = _declared_type(
                        decl.group(1), line)
                    parts[k] = decl.group(2)
        assignee = (tuple(_parse_assignee(p) for p in parts) if len(parts) > 1
                    else parse_expression(lhs_text))
        pi.expression = parse_expression(rhs_text)
        several = isinstance(assignee, tuple)
        if several and not isinstance(pi.expression, prim.Call):
            raise ParseError(f"several assignees need a function call on the right: "
                             f"{line.strip()!r}")
        for a in (assignee if several else (assignee,)):
            if not (isinstance(a, prim.Variable) or _is_sub_array(a)
                    or (isinstance(a, prim.Subscript)
                        and isinstance(a.aggregate, prim.Variable))):
                raise ParseError(f"cannot assign to {lhs_text.strip()!r} in "
                                 f"{line.strip()!r}")
        if pi.explicit_inames is not None and (_has_subarray_ref(pi.expression) or (
                isinstance(pi.expression, prim.Call) and not any(
                    get_dependencies(p) & pi.explicit_inames
                    for p in pi.expression.parameters))):
            # loopy's '[j]: out[i, j] = f([j]: a[i, j])' (or '= f(n)': arguments free
            # of the head's inames): the head sweeps the assignee
            swept = tuple(prim.Variable(n.strip()) for n in m.group("inames").split(",")
                          if n.strip())
            if several:
                assignee = (SubArrayRef(swept, assignee[0]),) + assignee[1:]
            else:
                assignee = SubArrayRef(swept, assignee)
            pi.explicit_inames = None
        pi.assignee = assignee
    if opts is not None:
        _apply_options(pi, opts)
    return pi


def _result_less_call(text: str) -> prim.Call | None:
    """*text* as a call of a named function (``f()``, ``f(sum(i, x[i]))``), or
    None if it is something else."""
    try:
        expr = parse_expression(text)
    except (ParseError, _LexParseError):
        return None
    if isinstance(expr, prim.Call) and isinstance(expr.function, prim.Variable):
        return expr
    return None


def _split_top_level(text: str) -> list[str]:
    """*text* split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


_SWEPT_HEAD = re.compile(r"^\s*\[([^\]]*)\]\s*:(.*)$", re.S)


def _parse_assignee(text: str):
    """One of several assignees, maybe a sub-array reference ``[j]: a[i, j]``."""
    m = _SWEPT_HEAD.match(text)
    if m is None:
        return parse_expression(text)
    return SubArrayRef(tuple(prim.Variable(n.strip()) for n in m.group(1).split(",")
                             if n.strip()), parse_expression(m.group(2)))


def _is_sub_array(expr) -> bool:
    return isinstance(expr, SubArrayRef)


def _has_subarray_ref(expr) -> bool:
    if isinstance(expr, SubArrayRef):
        return True
    if isinstance(expr, prim.Call):
        return any(_has_subarray_ref(p) for p in expr.parameters)
    return False


def _negate(cond):
    return prim.LogicalNot(cond)


def _open_brackets(text: str) -> int:
    """How many of the ``(`` and ``[`` in *text* are not closed yet."""
    return sum(text.count(c) for c in "([") - sum(text.count(c) for c in ")]")


def parse_instructions(text: str | list) -> list[Any]:
    """Parse instruction text (or a list of lines and/or instruction objects) into
    :class:`ParsedInstruction` records (instruction objects pass through)."""
    items = text if isinstance(text, (list, tuple)) else [text]
    lines: list[str | Any] = []
    for item in items:
        if isinstance(item, str):
            pending = ""        # a statement whose brackets are still open
            for raw in item.split("\n"):
                code = raw.split("#", 1)[0].strip()
                if not code:
                    continue
                pending = f"{pending} {code}" if pending else code
                if _open_brackets(pending) <= 0:
                    lines.append(pending)
                    pending = ""
            if pending:
                lines.append(pending)
        else:
            lines.append(item)

    result: list[Any] = []
    # stack entries: ("for", inames), ("if", [conditions taken so far], current)
    # or ("with", options for the statements inside)
    stack: list[tuple] = []

    def current():
        inames: set[str] = set()
        preds: list = []
        for entry in stack:
            if entry[0] == "for":
                inames |= entry[1]
            elif entry[0] == "if":
                preds.append(entry[2])
        return inames, preds

    for line in lines:
        if not isinstance(line, str):
            result.append(line)
            continue
        word = line.split(None, 1)[0]
        arg = line[len(word):].strip()
        if word == "for":
            names = {s.strip() for s in arg.split(",") if s.strip()}
            if not names or not all(re.fullmatch(r"[A-Za-z_]\w*", n) for n in names):
                raise ParseError(f"malformed loop header {line!r}")
            stack.append(("for", names))
        elif word == "if" and not line.startswith("if("):
            cond = parse_expression(arg)
            stack.append(("if", [cond], cond))
        elif word in ("elif", "else"):
            if not stack or stack[-1][0] != "if":
                raise ParseError(f"'{word}' without a matching 'if': {line!r}")
            _, taken, _ = stack.pop()
            negated = [_negate(c) for c in taken]
            if word == "elif":
                cond = parse_expression(arg)
                conds = negated + [cond]
                stack.append(("if", taken + [cond], prim.LogicalAnd(tuple(conds))))
            else:
                stack.append(("if", taken, negated[0] if len(negated) == 1
                              else prim.LogicalAnd(tuple(negated))))
        elif word == "with":
            body, opts = _split_options(arg)
            if body or opts is None:
                raise ParseError(f"malformed 'with' block header {line!r} (expected "
                                 "'with {options}')")
            if any(k.strip() in ("id", "priority")
                   for k, _, _ in (o.partition("=") for o in opts.split(","))):
                raise ParseError(f"'id' and 'priority' may not be given to a 'with' "
                                 f"block: {line!r}")
            stack.append(("with", opts))
        elif word == "end":
            if not stack:
                raise ParseError("'end' without a matching 'for', 'if' or 'with'")
            stack.pop()
        else:
            inames, preds = current()
            pi = _parse_statement(line, inames, preds)
            if pi.kind != "subst":
                for entry in stack:
                    if entry[0] == "with":
                        _apply_options(pi, entry[1])
            result.append(pi)
    if stack:
        raise ParseError(f"unterminated '{stack[-1][0]}' block (missing 'end')")
    return result
