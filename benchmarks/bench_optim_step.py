"""Time one optimizer step: lucid against torch.optim and mlx.optimizers, in one run.

Usage: python benchmarks/bench_optim_step.py [--layout 10x100000] [--steps 30]

Prints the median milliseconds per step and lucid's ratio to each reference. Speed on
Linux's MLX build (reference BLAS, CPU only) says nothing about Apple GPUs: there the
"gpu" rows measure correctness-backend overhead only.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import lucid
from lucid import nn, optim


def median_ms(step, steps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def lucid_step(name, shapes, device):
    params = [nn.Parameter(lucid.randn(*s, device=device)) for s in shapes]
    for p in params:
        p.grad = lucid.randn(*p.shape, device=device)
    optimizer = getattr(optim, name)(params, lr=1e-3, **({"momentum": 0.9} if name == "SGD" else {}))
    return optimizer.step


def torch_step(name, shapes, **flags):
    import torch

    torch.set_num_threads(1)
    params = [torch.randn(*s, requires_grad=True) for s in shapes]
    for p in params:
        p.grad = torch.randn_like(p)
    extra = {"momentum": 0.9} if name == "SGD" else {}
    optimizer = getattr(torch.optim, name)(params, lr=1e-3, **extra, **flags)
    return optimizer.step


def mlx_step(name, shapes):
    import mlx.core as mx
    import mlx.optimizers as mo

    params = {str(i): mx.random.normal(s) for i, s in enumerate(shapes)}
    grads = {k: mx.random.normal(v.shape) for k, v in params.items()}
    optimizer = {"Adam": lambda: mo.Adam(1e-3, bias_correction=True), "AdamW": lambda: mo.AdamW(1e-3),
                 "SGD": lambda: mo.SGD(1e-3, momentum=0.9)}[name]()
    state = {"params": params}

    def step():
        state["params"] = optimizer.apply_gradients(grads, state["params"])
        mx.eval(state["params"], optimizer.state)

    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layout", default="10x100000", help="COUNTxSIZE: COUNT tensors of SIZE float32")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--optimizers", default="SGD,Adam,AdamW")
    args = parser.parse_args()
    count, size = (int(v) for v in args.layout.split("x"))
    shapes = [(size,)] * count
    print(f"layout: {count} x {size} float32 ({count * size / 1e6:.1f}M parameters), median of {args.steps} steps")
    print(f"{'optimizer':10} {'lucid cpu':>10} {'torch 1T':>10} {'torch fused':>12} {'mlx.optim':>10} "
          f"{'lucid gpu':>10} {'cpu/torch':>10} {'cpu/fused':>10} {'gpu/mlx':>8}")
    for name in args.optimizers.split(","):
        lucid_cpu = median_ms(lucid_step(name, shapes, "cpu"), args.steps)
        reference = median_ms(torch_step(name, shapes), args.steps)
        fused = median_ms(torch_step(name, shapes, fused=True), args.steps)
        mlx_ref = median_ms(mlx_step(name, shapes), args.steps)
        lucid_gpu = median_ms(lucid_step(name, shapes, "gpu"), args.steps)
        print(f"{name:10} {lucid_cpu:10.2f} {reference:10.2f} {fused:12.2f} {mlx_ref:10.2f} {lucid_gpu:10.2f} "
              f"{lucid_cpu / reference:10.2f} {lucid_cpu / fused:10.2f} {lucid_gpu / mlx_ref:8.2f}")


if __name__ == "__main__":
    np.random.seed(0)
    main()
