"""Time a Schedule-Free ``optimizer.step()``: lucid against the reference, schedulefree 1.4.1 on torch.

Usage::

    python benchmarks/bench_schedule_free_step.py            # the full table (a few minutes)
    python benchmarks/bench_schedule_free_step.py --quick    # small layouts, few samples: checks it runs

The layouts, the single thread (torch.set_num_threads(1); NumPy and numba are single-threaded),
float32, the gradients set once and the interleaved sampling are bench_optim_step.py's. The
reference runs its default (``foreach=True``: torch's foreach ops) and its for-loop
(``foreach=False``); lucid runs its fused rule on "cpu" (numba) and, where MLX is installed,
on "gpu" (mx.compile; Linux's MLX is a CPU build: compare its ratio only). Cells are median
milliseconds per step; ratios are lucid's time over the reference's, from the same run.
"""

from __future__ import annotations

import argparse
import sys

import lucid
from lucid import nn, optim

from bench_optim_step import LAYOUTS, QUICK_LAYOUTS, _arrays, _cell, _ratio, interleaved_medians

OPTIMIZERS = {
    "SGDScheduleFree": {"lr": 1.0, "weight_decay": 1e-4},
    "AdamWScheduleFree": {"lr": 2.5e-3, "weight_decay": 1e-4, "warmup_steps": 10},
    "RAdamScheduleFree": {"lr": 2.5e-3, "weight_decay": 1e-4},
}


def lucid_step(name, kwargs, shapes, device):
    values, grads = _arrays(shapes)
    params = [nn.Parameter(lucid.tensor(v, device=device)) for v in values]
    for p, g in zip(params, grads):
        p.grad = lucid.tensor(g, device=device)
    return getattr(optim, name)(params, **kwargs).step


def reference_step(name, kwargs, shapes, foreach: bool):
    """The reference's step. It divides ``p.grad`` in place by Adam's denominator (and adds the
    weight decay to it), so its gradients drift from step to step; they stay of order one,
    which keeps its time what it would be (no copy is timed with it)."""
    import schedulefree
    import torch

    values, grads = _arrays(shapes)
    params = [torch.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g)
    optimizer = getattr(schedulefree, name)(params, **kwargs, foreach=foreach)
    optimizer.train()
    return optimizer.step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small layouts and few samples: checks that it runs")
    parser.add_argument("--samples", type=int, default=None, help="samples per contender (default 15, quick 2)")
    parser.add_argument("--no-gpu", action="store_true", help="skip lucid's 'gpu' column")
    args = parser.parse_args(argv)
    samples = args.samples or (2 if args.quick else 15)
    import bench_optim_step

    bench_optim_step.MIN_SAMPLE_SECONDS = 0.0 if args.quick else 2e-3
    layouts = QUICK_LAYOUTS if args.quick else LAYOUTS
    gpu = not args.no_gpu and lucid.is_available("gpu")

    import schedulefree
    import torch

    torch.set_num_threads(1)
    cpu = lucid._backend.get("cpu")  # noqa: SLF001 - which runner serves "cpu" here, for the header
    print(f"lucid {lucid.__version__} 'cpu' runs rules with {cpu.rule_runner}; schedulefree "
          f"{getattr(schedulefree, '__version__', '1.4.1')} on torch {torch.__version__}, 1 thread; "
          f"median of {samples} interleaved samples; float32\n")
    print("## Schedule-Free optimizer.step(), ms per step (ratio: lucid / reference foreach)\n")
    print("| optimizer | layout | lucid cpu | reference foreach | reference for-loop | cpu ratio"
          + (" | lucid gpu | gpu ratio |" if gpu else " |"))
    print("|---|---|---:|---:|---:|---:" + ("|---:|---:|" if gpu else "|"))
    for name, kwargs in OPTIMIZERS.items():
        for layout, shapes in layouts.items():
            contenders = {"cpu": lucid_step(name, kwargs, shapes, "cpu"),
                          "foreach": reference_step(name, kwargs, shapes, True),
                          "loop": reference_step(name, kwargs, shapes, False)}
            if gpu:
                contenders["gpu"] = lucid_step(name, kwargs, shapes, "gpu")
            ms = interleaved_medians(contenders, samples)
            row = (f"| {name} | {layout} | {_cell(ms['cpu'])} | {_cell(ms['foreach'])} | {_cell(ms['loop'])} "
                   f"| {_ratio(ms['cpu'], ms['foreach'])}")
            if gpu:
                row += f" | {_cell(ms['gpu'])} | {_ratio(ms['gpu'], ms['foreach'])}"
            print(row + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
