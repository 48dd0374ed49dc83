"""The script suite: whole NumPy programs (``benchmarks/scripts``) under NumPy and lazyarray.

For every script, size (``small``: the textbook size, ``large``: 16 times the
elements) and lazyarray variant (``lazyarray``: ``run(la, n)``;
``lazyarray-jit``: ``run_jit(la, n)`` where the script has one), three modes:

* ``steady``: NumPy and lazyarray in one process (a child of this one); the
  wall time of a whole run, result on the host, best of ``--repeat`` runs
  after warm-up runs (one, then more until they took ``--warmup`` seconds
  together: ``la.jit`` compiles a step once it is hot, see
  ``lazyarray.host.trial``); lazyarray's results checked against NumPy's;
* ``fresh-warm``: a new process with lazyarray's, kernelcore's and PoCL's
  on-disk caches as they are (filled by an earlier run): ``import`` plus the
  whole run, timed inside the process;
* ``fresh-cold``: the same with every on-disk cache in a new empty directory.

Each measurement runs under ``--timeout`` seconds; one that exceeds it is a
timeout with the time it had run. Results that disagree with NumPy's are
failures, as are exceptions (``fails: <error>``). Prints a table with the
ratios lazyarray / NumPy (above 1: lazyarray is slower), kernels launched per
steady run and kernels planned (built, or loaded from their recipes), and the
geometric means of the ratios; writes everything to ``--json``.

Run: ``python benchmarks/scripts_suite.py [--only NAME,...] [--sizes small,large]
[--modes steady,fresh-warm,fresh-cold] [--tier host|device|auto] [--repeat N]
[--timeout S] [--json OUT]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import scripts_common as sc

REPO_ROOT = sc.BENCH_DIR.parent
MODES = ("steady", "fresh-warm", "fresh-cold")
SIZES = ("small", "large")
LAZY_VARIANTS = ("lazyarray", "lazyarray-jit")
#: seconds a child may run past its measurements' timeouts before it is killed
_GRACE_S = 20.0


# {{{ child processes

def _emit(record: dict) -> None:
    print("@@" + json.dumps(record), flush=True)


class _Timeout(BaseException):
    """A measurement ran past its time."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _steady_child(name: str, size: str, variants: list[str], repeat: int, timeout: float,
                  random_mode: str, warmup: float) -> None:
    """Steady-state runs of *variants* of one script in this process, each
    reported by a line; the first variant's result is the reference."""
    signal.signal(signal.SIGALRM, _alarm)
    script = sc.load_script(name)
    n = script.SIZES[size]
    reference = None
    for variant in variants:
        record: dict[str, Any] = {"variant": variant}
        start = time.perf_counter()
        at_start = None
        _emit({"variant": variant, "started": True})
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            module, record["random"] = sc.array_module(variant, random_mode)
            if variant != "numpy":
                record["device"] = _device_name()
            func = sc.entry_point(script, variant)
            at_start = sc.lazy_counters()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                before = sc.lazy_counters()
                t0 = time.perf_counter()
                result = sc.to_host(func(module, n))
                record["first_s"] = time.perf_counter() - t0
                record["counters_first"] = sc.counter_delta(before, sc.lazy_counters())
            record["warnings"] = sorted({f"{w.category.__name__}: {w.message}"
                                         for w in caught})[:5]
            warm, record["warmup_runs"] = record["first_s"], 0
            while warm < warmup and record["warmup_runs"] < 100 \
                    and time.perf_counter() - start < 0.5 * timeout:
                t0 = time.perf_counter()
                sc.to_host(func(module, n))
                warm += time.perf_counter() - t0
                record["warmup_runs"] += 1
            best = math.inf
            runs = 0
            last = record["first_s"]
            while runs < repeat and (runs == 0 or time.perf_counter() - start + last
                                     < 0.9 * timeout):
                before = sc.lazy_counters()
                t0 = time.perf_counter()
                result = sc.to_host(func(module, n))
                last = time.perf_counter() - t0
                best = min(best, last)
                runs += 1
                record["counters_run"] = sc.counter_delta(before, sc.lazy_counters())
            signal.setitimer(signal.ITIMER_REAL, 0)
            record.update(steady_s=best, runs=runs)
            if reference is None:
                reference = result
            else:
                error = sc.compare(result, reference, script.RTOL, script.ATOL)
                if error:
                    record["mismatch"] = error
            record["status"] = "mismatch" if "mismatch" in record else "ok"
        except _Timeout:
            record.update(status="timeout", elapsed_s=time.perf_counter() - start,
                          counters_until_timeout=sc.counter_delta(at_start,
                                                                  sc.lazy_counters()))
        except Exception as e:
            signal.setitimer(signal.ITIMER_REAL, 0)
            record.update(status="fails", error=f"{type(e).__name__}: {e}"[:500],
                          elapsed_s=time.perf_counter() - start)
        _emit(record)


def _device_name() -> str | None:
    try:
        from lazyarray.run import default_queue
        return str(default_queue().device.name).strip()
    except Exception:
        return None


#: the program of a fresh-process measurement: times the import and the run
_FRESH = """
import time
t0 = time.perf_counter()
import {module}
t1 = time.perf_counter()
import json, sys
sys.path.insert(0, {bench!r})
import scripts_common as sc
script = sc.load_script({name!r})
module, random_from = sc.array_module({variant!r}, {random_mode!r})
result = sc.to_host(sc.entry_point(script, {variant!r})(module, {n!r}))
t2 = time.perf_counter()
import numpy, pickle
with open({out!r}, "wb") as f:
    pickle.dump(result, f)
print("@@" + json.dumps({{"total_s": t2 - t0, "import_s": t1 - t0, "random": random_from,
                          "counters": sc.lazy_counters()}}))
"""

# }}}


# {{{ running children

def _child_env(tier: str | None, cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.setdefault("POCL_AFFINITY", "1")
    if tier:
        env["LAZYARRAY_TIER"] = tier
    if cache is not None:
        env.update({
            "KERNELCORE_CACHE_DIR": str(cache / "kernelcore"),
            "LAZYARRAY_CACHE_DIR": str(cache / "lazyarray"),
            "XDG_CACHE_HOME": str(cache / "xdg"),
            "POCL_CACHE_DIR": str(cache / "pocl"),
        })
    return env


def _records(stdout: str | bytes | None) -> list[dict]:
    if isinstance(stdout, bytes):
        stdout = stdout.decode(errors="replace")
    return [json.loads(line[2:]) for line in (stdout or "").splitlines()
            if line.startswith("@@")]


def _run_child(argv: list[str], env: dict[str, str], limit: float
               ) -> tuple[list[dict], float, str | None, str]:
    """The records a child printed, its wall time, "timeout" or an exit
    status text (None when it ended normally), and its stderr's tail."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=limit,
                              cwd=REPO_ROOT)
    except subprocess.TimeoutExpired as e:
        return (_records(e.stdout), time.perf_counter() - start, "timeout",
                _tail(e.stderr))
    wall = time.perf_counter() - start
    ended = None if proc.returncode == 0 else f"exit status {proc.returncode}"
    return _records(proc.stdout), wall, ended, _tail(proc.stderr)


def _tail(text: str | bytes | None) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:400] if lines else ""


def measure_steady(name: str, size: str, variants: list[str], args: argparse.Namespace
                   ) -> dict[str, dict]:
    """Steady-state records by variant (``numpy`` first: the reference)."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child-steady", name, size,
            ",".join(variants), str(args.repeat), str(args.timeout), args.random,
            str(args.warmup)]
    limit = args.timeout * len(variants) + _GRACE_S
    records, wall, ended, stderr = _run_child(argv, _child_env(args.tier, None), limit)
    out: dict[str, dict] = {}
    started = [r["variant"] for r in records if r.get("started")]
    for r in records:
        if not r.get("started"):
            out[r["variant"]] = r
    for variant in variants:
        if variant in out:
            continue
        if variant in started and ended == "timeout":
            elapsed = wall - sum(o.get("elapsed_s") or _spent(o) for o in out.values())
            out[variant] = {"variant": variant, "status": "timeout", "elapsed_s": elapsed}
        else:
            out[variant] = {"variant": variant, "status": "fails",
                            "error": f"child process: {ended or 'no result'}: {stderr}"}
    return out


def _spent(record: dict) -> float:
    return (record.get("first_s") or 0.0) + (record.get("steady_s") or 0.0) * \
        (record.get("runs") or 0)


def measure_fresh(name: str, size: str, variant: str, cold: bool, args: argparse.Namespace,
                  reference: Any, runs: int) -> dict:
    """The best of *runs* fresh processes of one variant (import + whole run),
    each with empty caches where *cold*; the result checked against *reference*."""
    script = sc.load_script(name)
    n = script.SIZES[size]
    module = sc.VARIANTS[variant][0]
    best: dict | None = None
    with tempfile.TemporaryDirectory(prefix="scripts-suite-") as tmp:
        for k in range(runs):
            cache = Path(tmp) / f"cache{k}" if cold else None
            out = Path(tmp) / f"result{k}.pickle"
            code = _FRESH.format(module=module, bench=str(sc.BENCH_DIR), name=name,
                                 variant=variant, random_mode=args.random, n=n, out=str(out))
            records, wall, ended, stderr = _run_child(
                [sys.executable, "-c", code], _child_env(args.tier, cache), args.timeout)
            if ended == "timeout":
                return {"status": "timeout", "elapsed_s": wall}
            if ended or not records:
                return {"status": "fails", "error": f"{stderr or ended}"[:500]}
            record = records[-1]
            record["process_s"] = wall
            if reference is not None and variant != "numpy":
                import pickle
                with open(out, "rb") as f:
                    error = sc.compare(pickle.load(f), reference, script.RTOL, script.ATOL)
                if error:
                    return {**record, "status": "mismatch", "mismatch": error}
            if best is None or record["total_s"] < best["total_s"]:
                best = record
            if cache is not None:
                shutil.rmtree(cache, ignore_errors=True)
    assert best is not None
    return {**best, "status": "ok", "runs": runs}

# }}}


# {{{ the suite

def run_suite(args: argparse.Namespace) -> dict:
    """Every measurement the options ask for, as the JSON document's ``cases``."""
    names = args.only or sc.script_names()
    cases: list[dict] = []
    for name in names:
        script = sc.load_script(name)
        variants = [v for v in LAZY_VARIANTS if sc.entry_point(script, v) is not None]
        for size in args.sizes:
            n = script.SIZES[size]
            print(f"[{_now()}] {name} {size} (n={n})", file=sys.stderr, flush=True)
            rows = {v: {"script": name, "size": size, "n": n, "variant": v, "modes": {}}
                    for v in variants}
            reference = _reference(script, n)
            steady_ok: set[str] = set()
            hopeless: set[str] = set()
            if "steady" in args.modes:
                steady = measure_steady(name, size, ["numpy", *variants], args)
                for v in variants:
                    rows[v]["modes"]["steady"] = {"numpy": steady["numpy"], "lazyarray": steady[v]}
                    if steady[v]["status"] == "ok":
                        steady_ok.add(v)
                    elif steady[v]["status"] == "timeout" and "first_s" not in steady[v]:
                        hopeless.add(v)     # a fresh process would time out as well
            fresh_numpy: dict | None = None
            for mode in ("fresh-warm", "fresh-cold"):
                if mode not in args.modes:
                    continue
                if fresh_numpy is None:
                    fresh_numpy = measure_fresh(name, size, "numpy", False, args, None,
                                                args.repeat)
                for v in variants:
                    cold = mode == "fresh-cold"
                    if v in hopeless:
                        rows[v]["modes"][mode] = {"numpy": fresh_numpy, "lazyarray": {
                            "status": "skipped", "reason": "the steady first run timed out"}}
                        continue
                    if not cold and v not in steady_ok:       # fill the caches first
                        measure_fresh(name, size, v, False, args, None, 1)
                    runs = args.cold_repeat if cold else args.repeat
                    rows[v]["modes"][mode] = {
                        "numpy": fresh_numpy,
                        "lazyarray": measure_fresh(name, size, v, cold, args, reference, runs)}
            for row in rows.values():
                _summarize(row)
                cases.append(row)
                print("    " + _row_line(row), file=sys.stderr, flush=True)
    return {"cases": cases, "geomean": _geomeans(cases, args.modes)}


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%H:%M:%S")


def _reference(script: Any, n: int) -> Any:
    import numpy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sc.to_host(script.run(numpy, n))


def _seconds(record: dict, mode: str) -> float | None:
    key = "steady_s" if mode == "steady" else "total_s"
    return record.get(key) if record.get("status") == "ok" else None


def _summarize(row: dict) -> None:
    """Adds each mode's times and ratio, and the row's status."""
    problems: list[str] = []
    for mode, pair in row["modes"].items():
        np_s, la_s = _seconds(pair["numpy"], mode), _seconds(pair["lazyarray"], mode)
        pair["numpy_s"], pair["lazyarray_s"] = np_s, la_s
        pair["ratio"] = la_s / np_s if np_s and la_s is not None else None
        la = pair["lazyarray"]
        if la["status"] == "timeout" and np_s:
            pair["ratio_at_least"] = la["elapsed_s"] / np_s
        for who, rec in (("numpy", pair["numpy"]), ("lazyarray", la)):
            if rec["status"] == "ok":
                continue
            if rec["status"] == "skipped":
                continue
            what = {"timeout": f"timeout after {rec.get('elapsed_s', 0):.0f} s",
                    "fails": f"fails: {rec.get('error')}",
                    "mismatch": f"mismatch: {rec.get('mismatch')}"}[rec["status"]]
            problems.append(f"{mode}{'' if who == 'lazyarray' else ' (numpy)'}: {what}")
    la_steady = row["modes"].get("steady", {}).get("lazyarray", {})
    random_from = la_steady.get("random") or next(
        (p["lazyarray"].get("random") for p in row["modes"].values()
         if p["lazyarray"].get("random")), None)
    row["random"] = random_from
    row["status"] = "ok" if not problems else "; ".join(problems)


def _geomeans(cases: list[dict], modes: list[str]) -> dict:
    """The geometric mean of the ratios per variant and mode (cases with a ratio)."""
    out: dict[str, dict] = {}
    for variant in LAZY_VARIANTS:
        for mode in modes:
            ratios = [c["modes"][mode]["ratio"] for c in cases
                      if c["variant"] == variant and mode in c["modes"]
                      and c["modes"][mode].get("ratio")]
            if ratios:
                out.setdefault(variant, {})[mode] = {
                    "geomean": math.exp(sum(math.log(r) for r in ratios) / len(ratios)),
                    "cases": len(ratios)}
    return out

# }}}


# {{{ output

def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1e3:.1f}" if value < 10 else f"{value * 1e3:.0f}"


def _ratio(pair: dict | None) -> str:
    if pair is None:
        return ""
    if pair.get("ratio") is not None:
        r = pair["ratio"]
        return f"{r:.2f}" if r < 10 else f"{r:.0f}"
    if pair.get("ratio_at_least") is not None:
        return f">{pair['ratio_at_least']:.0f}"
    return "-"


def _counters(pair: dict | None) -> tuple[str, str]:
    """Kernels launched per steady run; kernels planned in the first run / per later run."""
    if pair is None:
        return "", ""
    rec = pair["lazyarray"]
    run, first = rec.get("counters_run"), rec.get("counters_first")
    until = rec.get("counters_until_timeout")
    if until and not first:           # the first run timed out: what it had done by then
        return f">{until.get('launches', '?')}", f">{until.get('planned', '?')}/-"
    launches = str(run["launches"]) if run and "launches" in run else "-"
    built = (f"{first.get('planned', '-')}/{run.get('planned', '-') if run else '-'}"
             if first else "-")
    return launches, built


def table_rows(result: dict, modes: list[str]) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows."""
    header = ["script", "size", "variant"]
    for mode in modes:
        header += [f"numpy {mode} ms", f"la {mode} ms", f"x {mode}"]
    header += ["launches/run", "built 1st/run", "cold built", "status"]
    rows = []
    for case in result["cases"]:
        row = [case["script"], case["size"], case["variant"].replace("lazyarray", "la")]
        for mode in modes:
            pair = case["modes"].get(mode)
            row += [_ms(pair and pair["numpy_s"]), _ms(pair and pair["lazyarray_s"]),
                    _ratio(pair)] if pair else ["", "", ""]
        launches, built = _counters(case["modes"].get("steady"))
        cold = case["modes"].get("fresh-cold", {}).get("lazyarray", {}).get("counters")
        row += [launches, built, str(cold.get("planned", "-")) if cold else "",
                case["status"] if len(case["status"]) < 160 else case["status"][:157] + "..."]
        rows.append(row)
    return header, rows


def geomean_lines(result: dict) -> list[str]:
    """One line per variant: the geometric mean ratio of each mode."""
    lines = []
    for variant, by_mode in result["geomean"].items():
        parts = [f"{mode} {g['geomean']:.1f}x ({g['cases']} cases)"
                 for mode, g in by_mode.items()]
        lines.append(f"geometric mean of lazyarray / numpy, {variant}: " + ", ".join(parts))
    return lines


def text_report(result: dict, modes: list[str]) -> str:
    """The table as plain text, with the geometric means."""
    header, rows = table_rows(result, modes)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    last = len(header) - 1

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < 3 or i == last else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths]),
                      *(line(r) for r in rows), "", *geomean_lines(result)])


def markdown_report(result: dict, modes: list[str]) -> str:
    """The table in Markdown, with the geometric means."""
    header, rows = table_rows(result, modes)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < 3 or i == len(header) - 1 else "---:"
                            for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join([*lines, "", *(f"- {g}" for g in geomean_lines(result)), ""])


def _row_line(row: dict) -> str:
    parts = [f"{row['variant']}"]
    for mode, pair in row["modes"].items():
        parts.append(f"{mode} {_ms(pair['numpy_s'])}/{_ms(pair['lazyarray_s'])} ms "
                     f"x{_ratio(pair)}")
    return "  ".join(parts) + f"  [{row['status'][:200]}]"


def environment(args: argparse.Namespace, device: str | None) -> dict:
    """Where and when the suite ran."""
    import numpy

    def git(*a: str) -> str | None:
        try:
            r = subprocess.run(["git", *a], cwd=REPO_ROOT, capture_output=True, text=True,
                               timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    cpu = None
    with contextlib.suppress(OSError):
        cpu = next((ln.split(":", 1)[1].strip() for ln in
                    Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), None)
    return {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "timestamp_utc": datetime.datetime.now(datetime.UTC)
                                 .isoformat(timespec="seconds"),
        "hostname": platform.node(), "python": sys.version.split()[0],
        "numpy": numpy.__version__, "cpu": cpu, "cpu_count": os.cpu_count(),
        "device": device,
        "git_commit": git("rev-parse", "HEAD"),
        "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "env": {k: os.environ[k] for k in ("LAZYARRAY_TIER", "KERNELCORE_DEVICE",
                                            "OCL_ICD_VENDORS", "POCL_AFFINITY")
                if k in os.environ},
    }

# }}}


def _csv(choices: tuple[str, ...] | None) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if choices is not None and t not in choices]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {bad}; choose from {choices}")
        return items
    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", type=_csv(sc.script_names()), default=None,
                   help="comma-separated script names (default: all)")
    p.add_argument("--sizes", type=_csv(SIZES), default=list(SIZES))
    p.add_argument("--modes", type=_csv(MODES), default=list(MODES))
    p.add_argument("--tier", choices=("host", "device", "auto"), default=None,
                   help="passed to the measured processes as LAZYARRAY_TIER")
    p.add_argument("--repeat", type=int, default=3,
                   help="timed runs per steady and fresh-warm measurement (best kept)")
    p.add_argument("--cold-repeat", type=int, default=1,
                   help="fresh processes with empty caches per case (best kept)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds per measurement (a variant's steady runs; one fresh process)")
    p.add_argument("--random", choices=sc.RANDOM_MODES, default="auto",
                   help="lazyarray's np.random: its own (native), NumPy's numbers handed "
                        "over (numpy), or native where lazyarray has np.random.seed (auto)")
    p.add_argument("--warmup", type=float, default=1.0,
                   help="seconds of warm-up runs before the timed steady runs (at least one)")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument("--markdown", type=Path, default=None,
                   help="write the table here (default: next to --json)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the suite; exit status 1 where a lazyarray result disagreed with NumPy's."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child-steady":
        name, size, variants, repeat, timeout, random_mode, warmup = argv[1:8]
        _steady_child(name, size, variants.split(","), int(repeat), float(timeout),
                      random_mode, float(warmup))
        return 0
    args = parse_args(argv)
    start = time.perf_counter()
    result = run_suite(args)
    device = next((c["modes"]["steady"]["lazyarray"].get("device") for c in result["cases"]
                   if "steady" in c["modes"] and c["modes"]["steady"]["lazyarray"].get("device")),
                  None)
    document = {"environment": environment(args, device),
                "settings": {k: (str(v) if isinstance(v, Path) else v)
                             for k, v in vars(args).items()},
                "wall_s": time.perf_counter() - start, **result}
    print(text_report(result, args.modes))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=1) + "\n")
        md = args.markdown or args.json.with_suffix(".md")
        md.write_text(markdown_report(result, args.modes))
        print(f"\nwrote {args.json} and {md}")
    mismatched = any("mismatch" in c["status"] for c in result["cases"])
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
