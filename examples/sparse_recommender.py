"""
A torch-style sparse-embedding recommender
==========================================

Unchanged on torch and on lucid. Implicit-feedback matrix factorisation with side information: a user table
(``Embedding(sparse=True)``), an item table and, per user, the mean of the embeddings of
the items they bought before (``EmbeddingBag(mode="mean", sparse=True)`` over offsets, tied
to the item table).
The tables train with ``SparseAdam``, the small dense head with ``AdamW``; the loss is
``BCEWithLogitsLoss`` with a ``pos_weight``. Choose the import with ``--backend``::

    python examples/sparse_recommender.py                    # import lucid as torch
    python examples/sparse_recommender.py --backend torch    # import torch
"""

from __future__ import annotations

import argparse
import importlib
import os
import random

USERS, ITEMS, DIM, GROUPS = 200, 300, 8, 5


def make_interactions(count: int, seed: int):
    """(user, item, label, history) rows: users like the items of their group (item % GROUPS == user % GROUPS).

    The history is a few earlier purchases from the user's group, of any length (empty too).
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        user = rng.randrange(USERS)
        group = user % GROUPS
        if rng.random() < 0.5:  # half the candidates come from the user's group
            item = rng.randrange(ITEMS // GROUPS) * GROUPS + group
        else:
            item = rng.randrange(ITEMS)
        label = 1.0 if (item % GROUPS == group) == (rng.random() < 0.9) else 0.0  # 10% label noise
        history = [rng.randrange(ITEMS // GROUPS) * GROUPS + group for _ in range(rng.randrange(4))]
        rows.append((user, item, label, history))
    return rows


def to_batch(torch, rows, dtype, device):
    """Index tensors, labels, and the histories flattened with their offsets (EmbeddingBag's input)."""
    history, offsets = [], []
    for row in rows:
        offsets.append(len(history))
        history += row[3]
    def tensor(values, dtype=torch.long):
        return torch.tensor(values, dtype=dtype, device=device)

    return (tensor([r[0] for r in rows]), tensor([r[1] for r in rows]), tensor([r[2] for r in rows], dtype),
            tensor(history), tensor(offsets))


def make_model(torch):
    nn = torch.nn

    class Recommender(nn.Module):
        def __init__(self):
            super().__init__()
            self.users = nn.Embedding(USERS, DIM, sparse=True)
            self.items = nn.Embedding(ITEMS, DIM, sparse=True)
            self.history = nn.EmbeddingBag(ITEMS, DIM, mode="mean", sparse=True)
            self.history.weight = self.items.weight  # a user's history is read in the item table itself
            self.head = nn.Sequential(nn.Linear(3 * DIM, 16), nn.ReLU(), nn.Linear(16, 1))
            with torch.no_grad():  # small initial vectors: the structure, not the noise of N(0, 1), grows
                self.users.weight.mul_(0.1)
                self.items.weight.mul_(0.1)

        def forward(self, users, items, history, offsets):
            u, v = self.users(users), self.items(items)
            h = self.history(history, offsets)
            return self.head(torch.cat([u * v, h * v, u + h], dim=1)).squeeze(1)

    return Recommender()


def train(torch, epochs: int = 3, batch_size: int = 128, dtype_name: str = "float32", device: str = "cpu",
          initial_state=None, log=None):
    """Train; return the state it started from, the per-step training losses and the final held-out accuracy."""
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    model = make_model(torch).to(device=device, dtype=dtype)
    if initial_state is not None:
        model.load_state_dict(initial_state)
    initial = {key: value.detach().clone() for key, value in model.state_dict().items()}
    tables = [model.users.weight, model.items.weight]  # the history bag shares the item table
    sparse_opt = torch.optim.SparseAdam(tables, lr=0.05)
    dense_opt = torch.optim.AdamW(model.head.parameters(), lr=0.01, weight_decay=0.01)
    criterion = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.5], dtype=dtype, device=device))
    rows, held_out = make_interactions(8192, seed=0), make_interactions(512, seed=1)
    losses = []
    for epoch in range(epochs):
        model.train()
        for start in range(0, len(rows), batch_size):
            users, items, labels, history, offsets = to_batch(torch, rows[start:start + batch_size], dtype, device)
            sparse_opt.zero_grad()
            dense_opt.zero_grad()
            loss = criterion(model(users, items, history, offsets), labels)
            loss.backward()
            sparse_opt.step()
            dense_opt.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            users, items, labels, history, offsets = to_batch(torch, held_out, dtype, device)
            predicted = (model(users, items, history, offsets) > 0).to(dtype)
            accuracy = (predicted == labels).to(dtype).mean().item()
        if log:
            log(f"epoch {epoch + 1}  train loss {losses[-1]:.4f}  held-out accuracy {accuracy:.3f}")
    return {"initial_state": initial, "losses": losses, "final": accuracy}


def main() -> None:
    parser = argparse.ArgumentParser(
        description="A torch-style sparse-embedding recommender, unchanged on "
                    "torch and on lucid.")
    parser.add_argument("--backend", choices=["lucid", "torch"], default=os.environ.get("EXAMPLE_BACKEND", "lucid"))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--device", default="cpu", help='"cpu"; "gpu" (MLX) with lucid, "cuda" with torch')
    args = parser.parse_args()
    torch = importlib.import_module(args.backend)  # `import torch`, or `import lucid as torch`
    accuracy = train(torch, args.epochs, device=args.device, log=print)["final"]
    print(f"done with {args.backend}: held-out accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
