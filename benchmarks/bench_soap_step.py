"""Time ``SOAP.step()``: lucid against pytorch-optimizer 4.1.0's SOAP on torch, in one interleaved run.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_soap_step.py           # the table (a few minutes)
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_soap_step.py --quick   # small layouts: checks it runs

Everyone runs on one thread (torch.set_num_threads(1); NumPy's BLAS by OPENBLAS_NUM_THREADS,
set here before NumPy loads where it is not set), float32, gradients already set, SOAP's
defaults (a refresh every 10 steps: a sample of many calls pays its share of refreshes; the
first step's eigendecompositions are in the warm-up). Contenders are timed round-robin
(``bench_optim_step.interleaved_medians``); cells are median milliseconds per step, the ratio
lucid's time over pytorch-optimizer's, from the same run. ``--gpu`` adds lucid on MLX (on
Linux a CPU build, whose float32 matrix product is far slower than NumPy's BLAS: there the
figures say nothing about Apple silicon).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads its BLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402

import lucid  # noqa: E402
from bench_optim_step import _arrays, interleaved_medians, lucid_step  # noqa: E402

KWARGS = {"lr": 3e-3}
# transformer-like matrices, a stack of small ones, a convolution's 4-D weight, and vectors
# (the identity fallback: Adam's work plus the projections' reshapes)
LAYOUTS = {"4 x 256x256": [(256, 256)] * 4, "50 x 64x64": [(64, 64)] * 50, "1 x 512x2048": [(512, 2048)],
           "8 x 64x32x3x3": [(64, 32, 3, 3)] * 8, "100 x 2000 (1-D)": [(2000,)] * 100}
QUICK_LAYOUTS = {"4 x 8x8": [(8, 8)] * 4, "2 x 4x3x3x3": [(4, 3, 3, 3)] * 2}


def reference_step(shapes):
    import torch
    from pytorch_optimizer import SOAP

    values, grads = _arrays(shapes)
    params = [torch.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g)
    return SOAP(params, **KWARGS).step


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small layouts, few samples")
    parser.add_argument("--gpu", action="store_true", help="lucid on MLX too (Linux's CPU build multiplies "
                                                             "float32 matrices about 25x slower than NumPy's BLAS)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    layouts, samples = (QUICK_LAYOUTS, 3) if args.quick else (LAYOUTS, 15)
    devices = ["cpu"] + (["gpu"] if args.gpu and lucid.is_available("gpu") else [])
    print("## SOAP.step(), float32, 1 thread: median ms per step (ratio: lucid / pytorch-optimizer)\n")
    print("| device | layout | lucid | pytorch-optimizer | ratio |")
    print("|---|---|---|---|---|")
    for device in devices:
        for layout, shapes in layouts.items():
            contenders = {"lucid": lucid_step("SOAP", KWARGS, shapes, device), "reference": reference_step(shapes)}
            ms = interleaved_medians(contenders, samples, warmup=12)
            print(f"| {device} | {layout} | {ms['lucid']:.3f} | {ms['reference']:.3f} | "
                  f"{ms['lucid'] / ms['reference']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
