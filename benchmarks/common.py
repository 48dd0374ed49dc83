"""Helpers shared by the benchmark scripts: environment capture, timing, output.

Nothing here depends on the workload; ``bench_elementwise.py`` is the user.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"

# Environment variables that influence device selection or the OpenCL loader.
_ENV_VARS = ("KERNELCORE_DEVICE", "PYOPENCL_CTX", "OCL_ICD_VENDORS", "OMP_WAIT_POLICY",
             "OCL_ICD_FILENAMES", "POCL_DEVICES", "POCL_MAX_PTHREAD_COUNT",
             "POCL_AFFINITY", "XLA_PYTHON_CLIENT_PREALLOCATE",
             "CUDA_VISIBLE_DEVICES", "KERNELCORE_CACHE_DIR")


def ensure_repo_on_path() -> None:
    """Make ``import kernelcore`` work when run from a plain checkout."""
    try:
        import kernelcore  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT))


def prepare_environment(device: str | None) -> None:
    """Settings every benchmark process takes before any library starts:
    the device (``KERNELCORE_DEVICE``), and the peers' threads and memory."""
    if device:
        os.environ["KERNELCORE_DEVICE"] = device
    # OpenMP worker threads (torch's) otherwise spin for a while after each
    # call, taking the cores from whatever runs next in the same process
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # PoCL's workers pinned to cores, for every OpenCL variant (kernelcore's
    # default; unpinned, a run is twice as slow in about one process out of two)
    os.environ.setdefault("POCL_AFFINITY", "1")
    # JAX otherwise takes 75% of the GPU's memory when it starts, and every
    # other library shares what is left
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def device_kind(device) -> str:
    """``gpu``, ``cpu``, ``accelerator`` or ``other`` for a pyopencl device."""
    import pyopencl as cl
    if device.type & cl.device_type.GPU:
        return "gpu"
    if device.type & cl.device_type.CPU:
        return "cpu"
    if device.type & cl.device_type.ACCELERATOR:
        return "accelerator"
    return "other"


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def environment(queue) -> dict:
    """Everything needed to tell where a result came from."""
    import numpy as np
    import pyopencl as cl

    import kernelcore

    dev = queue.device
    plat = dev.platform

    def attr(obj, name):
        try:
            value = getattr(obj, name)
        except (cl.Error, AttributeError):
            return None
        return value.strip() if isinstance(value, str) else value

    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "command": " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv]),
        "argv": list(sys.argv),
        "cwd": os.getcwd(),
        "timestamp_utc": datetime.datetime.now(datetime.UTC)
                                 .isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "python": sys.version.split()[0],
        "os": platform.platform(),
        "host_cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "pyopencl": cl.VERSION_TEXT,
        "kernelcore": getattr(kernelcore, "__version__", None),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "env": {k: os.environ[k] for k in _ENV_VARS if k in os.environ},
        "device": {
            "name": attr(dev, "name"),
            "kind": device_kind(dev),
            "vendor": attr(dev, "vendor"),
            "version": attr(dev, "version"),
            "driver_version": attr(dev, "driver_version"),
            "opencl_c_version": attr(dev, "opencl_c_version"),
            "max_compute_units": attr(dev, "max_compute_units"),
            "max_clock_frequency_mhz": attr(dev, "max_clock_frequency"),
            "global_mem_size_bytes": attr(dev, "global_mem_size"),
            "max_work_group_size": attr(dev, "max_work_group_size"),
        },
        "platform": {
            "name": attr(plat, "name"),
            "vendor": attr(plat, "vendor"),
            "version": attr(plat, "version"),
        },
    }


# {{{ timing

@dataclass
class Samples:
    """Per-launch timings of one variant, in seconds."""

    event_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)

    def summary(self, nbytes: int) -> dict:
        out: dict = {"repeats": len(self.wall_s)}
        for kind, values in (("event", self.event_s), ("wall", self.wall_s)):
            if not values:
                out[f"{kind}_median_s"] = None
                out[f"{kind}_min_s"] = None
                out[f"{kind}_gbps"] = None
                continue
            med = statistics.median(values)
            out[f"{kind}_median_s"] = med
            out[f"{kind}_min_s"] = min(values)
            out[f"{kind}_gbps"] = nbytes / med / 1e9 if med > 0 else None
        return out


def event_seconds(evt) -> float | None:
    """Device time of a completed profiling event, or None when unavailable."""
    import pyopencl as cl
    if evt is None:
        return None
    try:
        return (evt.profile.end - evt.profile.start) * 1e-9
    except (cl.Error, AttributeError):
        return None


def median_seconds(queue, launch: Callable) -> float:
    """Median device time of 10 runs of *launch* (which returns a profiling
    event), after 3 unmeasured ones."""
    for _ in range(3):
        launch()
    queue.finish()
    samples = []
    for _ in range(10):
        event = launch()
        event.wait()
        samples.append((event.profile.end - event.profile.start) * 1e-9)
    return statistics.median(samples)


def time_round_robin(queue, launches: dict[str, Callable], repeat: int,
                     warmup: int = 2, seed: int = 0) -> dict[str, Samples]:
    """Time each launch function *repeat* times, interleaving the variants so that
    slow drift (clocks, other load) affects them alike. The order within each round
    is shuffled (seeded), so that no variant always follows the same one: what ran
    just before decides what is still in the caches at sizes that fit in them.

    A launch function enqueues its work and returns the profiling event of the
    kernel it timed (or None, e.g. for host code). The wall-clock time covers the
    call plus ``queue.finish()``.
    """
    for fn in launches.values():
        for _ in range(warmup):
            fn()
        queue.finish()
    samples = {name: Samples() for name in launches}
    order = list(launches)
    rng = random.Random(seed)
    for _ in range(repeat):
        rng.shuffle(order)
        for name in order:
            fn = launches[name]
            queue.finish()
            t0 = time.perf_counter()
            evt = fn()
            queue.finish()
            t1 = time.perf_counter()
            samples[name].wall_s.append(t1 - t0)
            dt = event_seconds(evt)
            if dt is not None:
                samples[name].event_s.append(dt)
    return samples


def time_synchronous(calls: dict[str, Callable[[], object]], repeat: int,
                     warmup: int = 2, inner: int = 1, seed: int = 0,
                     budget_s: float | None = None, settle: int = 0, warmup_s: float = 0.0
                     ) -> tuple[dict[str, list[float]], dict[str, BaseException]]:
    """Wall-clock seconds per call of functions that return only when their work
    is done (each does its own synchronisation, e.g. ``queue.finish()``).

    As in :func:`time_round_robin`, the functions are interleaved in rounds whose
    order is shuffled (seeded). Each of the *repeat* samples per function is the
    time of *inner* consecutive calls divided by *inner*, taken after *settle*
    untimed calls (so that it does not pay for switching from the function
    before, e.g. between the GPU contexts of different libraries). Each
    function is first called *warmup* times, and then until *warmup_s* seconds
    of such calls have passed; with
    *budget_s*, a function whose samples add up to more than that stops after 3
    of them. A function that raises is dropped from the rounds; the second
    result maps its name to the exception.
    """
    samples: dict[str, list[float]] = {name: [] for name in calls}
    errors: dict[str, BaseException] = {}
    live = dict(calls)

    def sample(name: str, count: int, untimed: int = 0) -> float | None:
        fn = live[name]
        try:
            for _ in range(untimed):
                fn()
            t0 = time.perf_counter()
            for _ in range(count):
                fn()
        except Exception as e:
            errors[name] = e
            del live[name]
            return None
        return (time.perf_counter() - t0) / count

    def spent(name: str) -> bool:
        done = samples[name]
        return (budget_s is not None and len(done) >= 3
                and sum(done) * inner > budget_s)

    for name in list(live):
        start = time.perf_counter()
        if warmup:
            sample(name, warmup)
        while name in live and time.perf_counter() - start < warmup_s:
            sample(name, 1)
    rng = random.Random(seed)
    for _ in range(repeat):
        order = [name for name in live if not spent(name)]
        rng.shuffle(order)
        for name in order:
            dt = sample(name, inner, settle)
            if dt is not None:
                samples[name].append(dt)
    return samples, errors


def timing_summary(seconds: list[float]) -> dict:
    """Median, minimum and count of timing samples (seconds)."""
    return {"median_s": statistics.median(seconds), "min_s": min(seconds),
            "repeats": len(seconds)}

# }}}


# {{{ output

def write_reports(args, result: dict, ok: bool, stem: str, text_report: Callable,
                  markdown_report: Callable, failure: str) -> int:
    """Print the text report, write the JSON and Markdown results (to
    ``args.json``/``args.markdown``, else ``results/[tmp/]<stem>-<kind>[-quick]``)
    and return the exit status (1 with *failure* on stderr unless *ok*)."""
    kind = result["environment"]["device"]["kind"]
    out_dir = RESULTS_DIR / "tmp" if args.quick else RESULTS_DIR
    stem = f"{stem}-{kind}" + ("-quick" if args.quick else "")
    json_path = args.json or out_dir / f"{stem}.json"
    md_path = args.markdown or (json_path.with_suffix(".md") if args.json
                                else out_dir / f"{stem}.md")
    print()
    print(text_report(result))
    write_json(json_path, result)
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text(markdown_report(result))
    print(f"\nwrote {json_path} and {md_path}")
    if not ok:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    return 0


def failures_and_code(errors: list[str], code: str | None, code_heading: str) -> list[str]:
    """Markdown sections listing *errors* and showing generated *code* (each
    only when there is something to show)."""
    lines: list[str] = []
    if errors:
        lines += ["", "## Failures", "", *errors]
    if code:
        lines += ["", f"## {code_heading}", "", "```c", code.strip(), "```"]
    return lines


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")


def fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])]
                     + [line(r) for r in rows])

# }}}
