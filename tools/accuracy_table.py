"""Measure the accuracy table of the docs: each op's largest error in ulps of the true value.

    python tools/accuracy_table.py            # print the table
    python tools/accuracy_table.py --write    # and write docs/guide/accuracy_table.inc

For every case of tests/accuracy_cases.py, in float32 and float16: lucid on "cpu", lucid on
"gpu" (MLX; counted as a device that flushes subnormal numbers, see tests/ulps.py) and torch
(on the CPU), each against the float64 truth from the same inputs, for the value and for
the gradient. The figures are this machine's: torch's and MLX's kernels round differently
on each CPU. tests/test_accuracy.py holds lucid to its ceilings and to torch's error live.
"""

from __future__ import annotations

import argparse
import platform
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import accuracy_cases  # noqa: E402 - the cases live with the tests
import ulps  # noqa: E402

TABLE = ROOT / "docs" / "guide" / "accuracy_table.inc"


def _lucid(device):
    import lucid
    import lucid.nn.functional as F

    return (lucid, F, lambda a, grad: lucid.tensor(a, device=device, requires_grad=grad),
            lambda t: t.detach().to("cpu").numpy().astype(np.float64))


def _torch():
    import torch

    return (torch, torch.nn.functional, lambda a, grad: torch.tensor(a, requires_grad=grad),
            lambda t: t.detach().numpy().astype(np.float64))


def measure(case, dtype, runner, flush):
    """``(value's worst ulps, gradient's or None)``."""
    truth = accuracy_cases.truths(case, dtype)
    out, grad = accuracy_cases.run(*runner, case, truth.inputs, truth.w)
    value = ulps.worst(out, truth.out, dtype, flush, truth.scale)[0]
    gradient = None if grad is None else ulps.worst(grad, truth.grad, dtype, flush, truth.grad_scale)[0]
    return value, gradient


def _cell(pair):
    value, gradient = pair
    def fmt(x):
        return "inf" if x == float("inf") else f"{x:.3g}"
    return fmt(value) if gradient is None else f"{fmt(value)} / {fmt(gradient)}"


def rows():
    runners = [("cpu", _lucid("cpu"), False), ("gpu", _lucid("gpu"), True), ("torch", _torch(), False)]
    for case in accuracy_cases.CASES:
        for dtype in accuracy_cases.DTYPES:
            yield [case.name, case.kind, dtype] + [_cell(measure(case, dtype, runner, flush))
                                                   for _, runner, flush in runners]


def machine() -> str:
    """The CPU's model name and the libraries' versions, for the table's caption."""
    import mlx.core as mx
    import torch

    model = platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        model = names[0] if names else model
    return f"{model}, NumPy {np.__version__}, MLX {mx.__version__}, torch {torch.__version__}"


def render(table) -> str:
    header = ["op", "kind", "dtype", "lucid cpu", "lucid gpu", "torch"]
    lines = [
        ".. This file is written by tools/accuracy_table.py --write; do not edit it by hand.",
        "",
        f"Measured on {machine()}.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 30 12 8 14 14 14",
        "",
    ]
    for row in [header] + table:
        lines.append("   * - " + row[0])
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TABLE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    table = list(rows())
    width = max(len(r[0]) for r in table)
    for row in table:
        print(f"{row[0]:<{width}}  {row[2]:<8}  " + "  ".join(f"{c:>16}" for c in row[3:]))
    if args.write:
        TABLE.write_text(render(table))
        print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
