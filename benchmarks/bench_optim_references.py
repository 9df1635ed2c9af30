"""Time ``optimizer.step()`` of the optimizers torch.optim lacks against their reference implementations.

Usage::

    python benchmarks/bench_optim_references.py            # the full table (a few minutes)
    python benchmarks/bench_optim_references.py --quick    # small layouts, few samples: checks it runs

The layouts, the timing and the rules are bench_optim_step.py's: float32, gradients already
set, one thread (torch.set_num_threads(1); NumPy and numba are single-threaded), contenders
timed round-robin in one run, median milliseconds per step. The reference is the library
the optimizer's golden files come from (tests/optim_registry.py), on torch's CPU; lucid runs
on "cpu" and, where MLX is installed, on "gpu" (Linux's MLX is a CPU build: compare ratios
only). Ratios are lucid's time over the reference's; issue 22's target is at most 1.0x.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import io
import sys

import lucid

import bench_optim_step
from bench_optim_step import LAYOUTS, QUICK_LAYOUTS, _arrays, _cell, _ratio, interleaved_medians, lucid_step

#: lucid's optimizer -> (its keyword arguments, the reference's module and class, the
#: reference's names for lucid's arguments where they differ); defaults are the reference's
REFERENCES = {
    "Prodigy": ({"weight_decay": 0.01}, "prodigyopt", "Prodigy", {"decoupled_weight_decay": "decouple"}),
}


def reference_step(name, shapes):
    """The reference's ``step`` over parameters of ``shapes`` with their gradients set."""
    import torch

    kwargs, module, cls, names = REFERENCES[name]
    values, grads = _arrays(shapes)
    params = [torch.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g)
    with contextlib.redirect_stdout(io.StringIO()):  # prodigyopt prints its weight decay mode
        optimizer = getattr(importlib.import_module(module), cls)(params, **{names.get(k, k): v
                                                                             for k, v in kwargs.items()})
    return optimizer.step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small layouts and few samples: checks that it runs")
    parser.add_argument("--samples", type=int, default=None, help="samples per contender (default 15, quick 2)")
    parser.add_argument("--optimizers", default=",".join(REFERENCES), help="a comma-separated subset")
    args = parser.parse_args(argv)
    samples = args.samples or (2 if args.quick else 15)
    layouts = QUICK_LAYOUTS if args.quick else LAYOUTS
    bench_optim_step.MIN_SAMPLE_SECONDS = 0.0 if args.quick else 2e-3
    names = [n for n in args.optimizers.split(",") if n]
    gpu = lucid.is_available("gpu")

    import torch

    torch.set_num_threads(1)
    print(f"lucid {lucid.__version__} against the reference implementations (torch {torch.__version__}, 1 thread); "
          f"median of {samples} interleaved samples; float32\n")
    print("| optimizer | layout | reference | lucid cpu | lucid gpu | cpu / reference | gpu / reference |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        kwargs = REFERENCES[name][0]
        for layout, shapes in layouts.items():
            contenders = {"reference": reference_step(name, shapes), "cpu": lucid_step(name, kwargs, shapes, "cpu")}
            if gpu:
                contenders["gpu"] = lucid_step(name, kwargs, shapes, "gpu")
            ms = interleaved_medians(contenders, samples, warmup=3)
            print(f"| {name} | {layout} | {_cell(ms['reference'])} | {_cell(ms['cpu'])} | {_cell(ms.get('gpu'))} | "
                  f"{_ratio(ms['cpu'], ms['reference'])} | {_ratio(ms.get('gpu'), ms['reference'])} |")
            del contenders
            gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
