"""
Training on several processes
=============================

One model on several processes: DistributedDataParallel and a sharded AdamW.
Each process draws its own quarter (half, ...) of every batch, DistributedDataParallel
averages the gradients, and ZeroRedundancyOptimizer keeps each process's share of AdamW's
moments only. At the end rank 0 gathers the whole optimizer state, as a checkpoint would.
The task is synthetic: points of four Gaussian clusters in 8 dimensions, labelled by
their cluster.

Usage:

    python -m lucid.distributed.run --nproc 2 examples/train_distributed.py [--steps 200]

(``python examples/train_distributed.py`` alone runs it as a world of one process.)
"""

from __future__ import annotations

import argparse

import lucid
import lucid.distributed as dist
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.optim as optim
from lucid.distributed.optim import ZeroRedundancyOptimizer
from lucid.nn.parallel import DistributedDataParallel as DDP

CLASSES, DIM = 4, 8


def make_batch(size: int, centres):
    labels = (lucid.rand(size) * CLASSES).long()
    return centres[labels] + lucid.randn(size, DIM), labels


def main() -> None:
    parser = argparse.ArgumentParser(description="Train one model on several processes: DDP and a sharded AdamW.")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64, help="the global batch, split among the processes")
    args = parser.parse_args()

    dist.init_process_group()  # "any": the launcher's ring, or a world of one process
    rank, world = dist.get_rank(), dist.get_world_size()
    lucid.manual_seed(0)
    centres = lucid.randn(CLASSES, DIM)  # the same task on every process
    lucid.manual_seed(1 + rank)  # each process its own data (and initial weights: DDP takes rank 0's)
    model = DDP(nn.Sequential(nn.Linear(DIM, 32), nn.Tanh(), nn.Linear(32, CLASSES)))
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optim.AdamW, lr=0.02, weight_decay=0.01)
    schedule = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)

    for step in range(1, args.steps + 1):
        x, y = make_batch(args.batch // world, centres)
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        schedule.step()
        if step % 50 == 0 or step == 1:
            accuracy = (logits.max(dim=1).indices == y).float().mean().item()
            stats = lucid.tensor([loss.item(), accuracy])
            dist.all_reduce(stats, op=dist.ReduceOp.AVG)  # averaged over the processes
            if rank == 0:
                print(f"step {step:4d}  loss {stats[0].item():.4f}  accuracy {stats[1].item():.3f}", flush=True)

    optimizer.consolidate_state_dict(to=0)
    if rank == 0:
        state = optimizer.state_dict()
        held = len(optimizer.optim.state)
        print(f"done on {world} processes: rank 0 kept moments for {held} of "
              f"{len(list(model.parameters()))} parameters; consolidated {len(state['state'])}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
