"""Text and Markdown renderings of a suite result (see suite.py)."""

from __future__ import annotations

from common import fmt, markdown_table, text_table

HEADER = ["variant", "time", "GB/s", "of copy", "vs numpy", "vs hand", "GFLOP/s",
          "error", "status"]


def _time(seconds: float | None, unit: str) -> str:
    if seconds is None:
        return "-"
    scale = {"ms": 1e3, "us": 1e6}[unit]
    return f"{seconds * scale:.4g} {unit}"


def _status(rec: dict, detailed: bool) -> str:
    """``ok`` (W9: with the import time), else the status, with its reason or
    the first line of its error when *detailed*."""
    status = rec["status"]
    if status == "ok":
        if "import_s" in rec:
            return f"ok (import {1e3 * rec['import_s']:.0f} ms)"
        return "ok"
    detail = (rec.get("error") or rec.get("reason") or "").splitlines()
    if not detailed or not detail or detail[0] == status:
        return status
    return f"{status}: {detail[0]}".replace("|", "\\|")


def _rows(case: dict, detailed: bool) -> list[list[str]]:
    rows = []
    for name, rec in case["variants"].items():
        rows.append([name, _time(rec.get("median_s"), case["unit"]),
                     fmt(rec.get("gbps"), ".1f"), fmt(rec.get("of_copy"), ".2f"),
                     fmt(rec.get("vs_numpy"), ".2f"),
                     fmt(rec.get("vs_hand_written"), ".2f"),
                     fmt(rec.get("gflops"), ".1f"), fmt(rec.get("max_rel_error"), ".1e"),
                     _status(rec, detailed)])
    return rows


def _reasons(result: dict) -> list[str]:
    """Why variants did not run (each reason once) and what failed."""
    reasons = dict.fromkeys(f"{name} {rec['status']}: {rec['reason']}"
                            for case in result["cases"]
                            for name, rec in case["variants"].items()
                            if rec["status"] in ("skipped", "not installed"))
    return list(reasons) + [f.splitlines()[0] for f in result["failures"]]


def _target_rows(result: dict) -> list[list[str]]:
    rows = []
    for t in result["targets"]:
        met = {True: "met", False: "NOT met", None: "not measured"}[t["met"]]
        value = "-" if t["value"] is None else f"{t['value']:.3g}{t['unit']}"
        rows.append([t["case"], t["variant"], t["target"], value, met])
    return rows


TARGET_HEADER = ["case", "variant", "target", "measured", "result"]


def _title(result: dict) -> str:
    dev = result["environment"]["device"]
    quick = " (--quick)" if result["quick"] else ""
    return f"lazyarray benchmark suite on {dev['name']} ({dev['kind']}){quick}"


def text_report(result: dict) -> str:
    """All cases in one table, then the targets."""
    rows = []
    for case in result["cases"]:
        for k, row in enumerate(_rows(case, detailed=False)):
            rows.append([case["name"] if k == 0 else "", *row])
    lines = [_title(result), "", text_table(["case", *HEADER], rows)]
    if result["targets"]:
        lines += ["", "Targets:", text_table(TARGET_HEADER, _target_rows(result))]
    notes = _reasons(result)
    if notes:
        lines += ["", "Not run or failed:", *(f"  {n}" for n in notes)]
    return "\n".join(lines)


def _environment_rows(result: dict) -> list[list[str]]:
    env = result["environment"]
    dev, plat = env["device"], env["platform"]
    s = result["settings"]
    dirty = " (uncommitted changes)" if env["git_dirty"] else ""
    rows = [
        ["device", f"{dev['name']} ({dev['kind']}), {dev['max_compute_units']} compute "
                   f"units, driver {dev['driver_version']}"],
        ["platform", f"{plat['name']} {plat['version']}"],
        ["host", f"{env['hostname']}, {env['host_cpu_count']} CPUs; peers use "
                 f"{s['threads']} threads; {env['os']}"],
        ["versions", f"Python {env['python']}, NumPy {env['numpy']}, pyopencl "
                     f"{env['pyopencl']}, kernelcore {env['kernelcore']}"],
        ["peers", ", ".join(f"{k} {v}" for k, v in result["peers"].items())],
        ["git", f"{env['git_commit']}{dirty}"],
        ["time (UTC)", env["timestamp_utc"]],
        ["settings", f"repeat {s['repeat']}, warm-up {s['warmup']}, seed {s['seed']}"],
    ]
    if env["env"]:
        rows.append(["environment", ", ".join(f"{k}={v}" for k, v in env["env"].items())])
    return rows


METHOD = """\
Every variant's result is compared with NumPy's computed in float64 from the
same float32 inputs (max |error| / max |reference| <= the case's tolerance,
first and third call) before it is timed; a wrong result or an exception is
recorded and the variant is not timed. Time = median wall-clock time per call
including the wait for the result (`queue.finish()`, `block_until_ready`,
`torch.cuda.synchronize`, ...), variants interleaved in shuffled rounds after
warm-up calls, each sample right after one untimed call of the same variant
(no cost of switching from another library's GPU context or caches), at most
about 3 s of samples per variant (at least 3); W8 samples are batches of
calls. GB/s = inputs read once + output written once (float32; W5: per step)
/ time; "of copy" divides by the float4 copy kernel's GB/s over the largest
array, measured in the same rounds; "vs numpy" and "vs hand" are the
reference's time divided by the variant's (above 1: faster). lazyarray-jit
runs a `la.jit` function on lazy arrays already on the device;
lazyarray-eager builds the graph anew each call on fresh `la.asarray` views
of device arrays. W9 times, in fresh processes, the first call of W1 (`la.jit`
or eager, `jax.jit`) up to its result on the host; "import" is the library
import."""


def markdown_report(result: dict) -> str:
    """Command, environment, targets, one table per case, failures, method."""
    env = result["environment"]
    lines = [f"# {_title(result)}", "", f"Command: `{env['command']}`", "",
             markdown_table(["", ""], _environment_rows(result))]
    if result["targets"]:
        lines += ["", "## Targets", "",
                  markdown_table(TARGET_HEADER, _target_rows(result))]
    lines += ["", "## Results"]
    for case in result["cases"]:
        copy = case.get("copy_gbps")
        extra = f"; copy bandwidth {copy:.1f} GB/s" if copy else ""
        lines += ["", f"### {case['name']}: `{case['expression']}`", "",
                  f"float32, size {case['size']}{extra}", "",
                  markdown_table(HEADER, _rows(case, detailed=True))]
    if result["failures"]:
        lines += ["", "## Failures", ""]
        lines += [f"- {f.splitlines()[0]}" for f in result["failures"]]
    lines += ["", "## Method", "", METHOD]
    return "\n".join(lines) + "\n"
