"""Sphinx extension: plot every lr scheduler's and schedule's curve when the docs are built.

At ``builder-inited`` it runs each scheduler of :mod:`lucid.optim.lr_scheduler` (and each
schedule of :mod:`lucid.optim.schedules`) on an SGD optimizer with ``lr=1.0`` and writes
the learning rate per step as ``_generated/lr_scheduler/{name}.png`` in the build's source
folder (not docs/: docs/_ext/staged_sources.py), which the API pages show with
``.. image::``. Nothing is stored in the repository; matplotlib (the
``docs`` extra) draws them with its non-interactive Agg backend.
"""

from __future__ import annotations

import os
import warnings

OUT = os.path.join("_generated", "lr_scheduler")

# name -> (make(S, optimizer), steps, SGD kwargs); every one starts from lr = 1.0
SCHEDULERS = {
    "LambdaLR": (lambda S, o: S.LambdaLR(o, lambda epoch: 0.95**epoch), 60, {}),
    "MultiplicativeLR": (lambda S, o: S.MultiplicativeLR(o, lambda epoch: 0.95), 60, {}),
    "StepLR": (lambda S, o: S.StepLR(o, step_size=15, gamma=0.5), 60, {}),
    "MultiStepLR": (lambda S, o: S.MultiStepLR(o, milestones=[20, 35, 50], gamma=0.5), 60, {}),
    "ConstantLR": (lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=20), 60, {}),
    "LinearLR": (lambda S, o: S.LinearLR(o, start_factor=0.1, total_iters=30), 60, {}),
    "ExponentialLR": (lambda S, o: S.ExponentialLR(o, gamma=0.95), 60, {}),
    "PolynomialLR": (lambda S, o: S.PolynomialLR(o, total_iters=40, power=2.0), 60, {}),
    "CosineAnnealingLR": (lambda S, o: S.CosineAnnealingLR(o, T_max=30, eta_min=0.05), 90, {}),
    "CosineAnnealingWarmRestarts": (lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=2), 70, {}),
    "CyclicLR": (lambda S, o: S.CyclicLR(o, base_lr=0.1, max_lr=1.0, step_size_up=10, mode="triangular2"),
                 80, {"momentum": 0.9}),
    "OneCycleLR": (lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=100), 100, {"momentum": 0.9}),
    "SequentialLR": (lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=10), S.CosineAnnealingLR(o, T_max=50)], milestones=[10]),
        60, {}),
    "ChainedScheduler": (lambda S, o: S.ChainedScheduler(
        [S.CosineAnnealingLR(o, T_max=20), S.ExponentialLR(o, gamma=0.97)]), 60, {}),
    "ReduceLROnPlateau": (lambda S, o: S.ReduceLROnPlateau(o, factor=0.5, patience=5), 60, {}),
}

SCHEDULES = {
    "constant": lambda s: s.constant(1.0),
    "linear": lambda s: s.linear(1.0, 0.1, 40),
    "cosine": lambda s: s.cosine(1.0, 50, end=0.05),
    "exponential": lambda s: s.exponential(1.0, 0.95),
    "step": lambda s: s.step(1.0, 15, gamma=0.5),
    "warmup": lambda s: s.warmup(10, s.cosine(1.0, 50)),
    "join": lambda s: s.join([s.linear(0.0, 1.0, 10), 1.0, s.exponential(1.0, 0.93)], [10, 25]),
    "piecewise": lambda s: s.piecewise([1.0, 0.3, 0.1], [20, 40]),
}


def _plateau_metric(step: int) -> float:
    """A loss that improves, then stalls: what ReduceLROnPlateau reacts to."""
    return max(1.0 - 0.05 * step, 0.4 + 0.001 * (step % 3))


def curve(name: str) -> list:
    """The lr of scheduler ``name`` after construction and after each step.

    Examples
    --------
    >>> curve("StepLR")[:16:5]
    [1.0, 1.0, 1.0, 0.5]
    """
    import lucid
    from lucid import nn, optim
    from lucid.optim import lr_scheduler

    make, steps, kwargs = SCHEDULERS[name]
    optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0, **kwargs)
    scheduler = make(lr_scheduler, optimizer)
    lrs = [optimizer.param_groups[0]["lr"]]
    for step in range(steps):
        optimizer.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler.step(_plateau_metric(step)) if name == "ReduceLROnPlateau" else scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    return lrs


def _draw(path: str, values: list, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.0, 2.2), dpi=100)
    ax.plot(range(len(values)), values, drawstyle="steps-post", linewidth=1.6)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("lr", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def write_plots(srcdir: str) -> None:
    """Write every curve as a PNG under ``srcdir/_generated/lr_scheduler``."""
    from lucid.optim import schedules

    out = os.path.join(srcdir, OUT)
    os.makedirs(out, exist_ok=True)
    for name in SCHEDULERS:
        _draw(os.path.join(out, f"{name}.png"), curve(name), name)
    for name, make in SCHEDULES.items():
        schedule = make(schedules)
        _draw(os.path.join(out, f"schedule_{name}.png"), [schedule.value(t) for t in range(61)], repr(schedule))


def figures() -> dict:
    """Each plotted object's full name -> its PNG, from the docs' root."""
    found = {f"lucid.optim.lr_scheduler.{name}": f"{OUT}/{name}.png" for name in SCHEDULERS}
    found.update({f"lucid.optim.schedules.{name}": f"{OUT}/schedule_{name}.png" for name in SCHEDULES})
    return found


def setup(app):
    """Register the plotting step with Sphinx, and the plots with the API pages (docs/_ext/api_pages.py)."""
    import api_pages

    api_pages.FIGURES.update(figures())
    app.connect("builder-inited", lambda app: write_plots(app.srcdir))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
