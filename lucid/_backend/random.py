"""Lucid's random numbers: one seeded host generator for every device.

Drawing on the host and moving the result to the device makes ``manual_seed(s)`` give the
same numbers on NumPy and on MLX, so tests can compare the two backends run for run.
"""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _generator
    _generator = np.random.default_rng(int(seed))


def normal(shape, dtype, backend, mean=0.0, std=1.0):
    host = _generator.standard_normal(tuple(shape)) * std + mean
    return backend.asarray(host, dtype)


def uniform(shape, dtype, backend, low=0.0, high=1.0):
    host = _generator.random(tuple(shape)) * (high - low) + low
    return backend.asarray(host, dtype)
