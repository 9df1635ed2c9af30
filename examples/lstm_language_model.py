"""
A torch-style LSTM language model
=================================

Over an embedding table, unchanged on torch and on lucid. Modelled on pytorch/examples' ``word_language_model``: an ``Embedding``, dropout, a
two-layer ``LSTM``, a decoder tied to the embedding's weight, truncated backpropagation
through time with the hidden state carried (detached) from batch to batch, gradient
clipping, and an evaluation pass. The corpus is synthetic: sentences from a small
grammar, so the model has something to learn. Choose the import with ``--backend``::

    python examples/lstm_language_model.py                    # import lucid as torch
    python examples/lstm_language_model.py --backend torch    # import torch
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import random

SUBJECTS = ["the cat", "a dog", "my friend", "the teacher", "a bird"]
VERBS = ["sees", "likes", "follows", "draws", "hears"]
OBJECTS = ["the moon", "a tree", "the river", "an apple", "the city"]


def make_corpus(sentences: int, seed: int):
    """Token ids of ``sentences`` random sentences, and the vocabulary."""
    rng = random.Random(seed)
    words = []
    for _ in range(sentences):
        words += f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} .".split()
    vocab = sorted(set(words))
    index = {word: i for i, word in enumerate(vocab)}
    return [index[w] for w in words], vocab


def make_model(torch, tokens: int, size: int, layers: int, dropout: float):
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(tokens, size)
            self.rnn = nn.LSTM(size, size, layers, dropout=dropout)
            self.decoder = nn.Linear(size, tokens)
            self.decoder.weight = self.encoder.weight  # tied weights (Press & Wolf, 2017)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            return self.decoder(self.drop(output)).view(-1, tokens), hidden

        def init_hidden(self, batch):
            weight = next(self.parameters())
            return (torch.zeros(layers, batch, size, dtype=weight.dtype, device=weight.device),
                    torch.zeros(layers, batch, size, dtype=weight.dtype, device=weight.device))

    return RNNModel()


def batchify(torch, ids, batch: int, device):
    """The ids as ``(steps, batch)`` columns, as word_language_model lays them out."""
    steps = len(ids) // batch
    return torch.tensor(ids[:steps * batch], dtype=torch.long, device=device).view(batch, steps).transpose(0, 1)


def train(torch, epochs: int = 2, bptt: int = 8, batch: int = 8, size: int = 16, dropout: float = 0.2,
          dtype_name: str = "float32", device: str = "cpu", initial_state=None, log=None):
    """Train; return the state it started from, the per-step training losses and the final validation loss."""
    ids, vocab = make_corpus(300, seed=0)
    val_ids, _ = make_corpus(40, seed=1)
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    model = make_model(torch, len(vocab), size, 2, dropout).to(device=device, dtype=dtype)
    model.rnn.flatten_parameters()
    if initial_state is not None:
        model.load_state_dict(initial_state)
    initial = {key: value.detach().clone() for key, value in model.state_dict().items()}
    data, val_data = batchify(torch, ids, batch, device), batchify(torch, val_ids, 4, device)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(epochs):
        model.train()
        hidden = model.init_hidden(batch)
        for i in range(0, data.size(0) - 1, bptt):
            length = min(bptt, data.size(0) - 1 - i)
            inputs, targets = data[i:i + length], data[i + 1:i + 1 + length].reshape(-1)
            hidden = tuple(h.detach() for h in hidden)  # truncated backpropagation through time
            optimizer.zero_grad()
            output, hidden = model(inputs, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            hidden = model.init_hidden(4)
            for i in range(0, val_data.size(0) - 1, bptt):
                length = min(bptt, val_data.size(0) - 1 - i)
                output, hidden = model(val_data[i:i + length], hidden)
                total += length * criterion(output, val_data[i + 1:i + 1 + length].reshape(-1)).item()
                count += length
        val_loss = total / count
        if log:
            log(f"epoch {epoch + 1}  train loss {losses[-1]:.4f}  val loss {val_loss:.4f}  "
                f"val ppl {math.exp(val_loss):.2f}")
    return {"initial_state": initial, "losses": losses, "final": val_loss}


def main() -> None:
    parser = argparse.ArgumentParser(
        description="A torch-style LSTM language model over an embedding table, "
                    "unchanged on torch and on lucid.")
    parser.add_argument("--backend", choices=["lucid", "torch"], default=os.environ.get("EXAMPLE_BACKEND", "lucid"))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--device", default="cpu", help='"cpu"; "gpu" (MLX) with lucid, "cuda" with torch')
    args = parser.parse_args()
    torch = importlib.import_module(args.backend)  # `import torch`, or `import lucid as torch`
    val_loss = train(torch, args.epochs, device=args.device, log=print)["final"]
    print(f"done with {args.backend}: validation perplexity {math.exp(val_loss):.2f}")


if __name__ == "__main__":
    main()
