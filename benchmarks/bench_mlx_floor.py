"""Where lucid "gpu" stands against mlx.optimizers on MLX's CPU build, and why.

For each optimizer and layout, in one interleaved run (float32, gradients set, one
``mx.eval`` per step), five contenders:

- ``mlx eager`` and ``mlx compiled``: mlx.optimizers, as in ``bench_optim_step.py``;
- ``lucid``: ``optimizer.step()`` on "gpu";
- ``rule, arrays``: lucid's compiled rule alone over raw MLX arrays, every hyperparameter a
  0-d array input (what lucid's backend runs, without the optimizer's Python);
- ``rule, constants``: the same rule with the hyperparameters that do not change between
  steps (momentum, betas, eps) as constants of the trace, only the learning rate and the
  bias corrections as arrays (what mlx.optimizers does).

The last two bound what any optimizer code could reach: "rule, arrays" is the floor of the
design that never recompiles for a new momentum or beta, "rule, constants" the floor of
the one mlx.optimizers uses, which recompiles (a g++ build per distinct value on the CPU
build) when one changes.

    python benchmarks/bench_mlx_floor.py [--samples 11] [--optimizers SGD-momentum,Adam] [--quick]
"""

from __future__ import annotations

import argparse
import sys

import mlx.core as mx

from bench_optim_step import LAYOUTS, OPTIMIZERS, QUICK_LAYOUTS, _arrays, _cell, _ratio, interleaved_medians, lucid_step, mlx_step
from lucid._backend.mlx_backend import MLX_VOCABULARY

#: the rule scalars that change from step to step (a schedule's lr, the bias corrections)
PER_STEP = ("neg_lr", "neg_step_size", "neg_clr", "bias_correction2_sqrt")


def rule_step(name, kwargs, shapes, constants: bool):
    """The optimizer's compiled rule alone, over raw MLX arrays, from its second step on."""
    step = lucid_step(name, kwargs, shapes, "gpu")
    step()
    optimizer = step.__self__
    group = optimizer.param_groups[0]
    param = group["params"][0]
    rule = optimizer.elementwise_rule(group)
    scalars = rule.scalar_values(group, param, optimizer.state[param])
    fn = rule.with_vocabulary(MLX_VOCABULARY)
    varying = [i for i, n in enumerate(rule.scalars) if n in PER_STEP or not constants]
    numbers = [mx.array(scalars[i], dtype=mx.float32) for i in varying]
    values, grads = _arrays(shapes)
    grads = [mx.array(g) for g in grads]
    arrays = [[mx.array(v)] + [mx.zeros(v.shape) for _ in rule.state] for v in values]
    mx.eval(arrays, grads, numbers)

    def fused(arrays, grads, numbers):
        given = dict(zip(varying, numbers))
        hyper = [given[i] if i in given else scalars[i] for i in range(len(scalars))]
        return [list(fn(item[0], grad, *item[1:], *hyper)) for item, grad in zip(arrays, grads)]

    compiled = mx.compile(fused)

    def run():
        arrays[:] = compiled(arrays, grads, numbers)
        mx.eval(arrays)

    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=11)
    parser.add_argument("--optimizers", default="SGD-momentum,Adam,Adagrad")
    parser.add_argument("--quick", action="store_true", help="small layouts, two samples: checks that it runs")
    args = parser.parse_args(argv)
    layouts, samples = (QUICK_LAYOUTS, 2) if args.quick else (LAYOUTS, args.samples)
    print(f"MLX {mx.__version__} on {mx.default_device()}; median of {samples} interleaved samples; float32\n")
    print("| optimizer | layout | mlx eager | mlx compiled | lucid | rule, arrays | rule, constants "
          "| lucid / best mlx | arrays / best mlx | constants / best mlx |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label in args.optimizers.split(","):
        name, kwargs, _ = OPTIMIZERS[label]
        for layout, shapes in layouts.items():
            if layout == "1 x 1e7":  # met there (bench_optim_step.py); the rule alone would page-fault
                continue
            ms = interleaved_medians({"eager": mlx_step(name, kwargs, shapes, compiled=False),
                                      "compiled": mlx_step(name, kwargs, shapes, compiled=True),
                                      "lucid": lucid_step(name, kwargs, shapes, "gpu"),
                                      "arrays": rule_step(name, kwargs, shapes, constants=False),
                                      "constants": rule_step(name, kwargs, shapes, constants=True)}, samples)
            best = min(ms["eager"], ms["compiled"])
            print(f"| {label} | {layout} | {_cell(ms['eager'])} | {_cell(ms['compiled'])} | {_cell(ms['lucid'])} | "
                  f"{_cell(ms['arrays'])} | {_cell(ms['constants'])} | {_ratio(ms['lucid'], best)} | "
                  f"{_ratio(ms['arrays'], best)} | {_ratio(ms['constants'], best)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
