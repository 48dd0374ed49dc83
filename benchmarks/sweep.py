#!/usr/bin/env python3
"""Shape sweep of W2-W7: lazyarray against the suite's peers on shapes from
skinny to square to wide and sizes from cache-resident to (on a GPU) 4 GiB,
as % of the copy bandwidth (W6: GFLOP/s) per shape; a Markdown table, a JSON
and (with matplotlib) a PNG plot per run (see benchmarks/README.md).

Usage::

    python benchmarks/sweep.py [--device cpu|gpu] [--quick] [--only W2,W4]
        [--variants lazyarray-jit,copy,jax] [--max-gib 4] [--budget 1.0]
        [--json PATH] [--markdown PATH] [--png PATH]
    python benchmarks/sweep.py --plot results/sweep-gpu-*.json  # tables and PNG
                                                               # from JSONs
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common
from workloads import Case, w2, w3_cols, w3_dot, w3_rows, w4, w5, w6, w7

logger = logging.getLogger("sweep")

WORKLOADS = ("W2", "W3", "W4", "W5", "W6", "W7")
LAZY = "lazyarray-jit"
#: variants measured by default (peers that are not installed are listed so)
VARIANTS = (LAZY, "copy", "hand-written", "numpy", "numexpr", "pyopencl.array", "jax",
            "torch", "torch-compile", "tinygrad", "cupy")
#: elements of the swept arrays (float32), per device kind: the smallest stays
#: in a GPU's L2 (H100: 50 MB), the largest is 4 GiB
TOTALS = {"gpu": (2**18, 2**22, 2**26, 2**28, 2**30),
          "cpu": (2**14, 2**17, 2**20, 2**22, 2**24),
          "quick": (2**10, 2**12, 2**14, 2**16, 2**18)}
#: the total of the shape sweeps (skinny to wide at one size), per kind
SHAPE_TOTAL = {"gpu": 2**26, "cpu": 2**20, "quick": 2**14}
#: W6's sizes: (M, K, N) per kind, skinny to square to wide
MATMUL = {"gpu": ((65536, 256, 256), (16384, 1024, 1024), (4096, 4096, 4096),
                  (1024, 1024, 16384), (256, 256, 65536), (8192, 8192, 8192)),
          "cpu": ((16384, 64, 64), (2048, 256, 256), (512, 512, 512),
                  (256, 256, 2048), (64, 64, 16384)),
          "quick": ((1024, 16, 16), (128, 64, 64), (64, 64, 64), (64, 64, 128),
                    (16, 16, 1024))}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Shape sweep of W2-W7 against the peers.")
    p.add_argument("--device", default=None, help="cpu or gpu (sets KERNELCORE_DEVICE)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes, few repeats, lazyarray, copy and numpy only "
                        "(a smoke test, under 30 s on 2 cores)")
    p.add_argument("--only", default=",".join(WORKLOADS),
                   help="workloads (default W2-W7)")
    p.add_argument("--variants", default=None,
                   help=f"variants (default: {', '.join(VARIANTS)})")
    p.add_argument("--max-gib", type=float, default=None,
                   help="skip points whose inputs and output exceed this (default 4.5 "
                        "on a GPU, 0.5 on a CPU)")
    p.add_argument("--repeat", type=int, default=None,
                   help="samples per variant and point (default 10; 3 with --quick)")
    p.add_argument("--budget", type=float, default=1.0,
                   help="seconds of samples per variant and point (at least 3 samples)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shapes", default=None, metavar="262144x1024,268435456",
                   help="instead of the device's shapes: these matrices (RxC; W6: MxKxN) "
                        "and vector lengths")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--markdown", type=Path, default=None)
    p.add_argument("--png", type=Path, default=None,
                   help="the plot (default: next to the Markdown; skipped without "
                        "matplotlib)")
    p.add_argument("--plot", nargs="+", default=None,
                   help="no measurement: write the Markdown and PNG of these JSONs "
                        "(runs of parts of the sweep on one device, merged)")
    args = p.parse_args(argv)
    args.only = {w.strip().upper() for w in args.only.split(",") if w.strip()}
    args.shapes = None if args.shapes is None else [
        tuple(int(v) for v in label.split("x")) for label in args.shapes.split(",")]
    return args


# {{{ points

def _shapes(total: int) -> list[tuple[int, int]]:
    """(rows, columns) of *total* elements, skinny to square to wide."""
    side = 1 << (total.bit_length() - 1) // 2
    cols = sorted({4, 64, side, total // 64, total // 4} - {0})
    return [(total // c, c) for c in cols if total // c >= 1]


def points(kind: str, only: set[str],
           chosen: list[tuple[int, ...]] | None = None) -> list[tuple[str, Case]]:
    """``(shape label, case)`` of every point of the sweep (with *chosen*:
    of those vector lengths, matrix shapes and W6 sizes instead)."""
    totals, shape_total = TOTALS[kind], SHAPE_TOTAL[kind]
    shapes = _shapes(shape_total)
    square = [(1 << (t.bit_length() - 1) // 2,) * 2 for t in totals]
    matmul = MATMUL[kind]
    if chosen is not None:
        totals = tuple(s[0] for s in chosen if len(s) == 1)
        shapes = [(s[0], s[1]) for s in chosen if len(s) == 2]
        square = []
        matmul = tuple((s[0], s[1], s[2]) for s in chosen if len(s) == 3)
    out: list[tuple[str, Case]] = []

    def add(workload: str, label: str, case: Case) -> None:
        if workload in only:
            out.append((label, case))

    for n in totals:
        add("W2", f"{n}", Case("W2", "W2", "8 x: x = x*0.999 + 0.5*sqrt(abs(x) + 1)", w2,
                               ((n,),), span=(-1.0, 1.0)))
        add("W3", f"{n}", Case("W3 dot", "W3", "sum(a*b)", w3_dot, ((n,),) * 2))
    for r, c in shapes + [s for s in square if s not in shapes]:
        label = f"{r}x{c}"
        add("W3", label, Case("W3 rows", "W3", "A.sum(axis=1)", w3_rows, ((r, c),)))
        add("W3", label, Case("W3 cols", "W3", "A.sum(axis=0)", w3_cols, ((r, c),)))
        add("W7", label, Case("W7", "W7", "2*a.T in C order", w7, ((r, c),)))
        if r >= 3 and c >= 3:
            add("W5", label, Case("W5", "W5", "10 heat steps", w5, ((r, c),), traffic=10))
    for r, c in shapes + [s for s in square if s not in shapes]:
        if c >= 2:
            add("W4", f"{r}x{c}", Case("W4", "W4", "softmax along rows", w4, ((r, c),),
                                       span=(-4.0, 4.0), rtol=1e-3))
    for m, k, n in matmul:
        case = Case("W6", "W6", "A @ B", w6, ((m, k), (k, n)), span=(-1.0, 1.0),
                    rtol=1e-3, flop=2 * m * k * n)
        add("W6", f"{m}x{k}x{n}", case)
    return out


def _case_bytes(case: Case) -> int:
    """Bytes of the inputs and the output (float32)."""
    inputs = sum(int(np.prod(s)) for s in case.shapes)
    return 4 * 2 * max(inputs, max(int(np.prod(s)) for s in case.shapes))

# }}}


# {{{ running

def run(args: argparse.Namespace) -> dict:
    import peers
    import suite

    import kernelcore

    queue = kernelcore.default_queue()
    kind = common.device_kind(queue.device)
    sizes = "quick" if args.quick else ("gpu" if kind == "gpu" else "cpu")
    repeat = args.repeat or (3 if args.quick else 10)
    max_gib = args.max_gib if args.max_gib is not None else (4.5 if kind == "gpu" else 0.5)
    suite.BUDGET_S = args.budget
    setup = peers.Setup(kind, args.quick)
    builders = suite.variant_builders(queue, setup)
    wanted = (args.variants.split(",") if args.variants else
              [LAZY, "copy", "numpy"] if args.quick else list(VARIANTS))
    builders = {name: b for name, b in builders.items() if name in wanted}
    env = common.environment(queue)
    logger.info("device: %s (%s); repeat %d", env["device"]["name"], kind, repeat)
    result = {"sweep": "W2-W7 shape sweep", "quick": args.quick, "kind": kind,
              "settings": {"repeat": repeat, "budget_s": args.budget, "seed": args.seed,
                           "variants": list(builders), "max_gib": max_gib},
              "environment": env, "peers": peers.versions(setup), "points": []}
    for label, case in points(sizes, args.only, args.shapes):
        if _case_bytes(case) > max_gib * 2**30:
            logger.info("%s %s: skipped (over %.1f GiB)", case.name, label, max_gib)
            continue
        logger.info("%s %s", case.name, label)
        try:
            record = suite.run_case(case, builders, repeat, 1, args.seed,
                                    suite.WARMUP_S if kind == "gpu" and not args.quick
                                    else 0.0)
        except MemoryError as e:
            logger.warning("%s %s: %s", case.name, label, e)
            continue
        record["shape"] = label
        result["points"].append(record)
        if args.json is not None:
            common.write_json(args.json, result)    # (kept if the run is cut off)
        gc.collect()
        setup.release()
    failed = [f"{p['name']} {p['shape']} / {v}: {r['error']}" for p in result["points"]
              for v, r in p["variants"].items() if r["status"] == "failed"]
    result["failures"] = failed
    result["ok"] = not any(f.split(" / ")[1].startswith("lazyarray") for f in failed)
    return result

# }}}


# {{{ reports

def _metric(point: dict, rec: dict) -> float | None:
    """% of copy (W6: GFLOP/s) of a variant's record at *point*."""
    if point["workload"] == "W6":
        return rec.get("gflops")
    of_copy = rec.get("of_copy")
    return None if of_copy is None else 100 * of_copy


def _best_peer(point: dict) -> tuple[str | None, float | None]:
    best = (None, None)
    for name, rec in point["variants"].items():
        value = _metric(point, rec)
        if name in (LAZY, "copy") or value is None:
            continue
        if best[1] is None or value > best[1]:
            best = (name, value)
    return best


def markdown_report(result: dict) -> str:
    env = result["environment"]
    names = [n for n in result["settings"]["variants"] if n != "copy"]
    lines = [f"# Shape sweep W2-W7 on {env['device']['name']} ({result['kind']})", "",
             f"git {env.get('git', {}).get('commit', '?')}; per point the median of "
             f"{result['settings']['repeat']} samples; % of the copy bandwidth (W6: "
             "GFLOP/s); \"vs best\": lazyarray / the best peer.", ""]
    header = ["workload", "shape", "copy GB/s", *names, "best peer", "vs best"]
    rows = []
    for p in result["points"]:
        lazy = _metric(p, p["variants"].get(LAZY, {}))
        peer, best = _best_peer(p)
        cells = []
        for n in names:
            rec = p["variants"].get(n)
            value = None if rec is None else _metric(p, rec)
            cells.append(common.fmt(value, ".0f") if value is not None else
                         ("-" if rec is None else rec["status"]))
        rows.append([p["name"], p["shape"], common.fmt(p.get("copy_gbps"), ".1f"), *cells,
                     peer or "-", common.fmt(lazy / best if lazy and best else None, ".2f")])
    lines.append(common.markdown_table(header, rows))
    if result.get("failures"):
        lines += ["", "Failures:", ""] + [f"- {f.splitlines()[0]}" for f in result["failures"]]
    return "\n".join(lines) + "\n"


def plot(result: dict, path: Path) -> bool:
    """One panel per workload: each variant's % of copy (W6: GFLOP/s) per shape;
    False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning("matplotlib is not installed: no plot (run --plot JSON where it is)")
        return False
    groups: dict[str, list[dict]] = {}
    for p in result["points"]:
        groups.setdefault(p["name"], []).append(p)
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 3.2 * len(groups)), squeeze=False)
    for ax, (name, pts) in zip(axes[:, 0], groups.items()):
        labels = [p["shape"] for p in pts]
        for variant in result["settings"]["variants"]:
            if variant == "copy":
                continue
            values = [_metric(p, p["variants"].get(variant, {})) for p in pts]
            if any(v is not None for v in values):
                ax.plot(range(len(pts)), [np.nan if v is None else v for v in values],
                        marker="o", lw=2.5 if variant == LAZY else 1, label=variant)
        ax.set_xticks(range(len(pts)), labels, rotation=30, fontsize=7)
        ax.set_ylabel("GFLOP/s" if name == "W6" else "% of copy")
        ax.set_title(f"{name} ({result['kind']})", fontsize=9)
        ax.grid(alpha=0.3)
        if name != "W6":
            ax.axhline(80, color="gray", ls=":", lw=1)
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True

# }}}


def _merged(results: list[dict]) -> dict:
    """One sweep of the points of several runs (the first run's settings)."""
    merged = dict(results[0])
    merged["points"] = [p for r in results for p in r["points"]]
    merged["failures"] = [f for r in results for f in r.get("failures", [])]
    merged["ok"] = all(r.get("ok", True) for r in results)
    return merged


def _setup_logging() -> None:
    """Progress lines of the sweep and the suite on stderr; not the root
    logger's level: lazyarray at info level waits for every kernel to log its
    time, which the sweep would then measure."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in ("sweep", "suite"):
        log = logging.getLogger(name)
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.prepare_environment(args.device)
    _setup_logging()
    common.ensure_repo_on_path()
    if args.plot is not None:
        result = _merged([json.loads(Path(p).read_text()) for p in args.plot])
        md = args.markdown or Path(args.plot[0]).with_suffix(".md")
    else:
        result = run(args)
        out_dir = common.RESULTS_DIR / "tmp" if args.quick else common.RESULTS_DIR
        stem = out_dir / (f"sweep-{result['kind']}" + ("-quick" if args.quick else ""))
        out_dir.mkdir(parents=True, exist_ok=True)
        path = args.json or stem.with_suffix(".json")
        common.write_json(path, result)
        md = args.markdown or path.with_suffix(".md")
    text = markdown_report(result)
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text(text)
    print(text)
    plot(result, args.png or md.with_suffix(".png"))
    if not result.get("ok", True):
        print("lazyarray failed: " + "; ".join(result["failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
