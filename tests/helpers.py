"""Helpers that several test files share (the tests directory is on ``sys.path``)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import lucid
from lucid import nn


def torch_or_skip():
    """The torch module (a test that needs it is skipped where it is not installed)."""
    return pytest.importorskip("torch")


def raised(fn):
    """The exception ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - any exception is compared
        return exc
    return None


def param(values, device="cpu", dtype=None):
    """A lucid Parameter holding ``values``."""
    return nn.Parameter(lucid.tensor(values, dtype=dtype, device=device))


def host(t) -> np.ndarray:
    """A NumPy copy of the values of ``t``."""
    return np.array(t.detach())


def torch_pair(values, dtype=np.float64):
    """The same parameter in lucid and torch."""
    torch = torch_or_skip()
    array = np.asarray(values, dtype=dtype)
    return nn.Parameter(lucid.tensor(array)), torch.from_numpy(array.copy()).requires_grad_()


def assert_same_signature(ours, theirs):
    """``ours`` takes the same parameters as ``theirs``: names, order, kinds and defaults."""
    ours, theirs = inspect.signature(ours).parameters, inspect.signature(theirs).parameters
    assert list(ours) == list(theirs)
    for key in theirs:
        assert ours[key].kind == theirs[key].kind, key
        assert ours[key].default == theirs[key].default, key
