"""
A torch-style MLP regression
============================

It runs unchanged on torch and on lucid. The script is written against torch's API only; the one line that differs is the import,
chosen by ``--backend`` (or the environment variable ``EXAMPLE_BACKEND``)::

    python examples/mlp_regression.py                    # import lucid as torch
    python examples/mlp_regression.py --backend torch    # import torch

It fits a noisy smooth function of 6 inputs with Linear / BatchNorm1d / GELU layers,
SmoothL1Loss, SGD with Nesterov momentum and a StepLR schedule, then evaluates on held-out
points in ``eval()`` mode under ``no_grad()``. ``train(torch, ...)`` is what
tests/test_torch_style_examples.py runs with both modules, from the same initial weights.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import random

FEATURES, HIDDEN = 6, 32


def make_data(torch, count: int, seed: int, dtype, device):
    """Inputs in [-1, 1] and a smooth target plus noise, from Python's random (the same for every backend)."""
    rng = random.Random(seed)
    rows, targets = [], []
    for _ in range(count):
        x = [rng.uniform(-1, 1) for _ in range(FEATURES)]
        y = math.sin(2 * x[0]) + x[1] * x[2] - 0.5 * x[3] ** 2 + 0.1 * rng.gauss(0, 1)
        rows.append(x)
        targets.append([y])
    return torch.tensor(rows, dtype=dtype, device=device), torch.tensor(targets, dtype=dtype, device=device)


def make_model(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.GELU(),
        nn.Linear(HIDDEN, HIDDEN), nn.GELU(approximate="tanh"),
        nn.Linear(HIDDEN, 1),
    )


def train(torch, epochs: int = 20, batch_size: int = 32, dtype_name: str = "float32", device: str = "cpu",
          initial_state=None, log=None):
    """Train; return the state it started from, the per-step training losses and the final validation loss."""
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    model = make_model(torch).to(device=device, dtype=dtype)
    if initial_state is not None:
        model.load_state_dict(initial_state)
    initial = {key: value.detach().clone() for key, value in model.state_dict().items()}
    x, y = make_data(torch, 256, seed=1, dtype=dtype, device=device)
    x_val, y_val = make_data(torch, 64, seed=2, dtype=dtype, device=device)
    criterion = torch.nn.SmoothL1Loss(beta=0.5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=8, gamma=0.5)
    losses = []
    for epoch in range(epochs):
        model.train()
        for start in range(0, x.size(0), batch_size):
            inputs, targets = x[start:start + batch_size], y[start:start + batch_size]
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        model.eval()
        with torch.no_grad():
            val_loss = torch.nn.functional.mse_loss(model(x_val), y_val).item()
        if log:
            log(f"epoch {epoch + 1:3d}  train {losses[-1]:.5f}  val mse {val_loss:.5f}  lr {scheduler.get_last_lr()[0]:.4f}")
    return {"initial_state": initial, "losses": losses, "final": val_loss}


def main() -> None:
    parser = argparse.ArgumentParser(
        description="A torch-style MLP regression that runs unchanged on torch "
                    "and on lucid.")
    parser.add_argument("--backend", choices=["lucid", "torch"], default=os.environ.get("EXAMPLE_BACKEND", "lucid"))
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--device", default="cpu", help='"cpu"; "gpu" (MLX) with lucid, "cuda" with torch')
    args = parser.parse_args()
    torch = importlib.import_module(args.backend)  # `import torch`, or `import lucid as torch`
    val_loss = train(torch, args.epochs, device=args.device, log=print)["final"]
    print(f"done with {args.backend}: validation mse {val_loss:.5f}")


if __name__ == "__main__":
    main()
