"""Time the training step of a small causal transformer: lucid against torch, in one interleaved run.

Usage::

    python benchmarks/bench_transformer.py            # the table (about a minute)
    python benchmarks/bench_transformer.py --quick    # a tiny model, few samples: checks it runs

The model is examples/char_gpt.py's (nanoGPT's layout): 2 blocks, 4 heads, width 64,
context 32, batch 16, a vocabulary of 30 characters, dropout 0, AdamW (weight decay on the
matrices), with the feed-forward's activation GELU (nanoGPT's) and ReLU. A step is
``zero_grad``, forward, cross-entropy, backward and ``optimizer.step()``. Everyone runs on
one thread (torch.set_num_threads(1); NumPy's BLAS through OPENBLAS_NUM_THREADS=1, unless the
environment says otherwise; numba is single-threaded), float32, the
same weights and batch. Contenders are timed round-robin (bench_optim_step.py's
``interleaved_medians``); cells are median milliseconds per step, ratios lucid's time over
torch's from the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")  # NumPy's BLAS on one thread too: set before NumPy loads

import numpy as np  # noqa: E402

import lucid  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import bench_optim_step  # noqa: E402
import char_gpt  # noqa: E402

VOCAB = 30
FULL = {"n_layer": 2, "n_head": 4, "n_embd": 64, "block_size": 32, "batch": 16}
QUICK = {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 8, "batch": 4}


def training_step(torch, activation: str, n_layer: int, n_head: int, n_embd: int, block_size: int, batch: int,
                  optimizer_flags=None, state=None):
    """One step of char_gpt's model and optimizer on a fixed batch; ``state``: weights to start from."""
    torch.manual_seed(0)
    model = char_gpt.make_model(torch, VOCAB, block_size, n_layer, n_head, n_embd, 0.0, activation)
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    optimizer = char_gpt.configure_optimizer(torch, model, weight_decay=0.1, lr=3e-4)
    for flag, value in (optimizer_flags or {}).items():
        for group in optimizer.param_groups:
            group[flag] = value
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.integers(0, VOCAB, (batch, block_size)))
    y = torch.tensor(rng.integers(0, VOCAB, (batch, block_size)))

    def step():
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        optimizer.step()

    return step, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tiny model and few samples: checks that it runs")
    parser.add_argument("--samples", type=int, default=None, help="samples per contender (default 15, quick 2)")
    args = parser.parse_args(argv)
    samples = args.samples or (2 if args.quick else 15)
    bench_optim_step.MIN_SAMPLE_SECONDS = 0.0 if args.quick else 2e-3
    shape = QUICK if args.quick else FULL

    import torch

    torch.set_num_threads(1)
    print(f"lucid {lucid.__version__} 'cpu', torch {torch.__version__}, 1 thread; median of {samples} "
          "interleaved samples; float32")
    print(f"\n## training step: {shape['n_layer']} blocks, {shape['n_head']} heads, width {shape['n_embd']}, "
          f"context {shape['block_size']}, batch {shape['batch']}, AdamW (ms; ratio = lucid / torch)\n")
    print("| feed-forward | torch default | torch fused | lucid cpu | vs default | vs fused |")
    print("| --- | --- | --- | --- | --- | --- |")
    for activation in ("gelu", "relu"):
        default, reference = training_step(torch, activation, **shape)
        state = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
        fused, _ = training_step(torch, activation, **shape, optimizer_flags={"fused": True})
        ours, _ = training_step(lucid, activation, **shape, state=state)
        ms = bench_optim_step.interleaved_medians({"default": default, "fused": fused, "lucid": ours}, samples,
                                                  warmup=1 if args.quick else 3)
        print(f"| {'GELU' if activation == 'gelu' else 'ReLU'} | {ms['default']:.2f} | {ms['fused']:.2f} | "
              f"{ms['lucid']:.2f} | {ms['lucid'] / ms['default']:.2f}x | {ms['lucid'] / ms['fused']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
