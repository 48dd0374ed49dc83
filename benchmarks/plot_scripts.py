"""Bar chart of the script suite's ratios lazyarray / NumPy from its JSON.

One group of bars per case (script, size, variant), one bar per mode, on a
log scale with a line at 1 (below it lazyarray is faster). A case that timed
out is drawn at its lower bound (the time it had run over NumPy's) hatched;
a case that failed has no bar and its label is marked.

Run: ``python benchmarks/plot_scripts.py RESULTS.json [--out PNG]`` (needs matplotlib).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

#: bar colours by mode
COLOURS = {"steady": "tab:blue", "fresh-warm": "tab:orange", "fresh-cold": "tab:red"}


def case_label(case: dict) -> str:
    """The x-axis label of a case; failures marked with ``!``."""
    variant = "" if case["variant"] == "lazyarray" else " [jit]"
    mark = "" if case["status"] == "ok" else " !"
    return f"{case['script']} {case['size']}{variant}{mark}"


def plot(document: dict, out: Path, title: str | None = None) -> None:
    """Draw *document*'s ratios into the PNG *out*."""
    cases = document["cases"]
    modes = [m for m in COLOURS if any(m in c["modes"] for c in cases)]
    width = 0.8 / max(len(modes), 1)
    fig, ax = plt.subplots(figsize=(max(8.0, 0.45 * len(cases) + 2), 6))
    for k, mode in enumerate(modes):
        xs, heights, hatched = [], [], []
        for i, case in enumerate(cases):
            pair = case["modes"].get(mode)
            if not pair:
                continue
            if pair.get("ratio"):
                xs.append(i + (k - (len(modes) - 1) / 2) * width)
                heights.append(pair["ratio"])
                hatched.append(False)
            elif pair.get("ratio_at_least"):
                xs.append(i + (k - (len(modes) - 1) / 2) * width)
                heights.append(pair["ratio_at_least"])
                hatched.append(True)
        bars = ax.bar(xs, heights, width, label=mode, color=COLOURS[mode])
        for bar, hatch in zip(bars, hatched):
            if hatch:
                bar.set_hatch("//")
                bar.set_alpha(0.5)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([case_label(c) for c in cases], rotation=70, ha="right", fontsize=8)
    ax.set_ylabel("lazyarray time / NumPy time (log; below 1: faster)")
    env = document.get("environment", {})
    ax.set_title(title or f"Script suite: lazyarray / NumPy on {env.get('device') or '?'} "
                 f"({(env.get('git_commit') or '?')[:7]}); hatched: timed out (at least)",
                 fontsize=10)
    ax.legend()
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Read the JSON, write the PNG (default: next to the JSON)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", type=Path)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--title", default=None)
    args = p.parse_args(argv)
    out = args.out or args.json.with_suffix(".png")
    plot(json.loads(args.json.read_text()), out, args.title)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
