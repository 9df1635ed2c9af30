"""Embedding tables at scale: forward + backward + optimizer step, lucid against torch, in one run.

Usage: python benchmarks/bench_sparse_embedding.py [--rows 100000,1000000] [--steps 15] [--warmup 3]

Workload (as ../shared/bench/bench_sparse_embedding.py): a table of V rows x 64 float32, a
batch of 4,096 indices drawn from a power law (p(rank r) ~ 1/(r+1)^1.05, mapped through a
fixed random permutation, so batches repeat hot rows), 8 pre-drawn batches cycled, loss
``table[idx].sum()``. One step is ``zero_grad`` + forward + backward + ``step``; each stage
is timed, and the table prints the median total and the per-stage medians (ms).

Rows, all on the CPU with torch on one thread (``torch.set_num_threads(1)``; NumPy is
single-threaded):

- lucid ``Embedding(sparse=True)`` + ``SparseAdam`` (device "cpu", NumPy)
- lucid dense ``Embedding`` + ``SparseAdam`` (the nonzero-row rule on a dense gradient)
- torch ``Embedding(sparse=True)`` + ``SparseAdam``
- torch dense ``Embedding`` + ``Adam(fused=True)``

then the ratios the targets name. The box may be noisy: run it several times.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import time

import numpy as np

import lucid
from lucid import nn, optim

D, BATCH, NBATCH = 64, 4096, 8
LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8
STAGES = ("zero_grad", "fwd", "bwd", "step")


def make_batches(rows: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, rows + 1, dtype=np.float64) ** 1.05
    weights /= weights.sum()
    ranks = rng.choice(rows, size=(NBATCH, BATCH), p=weights)
    perm = rng.permutation(rows)
    return [perm[r].astype(np.int64) for r in ranks]


def init_table(rows: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, D), dtype=np.float32)


def _timed(stages, run_step, steps, warmup):
    times = {k: [] for k in STAGES}
    for it in range(warmup + steps):
        marks = run_step(it)
        if it >= warmup:
            for k, dt in zip(STAGES, np.diff(marks)):
                times[k].append(dt * 1e3)
    return times


def lucid_run(rows, batches, steps, warmup, sparse):
    emb = nn.Embedding.from_pretrained(lucid.tensor(init_table(rows)), freeze=False, sparse=sparse)
    opt = optim.SparseAdam(emb.parameters(), lr=LR, betas=BETAS, eps=EPS)
    index = [lucid.tensor(b) for b in batches]

    def run_step(it):
        t0 = time.perf_counter()
        opt.zero_grad()
        t1 = time.perf_counter()
        loss = emb(index[it % NBATCH]).sum()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        t4 = time.perf_counter()
        return (t0, t1, t2, t3, t4)

    return _timed(STAGES, run_step, steps, warmup), emb


def torch_run(rows, batches, steps, warmup, sparse):
    import torch

    emb = torch.nn.Embedding(rows, D, sparse=sparse)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(init_table(rows)))
    if sparse:
        opt = torch.optim.SparseAdam(emb.parameters(), lr=LR, betas=BETAS, eps=EPS)
    else:
        opt = torch.optim.Adam(emb.parameters(), lr=LR, betas=BETAS, eps=EPS, fused=True)
    index = [torch.from_numpy(b) for b in batches]

    def run_step(it):
        t0 = time.perf_counter()
        opt.zero_grad()
        t1 = time.perf_counter()
        loss = emb(index[it % NBATCH]).sum()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        t4 = time.perf_counter()
        return (t0, t1, t2, t3, t4)

    return _timed(STAGES, run_step, steps, warmup), emb


def check() -> str:
    """lucid's sparse and dense SparseAdam against torch's, 4 steps on a 20k-row table."""
    rows = 20_000
    batches = make_batches(rows)
    _, ours = lucid_run(rows, batches, 4, 0, sparse=True)
    _, dense = lucid_run(rows, batches, 4, 0, sparse=False)
    _, theirs = torch_run(rows, batches, 4, 0, sparse=True)
    ref = theirs.weight.detach().numpy()
    return (f"max |lucid - torch| after 4 steps: sparse {np.abs(np.array(ours.weight.detach()) - ref).max():.1e}, "
            f"dense {np.abs(np.array(dense.weight.detach()) - ref).max():.1e}")


def summarize(times):
    totals = [sum(times[k][i] for k in STAGES) for i in range(len(times["step"]))]
    return statistics.median(totals), min(totals), max(totals), {k: statistics.median(v) for k, v in times.items()}


def main(argv=None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000", help="comma-separated table sizes")
    parser.add_argument("--steps", type=int, default=15, help="timed steps per row (at least 10)")
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    steps = max(10, args.steps)
    print(f"# bench_sparse_embedding | python {platform.python_version()} numpy {np.__version__} "
          f"torch {torch.__version__} (threads {torch.get_num_threads()}) | D {D} batch {BATCH} | "
          f"loadavg {os.getloadavg()[0]:.2f}")
    print(f"# {check()}")
    runs = [
        ("lucid sparse=True + SparseAdam", lambda V, b: lucid_run(V, b, steps, args.warmup, True)),
        ("lucid dense + SparseAdam", lambda V, b: lucid_run(V, b, steps, args.warmup, False)),
        ("torch sparse=True + SparseAdam", lambda V, b: torch_run(V, b, steps, args.warmup, True)),
        ("torch dense + Adam(fused=True)", lambda V, b: torch_run(V, b, steps, args.warmup, False)),
    ]
    table = {}
    sizes = [int(v) for v in args.rows.split(",")]
    for rows in sizes:
        batches = make_batches(rows)
        unique = statistics.median(len(np.unique(b)) for b in batches)
        print(f"\n## V = {rows:,} x {D} ({rows * D * 4 / 1e6:.1f} MB), median unique rows per batch {unique:.0f}")
        print(f"{'':34s} {'median ms':>9s} {'min':>7s} {'max':>7s}   per-stage medians (ms)")
        for name, run in runs:
            times, _ = run(rows, batches)
            gc.collect()
            total, lo, hi, stages = summarize(times)
            table[name, rows] = total
            per = "  ".join(f"{k} {v:.2f}" for k, v in stages.items())
            print(f"{name:34s} {total:9.2f} {lo:7.2f} {hi:7.2f}   {per}", flush=True)
    big, small = max(sizes), min(sizes)
    print("\n## targets")
    sparse, dense = table["lucid sparse=True + SparseAdam", big], table["lucid dense + SparseAdam", big]
    print(f"lucid sparse / torch sparse at {big:,}: {sparse / table['torch sparse=True + SparseAdam', big]:.2f}x"
          " (target <= 1.0)")
    if big != small:
        print(f"lucid sparse growth {small:,} -> {big:,}: "
              f"{sparse / table['lucid sparse=True + SparseAdam', small]:.2f}x (target <= 1.3)")
    print(f"lucid dense SparseAdam / torch dense fused Adam at {big:,}: "
          f"{dense / table['torch dense + Adam(fused=True)', big]:.2f}x (target <= 0.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
