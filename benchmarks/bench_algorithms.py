"""Compare optimization algorithms on three small offline workloads: steps and seconds to a target loss.

Usage::

    python benchmarks/bench_algorithms.py                   # the table (about 6 minutes on one core)
    python benchmarks/bench_algorithms.py --plot curves.png # and the loss curves, one panel a workload
    python benchmarks/bench_algorithms.py --quick           # tiny budgets, one seed: checks it runs

The workloads, each made here from a seed, with nothing downloaded:

* ``char_lm``: a character-level transformer language model (examples/char_gpt.py's
  nanoGPT layout, 2 blocks, width 32, context 16, batch 16) on sentences of a small grammar;
  the loss is the cross-entropy on a fixed held-out batch.
* ``mlp``: an MLP classifier (32 -> 64 -> 64 -> 10, ReLU, batch 64) on Gaussian inputs labelled
  by a random teacher network; the loss is the cross-entropy on 1,024 held-out points.
* ``recommender``: an embedding-table recommender (examples/sparse_recommender.py's data:
  200 users, 300 items, dimension 8, a small dense head, batch 128) with dense gradients, so
  that every algorithm can train the tables; the loss is the BCE on 512 held-out rows.

The algorithms:

* ``AdamW (tuned)``: AdamW over a small learning-rate grid; the row is the best grid point by
  median steps to the target (then by final loss);
* ``AdamW warmup+cosine``: AdamW at the tuned rate with 5% linear warmup and a cosine decay to 0
  over the budget (lucid's schedule values);
* ``Schedule-Free AdamW``, ``Prodigy``, ``SOAP``: their defaults, untuned (Prodigy's lr is 1.0);
* ``Muon+AdamW``: Muon for the hidden matrices and AdamW for the rest, as routed by
  ``MuonWithAdamW.from_module`` with its defaults.

Every run evaluates the held-out loss every ``eval_every`` steps (Schedule-Free at its
evaluation weights, ``optimizer.eval()``); "steps to target" is the first evaluated step whose
loss is at most the workload's target, "seconds" the training time up to it (evaluation not
counted). Cells are medians over the seeds of the runs that reached the target, with the
count that did; the final loss is the median over all seeds. All runs: lucid on "cpu",
float32, one thread.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")  # NumPy's BLAS on one thread: set before NumPy loads

import numpy as np  # noqa: E402

import lucid  # noqa: E402
from lucid import nn, optim  # noqa: E402
from lucid.optim.schedules import cosine, warmup  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import char_gpt  # noqa: E402
import sparse_recommender  # noqa: E402


@dataclass
class Run:
    """What one run measured."""

    steps: list[int]        # the evaluated steps
    losses: list[float]     # the held-out loss at each
    seconds: list[float]    # training seconds up to each
    target: float

    def reached(self) -> tuple[int, float] | None:
        for step, loss, seconds in zip(self.steps, self.losses, self.seconds):
            if loss <= self.target:
                return step, seconds
        return None


# ---------------------------------------------------------------------------------------------
# the workloads: each makes (model, next_batch(rng) -> loss, held_out_loss()) from a seed


class CharLM:
    name, target = "char_lm", 0.45
    block, batch = 16, 16

    def __init__(self) -> None:
        text, val_text = char_gpt.make_text(400, seed=0), char_gpt.make_text(60, seed=1)
        self.chars = sorted(set(text + val_text))
        stoi = {c: i for i, c in enumerate(self.chars)}
        self.data, val = [stoi[c] for c in text], [stoi[c] for c in val_text]
        self.val = char_gpt.get_batch(lucid, val, self.block, 64, random.Random(1), "cpu")

    def model(self, seed: int) -> nn.Module:
        lucid.manual_seed(seed)
        return char_gpt.make_model(lucid, len(self.chars), self.block, 2, 4, 32, 0.0, "gelu")

    def loss(self, model, rng: random.Random):
        x, y = char_gpt.get_batch(lucid, self.data, self.block, self.batch, rng, "cpu")
        return model(x, y)[1]

    def held_out(self, model) -> float:
        return model(*self.val)[1].item()


class MLP:
    name, target = "mlp", 0.62
    dim, classes, batch = 32, 10, 64

    def __init__(self) -> None:
        rng = np.random.default_rng(0)
        w1 = rng.standard_normal((self.dim, 32)) / math.sqrt(self.dim)
        w2 = rng.standard_normal((32, self.classes)) / math.sqrt(32)
        self.teacher = lambda x: np.argmax(np.tanh(x @ w1) @ w2, axis=1)
        x = rng.standard_normal((1024, self.dim)).astype(np.float32)
        self.val = (lucid.tensor(x), lucid.tensor(self.teacher(x)))

    def model(self, seed: int) -> nn.Module:
        lucid.manual_seed(seed)
        return nn.Sequential(nn.Linear(self.dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                             nn.Linear(64, self.classes))

    def loss(self, model, rng: random.Random):
        x = np.random.default_rng(rng.getrandbits(32)).standard_normal((self.batch, self.dim)).astype(np.float32)
        return nn.functional.cross_entropy(model(lucid.tensor(x)), lucid.tensor(self.teacher(x)))

    def held_out(self, model) -> float:
        return nn.functional.cross_entropy(model(self.val[0]), self.val[1]).item()


class Recommender:
    name, target = "recommender", 0.52
    batch = 128
    users, items, dim = sparse_recommender.USERS, sparse_recommender.ITEMS, sparse_recommender.DIM

    def __init__(self) -> None:
        self.rows = sparse_recommender.make_interactions(8192, seed=0)
        self.val = sparse_recommender.to_batch(lucid, sparse_recommender.make_interactions(512, seed=1),
                                               lucid.float32, "cpu")

    def model(self, seed: int) -> nn.Module:
        lucid.manual_seed(seed)
        users, items, dim = self.users, self.items, self.dim

        class Recommender(nn.Module):
            def __init__(self):
                super().__init__()
                self.user_table = nn.Embedding(users, dim)
                self.item_table = nn.Embedding(items, dim)
                self.history = nn.EmbeddingBag(items, dim, mode="mean")
                self.history.weight = self.item_table.weight
                self.head = nn.Sequential(nn.Linear(3 * dim, 16), nn.ReLU(), nn.Linear(16, 1))
                with lucid.no_grad():
                    self.user_table.weight.mul_(0.1)
                    self.item_table.weight.mul_(0.1)

            def forward(self, users, items, history, offsets):
                u, v = self.user_table(users), self.item_table(items)
                h = self.history(history, offsets)
                return self.head(lucid.cat([u * v, h * v, u + h], dim=1)).squeeze(1)

        return Recommender()

    def loss(self, model, rng: random.Random):
        rows = rng.sample(self.rows, self.batch)
        users, items, labels, history, offsets = sparse_recommender.to_batch(lucid, rows, lucid.float32, "cpu")
        return nn.functional.binary_cross_entropy_with_logits(model(users, items, history, offsets), labels)

    def held_out(self, model) -> float:
        users, items, labels, history, offsets = self.val
        return nn.functional.binary_cross_entropy_with_logits(model(users, items, history, offsets), labels).item()


WORKLOADS = {w.name: w for w in (CharLM, MLP, Recommender)}


# ---------------------------------------------------------------------------------------------
# the algorithms: each makes an optimizer for a model, given the budget and the tuned AdamW lr

ADAMW_GRID = (1e-3, 3e-3, 1e-2)


def adamw(lr):
    return lambda model, steps: optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)


def adamw_warmup_cosine(lr):
    def make(model, steps):
        return optim.AdamW(model.parameters(), lr=warmup(max(1, steps // 20), cosine(lr, steps - steps // 20)),
                           weight_decay=0.01)
    return make


UNTUNED = {
    "Schedule-Free AdamW": lambda model, steps: optim.AdamWScheduleFree(model.parameters()),
    "Prodigy": lambda model, steps: optim.Prodigy(model.parameters(), lr=1.0),
    "SOAP": lambda model, steps: optim.SOAP(model.parameters()),
    "Muon+AdamW": lambda model, steps: optim.MuonWithAdamW.from_module(model),
}


def run(workload, make_optimizer, seed: int, steps: int, eval_every: int) -> Run:
    model = workload.model(seed)
    optimizer = make_optimizer(model, steps)
    has_modes = hasattr(optimizer, "eval") and hasattr(optimizer, "train")  # Schedule-Free
    rng = random.Random(seed)
    result = Run([], [], [], workload.target)
    trained = 0.0
    for step in range(1, steps + 1):
        start = time.perf_counter()
        loss = workload.loss(model, rng)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        trained += time.perf_counter() - start
        if step % eval_every == 0 or step == steps:
            if has_modes:
                optimizer.eval()
            with lucid.no_grad():
                held_out = workload.held_out(model)
            if has_modes:
                optimizer.train()
            result.steps.append(step)
            result.losses.append(held_out if math.isfinite(held_out) else math.inf)
            result.seconds.append(trained)
    return result


def summarise(runs: list[Run]) -> dict:
    reached = [r.reached() for r in runs]
    hits = [r for r in reached if r is not None]
    return {
        "reached": len(hits),
        "steps": statistics.median(h[0] for h in hits) if hits else None,
        "seconds": statistics.median(h[1] for h in hits) if hits else None,
        "final": statistics.median(r.losses[-1] for r in runs),
        "curve": np.median(np.array([r.losses for r in runs]), axis=0),
        "curve_steps": runs[0].steps,
    }


def better(a: dict, b: dict) -> bool:
    """Is summary ``a`` better than ``b``: more seeds reached the target, then fewer steps, then lower loss."""
    key = lambda s: (-s["reached"], s["steps"] if s["steps"] is not None else math.inf, s["final"])  # noqa: E731
    return key(a) < key(b)


def compare(workload, seeds: list[int], steps: int, eval_every: int, log=print) -> dict[str, dict]:
    results: dict[str, dict] = {}
    tuned = None
    for lr in ADAMW_GRID:
        summary = summarise([run(workload, adamw(lr), seed, steps, eval_every) for seed in seeds])
        summary["lr"] = lr
        log(f"  {workload.name}: AdamW lr={lr:g}: final {summary['final']:.4f}, reached {summary['reached']}")
        if tuned is None or better(summary, tuned):
            tuned = summary
    results[f"AdamW (tuned, lr={tuned['lr']:g})"] = tuned
    algorithms = {"AdamW warmup+cosine": adamw_warmup_cosine(tuned["lr"]), **UNTUNED}
    for name, make in algorithms.items():
        results[name] = summarise([run(workload, make, seed, steps, eval_every) for seed in seeds])
        log(f"  {workload.name}: {name}: final {results[name]['final']:.4f}, reached {results[name]['reached']}")
    return results


def table(name: str, target: float, steps: int, seeds: int, results: dict[str, dict]) -> str:
    def cell(value, fmt):
        return "—" if value is None else format(value, fmt)

    lines = [f"### {name}: held-out loss target {target:g}, budget {steps} steps, {seeds} seeds", "",
             "| algorithm | reached | steps to target | seconds to target | final loss |",
             "| --- | --- | --- | --- | --- |"]
    for algorithm, s in results.items():
        lines.append(f"| {algorithm} | {s['reached']}/{seeds} | {cell(s['steps'], '.0f')} | "
                     f"{cell(s['seconds'], '.2f')} | {s['final']:.4f} |")
    return "\n".join(lines)


def plot(path: str, everything: dict[str, dict[str, dict]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(everything), figsize=(5 * len(everything), 4))
    for ax, (name, results) in zip(np.atleast_1d(axes), everything.items()):
        for algorithm, s in results.items():
            ax.plot(s["curve_steps"], s["curve"], label=algorithm)
        ax.axhline(WORKLOADS[name].target, color="grey", linestyle=":", linewidth=1)
        ax.set_title(name)
        ax.set_xlabel("step")
        ax.set_ylabel("held-out loss (median over seeds)")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


BUDGETS = {"char_lm": (400, 25), "mlp": (600, 25), "recommender": (600, 25)}  # steps, eval_every


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny budgets and one seed: checks it runs")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append", help="a workload (repeatable)")
    parser.add_argument("--plot", help="write the median loss curves to this PNG file")
    args = parser.parse_args(argv)
    seeds = [0] if args.quick else list(range(args.seeds))
    print(f"# Algorithms compared: lucid {lucid.__version__}, cpu, float32, one thread, seeds {seeds}\n")
    everything = {}
    started = time.perf_counter()
    for name in args.only or WORKLOADS:
        workload = WORKLOADS[name]()
        steps, eval_every = (10, 5) if args.quick else BUDGETS[name]
        everything[name] = compare(workload, seeds, steps, eval_every, log=lambda m: print(m, file=sys.stderr))
        print(table(name, workload.target, steps, len(seeds), everything[name]), "\n", flush=True)
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.plot:
        plot(args.plot, everything)
    return 0


if __name__ == "__main__":
    sys.exit(main())
