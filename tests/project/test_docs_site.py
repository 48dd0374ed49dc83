"""The documentation site builds, and what the README and the quickstart show
is what they do.

* ``sphinx-build -W`` builds ``docs/`` (warnings are errors) in a child
  process; the API reference pages must show real signatures (no
  ``(*args, **kwargs)``) and an entry for every public function of
  ``lazyarray``.
* The README's ``python`` blocks run, and print what its ``text`` blocks say
  (the same rules as ``tests/test_docs.py`` for the pages of ``docs/``).
* ``examples/quickstart.py`` (what ``bootstrap.sh demo`` runs first) agrees
  with NumPy at a small size.
"""

from __future__ import annotations

import contextlib
import html
import io
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

from tests.helpers import ROOT
from tests.project.test_docs import extract_blocks

DOCS = ROOT / "docs"
# (about 30 s on two quiet cores; 71 s while other work shared them)
BUILD_SECONDS = 150
#: functions whose ``*args``/``**kwargs`` are what they take, as documented
VARIADIC = {"kernelcore.make_function",          # make_kernel's arguments
            "kernelcore.set_options"}            # option strings and option=value

_SIGNATURE = re.compile(r'<dt class="sig sig-object py" id="([^"]+)">(.*?)</dt>', re.S)


def _text(fragment: str) -> str:
    """The text of an HTML fragment, whitespace collapsed, without permalinks."""
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment)).replace("¶", "")
    return " ".join(text.split())


def signatures(page: pathlib.Path) -> dict[str, str]:
    """``{object id: signature text}`` of the described objects on *page*."""
    return {obj: _text(sig) for obj, sig in _SIGNATURE.findall(page.read_text())}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site: ``(output directory, seconds, sphinx-build's output)``."""
    out = tmp_path_factory.mktemp("docs-site")
    env = dict(os.environ)
    env.setdefault("POCL_CACHE_DIR", str(out / "pocl-cache"))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, (
        f"sphinx-build -W failed (status {done.returncode}):\n"
        f"{done.stdout[-4000:]}\n{done.stderr[-6000:]}")
    return out / "html", seconds, done.stdout + done.stderr


def test_site_builds_with_warnings_as_errors(site):
    html_dir, seconds, _ = site
    for page in ("index", "lazyarray", "getting-started", "transformations",
                 "memory-and-sync", "callables", "architecture", "api/lazyarray",
                 "api/kernelcore"):
        assert (html_dir / f"{page}.html").is_file(), page
    assert seconds < BUILD_SECONDS, f"the docs took {seconds:.0f} s to build"


def test_index_is_lazyarray_first_with_the_guides_in_its_toctree(site):
    index = (site[0] / "index.html").read_text()
    assert "<title>lazyarray: lazy NumPy arrays compiled to OpenCL" in index
    links = re.findall(r'<a class="reference internal" href="([^"#]+)', index)
    for target in ("lazyarray.html", "getting-started.html", "architecture.html",
                   "api/lazyarray.html", "api/kernelcore.html"):
        assert target in links, target
    assert links.index("lazyarray.html") < links.index("getting-started.html")
    for page in ("random", "linalg-fft"):          # written elsewhere; listed once present
        if (DOCS / f"{page}.md").exists():
            assert f"{page}.html" in links, page


def test_api_reference_shows_real_signatures(site):
    sigs = signatures(site[0] / "api" / "lazyarray.html")
    assert sigs["lazyarray.asarray"].startswith("asarray(data, dtype=None")
    assert sigs["lazyarray.array"].startswith("array(obj, dtype=None")
    assert sigs["lazyarray.jit"].startswith("jit(fn")
    assert sigs["lazyarray.explain"].startswith("explain(x")
    assert sigs["lazyarray.LazyArray.sum"].startswith("sum(axis=None")
    assert sigs["lazyarray.sum"].startswith("sum(x, axis=None")
    assert sigs["lazyarray.sin"].startswith("sin(x")
    assert sigs["lazyarray.add"].startswith("add(x1, x2")
    assert sigs["lazyarray.roll"].startswith("roll(a, shift")      # NumPy's names
    assert sigs["lazyarray.sort"].startswith("sort(")
    kernelcore = signatures(site[0] / "api" / "kernelcore.html")
    assert kernelcore["kernelcore.make_kernel"].startswith("make_kernel(domains, instructions")
    generic = {obj: sig for obj, sig in {**sigs, **kernelcore}.items()
               if re.search(r"\(([^()]*, )?\*args(, \*\*kwargs)?\)", sig)
               and obj not in VARIADIC}
    assert not generic, f"entries without a real signature: {generic}"


def test_api_reference_lists_every_public_function(site):
    import lazyarray as la
    sigs = signatures(site[0] / "api" / "lazyarray.html")
    public = {n for n in la.__all__ if not n.startswith("_") and callable(getattr(la, n))
              and not (isinstance(getattr(la, n), type)
                       and not getattr(la, n).__module__.startswith("lazyarray"))}
    missing = sorted(n for n in public if f"lazyarray.{n}" not in sigs)
    assert not missing, f"not in docs/api/lazyarray.md: {missing}"
    methods = [n for n in dir(la.LazyArray) if not n.startswith("_")
               and callable(getattr(la.LazyArray, n))]
    missing = [m for m in methods if f"lazyarray.LazyArray.{m}" not in sigs]
    assert not missing, f"LazyArray methods not in the reference: {missing}"


def test_readme_code_blocks_run_and_print_what_it_shows(queue):
    text = (ROOT / "README.md").read_text()
    blocks = extract_blocks(text)
    assert blocks, "the README has python blocks"
    first = blocks[0]
    code_lines = [line for line in first[1].splitlines() if line.strip()]
    assert len(code_lines) == 5 and first[2] is not None, "the first block: 5 lines and output"
    namespace: dict = {"__name__": "readme"}
    for line, source, expected in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, f"README.md:{line}", "exec"), namespace)
        if expected is not None:
            got = "\n".join(s.rstrip() for s in out.getvalue().rstrip().splitlines())
            want = "\n".join(s.rstrip() for s in expected.rstrip().splitlines())
            assert got == want, f"README.md:{line} printed\n{got}\ninstead of\n{want}"


def test_readme_and_ci_run_the_same_test_command():
    readme = (ROOT / "README.md").read_text()
    setup = re.match(r"# [^\n]*\n\n```\n(.*?)```", readme, re.S)
    assert setup, "the README starts with its set-up commands"
    commands = setup.group(1).split("\n")
    assert commands[:2] == ["bash scripts/bootstrap.sh demo", "bash scripts/bootstrap.sh test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()


def test_quickstart_agrees_with_numpy():
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"),
         "--rows", "128", "--cols", "96", "--repeat", "2"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "quickstart: all results agree with NumPy" in out
    assert "traced 1 time(s) for two calls" in out
    if os.environ["LAZYARRAY_TIER"] == "device":          # (set by conftest.py)
        assert "kernel 0: stores" in out                  # la.explain's output
        assert "nothing computed yet" in out
    else:       # (a 128x96 array is small: NumPy computes it on the host tier)
        assert "computed by NumPy on the host tier" in out
        assert "computed at once by NumPy" in out
    assert re.search(r"NumPy, on the host +[\d.]+ ms", out)
    assert re.search(r"la\.jit, on .+ +[\d.]+ ms", out)
