"""
An embedding classifier: SparseAdam for the table, AdamW for the head
=====================================================================

The task is synthetic and learnable: each sequence of token ids belongs to the class that
most of its tokens were drawn from. The model averages the tokens' embeddings and
classifies the mean with a linear layer.

Usage: ``python examples/train_embedding.py [--device cpu|gpu] [--steps 300]``
"""

from __future__ import annotations

import argparse

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.optim as optim

VOCAB, CLASSES, LENGTH, DIM = 1000, 4, 12, 16


def make_batch(size: int, device: str):
    """Sequences whose tokens come mostly from their class's quarter of the vocabulary."""
    labels = (lucid.rand(size) * CLASSES).long()
    home = labels.reshape(size, 1) * (VOCAB // CLASSES) + (lucid.rand(size, LENGTH) * (VOCAB // CLASSES)).long()
    anywhere = (lucid.rand(size, LENGTH) * VOCAB).long()
    tokens = lucid.where(lucid.rand(size, LENGTH) < 0.7, home, anywhere)
    return tokens.to(device), labels.to(device)


class BagOfEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, tokens):
        return self.head(self.embedding(tokens).mean(dim=1))


def main():
    parser = argparse.ArgumentParser(description="An embedding classifier trained with SparseAdam and AdamW.")
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()

    lucid.manual_seed(0)
    model = BagOfEmbeddings().to(args.device)
    table = optim.SparseAdam([model.embedding.weight], lr=0.05)
    head = optim.AdamW(model.head.parameters(), lr=0.02)
    test_tokens, test_labels = make_batch(512, args.device)

    for step in range(1, args.steps + 1):
        tokens, labels = make_batch(64, args.device)
        table.zero_grad()
        head.zero_grad()
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        table.step()
        head.step()
        if step % 50 == 0 or step == 1:
            with lucid.no_grad():
                predictions = model(test_tokens).max(dim=1).indices
                accuracy = (predictions == test_labels).float().mean().item()
            print(f"step {step:4d}  loss {loss.item():.4f}  test accuracy {accuracy:.3f}")
    rows = len(table.state[0]["exp_avg"])
    print(f"done on {args.device}: SparseAdam kept moments for {rows} rows, stepped {table.state[0]['step']} times")


if __name__ == "__main__":
    main()
