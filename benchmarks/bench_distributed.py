"""Step time and optimizer-state memory per process, for 1, 2 and 4 processes.

Usage (each line one job; rank 0 prints one result line):

    python -m lucid.distributed.run --nproc 1 benchmarks/bench_distributed.py
    python -m lucid.distributed.run --nproc 2 benchmarks/bench_distributed.py
    python -m lucid.distributed.run --nproc 4 benchmarks/bench_distributed.py

or ``python benchmarks/bench_distributed.py --all`` to run the three and print a table.

One global batch (``--batch``, split evenly) through an MLP (``--depth`` layers of
``--width``) on "cpu" in float32: the median time of a whole step (forward, backward,
DDP's gradient average, Adam or ZeroRedundancyOptimizer(Adam)), and the bytes of
optimizer state each process holds. On a shared machine with fewer cores than processes, the times measure the
communication and scheduling overhead more than any speed-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import lucid
import lucid.distributed as dist
import lucid.nn.functional as F
from lucid import nn, optim
from lucid.distributed.optim import ZeroRedundancyOptimizer
from lucid.nn.parallel import DistributedDataParallel as DDP


def state_bytes(optimizer) -> int:
    return sum(v.numel() * v.dtype.itemsize for s in optimizer.state.values() for v in s.values()
               if isinstance(v, lucid.Tensor))


def median_step_ms(step, steps: int) -> float:
    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        dist.barrier()
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def measure(args) -> str:
    rank, world = dist.get_rank(), dist.get_world_size()
    lucid.manual_seed(0)
    x = lucid.randn(args.batch, args.width)
    y = lucid.randn(args.batch, 1)
    part = args.batch // world
    x, y = x[rank * part:(rank + 1) * part], y[rank * part:(rank + 1) * part]
    results = []
    for kind in ("Adam", "ZeRO-Adam"):
        lucid.manual_seed(1)
        layers = []
        for _ in range(args.depth):
            layers += [nn.Linear(args.width, args.width), nn.Tanh()]
        model = DDP(nn.Sequential(*layers, nn.Linear(args.width, 1)))
        if kind == "Adam":
            optimizer = optim.Adam(model.parameters(), lr=1e-3)
        else:
            optimizer = ZeroRedundancyOptimizer(model.parameters(), optim.Adam, lr=1e-3)

        def step():
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()

        ms = median_step_ms(step, args.steps)
        held = state_bytes(optimizer.optim if kind == "ZeRO-Adam" else optimizer)
        every = [None] * world
        dist.all_gather_object(every, held)
        per_rank = ", ".join(f"{b / 2**20:.2f}" for b in every)
        results.append(f"{kind} {ms:.1f} ms/step, state per process [{per_rank}] MiB")
    params = sum(p.numel() for p in model.parameters())
    return f"world {world}: {params} parameters, batch {args.batch}: " + "; ".join(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--depth", type=int, default=4, help="hidden layers of width x width")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--all", action="store_true", help="run with 1, 2 and 4 processes")
    args, rest = parser.parse_known_args()
    if args.all:
        # one BLAS thread per process in every run, as the launcher sets for several
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        for nproc in (1, 2, 4):
            subprocess.run([sys.executable, "-m", "lucid.distributed.run", "--nproc", str(nproc),
                            os.path.abspath(__file__), *[a for a in sys.argv[1:] if a != "--all"]],
                           check=True, env=env)
        return
    dist.init_process_group("ring" if "MLX_RANK" in os.environ else "any")
    line = measure(args)
    if dist.get_rank() == 0:
        print(line, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
