"""cProfile the training step of ``bench_optim_step.py`` (lucid "cpu"): where a step's time goes.

Usage::

    python benchmarks/profile_training_step.py              # top 25 by own time
    python benchmarks/profile_training_step.py --sort cumtime --top 40

Prints the step's plain time (no profiler), the Python function calls per step, the graph
nodes one step records and the microseconds per node, then cProfile's top entries with
their calls per step. Timings under cProfile are inflated by its per-call cost; compare
call counts and shares, and take speed from ``bench_optim_step.py --only training``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_optim_step import training_step  # noqa: E402

from lucid import _autograd  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=50, help="steps timed and profiled (default 50)")
    parser.add_argument("--sort", default="tottime", help="pstats sort key (default tottime)")
    parser.add_argument("--top", type=int, default=25, help="entries printed (default 25)")
    args = parser.parse_args(argv)
    step = training_step("lucid")
    for _ in range(5):
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    ms = (time.perf_counter() - start) / args.steps * 1e3

    nodes = 0
    record = _autograd.Node.__init__

    def counting(self, *a, **k):
        nonlocal nodes
        nodes += 1
        record(self, *a, **k)

    _autograd.Node.__init__ = counting
    step()
    _autograd.Node.__init__ = record

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.steps):
        step()
    profile.disable()
    stats = pstats.Stats(profile)
    print(f"{ms:.2f} ms per step (no profiler); {stats.total_calls / args.steps:.0f} function calls per step; "
          f"{nodes} graph nodes per step, {ms * 1e3 / nodes:.1f} us of step per node\n")
    out = io.StringIO()
    stats.stream = out
    stats.sort_stats(args.sort).print_stats(args.top)
    print(f"(ncalls are over {args.steps} steps)")
    print(out.getvalue()[out.getvalue().index("ncalls"):] if "ncalls" in out.getvalue() else out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
