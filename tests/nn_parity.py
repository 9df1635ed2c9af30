"""Run a lucid module (or function) and torch's on the same numbers and compare everything.

Parity runs in float64 on cpu and in float32 on cpu and gpu (MLX has no float64 on an Apple
GPU). A float64 result is held to torch's at PARITY's float64 tolerance. A float32 (or
float16) result is never held to torch's at a fixed tolerance: both are judged
(``tolerances.judge``) against the float64 truth of the same computation, a float64 copy of
torch's module or function fed the same float32 values (weights, inputs and upstream
gradients upcast exactly), and lucid's error may not pass torch's. Results that are exact by
construction (a gather, a copy, relu or a clamp of exact values) are compared bit for bit in
every dtype, with ``exact=True`` (or ``exact="output"``: the outputs only, as a lookup's, whose
gradient is a sum). ``table`` is the judge's (``tolerances.JUDGED`` unless a test says otherwise).
torch is imported lazily.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

import lucid
from tolerances import JUDGED, close, judge, judged_on

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
    """The values of a lucid tensor, a torch tensor (dense, if sparse) or an array, as float64 NumPy."""
    if getattr(t, "is_sparse", False):
        t = t.to_dense()
    if hasattr(t, "detach"):
        t = t.detach()
    if hasattr(t, "numpy") and type(t).__module__.startswith("torch"):
        return t.double().numpy()
    return np.array(np.asarray(t), dtype=np.float64)


def needs_truth(dtype: str) -> bool:
    """float32 and float16 results are judged against a float64 truth; float64 ones against torch's."""
    return dtype != "float64"


def truth_of(theirs):
    """torch's module (or tensor) in float64: an exact upcast of its values, without gradients;
    the float64 truth of the same computation on the same numbers."""
    import torch

    if isinstance(theirs, torch.nn.Module):
        truth = copy.deepcopy(theirs).double()
        for p in truth.parameters():
            p.grad = None
        return truth
    return theirs.detach().double().requires_grad_(theirs.requires_grad)


def agree(actual, reference, truth, dtype: str, exact: bool = False, what: str = "", table=JUDGED) -> None:
    """One lucid result against torch's ``reference``: bit for bit where ``exact``; float64 within
    PARITY of torch's; float32 and float16 judged against ``truth`` (float64, required)."""
    actual, reference = host(actual), host(reference)
    assert actual.shape == reference.shape, f"{what}: shape {actual.shape} != {reference.shape}"
    if exact:
        np.testing.assert_array_equal(actual, reference, err_msg=what)
    elif not needs_truth(dtype):
        close(actual, reference, dtype)
    else:
        assert truth is not None, f"{what}: a {dtype} result is judged against its float64 truth, and none was given"
        judge(actual, reference, host(truth), dtype, table, what)


def load_torch_state(ours, theirs, device, dtype: str) -> None:
    """Copy torch's ``state_dict`` into the lucid module (floats in ``dtype``), keys checked equal."""
    state = {}
    for key, value in theirs.state_dict().items():
        state[key] = to_lucid(value, device, dtype if value.is_floating_point() else None)
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state)


def assert_same_state(ours, theirs, dtype: str, truth=None, exact: bool = False, table=JUDGED) -> None:
    """The state dicts hold the same keys, shapes, dtypes (up to the float dtype chosen) and values
    (float ones as :func:`agree` says, against ``truth``'s state, the float64 copy of ``theirs``)."""
    mine, reference = ours.state_dict(), theirs.state_dict()
    truths = truth.state_dict() if truth is not None else {}
    assert list(mine) == list(reference)
    for key, value in reference.items():
        assert tuple(mine[key].shape) == tuple(value.shape), key
        if value.is_floating_point():
            assert mine[key].dtype.is_floating_point, key
            agree(mine[key], value, truths.get(key), dtype, exact, key, table)
        else:
            assert mine[key].dtype.name == str(value.dtype).removeprefix("torch."), key
            assert host(mine[key]).tolist() == value.double().numpy().tolist(), key


def compare_outputs(ours, theirs, dtype: str, truth=None, exact: bool = False, what: str = "output",
                    table=JUDGED) -> None:
    """Compare (nested tuples of) outputs as :func:`agree` says; ``truth``: the float64 run's outputs."""
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        truths = truth if truth is not None else [None] * len(theirs)
        for k, (a, b, c) in enumerate(zip(ours, theirs, truths)):
            compare_outputs(a, b, dtype, c, exact, f"{what}[{k}]", table)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), what
    if theirs.is_floating_point():
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), what
    agree(ours, theirs, truth, dtype, exact, what, table)


def _flat(outputs):
    if isinstance(outputs, (tuple, list)):
        return [t for o in outputs for t in _flat(o)]
    return [outputs]


def backward_both(ours, theirs, seed=0, truth=None) -> None:
    """Backward the same random upstream gradients through every output of both (and of the float64
    run ``truth``, fed the upstream gradients as rounded to the dtype of the others)."""
    import torch

    rng = np.random.default_rng(seed)
    totals = [None, None, None]
    runs = [_flat(ours), _flat(theirs), _flat(truth) if truth is not None else [None] * len(_flat(theirs))]
    for a, b, c in zip(*runs):
        if not b.requires_grad:
            continue
        g = rng.standard_normal(tuple(b.shape))
        upstream = torch.tensor(g, dtype=b.dtype)
        terms = [(a * lucid.tensor(g, dtype=a.dtype, device=a.device)).sum(), (b * upstream).sum(),
                 None if c is None else (c * upstream.double()).sum()]
        totals = [t if total is None else total + t for total, t in zip(totals, terms)]
    for total in totals:
        if total is not None:
            total.backward()


def compare_grads(pairs, dtype: str, truths=None, exact: bool = False, what="grad", table=JUDGED) -> None:
    """``pairs``: (lucid tensor, torch tensor) whose ``.grad`` must agree (both None, or as
    :func:`agree` says); ``truths``: the float64 run's tensors, in the same order; ``what``: a
    name for them all (numbered), or one a pair."""
    pairs = list(pairs)
    truths = list(truths) if truths is not None else [None] * len(pairs)
    names = [f"{what}[{k}]" for k in range(len(pairs))] if isinstance(what, str) else list(what)
    assert len(truths) == len(pairs) == len(names)
    for (ours, theirs), truth, name in zip(pairs, truths, names):
        if theirs.grad is None:
            assert ours.grad is None or not np.any(host(ours.grad))
            assert truth is None or truth.grad is None
            continue
        assert ours.grad is not None
        agree(ours.grad, theirs.grad, None if truth is None else truth.grad, dtype, exact, f"{name}'s gradient", table)


def leaves(arrays, device, dtype: str, grad=None):
    """The same numbers as lucid tensors, torch tensors and (float32, float16) the float64 truth's:
    float arrays in ``dtype`` with gradients (unless ``grad``, one bool an array, says not),
    integer ones as they are. The truth's list is None in float64."""
    import torch

    grad = [True] * len(arrays) if grad is None else list(grad)
    mine, reference, truths = [], [], []
    for array, wanted in zip(arrays, grad):
        array = np.asarray(array)
        if array.dtype.kind == "f":
            mine.append(lucid.tensor(array, dtype=getattr(lucid, dtype), device=device, requires_grad=wanted))
            reference.append(to_torch(array, dtype, requires_grad=wanted))
            truths.append(truth_of(reference[-1]))
        else:
            mine.append(lucid.tensor(array, device=device))
            reference.append(torch.tensor(array))
            truths.append(reference[-1])
    return mine, reference, (truths if needs_truth(dtype) else None)


class Run(NamedTuple):
    """What :func:`function_parity` ran: the outputs, and the input tensors (float64 truth's: None in float64)."""

    ours: object
    theirs: object
    truth: object
    inputs: list
    t_inputs: list
    h_inputs: list | None


def function_parity(fn_ours, fn_theirs, arrays, device, dtype: str, seed=0, constants=None, grad=None,
                    exact: bool | str = False, table=JUDGED, **options) -> Run:
    """Call ``fn_ours`` and ``fn_theirs`` on the same ``arrays`` (float ones get gradients, unless
    ``grad`` says not), with the float arrays of ``constants`` (keyword arguments, no gradients)
    and ``options``; compare the outputs and the gradients of every float input. In float32 and
    float16, ``fn_theirs`` is run a third time in float64 on the same values: the truth (a torch
    module's truth is its float64 copy)."""
    import torch

    table = judged_on(device, table)
    fn_truth = truth_of(fn_theirs) if isinstance(fn_theirs, torch.nn.Module) else fn_theirs
    names = list(constants or {})
    mine, reference, truths = leaves(list(arrays) + [constants[k] for k in names], device, dtype,
                                     (grad or [True] * len(arrays)) + [False] * len(names))
    count = len(arrays)

    def call(fn, tensors):
        return fn(*tensors[:count], **dict(zip(names, tensors[count:])), **options)

    out_ours, out_theirs = call(fn_ours, mine), call(fn_theirs, reference)
    out_truth = None if truths is None else call(fn_truth, truths)
    truths = None if truths is None else truths[:count]
    _compare_run(out_ours, out_theirs, out_truth, mine[:count], reference[:count], truths, dtype, seed, exact, table)
    return Run(out_ours, out_theirs, out_truth, mine[:count], reference[:count], truths)


def _compare_run(out_ours, out_theirs, out_truth, mine, reference, truths, dtype, seed, exact, table) -> bool:
    """The outputs, then (where any needs one) a backward and the input gradients; whether it backwarded."""
    compare_outputs(out_ours, out_theirs, dtype, out_truth, bool(exact), table=table)
    if not any(t.requires_grad for t in _flat(out_theirs)):
        return False
    backward_both(out_ours, out_theirs, seed, out_truth)
    wanted = [k for k, t in enumerate(reference) if t.requires_grad]
    truths = None if truths is None else [truths[k] for k in wanted]
    compare_grads([(mine[k], reference[k]) for k in wanted], dtype, truths, exact is True,
                  [f"input {k}" for k in wanted], table)
    return True


def module_parity(ours, theirs, inputs, device, dtype: str, seed=0, call=None, exact: bool | str = False,
                  table=JUDGED):
    """Load torch's weights into ``ours``, run both on ``inputs`` (arrays; float ones get gradients),
    compare the outputs, the input gradients, the parameter gradients and the state afterwards. In
    float32 and float16 a float64 copy of ``theirs`` runs on the same values: the truth."""
    table = judged_on(device, table)
    load_torch_state(ours, theirs, device, dtype)
    truth = truth_of(theirs) if needs_truth(dtype) else None
    mine, reference, truths = leaves(inputs, device, dtype)
    call = call or (lambda module, *args: module(*args))
    out_ours, out_theirs = call(ours, *mine), call(theirs, *reference)
    out_truth = None if truth is None else call(truth, *truths)
    if _compare_run(out_ours, out_theirs, out_truth, mine, reference, truths, dtype, seed, exact, table):
        named = dict(theirs.named_parameters())
        named_truth = dict(truth.named_parameters()) if truth is not None else None
        names = [name for name, _ in ours.named_parameters()]
        compare_grads([(p, named[name]) for name, p in ours.named_parameters()], dtype,
                      None if truth is None else [named_truth[name] for name in names], exact is True, names, table)
    assert_same_state(ours, theirs, dtype, truth, exact is True, table)
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
