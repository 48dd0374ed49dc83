"""The documentation stays runnable.

For each ``docs/*.md`` file, the fenced ```` ```python ```` blocks are run in
order, in one namespace per file (so later blocks see what earlier ones
defined). A ```` ```text ```` block that directly follows a python block
(nothing but blank lines between them) is that block's expected standard
output and is compared with what the block printed (trailing whitespace on
each line and trailing blank lines ignored). Fences with any other or no
language are prose and are not run.

The docs get their queue from ``kernelcore.default_queue()`` themselves; the
``queue`` fixture is requested so that the session's device is set up (and
the throw-away ``KERNELCORE_CACHE_DIR`` from conftest is in place) first.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.helpers import ROOT

DOCS_DIR = ROOT / "docs"
DOC_FILES = sorted(DOCS_DIR.glob("*.md"))

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def extract_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """``(line number, python source, expected output or None)`` for each python
    block of *text*, in order."""
    fences = []
    for m in _FENCE.finditer(text):
        lang = m.group(1).strip().lower()
        line = text.count("\n", 0, m.start()) + 1
        fences.append((lang, m.group(2), line, m.start(), m.end()))
    blocks = []
    for k, (lang, body, line, _start, end) in enumerate(fences):
        if lang != "python":
            continue
        expected = None
        if k + 1 < len(fences):
            nlang, nbody, _, nstart, _ = fences[k + 1]
            if nlang == "text" and not text[end:nstart].strip():
                expected = nbody
        blocks.append((line, body, expected))
    return blocks


def _normalize(output: str) -> str:
    return "\n".join(line.rstrip() for line in output.rstrip().splitlines())


def test_docs_exist():
    names = {p.name for p in DOC_FILES}
    assert {"index.md", "getting-started.md", "architecture.md"} <= names


@pytest.mark.parametrize("path", DOC_FILES, ids=[p.name for p in DOC_FILES])
def test_doc_code_blocks_run(path, queue):
    text = path.read_text()
    namespace: dict = {"__name__": f"docs_{path.stem.replace('-', '_')}"}
    for line, source, expected in extract_blocks(text):
        where = f"{path.name}:{line}"
        out = io.StringIO()
        code = compile(source, where, "exec")
        with contextlib.redirect_stdout(out):
            try:
                exec(code, namespace)
            except Exception as e:
                raise AssertionError(
                    f"python block at {where} failed: {type(e).__name__}: {e}\n"
                    f"--- output so far ---\n{out.getvalue()}") from e
        if expected is not None:
            got = _normalize(out.getvalue())
            want = _normalize(expected)
            assert got == want, (
                f"output of the python block at {where} differs from the text block "
                f"after it\n--- printed ---\n{got}\n--- documented ---\n{want}")


def test_extract_blocks_pairs_output_with_preceding_block():
    text = ("intro\n```python\nprint(1)\n```\n\n```text\n1\n```\n"
            "```python\nx = 2\n```\nprose\n```text\nnot output\n```\n"
            "```\nshell\n```\n")
    blocks = extract_blocks(text)
    assert [(b[1], b[2]) for b in blocks] == [("print(1)\n", "1\n"), ("x = 2\n", None)]
