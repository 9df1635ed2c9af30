"""Which files one ``optimizer.step()`` runs code in, and how often control moves between them.

Usage::

    python tools/step_trace.py                 # Adam on "cpu", after three warm-up steps
    python tools/step_trace.py --optimizer SGD --kwargs '{"momentum": 0.9}' --files

It traces one step with ``sys.settrace`` (every call, line and return of Python code) and
counts the distinct source files, and the file changes: how many times two consecutive
events are in different files. The model is ``nn.Linear(8, 4)`` (two parameters) with
gradients set; the warm-up steps compile the rule and make the step's plan first, so the
trace is the step of a training loop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import lucid
from lucid import nn, optim


def trace_step(name: str = "Adam", kwargs: dict | None = None, device: str = "cpu", warm: int = 3) -> list[str]:
    """The files of the events of one step (one entry per event), after ``warm`` steps."""
    model = nn.Linear(8, 4).to(device)
    optimizer = getattr(optim, name)(model.parameters(), **(kwargs or {}))
    for param in model.parameters():
        param.grad = lucid.ones_like(param)
    for _ in range(warm):
        optimizer.step()
    events: list[str] = []

    def local(frame, event, arg):
        events.append(frame.f_code.co_filename)
        return local

    def on_call(frame, event, arg):
        events.append(frame.f_code.co_filename)
        return local

    sys.settrace(on_call)
    try:
        optimizer.step()
    finally:
        sys.settrace(None)
    return events


def summary(events: list[str]) -> tuple[int, int]:
    """``(distinct files, file changes)`` of a trace."""
    changes = sum(1 for before, after in zip(events, events[1:]) if before != after)
    return len(set(events)), changes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--optimizer", default="Adam")
    parser.add_argument("--kwargs", default="{}", help="the optimizer's keyword arguments, as JSON")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--files", action="store_true", help="list the files, in the order first entered")
    args = parser.parse_args()
    events = trace_step(args.optimizer, json.loads(args.kwargs), args.device)
    files, changes = summary(events)
    print(f"{args.optimizer} on {args.device!r}: {files} files, {changes} file changes in one step")
    if args.files:
        root = os.path.dirname(os.path.dirname(lucid.__file__))
        for path in dict.fromkeys(events):
            print("  " + os.path.relpath(path, root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
