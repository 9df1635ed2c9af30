"""Run a lucid module (or function) and torch's on the same numbers and compare everything.

Parity runs in float64 on cpu and in float32 on gpu (MLX has no float64 on an Apple GPU),
at the tolerances of ``tolerances.py``. torch is imported lazily.
"""

from __future__ import annotations

import numpy as np

import lucid
from tolerances import close, close_summed

DEVICES = ["cpu", "gpu"] if lucid.is_available("gpu") else ["cpu"]
# (device, dtype name): float64 on cpu; float32 on both
DEVICE_DTYPES = [("cpu", "float64"), ("cpu", "float32")] + [("gpu", "float32")] * ("gpu" in DEVICES)


def ids(pairs):
    return [f"{device}-{dtype}" for device, dtype in pairs]


def to_lucid(t, device="cpu", dtype=None):
    """A torch tensor's values as a lucid tensor (``dtype``: a lucid dtype name, or torch's)."""
    array = t.detach().cpu().numpy()
    return lucid.tensor(array, dtype=getattr(lucid, dtype or str(array.dtype)), device=device)


def to_torch(array, dtype: str, requires_grad=False):
    import torch

    return torch.tensor(np.asarray(array), dtype=getattr(torch, dtype), requires_grad=requires_grad)


def host(t) -> np.ndarray:
    return np.array(np.asarray(t.detach()), dtype=np.float64)


def load_torch_state(ours, theirs, device, dtype: str) -> None:
    """Copy torch's ``state_dict`` into the lucid module (floats in ``dtype``), keys checked equal."""
    state = {}
    for key, value in theirs.state_dict().items():
        state[key] = to_lucid(value, device, dtype if value.is_floating_point() else None)
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state)


def assert_same_state(ours, theirs, dtype: str) -> None:
    """The state dicts hold the same keys, shapes, dtypes (up to the float dtype chosen) and values."""
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(reference)
    for key, value in reference.items():
        assert tuple(mine[key].shape) == tuple(value.shape), key
        if value.is_floating_point():
            assert mine[key].dtype.is_floating_point, key
            close(host(mine[key]), value.detach().double().numpy(), dtype)
        else:
            assert mine[key].dtype.name == str(value.dtype).removeprefix("torch."), key
            assert host(mine[key]).tolist() == value.double().numpy().tolist(), key


def compare_outputs(ours, theirs, dtype: str) -> None:
    """Compare (nested tuples of) outputs, elementwise."""
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            compare_outputs(a, b, dtype)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    close(host(ours), theirs.detach().double().numpy(), dtype)


def _flat(outputs):
    if isinstance(outputs, (tuple, list)):
        return [t for o in outputs for t in _flat(o)]
    return [outputs]


def backward_both(ours, theirs, seed=0) -> None:
    """Backward the same random upstream gradients through every output of both."""
    import torch

    rng = np.random.default_rng(seed)
    mine, reference = _flat(ours), _flat(theirs)
    total_ours, total_theirs = None, None
    for a, b in zip(mine, reference):
        if not b.requires_grad:
            continue
        g = rng.standard_normal(tuple(b.shape))
        term_ours = (a * lucid.tensor(g, dtype=a.dtype, device=a.device)).sum()
        term_theirs = (b * torch.tensor(g, dtype=b.dtype)).sum()
        total_ours = term_ours if total_ours is None else total_ours + term_ours
        total_theirs = term_theirs if total_theirs is None else total_theirs + term_theirs
    total_ours.backward()
    total_theirs.backward()


def compare_grads(pairs, dtype: str) -> None:
    """``pairs``: (lucid tensor, torch tensor) whose ``.grad`` must agree (both None, or close)."""
    for ours, theirs in pairs:
        if theirs.grad is None:
            assert ours.grad is None or not np.any(host(ours.grad))
            continue
        assert ours.grad is not None
        close_summed(host(ours.grad), theirs.grad.double().numpy(), dtype)


def module_parity(ours, theirs, inputs, device, dtype: str, seed=0, call=None):
    """Load torch's weights into ``ours``, run both on ``inputs`` (arrays; float ones get gradients),
    compare the outputs, the input gradients, the parameter gradients and the state afterwards."""
    load_torch_state(ours, theirs, device, dtype)
    mine, reference = [], []
    for array in inputs:
        array = np.asarray(array)
        if array.dtype.kind == "f":
            mine.append(lucid.tensor(array, dtype=getattr(lucid, dtype), device=device, requires_grad=True))
            reference.append(to_torch(array, dtype, requires_grad=True))
        else:
            mine.append(lucid.tensor(array, device=device))
            reference.append(to_torch(array, str(array.dtype)))
    call = call or (lambda module, *args: module(*args))
    out_ours, out_theirs = call(ours, *mine), call(theirs, *reference)
    compare_outputs(out_ours, out_theirs, dtype)
    if any(t.requires_grad for t in _flat(out_theirs)):
        backward_both(out_ours, out_theirs, seed)
        compare_grads([(a, b) for a, b in zip(mine, reference) if b.requires_grad], dtype)
        named = dict(theirs.named_parameters())
        compare_grads([(p, named[name]) for name, p in ours.named_parameters()], dtype)
    assert_same_state(ours, theirs, dtype)
    return out_ours, out_theirs


def assert_same_error(ours, theirs, first_line: bool = False) -> None:
    """``ours()`` raises what ``theirs()`` (torch) raises: the same type and message.

    With ``first_line`` only the first lines are compared: torch appends a dump of a tensor
    to some messages, and names its own Tensor class in others.
    """
    import pytest

    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)) as got:
        ours()
    if first_line:
        wanted = str(expected.value).splitlines()[0].replace("<class 'torch.Tensor'>", "Tensor")
        assert str(got.value).splitlines()[0] == wanted
    else:
        assert str(got.value) == str(expected.value)
