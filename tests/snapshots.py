"""Bit-level snapshots of lucid objects, to assert that a refused call changed nothing.

``snapshot(x)`` turns tensors, numbers, containers, optimizers (groups, state, defaults),
schedulers (every attribute), wrappers, modules (parameters, buffers and gradients) and
``AveragedModel`` into nested tuples of bytes and plain values; two snapshots are equal
exactly when every value is bit for bit the same (NaN payloads and -0.0 included).
Anything else is captured by identity.
"""

from __future__ import annotations

import struct

import numpy as np

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler


def _tensor(t) -> tuple:
    host = t.detach().numpy()
    return ("tensor", type(t).__name__, t.dtype.name, tuple(t.shape), t.device, t.requires_grad,
            np.ascontiguousarray(host).tobytes(), _grad(t))


def _grad(t):
    grad = getattr(t, "grad", None)
    if grad is None:
        return None
    if isinstance(grad, lucid.SparseTensor):
        return ("sparse", snapshot(grad.to_dense()))
    return snapshot(grad)


def snapshot(x, _active=None):
    active = set() if _active is None else _active  # the containers on the current path: cycles
    if isinstance(x, lucid.Tensor):
        return _tensor(x)
    if type(x) is float:
        return ("float", struct.pack("<d", x))
    if x is None or type(x) in (int, bool, str, lucid.dtype):
        return (type(x).__name__, x)
    if isinstance(x, (np.ndarray, np.generic)):
        return ("numpy", str(x.dtype), np.shape(x), np.asarray(x).tobytes())
    if id(x) in active:
        return ("cycle",)
    active.add(id(x))
    try:
        return _container(x, active)
    finally:
        active.discard(id(x))


def _container(x, active):
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(snapshot(v, active) for v in x))
    if isinstance(x, dict):
        return (type(x).__name__, tuple((repr(k), snapshot(v, active)) for k, v in x.items()))
    if isinstance(x, optim.Optimizer):
        groups = [{k: (v if k != "params" else list(v)) for k, v in g.items()} for g in x.param_groups]
        state = {i: x.state[i] for i in x.state}
        return ("optimizer", type(x).__name__, snapshot(groups, active), snapshot(state, active),
                snapshot(x.defaults, active))
    if isinstance(x, (lr_scheduler.LRScheduler, lr_scheduler.ReduceLROnPlateau, optim.GradientAccumulation,
                      optim.SkipNonFinite, optim.swa_utils.AveragedModel)) or isinstance(x, nn.Module):
        attributes = {k: v for k, v in vars(x).items()}
        if isinstance(x, nn.Module):
            attributes["__state__"] = x.state_dict(keep_vars=True)
        return (type(x).__name__, snapshot(attributes, active))
    return ("object", id(x))
