"""Strong and weak scaling of examples/heat_mpi.py on the CPU (PoCL), and
how much of the halo exchange the interior kernel hides; the per-task
overhead of lazyarray block tasks on a Dask LocalCluster.

Run::

    .venv/bin/python benchmarks/scaling_heat.py [--quick] \
        [--markdown benchmarks/results/scaling-issue19.md] [--json FILE]

Each configuration is a fresh ``mpiexec -n P`` run of heat_mpi.py with
``--repeat R``: the best of R runs of S steps (the slowest rank's time),
after a first run that compiles. Every rank gets one PoCL thread and its own
kernel cache. Hidden exchange fraction (from the same ranks' traces):
``(T_serial - T_overlap) / X_serial`` clamped to [0, 1], where T are step
times with the interior overlapping the exchange or waited for before it,
and X_serial the time the serial run spent packing and exchanging.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAT = ROOT / "examples" / "heat_mpi.py"


def mpiexec() -> str:
    found = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
        "mpiexec")
    if found is None:
        raise SystemExit("no mpiexec: pip install mpich mpi4py")
    return found


def heat(ranks: int, n: int, steps: int, repeat: int, overlap: bool, threads: int,
         cache: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ, POCL_CACHE_DIR=cache, POCL_MAX_PTHREAD_COUNT=str(threads),
                   POCL_CPU_MAX_CU_NUM=str(threads), OMP_NUM_THREADS="1")
        cmd = [mpiexec(), "-n", str(ranks), sys.executable, str(HEAT), "--n", str(n),
               "--steps", str(steps), "--repeat", str(repeat), "--json", out.name]
        if not overlap:
            cmd.append("--no-overlap")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
        if proc.returncode:
            raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-2000:])
        return json.loads(Path(out.name).read_text())


def scaling(args, cache: str) -> list[dict]:
    rows = []
    configs = [("strong", 1, args.n, 2), ("strong", 1, args.n, 1), ("strong", 2, args.n, 1)]
    weak_n = round(args.n / 2 ** 0.5)
    configs += [("weak", 1, weak_n, 1), ("weak", 2, args.n, 1)]
    for kind, ranks, n, threads in configs:
        on = heat(ranks, n, args.steps, args.repeat, True, threads, cache)
        off = heat(ranks, n, args.steps, args.repeat, False, threads, cache)
        step_on, step_off = on["seconds"] / args.steps, off["seconds"] / args.steps
        exchange_off = off.get("pack_wait", 0) + off.get("exchange", 0)
        hidden = None
        if ranks > 1 and exchange_off > 0:
            hidden = min(1.0, max(0.0, (step_off - step_on) / exchange_off))
        rows.append({"kind": kind, "ranks": ranks, "pocl_threads": threads, "n": n,
                     "cells_per_rank": n * n // ranks, "ms_per_step": 1e3 * step_on,
                     "ms_per_step_serial": 1e3 * step_off,
                     "exchange_ms_serial": 1e3 * exchange_off,
                     "exchange_ms_overlap": 1e3 * on.get("exchange", 0),
                     "interior_running_at_exchange_end": on.get("exchange_hidden"),
                     "hidden_fraction": hidden})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def dask_overhead(args, cache: str) -> dict:
    """Seconds per block task: la.dask.map_blocks (a jitted function) and
    dask.array.map_blocks with NumPy, on a 2-process LocalCluster."""
    import dask.array as da
    import numpy as np
    from distributed import Client, LocalCluster

    import lazyarray.dask as ld

    def f(x):
        return x * 2 + 1

    blocks = 16 if args.quick else 64
    x = da.from_array(np.ones((blocks * 64, 64)), chunks=(64, 64))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.register_plugin(ld.WorkerSetup(base=cache))
        times = {}
        for name, make in (("lazyarray", lambda: ld.map_blocks(f, x)),
                           ("numpy", lambda: da.map_blocks(f, x))):
            client.compute(make()).result()              # warm: imports, traces
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                client.compute(make()).result()
                best = min(best, time.perf_counter() - t0)
            times[name] = best / blocks
    return {"blocks": blocks, "block_shape": [64, 64], "seconds_per_task": times,
            "overhead_ms_per_task": 1e3 * (times["lazyarray"] - times["numpy"])}


def markdown(result: dict) -> str:
    lines = [
        "# Scaling of examples/heat_mpi.py on the CPU (issue 19)", "",
        f"Machine: {result['machine']}, {result['cpus']} cores, load average at the start "
        f"{result['load']}; PoCL CPU device; MPICH through mpi4py. "
        f"{result['steps']} steps, best of {result['repeat']} runs (slowest rank). "
        "Command: `.venv/bin/python benchmarks/scaling_heat.py"
        + (" --quick" if result["quick"] else "") + "`.", "",
        "| scaling | ranks | PoCL threads/rank | N | cells/rank | ms/step (overlap) | "
        "ms/step (interior waited for) | exchange ms (serial) | exchange ms (overlapped) | "
        "interior still running at exchange end | hidden fraction |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        hidden = "-" if r["hidden_fraction"] is None else f"{r['hidden_fraction']:.2f}"
        running = r["interior_running_at_exchange_end"]
        lines.append(
            f"| {r['kind']} | {r['ranks']} | {r['pocl_threads']} | {r['n']} | "
            f"{r['cells_per_rank']} | {r['ms_per_step']:.2f} | {r['ms_per_step_serial']:.2f} | "
            f"{r['exchange_ms_serial']:.3f} | {r['exchange_ms_overlap']:.3f} | "
            f"{'-' if running is None else f'{running:.2f}'} | {hidden} |")
    if float(result["load"].split()[0]) > (result["cpus"] or 1):
        lines += ["", "The machine was shared while this ran (load average above its core "
                  "count): equal configurations vary by tens of percent between runs (the "
                  "last strong and weak rows both run N = 2048 on 2 ranks), so the ratios, "
                  "and the hidden fraction most of all, are not resolved here; rerun on an "
                  "idle machine."]
    d = result.get("dask")
    if d:
        t = d["seconds_per_task"]
        lines += ["", "Dask block tasks (2-process LocalCluster on loopback, "
                  f"{d['blocks']} blocks of {d['block_shape']} float64, `x * 2 + 1`): "
                  f"{1e3 * t['lazyarray']:.2f} ms per task with `la.dask.map_blocks` against "
                  f"{1e3 * t['numpy']:.2f} ms with NumPy: "
                  f"{d['overhead_ms_per_task']:.2f} ms overhead per task "
                  "(host-device copies, the jitted call)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    args.n = args.n or (256 if args.quick else 2048)
    args.steps = args.steps or (5 if args.quick else 40)
    args.repeat = args.repeat or (1 if args.quick else 3)
    cache = tempfile.mkdtemp(prefix="pocl-scaling-")
    result = {"quick": args.quick, "steps": args.steps, "repeat": args.repeat,
              "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
              "load": " ".join(f"{v:.1f}" for v in os.getloadavg())}
    result["rows"] = scaling(args, cache)
    if not args.no_dask:
        result["dask"] = dask_overhead(args, cache)
    text = markdown(result)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
