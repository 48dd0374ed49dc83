"""Write docs/where-it-runs.md: for each everyday NumPy call of
tests/everyday.py, whether lazyarray runs it on the device or on the host
(NumPy, with a LazyArrayHostFallbackWarning). Run from the checkout:
``python scripts/where_it_runs.py``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.everyday import CALLS  # noqa: E402
from tests.lazyarray.numpy_compat.test_everyday import run_lazily  # noqa: E402

HEADER = """# What runs where

Each everyday NumPy call below was run on lazy arrays by
`scripts/where_it_runs.py` (the calls are in `tests/everyday.py`; the test
suite checks that every one agrees with NumPy and that this table is current).
*device*: computed by lazyarray's kernels. *host*: NumPy computes it on the
host (lazyarray copies the inputs there and the result back, warns once with
`LazyArrayHostFallbackWarning`, logs each call at `LAZYARRAY_LOG=info`, and
`la.explain` names it). Any other NumPy function also works on lazy arrays
this way. FFTs run on the device where pyvkfft is installed (as here), else
on the host.

| call | runs on |
|---|---|
"""


def main() -> None:
    rows = [f"| `{name}` | {run_lazily(name)[1]} |" for name in sorted(CALLS)]
    (ROOT / "docs" / "where-it-runs.md").write_text(HEADER + "\n".join(rows) + "\n")
    counts = {w: sum(r.endswith(f" {w} |") for r in rows) for w in ("device", "host")}
    print(f"{len(rows)} calls: {counts['device']} on the device, {counts['host']} on the host")


if __name__ == "__main__":
    main()
