"""Sphinx configuration of the lazyarray documentation site.

Build it with ``.venv/bin/sphinx-build -W -b html docs build/docs`` (``build/``
is git-ignored). Pages are Markdown (myst-parser); the API reference pages
(``docs/api/``) are generated from the packages' docstrings by autodoc.

Two additions of this file:

* the ``lazyarray-names`` directive documents names of the ``lazyarray``
  namespace: those of a module's ``__all__`` (``:module:``), given names
  (``:names:``), or every public callable of ``lazyarray.__all__`` that the
  page has not documented yet (``:rest:``), so that a new function appears in
  the reference without editing it (an autosummary table, then an autodoc
  entry per name); ``lazyarray-submodules`` documents the submodules
  (``la.linalg``, ...) that exist;
* where a function of lazyarray is a generated wrapper whose own signature is
  ``(*args, **kwargs)``, the reference shows the signature it accepts, taken
  from what it forwards to (a ufunc's number of inputs, the view function it
  calls, the NumPy function a host function runs). A function whose own
  signature is real is shown as it is.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pathlib
import sys

import numpy as np
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

# the API pages document the packages of this checkout
ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import lazyarray  # noqa: E402

project = "lazyarray"
author = "the lazyarray authors"
release = version = lazyarray.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.autosummary"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
# index.md lists the pages of la.random and la.linalg/la.fft as glob patterns
# (``random*``, ``linalg-fft*``): included once written, no warning before
suppress_warnings = ["toc.empty_glob"]

autodoc_member_order = "bysource"
# signatures show names and defaults; types go to the entry's description
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_default_options = {"show-inheritance": False}
add_module_names = False

html_theme = "alabaster"
html_title = f"lazyarray {release}"
html_theme_options = {"description": "NumPy-like lazy arrays compiled to fused OpenCL kernels",
                      "fixed_sidebar": True}


# {{{ the lazyarray-names directive

def _parse_rst(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """The nodes of reStructuredText *lines*, in the (Markdown) page of *directive*."""
    fence = ["```{eval-rst}", *lines, "```"]
    node = nodes.Element()
    nested_parse_with_titles(directive.state,
                             StringList(fence, source=directive.get_source_info()[0]), node)
    return node.children


def _public_callable(name: str) -> bool:
    obj = getattr(lazyarray, name, None)
    if name.startswith("_") or obj is None or not callable(obj):
        return False
    # NumPy's scalar types (la.float32, ...) are listed as data types, not documented here
    return not (isinstance(obj, type) and not obj.__module__.startswith("lazyarray"))


def _directive_for(name: str) -> str:
    obj = getattr(lazyarray, name)
    if isinstance(obj, type):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    return "autofunction"


class LazyarrayNames(SphinxDirective):
    """Autodoc entries for names of the ``lazyarray`` namespace (see the module
    docstring); a name is documented once per page."""

    has_content = False
    option_spec = {"module": directives.unchanged, "names": directives.unchanged,
                   "rest": directives.flag, "members": directives.flag,
                   "title": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        covered = self.env.temp_data.setdefault("lazyarray_names_covered", set())
        if "rest" in self.options:
            names = [n for n in sorted(lazyarray.__all__)
                     if n not in covered and _public_callable(n)]
        else:
            names = list(self.options.get("names", "").split())
            if "module" in self.options:
                module = __import__(self.options["module"], fromlist=["__all__"])
                names += list(module.__all__)
            names = [n for n in names if n not in covered and _public_callable(n)]
        covered.update(names)
        lines = [".. currentmodule:: lazyarray", ""]
        if names and "title" in self.options:
            lines += [f".. rubric:: {self.options['title']}", ""]
        if len(names) > 3:           # an overview table first, then the entries
            lines += [".. autosummary::", "   :nosignatures:", "",
                      *(f"   {name}" for name in names), ""]
        for name in names:
            lines.append(f".. {_directive_for(name)}:: {name}")
            if "members" in self.options and isinstance(getattr(lazyarray, name), type):
                lines += ["   :members:", "   :undoc-members:", "   :inherited-members:"]
            lines.append("")
        if not names:
            return []
        return _parse_rst(self, lines)


class LazyarraySubmodules(SphinxDirective):
    """``automodule`` entries for those of the given submodules that exist
    (``:modules:``), each under a rubric, without the NumPy classes they
    re-export; nothing for a module not there."""

    has_content = False
    option_spec = {"modules": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        for name in self.options.get("modules", "").split():
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as e:
                if e.name != name:
                    raise
                continue
            # NumPy's classes that the submodule re-exports (la.random.PCG64...)
            # are NumPy's to document
            numpy_names = [n for n in getattr(module, "__all__", ())
                           if not getattr(getattr(module, n), "__module__",
                                          "lazyarray").startswith("lazyarray")]
            # not indexed here: the submodule's own page may document it too
            lines += [f".. rubric:: ``{name}``", "", f".. automodule:: {name}",
                      "   :members:", "   :no-index:"]
            if numpy_names:
                lines.append(f"   :exclude-members: {', '.join(numpy_names)}")
            lines.append("")
        if not lines:
            return []
        return _parse_rst(self, lines)

# }}}


# {{{ signatures of generated wrappers

def _parameters_without_varargs(signature: inspect.Signature) -> list[inspect.Parameter]:
    return [p for p in signature.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _ufunc_signature(obj, own: inspect.Signature) -> inspect.Signature | None:
    nin = getattr(obj, "nin", None)
    if nin is None:
        ufunc = inspect.getclosurevars(obj).nonlocals.get("ufunc") \
            if inspect.isfunction(obj) else None
        nin = getattr(ufunc, "nin", None) if isinstance(ufunc, np.ufunc) else None
    if nin is None:
        return None
    names = ["x"] if nin == 1 else [f"x{k + 1}" for k in range(nin)]
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    return own.replace(parameters=params + _parameters_without_varargs(own),
                       return_annotation=inspect.Signature.empty)


def _view_signature(obj) -> inspect.Signature | None:
    from lazyarray.api.manipulation import _VIEW_FUNCTIONS as VIEW_FUNCTIONS
    from lazyarray.ops import manipulate
    name = obj.__name__
    impl = VIEW_FUNCTIONS.get(name) or getattr(manipulate, name, None)
    if impl is None:
        return None
    params = list(inspect.signature(impl).parameters.values())
    x = inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    rest = [p.replace(annotation=inspect.Parameter.empty) for p in params[1:]]
    return inspect.Signature([x, *rest])


def _host_signature(obj) -> inspect.Signature | None:
    from lazyarray.ops import host
    name = obj.__name__
    numpy_fn = getattr(host, "_WITH_ARRAY_API_ARGUMENTS", {}).get(name) or getattr(np, name, None)
    try:
        return inspect.signature(numpy_fn) if numpy_fn is not None else None
    except (TypeError, ValueError):
        return None


def derived_signature(obj) -> inspect.Signature | None:
    """The signature *obj* accepts, where its own is ``(*args)``/``(**kwargs)``
    because it is a generated wrapper; None otherwise."""
    try:
        own = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name in ("args", "kwargs")
               for p in own.parameters.values()):
        return None
    module = getattr(obj, "__module__", "") or ""
    if module == "lazyarray.api.ufuncs":
        return _ufunc_signature(obj, own)
    if module == "lazyarray.api.manipulation":
        return _view_signature(obj)
    if module == "lazyarray.api.searching":
        return _host_signature(obj)
    return None


def _process_signature(app, what, name, obj, options, signature, return_annotation):
    if what != "function" or not name.startswith("lazyarray."):
        return None
    derived = derived_signature(obj)
    if derived is None:
        return None
    shown = derived.replace(return_annotation=inspect.Signature.empty)
    return str(shown), return_annotation

# }}}


class _EmptyGlobFilter(logging.Filter):
    """Drops "toctree glob pattern didn't match": Sphinx 9.0 logs it without a
    warning type, so ``suppress_warnings`` cannot name it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "subtype", None) != "empty_glob"


def setup(app):
    logging.getLogger("sphinx.sphinx.directives.other").addFilter(_EmptyGlobFilter())
    app.add_directive("lazyarray-names", LazyarrayNames)
    app.add_directive("lazyarray-submodules", LazyarraySubmodules)
    app.connect("autodoc-process-signature", _process_signature)
    return {"parallel_read_safe": True}
