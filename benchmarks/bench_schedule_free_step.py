"""Time a Schedule-Free ``optimizer.step()``: lucid against the reference, schedulefree 1.4.1 on torch.

Usage::

    python benchmarks/bench_schedule_free_step.py            # the full table (a few minutes)
    python benchmarks/bench_schedule_free_step.py --quick    # small layouts, few samples: checks it runs

The layouts, the single thread (torch.set_num_threads(1); NumPy and numba are single-threaded),
float32, the gradients set once and the interleaved sampling are bench_optim_step.py's. The
reference runs its default (``foreach=True``: torch's foreach ops) and its for-loop
(``foreach=False``); lucid runs its fused rule on "cpu" (numba). The reference has no MLX
form, so lucid's "gpu" (mx.compile) has nothing to be compared with here. Cells are median
milliseconds per step; ratios are lucid's time over the reference's default, from the same run.
"""

from __future__ import annotations

import argparse
import sys
import time

import lucid

from bench_optim_step import LAYOUTS, QUICK_LAYOUTS, _arrays, _cell, _ratio, interleaved_medians, lucid_step

OPTIMIZERS = {
    "SGDScheduleFree": {"lr": 1.0, "weight_decay": 1e-4},
    "AdamWScheduleFree": {"lr": 2.5e-3, "weight_decay": 1e-4, "warmup_steps": 10},
    "RAdamScheduleFree": {"lr": 2.5e-3, "weight_decay": 1e-4},
}


def reference_step(name, kwargs, shapes, foreach: bool):
    """The reference's step, after writing its gradients back: it divides ``p.grad`` in place
    by Adam's denominator (and adds the weight decay to it), so that, left alone, its
    gradients shrink step after step into subnormal numbers, whose arithmetic is many times
    slower. The write-back is timed on its own (:func:`gradient_restore`) and subtracted."""
    import schedulefree
    import torch

    values, grads = _arrays(shapes)
    params = [torch.tensor(v, requires_grad=True) for v in values]
    originals = [torch.tensor(g) for g in grads]
    for p, g in zip(params, originals):
        p.grad = g.clone()
    optimizer = getattr(schedulefree, name)(params, **kwargs, foreach=foreach)
    optimizer.train()
    current = [p.grad for p in params]

    def step():
        torch._foreach_copy_(current, originals)
        optimizer.step()

    return step


def gradient_restore(shapes):
    """What :func:`reference_step` adds to the reference's step: the write-back alone."""
    import torch

    _, grads = _arrays(shapes)
    originals = [torch.tensor(g) for g in grads]
    current = [g.clone() for g in originals]
    return lambda: torch._foreach_copy_(current, originals)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small layouts and few samples: checks that it runs")
    parser.add_argument("--samples", type=int, default=None, help="samples per contender (default 15, quick 2)")
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="wall time, or this thread's CPU time (where other processes share the cores)")
    args = parser.parse_args(argv)
    samples = args.samples or (2 if args.quick else 15)
    import bench_optim_step

    bench_optim_step.MIN_SAMPLE_SECONDS = 0.0 if args.quick else 2e-3
    layouts = QUICK_LAYOUTS if args.quick else LAYOUTS

    import schedulefree
    import torch

    torch.set_num_threads(1)
    cpu = lucid._backend.get("cpu")  # noqa: SLF001 - which runner serves "cpu" here, for the header
    print(f"lucid {lucid.__version__} 'cpu' runs rules with {cpu.rule_runner}; schedulefree "
          f"{getattr(schedulefree, '__version__', '1.4.1')} on torch {torch.__version__}, 1 thread; "
          f"median of {samples} interleaved samples of {args.clock} time; float32\n")
    print("## Schedule-Free optimizer.step(), ms per step (ratio: lucid / reference foreach)\n")
    print("The reference's columns are its step with the gradient write-back's time subtracted "
          "(see reference_step).\n")
    print("| optimizer | layout | lucid cpu | reference foreach | reference for-loop | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for name, kwargs in OPTIMIZERS.items():
        for layout, shapes in layouts.items():
            ms = interleaved_medians({"cpu": lucid_step(name, kwargs, shapes, "cpu"),
                                      "foreach": reference_step(name, kwargs, shapes, True),
                                      "loop": reference_step(name, kwargs, shapes, False),
                                      "restore": gradient_restore(shapes)}, samples,
                                     clock=time.thread_time if args.clock == "thread" else time.perf_counter)
            foreach, loop = ms["foreach"] - ms["restore"], ms["loop"] - ms["restore"]
            print(f"| {name} | {layout} | {_cell(ms['cpu'])} | {_cell(foreach)} | {_cell(loop)} "
                  f"| {_ratio(ms['cpu'], foreach)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
