"""
Word embeddings learned from Python's own documentation
=======================================================

Skip-gram with negative sampling, the README's demo. The text is the English that ships with every Python: the docstrings of the standard
library's modules and the reference topics ``help()`` shows (``pydoc_data``), a few hundred
thousand words. Each training example is a word and a word near it; the model learns one
vector per word so that the vectors of words seen together score high and those of random
words (the negatives) score low (Mikolov et al., 2013). The two tables are
``nn.Embedding(sparse=True)``: each step touches a few thousand of their rows, so their
gradients are row-sparse and :class:`lucid.optim.SparseAdam` updates only those rows, with
a learning rate given as a schedule value. At the end it prints the nearest neighbours of a
few words and writes the loss curve to a PNG.

Usage: ``python examples/word2vec.py [--device cpu|gpu] [--steps 1500] [--plot PATH]``
(it needs the ``demo`` extra, ``pip install '.[demo]'``, for tqdm and matplotlib). In a
terminal the progress is tqdm's bar; in a log or a pipe, one plain line every tenth of the
run.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import re
import sys
import sysconfig
import time

import lucid
import lucid.nn as nn
import lucid.optim as optim
from lucid.optim.schedules import cosine

MIN_COUNT, DIM, WINDOW, NEGATIVES, BATCH = 5, 64, 4, 5, 4096
QUERIES = ["file", "thread", "string", "socket", "error", "dictionary", "true", "read"]
_SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "lib2to3"}
_TRIPLE_QUOTED = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)


def stdlib_text():
    """The docstrings (every triple-quoted string) of the standard library, and help()'s topics."""
    texts = []
    for folder, subfolders, files in os.walk(sysconfig.get_paths()["stdlib"]):
        subfolders[:] = sorted(name for name in subfolders if name not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as source:
                    texts += [a or b for a, b in _TRIPLE_QUOTED.findall(source.read())]
    try:
        from pydoc_data.topics import topics
        texts += [topics[key] for key in sorted(topics)]
    except ImportError:  # some distributions package pydoc_data separately
        pass
    return "\n".join(texts)


def build_corpus(text):
    """The corpus as word ids, the vocabulary, and each word's count."""
    words = re.findall(r"[a-z]+", text.lower())
    counts = collections.Counter(words)
    vocab = sorted((w for w, n in counts.items() if n >= MIN_COUNT), key=lambda w: (-counts[w], w))
    index = {w: i for i, w in enumerate(vocab)}
    ids = [index[w] for w in words if w in index]
    return ids, vocab, [counts[w] for w in vocab]


def sampling_tables(counts, device):
    """Keep-probabilities that thin out frequent words, and the unigram^0.75 table for negatives."""
    total = sum(counts)
    keep = [min(1.0, math.sqrt(1e-4 * total / n) + 1e-4 * total / n) for n in counts]
    weights = [n**0.75 for n in counts]
    scale = 1_000_000 / sum(weights)
    table = [i for i, w in enumerate(weights) for _ in range(max(1, round(w * scale)))]
    return lucid.tensor(keep, device=device), lucid.tensor(table, device=device)


class SkipGram(nn.Module):
    """A vector per word as a centre word, and one per word as a context word."""

    def __init__(self, vocab_size, dim):
        super().__init__()
        self.centre = nn.Embedding(vocab_size, dim, sparse=True)
        self.context = nn.Embedding(vocab_size, dim, sparse=True)
        with lucid.no_grad():  # word2vec's start: small centre vectors, zero context vectors
            self.centre.weight.copy_((lucid.rand(vocab_size, dim) - 0.5) / dim)
            self.context.weight.zero_()

    def forward(self, centre, targets, signs):
        """-log sigmoid(sign * centre . target), summed over a word's targets, averaged over words."""
        scores = (self.context(targets) * self.centre(centre).unsqueeze(1)).sum(dim=-1)
        # log(sigmoid(x)) with x clipped to [-10, 10], as word2vec clips at its table's edge
        return -(scores * signs).clamp(-10.0, 10.0).sigmoid().log().sum(dim=1).mean()


def uniform_ints(low, high, *shape, device):
    """Integers drawn uniformly from ``[low, high)`` (float32 rounding can reach ``high``: clamped)."""
    return ((lucid.rand(*shape, device=device) * (high - low)).long() + low).clamp(max=high - 1)


def batches(ids, keep, table, device):
    """Endless batches of (centre word, [context word, negatives...]) drawn at random."""
    ids = ids[lucid.rand(len(ids), device=device) < keep[ids]]  # subsample frequent words once
    length = len(ids)
    while True:
        position = uniform_ints(WINDOW, length - WINDOW, BATCH, device=device)
        distance = uniform_ints(1, WINDOW + 1, BATCH, device=device)
        offset = lucid.where(lucid.rand(BATCH, device=device) < 0.5, distance, -distance)
        negatives = table[uniform_ints(0, len(table), BATCH, NEGATIVES, device=device)]
        yield ids[position], lucid.cat([ids[position + offset].unsqueeze(1), negatives], dim=1)


def nearest(weight, vocab, word, k=6):
    """The ``k`` words whose centre vectors have the highest cosine similarity with ``word``'s."""
    unit = weight / (weight * weight).sum(dim=1, keepdim=True).sqrt()
    similarity = (unit @ unit[vocab.index(word)]).tolist()
    ranked = sorted(range(len(vocab)), key=lambda i: -similarity[i])
    return [vocab[i] for i in ranked if vocab[i] != word][:k]


def plot_loss(losses, path):
    """Draw the loss of every step and its running mean; write the figure to ``path`` unless it is ''."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    window = max(1, len(losses) // 50)
    smooth = [sum(losses[max(0, i - window + 1):i + 1]) / len(losses[max(0, i - window + 1):i + 1])
              for i in range(len(losses))]
    figure, axes = plt.subplots(figsize=(7, 3.5), layout="constrained")
    axes.plot(losses, color="0.8", linewidth=0.8, label="per step")
    axes.plot(smooth, color="C0", label=f"mean of {window} steps")
    axes.set(xlabel="step", ylabel="loss", title="skip-gram with negative sampling, SparseAdam")
    axes.legend()
    if path:
        figure.savefig(path, dpi=120)
    # left open: the docs' gallery shows the open figures


class Progress:
    """The training's progress on stderr: tqdm's bar in a terminal, else a plain line per tenth.

    Outside a terminal (a log, a pipe, CI, the docs' gallery) a bar redrawn with carriage
    returns piles up on one line; there each update is a whole line, ``lines`` of them in all.
    """

    def __init__(self, steps, desc, lines=10):
        self.steps, self.desc = steps, desc
        self.every = max(1, math.ceil(steps / lines))
        self.started = time.perf_counter()
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=steps, desc=desc, unit="step", mininterval=0.1)

    def update(self, step, losses):
        """Step ``step`` (counted from 0) is done; ``losses`` holds the loss of every step so far."""
        done = step + 1
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        if self.bar is not None:
            if step % 20 == 0 or done == self.steps:
                recent = losses[-20:]
                self.bar.set_postfix({"loss": f"{sum(recent) / len(recent):.3f}",
                                      "tokens/s": f"{done * BATCH / elapsed:,.0f}"}, refresh=False)
            self.bar.update(1)
        elif done % self.every == 0 or done == self.steps:
            recent = losses[-self.every:]
            print(f"{self.desc}: {done}/{self.steps} steps, loss={sum(recent) / len(recent):.3f}, "
                  f"tokens/s={done * BATCH / elapsed:,.0f}, {elapsed:.1f} s", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def at_least_one(text):
    """argparse's type for ``--steps``: a whole number, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parse_args(argv=None):
    """The command line, checked: a value that makes no sense is a usage error (exit status 2)."""
    parser = argparse.ArgumentParser(description="Word embeddings learned from the standard library's docstrings.")
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--steps", type=at_least_one, default=1500, help="training steps, 1 or more")
    parser.add_argument("--plot", default="word2vec_loss.png",
                        help="where to write the loss curve, a PNG ('' draws it without writing a file)")
    args = parser.parse_args(argv)
    if args.device == "gpu" and not lucid.is_available("gpu"):
        parser.error("--device gpu needs MLX, which is not installed: pip install '.[mlx]'")
    folder = os.path.dirname(os.path.abspath(args.plot)) if args.plot else ""
    if folder and not os.path.isdir(folder):
        parser.error(f"--plot: there is no folder {folder!r} to write the loss curve into")
    return args


def main():
    args = parse_args()

    started = time.perf_counter()
    lucid.manual_seed(0)
    words, vocab, counts = build_corpus(stdlib_text())
    print(f"corpus: {len(words):,} words of the standard library's documentation, "
          f"{len(vocab):,} distinct words seen {MIN_COUNT}+ times")
    ids = lucid.tensor(words, device=args.device)
    keep, table = sampling_tables(counts, args.device)
    signs = lucid.tensor([1.0] + [-1.0] * NEGATIVES, device=args.device)

    model = SkipGram(len(vocab), DIM).to(args.device)
    optimizer = optim.SparseAdam(model.parameters(), lr=cosine(0.05, args.steps, end=0.005))
    losses, data = [], batches(ids, keep, table, args.device)
    progress = Progress(args.steps, f"training on {args.device}")
    try:
        for step in range(args.steps):
            centre, targets = next(data)
            optimizer.zero_grad()
            loss = model(centre, targets, signs)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            progress.update(step, losses)
    finally:
        progress.close()

    weight = model.centre.weight.detach()
    for word in QUERIES:
        print(f"{word}: {', '.join(nearest(weight, vocab, word))}")
    plot_loss(losses, args.plot)
    where = os.path.abspath(args.plot) if args.plot else "drawn, no file written"
    print(f"loss {losses[0]:.3f} -> {sum(losses[-50:]) / len(losses[-50:]):.3f}; "
          f"loss curve: {where} ({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
