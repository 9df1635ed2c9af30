"""What the check that the processes' collectives agree costs, with 2 processes.

Usage::

    python -m lucid.distributed.run --nproc 2 benchmarks/bench_collective_check.py

Before each collective the processes exchange a 16-byte fingerprint of their call
(lucid/distributed/_agreement.py); DDP checks once per gradient reduction, ZeRO once per
step. Rank 0 prints the median time of each measurement with the check and without it
(the check replaced by nothing, for this benchmark only), interleaved so that both see
the same machine load, and their ratio: the median wall-clock and CPU time per call, and
the wall-clock time of the fastest round:

- ``all_reduce`` of 10M float32 (40 MB);
- ``all_reduce`` of one float32: the fixed cost, the worst case;
- a DDP training step (forward, backward, the gradient reduction, Adam) of an MLP of
  ``--depth`` layers of ``--width`` on a batch of ``--batch`` per process.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import lucid
import lucid.distributed as dist
import lucid.nn.functional as F
from lucid import nn, optim
from lucid.distributed import collectives
from lucid.nn.parallel import DistributedDataParallel as DDP


@contextlib.contextmanager
def unchecked():
    """Collectives without the agreement check (what lucid did before it)."""
    saved = collectives._agree
    collectives._agree = lambda call, group: None
    try:
        yield
    finally:
        collectives._agree = saved


def paired_medians(run, rounds: int, per_round: int) -> dict:
    """Median wall and CPU seconds per call of ``run`` with the check and without,
    interleaved round by round (CPU time: this process's, which other jobs on a busy
    machine disturb less than the wall clock)."""
    times: dict = {(kind, clock): [] for kind in ("checked", "plain") for clock in ("wall", "cpu")}
    for _ in range(rounds):
        for kind, context in (("checked", contextlib.nullcontext()), ("plain", unchecked())):
            with context:
                wall, cpu = time.perf_counter(), time.process_time()
                for _ in range(per_round):
                    run()
                times[kind, "wall"].append((time.perf_counter() - wall) / per_round)
                times[kind, "cpu"].append((time.process_time() - cpu) / per_round)
    medians = {key: statistics.median(values) for key, values in times.items()}
    # the fastest round: the cost with the least disturbance from other jobs
    medians.update({(kind, "best"): min(times[kind, "wall"]) for kind in ("checked", "plain")})
    return medians


def row(what: str, medians: dict, unit: float, unit_name: str) -> str:
    cells = []
    for clock in ("wall", "cpu", "best"):
        checked, plain = medians["checked", clock], medians["plain", clock]
        cells.append(f"{checked / unit:.3f} | {plain / unit:.3f} | {checked / plain:.3f}")
    return f"| {what} ({unit_name}) | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numel", type=int, default=10_000_000)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    dist.init_process_group("ring")
    rows = []

    big = lucid.ones(args.numel)
    run = lambda: dist.all_reduce(big)  # noqa: E731 - the measured call
    run()
    rows.append(row(f"all_reduce of {args.numel:,} float32", paired_medians(run, args.rounds, 1), 1e-3, "ms"))

    one = lucid.ones(1)
    run = lambda: dist.all_reduce(one)  # noqa: E731
    rows.append(row("all_reduce of 1 float32", paired_medians(run, args.rounds, 50), 1e-6, "µs"))

    lucid.manual_seed(0)
    layers = []
    for _ in range(args.depth):
        layers += [nn.Linear(args.width, args.width), nn.Tanh()]
    model = DDP(nn.Sequential(*layers, nn.Linear(args.width, 1)))
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    x, y = lucid.randn(args.batch, args.width), lucid.randn(args.batch, 1)

    def step():
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

    step()
    params = sum(p.numel() for p in model.parameters())
    rows.append(row(f"DDP step, MLP of {params:,} parameters", paired_medians(step, args.rounds, 2), 1e-3, "ms"))
    if dist.get_rank() == 0:
        print(f"{dist.get_world_size()} processes, median of {args.rounds} interleaved rounds")
        print("| measurement | wall, checked | wall, without | ratio | CPU, checked | CPU, without | ratio "
              "| fastest round, checked | fastest, without | ratio |")
        print("| --- " * 10 + "|")
        print("\n".join(rows), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
