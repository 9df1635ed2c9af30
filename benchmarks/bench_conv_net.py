"""Time a training step of pytorch/examples' MNIST ``Net``: lucid against torch, in one interleaved run.

Usage::

    python benchmarks/bench_conv_net.py            # batch 64, the table (about a minute)
    python benchmarks/bench_conv_net.py --quick    # batch 4, few samples: checks it runs
    python benchmarks/bench_conv_net.py --profile  # and lucid's step under cProfile

The step is ``zero_grad``, the forward of ``examples/mnist_net.py``'s ``Net`` (conv 1->32,
conv 32->64, max pooling, dropout, 9216->128->10, log_softmax), ``nll_loss``, backward and
Adadelta, in float32 on 1 thread (torch.set_num_threads(1); OMP and OpenBLAS threads 1,
set before NumPy loads when run as a program). The contenders are sampled round-robin
(``bench_optim_step.interleaved_medians``); cells are median milliseconds per step.
The target (issue 24): lucid "cpu" at most 1.3x torch.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402 - after the thread settings, which NumPy reads when it loads
import cProfile  # noqa: E402
import importlib.util  # noqa: E402
import pstats  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import lucid  # noqa: E402
from bench_optim_step import interleaved_medians  # noqa: E402

_EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "mnist_net.py"


def _example():
    spec = importlib.util.spec_from_file_location("mnist_net", _EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def training_step(framework, batch: int, device: str = "cpu"):
    """One training step of the Net on a fixed batch, as a function of no arguments."""
    example = _example()
    rng = random.Random(0)
    images = [[example.draw_digit(rng.randrange(10), rng)] for _ in range(batch)]
    labels = [rng.randrange(10) for _ in range(batch)]
    framework.manual_seed(0)
    model = example.make_model(framework).to(device)
    x = framework.tensor(images, device=device)
    y = framework.tensor(labels, device=device)
    optimizer = framework.optim.Adadelta(model.parameters(), lr=1.0)
    nll_loss = framework.nn.functional.nll_loss
    model.train()

    def step():
        optimizer.zero_grad()
        loss = nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="batch 4 and few samples: checks that it runs")
    parser.add_argument("--batch", type=int, default=None, help="images per step (default 64, quick 4)")
    parser.add_argument("--samples", type=int, default=None, help="samples per contender (default 15, quick 2)")
    parser.add_argument("--profile", action="store_true", help="then profile lucid's step (cProfile, by total time)")
    args = parser.parse_args(argv)
    batch = args.batch or (4 if args.quick else 64)
    samples = args.samples or (2 if args.quick else 15)

    import torch

    torch.set_num_threads(1)
    contenders = {"torch": training_step(torch, batch), "lucid cpu": training_step(lucid, batch)}
    print(f"lucid {lucid.__version__}, torch {torch.__version__}, 1 thread; MNIST Net training step, batch {batch}, "
          f"float32, Adadelta; median of {samples} interleaved samples\n")
    ms = interleaved_medians(contenders, samples, warmup=1 if args.quick else 3)
    print("## MNIST Net training step (ms; ratio = lucid / torch)\n")
    print("| batch | torch | lucid cpu | ratio |")
    print("| --- | --- | --- | --- |")
    print(f"| {batch} | {ms['torch']:.2f} | {ms['lucid cpu']:.2f} | {ms['lucid cpu'] / ms['torch']:.2f}x |")
    if args.profile:
        step = contenders["lucid cpu"]
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(5):
            step()
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
