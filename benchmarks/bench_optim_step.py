"""Time ``optimizer.step()``: lucid against torch.optim and mlx.optimizers, in one interleaved run.

Usage::

    python benchmarks/bench_optim_step.py            # the full table (a few minutes)
    python benchmarks/bench_optim_step.py --quick    # small layouts, few samples: checks it runs

Everyone runs on one thread (torch.set_num_threads(1); NumPy and numba are single-threaded),
float32, gradients already set, over the same layouts. Contenders are timed round-robin,
one sample each per round, so a noisy neighbour slows all of them alike; a sample repeats
the call until it lasts at least 2 ms. Cells are median milliseconds per step, and ratios
are lucid's time over the other's, from the same run.

1. lucid "cpu" (numba, or NumPy with LUCID_JIT=0) against torch fused and torch's default
   (the for-loop) for SGD-momentum, Adam, AdamW, Adagrad and RMSprop, with the multiple of
   the memory floor: the bytes a step must read and write once (28 B per parameter for
   Adam, 20 for the others) at the bandwidth of an in-place add measured in this run.
2. lucid "gpu" against mlx.optimizers, eager and under mx.compile (Linux's MLX is a CPU
   build: compare ratios only).
3. A training step: 50 x (Linear(64, 64) + Tanh), batch 32, zero_grad, forward, MSE,
   backward and Adam, against torch fused and torch's default.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import time

import numpy as np

import lucid
from lucid import nn, optim

OPTIMIZERS = {
    "SGD-momentum": ("SGD", {"lr": 1e-3, "momentum": 0.9}, 20),
    "Adam": ("Adam", {"lr": 1e-3}, 28),
    "AdamW": ("AdamW", {"lr": 1e-3}, 28),
    "Adagrad": ("Adagrad", {"lr": 1e-2}, 20),
    "RMSprop": ("RMSprop", {"lr": 1e-2}, 20),
}
LAYOUTS = {"1 x 1e6": [(1_000_000,)], "1 x 1e7": [(10_000_000,)], "500 x 2000": [(2000,)] * 500,
           "50 x 64x64": [(64, 64)] * 50}
QUICK_LAYOUTS = {"1 x 1e4": [(10_000,)], "4 x 8x8": [(8, 8)] * 4}


MIN_SAMPLE_SECONDS = 2e-3


def interleaved_medians(contenders: dict, samples: int, warmup: int = 3, clock=time.perf_counter) -> dict:
    """Median ms per call of each contender, sampled round-robin (one sample of each per round),
    timed by ``clock`` (wall time; ``time.thread_time``, the CPU time of this thread, counts
    only this thread's work where other processes share the cores)."""
    min_seconds = MIN_SAMPLE_SECONDS
    repeats = {}
    for name, fn in contenders.items():
        for _ in range(warmup):
            fn()
        start = clock()
        fn()
        once = max(clock() - start, 1e-7)
        repeats[name] = max(1, int(min_seconds / once))
    times = {name: [] for name in contenders}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(samples):
            for name, fn in contenders.items():
                start = clock()
                for _ in range(repeats[name]):
                    fn()
                times[name].append((clock() - start) / repeats[name] * 1e3)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(values) for name, values in times.items()}


def bandwidth_gbs(elements: int, samples: int) -> float:
    """GB/s of NumPy's in-place ``a += b`` (read a and b, write a) over arrays of ``elements`` float32."""
    a, b = np.ones(elements, np.float32), np.ones(elements, np.float32)
    ms = interleaved_medians({"add": lambda: np.add(a, b, out=a)}, samples)["add"]
    return 3 * 4 * elements / (ms * 1e-3) / 1e9


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes], \
        [rng.standard_normal(s).astype(np.float32) for s in shapes]


def lucid_step(name, kwargs, shapes, device):
    values, grads = _arrays(shapes)
    params = [nn.Parameter(lucid.tensor(v, device=device)) for v in values]
    for p, g in zip(params, grads):
        p.grad = lucid.tensor(g, device=device)
    return getattr(optim, name)(params, **kwargs).step


def torch_step(name, kwargs, shapes, **flags):
    import torch

    values, grads = _arrays(shapes)
    params = [torch.tensor(v, requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g)
    return getattr(torch.optim, name)(params, **kwargs, **flags).step


def mlx_step(name, kwargs, shapes, compiled: bool):
    import mlx.core as mx
    import mlx.optimizers as mo

    values, grads = _arrays(shapes)
    params = {str(i): mx.array(v) for i, v in enumerate(values)}
    grads = {str(i): mx.array(g) for i, g in enumerate(grads)}
    lr = kwargs["lr"]
    optimizer = {"SGD": lambda: mo.SGD(lr, momentum=kwargs.get("momentum", 0.0)),
                 "Adam": lambda: mo.Adam(lr, bias_correction=True),  # torch's Adam
                 "AdamW": lambda: mo.AdamW(lr, bias_correction=True),
                 "Adagrad": lambda: mo.Adagrad(lr, eps=1e-10),  # torch's eps (MLX's default is 1e-8)
                 "RMSprop": lambda: mo.RMSprop(lr)}[name]()
    optimizer.init(params)
    mx.eval(params, optimizer.state)
    state = [params, optimizer.state]

    def update(grads):
        params.update(optimizer.apply_gradients(grads, params))

    if compiled:
        update = functools.partial(mx.compile, inputs=state, outputs=state)(update)

    def step():
        update(grads)
        mx.eval(state)

    return step


def training_step(framework: str, flags=None, depth=50, width=64, batch=32):
    """One zero_grad + forward + MSE + backward + Adam step of depth x (Linear(width, width) + Tanh)."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((batch, width)).astype(np.float32), rng.standard_normal((batch, width)).astype(np.float32)
    if framework == "torch":
        import torch

        layers = []
        for _ in range(depth):
            layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
        model, x, y = torch.nn.Sequential(*layers), torch.tensor(x), torch.tensor(y)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, **(flags or {}))
        loss_fn = torch.nn.functional.mse_loss
    else:
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.Tanh()]
        model, x, y = nn.Sequential(*layers), lucid.tensor(x), lucid.tensor(y)
        optimizer = optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.functional.mse_loss

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return step


def _cell(value):
    return "—" if value is None else f"{value:.3f}"


def _ratio(a, b):
    return "—" if a is None or b is None else f"{a / b:.2f}x"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small layouts and few samples: checks that it runs")
    parser.add_argument("--samples", type=int, default=None, help="samples per contender (default 15, quick 3)")
    parser.add_argument("--optimizers", default=",".join(OPTIMIZERS), help="a comma-separated subset")
    parser.add_argument("--no-gpu", action="store_true", help="skip the MLX tables")
    parser.add_argument("--only", choices=("cpu", "gpu", "training"), default=None,
                        help="print one table: 1 (cpu), 2 (gpu) or 3 (training step)")
    args = parser.parse_args(argv)
    samples = args.samples or (2 if args.quick else 15)
    global MIN_SAMPLE_SECONDS
    MIN_SAMPLE_SECONDS = 0.0 if args.quick else 2e-3
    layouts = QUICK_LAYOUTS if args.quick else LAYOUTS
    names = [n for n in args.optimizers.split(",") if n]

    import torch

    torch.set_num_threads(1)
    floor_elements = 100_000 if args.quick else 25_000_000
    cpu = lucid._backend.get("cpu")  # noqa: SLF001 - which runner serves "cpu" here, for the header
    print(f"lucid {lucid.__version__} 'cpu' runs rules with {cpu.rule_runner}; torch {torch.__version__}, "
          f"1 thread; median of {samples} interleaved samples; float32")
    cpu_names = names if args.only in (None, "cpu") else []
    if cpu_names:
        gbs = bandwidth_gbs(floor_elements, samples)
        print(f"memory floor: in-place add at {gbs:.1f} GB/s (measured now over {floor_elements:.0e} float32)\n")
        print("## 1. optimizer.step(), lucid 'cpu' against torch (ms; ratio = lucid / other)\n")
        print("| optimizer | layout | torch fused | torch default | lucid cpu | vs fused | vs default | x floor |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label in cpu_names:
        name, kwargs, bytes_per_param = OPTIMIZERS[label]
        for layout, shapes in layouts.items():
            contenders = {"lucid": lucid_step(name, kwargs, shapes, "cpu"),
                          "default": torch_step(name, kwargs, shapes, foreach=False)}
            try:
                contenders["fused"] = torch_step(name, kwargs, shapes, fused=True)
            except (RuntimeError, TypeError, ValueError):  # RMSprop has no fused kernel
                pass
            ms = interleaved_medians(contenders, samples)
            count = sum(int(np.prod(s)) for s in shapes)
            floor_ms = bytes_per_param * count / (gbs * 1e9) * 1e3
            fused = ms.get("fused")
            print(f"| {label} | {layout} | {_cell(fused)} | {_cell(ms['default'])} | {_cell(ms['lucid'])} | "
                  f"{_ratio(ms['lucid'], fused)} | {_ratio(ms['lucid'], ms['default'])} | "
                  f"{ms['lucid'] / floor_ms:.2f} |")
            del contenders
            gc.collect()

    if not args.no_gpu and args.only in (None, "gpu") and lucid.is_available("gpu"):
        gpu = lucid._backend.get("gpu")  # noqa: SLF001
        print(f"\n## 2. lucid 'gpu' ({gpu.rule_runner}) against mlx.optimizers (ms; ratio = lucid / other)\n")
        print("| optimizer | layout | mlx eager | mlx compiled | lucid gpu | vs eager | vs compiled | vs faster |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for label in names:
            name, kwargs, _ = OPTIMIZERS[label]
            for layout, shapes in layouts.items():
                ms = interleaved_medians({"lucid": lucid_step(name, kwargs, shapes, "gpu"),
                                          "eager": mlx_step(name, kwargs, shapes, compiled=False),
                                          "compiled": mlx_step(name, kwargs, shapes, compiled=True)}, samples)
                best = min(ms["eager"], ms["compiled"])
                print(f"| {label} | {layout} | {_cell(ms['eager'])} | {_cell(ms['compiled'])} | {_cell(ms['lucid'])} | "
                      f"{_ratio(ms['lucid'], ms['eager'])} | {_ratio(ms['lucid'], ms['compiled'])} | "
                      f"{_ratio(ms['lucid'], best)} |")
                gc.collect()

    if args.only not in (None, "training"):
        return 0
    print("\n## 3. training step: 50 x (Linear(64, 64) + Tanh), batch 32, Adam (ms)\n")
    depth = 3 if args.quick else 50
    ms = interleaved_medians({"fused": training_step("torch", {"fused": True}, depth=depth),
                              "default": training_step("torch", {"foreach": False}, depth=depth),
                              "lucid": training_step("lucid", depth=depth)}, samples)
    print("| torch fused | torch default | lucid cpu | vs fused | vs default |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| {_cell(ms['fused'])} | {_cell(ms['default'])} | {_cell(ms['lucid'])} | "
          f"{_ratio(ms['lucid'], ms['fused'])} | {_ratio(ms['lucid'], ms['default'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
