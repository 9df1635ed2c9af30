"""
A torch-style convolutional network on MNIST-like digits
========================================================

pytorch/examples' MNIST ``Net``, unchanged on torch and on lucid: two 3x3 convolutions,
max pooling, dropout, two linear layers, ``log_softmax`` and ``nll_loss``, trained with
Adadelta and a StepLR schedule, then evaluated under ``no_grad()``. The digits are
synthetic (no download): seven-segment figures drawn on 28x28 images with a random
shift, stroke width and noise, normalised with MNIST's mean and deviation. Choose the
import with ``--backend``::

    python examples/mnist_net.py                    # import lucid as torch
    python examples/mnist_net.py --backend torch    # import torch

``train(torch, ...)`` is what tests/test_torch_style_examples.py runs with both modules,
from the same initial weights.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random

SIZE = 28
# the seven segments (top, upper right, lower right, bottom, lower left, upper left, middle)
# each digit lights
DIGITS = ["abcdef", "bc", "abdeg", "abcdg", "bcfg", "acdfg", "acdefg", "abc", "abcdefg", "abcdfg"]


def _segments(top: int, left: int, height: int, width: int) -> dict:
    """Each segment as a line (row0, col0, row1, col1) of a figure at (top, left)."""
    mid, bottom, right = top + height // 2, top + height, left + width
    return {"a": (top, left, top, right), "b": (top, right, mid, right), "c": (mid, right, bottom, right),
            "d": (bottom, left, bottom, right), "e": (mid, left, bottom, left), "f": (top, left, mid, left),
            "g": (mid, left, mid, right)}


def draw_digit(digit: int, rng: random.Random) -> list:
    """A 28x28 image (rows of floats in [0, 1]) of ``digit``."""
    image = [[0.0] * SIZE for _ in range(SIZE)]
    top, left = rng.randint(3, 7), rng.randint(6, 11)
    height, width, stroke = rng.randint(14, 18), rng.randint(7, 10), rng.randint(1, 2)
    lines = _segments(top, left, height, width)
    for name in DIGITS[digit]:
        r0, c0, r1, c1 = lines[name]
        for r in range(r0, r1 + stroke):
            for c in range(c0, c1 + stroke):
                if 0 <= r < SIZE and 0 <= c < SIZE:
                    image[r][c] = 1.0
    return [[min(max(v + rng.gauss(0, 0.1), 0.0), 1.0) for v in row] for row in image]


def make_data(torch, count: int, seed: int, dtype, device):
    """``count`` normalised images (N, 1, 28, 28) and their labels, from Python's random."""
    rng = random.Random(seed)
    labels = [rng.randrange(10) for _ in range(count)]
    images = [[draw_digit(label, rng)] for label in labels]
    x = (torch.tensor(images, dtype=dtype, device=device) - 0.1307) / 0.3081  # transforms.Normalize
    return x, torch.tensor(labels, device=device)


def make_model(torch, dropout1: float = 0.25, dropout2: float = 0.5):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(dropout1)
            self.dropout2 = nn.Dropout(dropout2)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.dropout2(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    return Net()


def train(torch, epochs: int = 2, batch_size: int = 64, dtype_name: str = "float32", device: str = "cpu",
          initial_state=None, log=None, samples: int = 512, dropout: float | None = None):
    """Train; return the state it started from, the per-step losses and the final test loss.

    ``dropout`` (when given) replaces both dropout probabilities: the masks come from each
    framework's own generator, so a step-by-step comparison runs without them.
    """
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(1)
    rates = (0.25, 0.5) if dropout is None else (dropout, dropout)
    model = make_model(torch, *rates).to(device=device, dtype=dtype)
    if initial_state is not None:
        model.load_state_dict(initial_state)
    initial = {key: value.detach().clone() for key, value in model.state_dict().items()}
    x, y = make_data(torch, samples, seed=1, dtype=dtype, device=device)
    x_test, y_test = make_data(torch, max(samples // 4, 1), seed=2, dtype=dtype, device=device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for epoch in range(epochs):
        model.train()
        for start in range(0, x.size(0), batch_size):
            data, target = x[start:start + batch_size], y[start:start + batch_size]
            optimizer.zero_grad()
            output = model(data)
            loss = torch.nn.functional.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        test_loss, correct = 0.0, 0
        with torch.no_grad():
            output = model(x_test)
            test_loss = torch.nn.functional.nll_loss(output, y_test, reduction="sum").item() / x_test.size(0)
            pred = output.argmax(dim=1, keepdim=True)
            correct = pred.eq(y_test.view_as(pred)).sum().item()
        scheduler.step()
        if log:
            log(f"epoch {epoch + 1}  train {losses[-1]:.4f}  test loss {test_loss:.4f}  "
                f"accuracy {correct}/{x_test.size(0)}")
    return {"initial_state": initial, "losses": losses, "final": test_loss}


def main() -> None:
    parser = argparse.ArgumentParser(description="pytorch/examples' MNIST Net on synthetic digits, unchanged on torch "
                                                 "and on lucid.")
    parser.add_argument("--backend", choices=["lucid", "torch"], default=os.environ.get("EXAMPLE_BACKEND", "lucid"))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=512, help="training images (a quarter as many to test)")
    parser.add_argument("--device", default="cpu", help='"cpu"; "gpu" (MLX) with lucid, "cuda" with torch')
    args = parser.parse_args()
    torch = importlib.import_module(args.backend)  # `import torch`, or `import lucid as torch`
    test_loss = train(torch, args.epochs, device=args.device, log=print, samples=args.samples)["final"]
    print(f"done with {args.backend}: test loss {test_loss:.4f}")


if __name__ == "__main__":
    main()
