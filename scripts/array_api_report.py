"""The recorded runs of Array API clients' tests with lazyarray and
array_api_strict (``docs/compatibility-clients.json``): :func:`record` keeps
one client's run, :func:`render` writes the section of docs/compatibility.md.

Public names: RECORD, record, render.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORD = Path(__file__).resolve().parent.parent / "docs" / "compatibility-clients.json"

_INTRO = """## Array API clients tested

Each client's own tests (or, where its package ships none, a call of each of
its functions) were run with lazyarray as the namespace and with
`array_api_strict`, the reference namespace, by the script named. lazyarray
runs with its default tier (small arrays computed by NumPy on the host, the
rest by kernels) unless the column says *device tier*, where every
operation builds kernels. A case fails where the client's assertion or its
comparison with NumPy failed, errs where the client raised.
"""


def record(client: str, entry: dict[str, Any]) -> None:
    """Keep *entry* (client version, tests, command and results by namespace)
    as *client*'s run (with the namespaces of an earlier run of the same
    version and tests that *entry* does not have)."""
    runs = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    kept = runs.get(client)
    if kept is not None and kept["version"] == entry["version"] \
            and kept["tests"] == entry["tests"]:
        entry = dict(entry, results={**kept["results"], **entry["results"]})
    runs[client] = entry
    RECORD.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")


#: what was found about failing cases (by test name): why they fail
EXPLAINED = {
    "test_correlate01_overlap": (
        "`ndimage.correlate1d(array, weights, output=array)` has NumPy write into "
        "`np.asarray(array)`: for array_api_strict that is the array's own memory, for "
        "lazyarray a copy (`np.asarray(lazy)` never shares the lazy array's memory, so that "
        "NumPy cannot change it behind lazyarray's back), and the lazy array keeps its "
        "values. Not a local fix: the client relies on NumPy writing through to the array."),
    "test_krandinit": (
        "`xpx.cov` of the (20, 10⁶) initial centroids, with every operation compiled: the "
        "(20, 20) result reduced over 10⁶ rows asks for a 3.2 GB buffer (20 × 20 × 10⁶ "
        "float64) where the device allows 2 GiB per buffer; the default tier passes. Left "
        "for the planner's contraction layouts.")}

#: the namespaces' columns, in order
COLUMNS = ("lazyarray", "lazyarray (device tier)", "array_api_strict")


def _cell(counts: dict[str, Any] | None) -> str:
    if counts is None:
        return "not run"
    cell = f"{counts['passed']} passed"
    for key, label in (("failed", "failed"), ("errors", "errors"), ("skipped", "skipped")):
        if counts[key]:
            cell += f", {counts[key]} {label}"
    return cell


def render(runs: dict[str, Any]) -> list[str]:
    """The markdown lines of the section on *runs*."""
    lines = [_INTRO, "| client | version | tests | " + " | ".join(COLUMNS) + " |",
             "|---|---|---|" + "---|" * len(COLUMNS)]
    for client, entry in sorted(runs.items()):
        lines.append(f"| {client} | {entry['version']} | {entry['tests']} | "
                     + " | ".join(_cell(entry["results"].get(c)) for c in COLUMNS) + " |")
    lines.append("")
    for client, entry in sorted(runs.items()):
        lines += [f"### {client} {entry['version']}", "",
                  f"Run by `{entry['command']}` ({entry['date']}).", ""]
        for note in entry.get("notes", []):
            lines += [note, ""]
        for namespace in COLUMNS:
            failures = entry["results"].get(namespace, {}).get("failures", [])
            if namespace not in entry["results"]:
                continue
            if not failures:
                lines.append(f"- {namespace}: nothing failed.")
                continue
            lines.append(f"- {namespace}: {len(failures)} failed or erred, with the client's "
                         "own error:")
            for line in failures:
                name, _, error = line.partition(": ")
                lines.append(f"  - `{name}`: {error.replace('|', '/').replace('`', '')}")
                lines += [f"    ({why})" for test, why in EXPLAINED.items() if test in name]
        lines.append("")
    return lines
