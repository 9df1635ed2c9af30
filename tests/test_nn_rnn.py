"""RNN, LSTM, GRU and their cells against torch.nn live: a torch state_dict loads as it is,
and outputs, final states, input, state and weight gradients agree, on every device."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid import nn
from helpers import assert_same_signature
from nn_parity import (
    DEVICES, assert_same_error, compare_grads, compare_outputs, host, ids, load_torch_state, module_parity,
)
from tolerances import JUDGED_RECURRENT

torch = pytest.importorskip("torch")

# float64 on cpu and float32 on gpu (the cells' float32 on cpu is what the gpu run checks, and time is short);
# float32 judged against the float64 truth with the recurrences' table (tolerances.JUDGED_RECURRENT)
DEVICE_DTYPES = [("cpu", "float64")] + [("gpu", "float32")] * ("gpu" in DEVICES)


def parity(ours, theirs, inputs, device, dtype, **options):
    """``module_parity`` of a recurrent module: its float32 results judged as a recurrence's."""
    return module_parity(ours, theirs, inputs, device, dtype, table=JUDGED_RECURRENT, **options)

RNN_CASES = {
    "plain": {},
    "two layers": {"num_layers": 2},
    "bidirectional batch_first": {"bidirectional": True, "batch_first": True},
    "deep bidirectional no bias": {"num_layers": 2, "bidirectional": True, "bias": False},
    "eval dropout": {"num_layers": 2, "dropout": 0.4},  # evaluation mode: no dropout, as torch
}
KINDS = ["RNN", "RNN-relu", "LSTM", "GRU"]


def _pair(kind, dtype, device, **options):
    torch.manual_seed(0)  # the weights, so a case's numbers do not depend on which tests ran before it
    name = kind.split("-")[0]
    if kind == "RNN-relu":
        options = {**options, "nonlinearity": "relu"}
    theirs = getattr(torch.nn, name)(3, 4, dtype=getattr(torch, dtype), **options)
    ours = getattr(nn, name)(3, 4, dtype=getattr(lucid, dtype), device=device, **options)
    return ours, theirs


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(RNN_CASES))
@pytest.mark.parametrize("kind", KINDS)
def test_recurrent_layers_match_torch(kind, case, device, dtype):
    options = RNN_CASES[case]
    ours, theirs = _pair(kind, dtype, device, **options)
    assert repr(ours) == repr(theirs)
    if "dropout" in options:
        ours.eval()
        theirs.eval()
    shape = (2, 5, 3) if options.get("batch_first") else (5, 2, 3)
    parity(ours, theirs, [np.random.default_rng(0).standard_normal(shape)], device, dtype)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("batched", [True, False])
def test_initial_states_get_gradients(kind, batched, device, dtype):
    ours, theirs = _pair(kind, dtype, device, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(1)
    lead = (4,) if batched else ()
    x = rng.standard_normal((6, *lead, 3)) if batched else rng.standard_normal((6, 3))
    h0 = rng.standard_normal((4, *lead, 4))
    inputs = [x, h0] + ([rng.standard_normal((4, *lead, 4))] if kind == "LSTM" else [])

    def call(module, x, *state):
        return module(x, tuple(state) if len(state) == 2 else state[0])

    parity(ours, theirs, inputs, device, dtype, call=call)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
def test_lstm_projection_matches_torch(device, dtype):
    theirs = torch.nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, dtype=getattr(torch, dtype))
    ours = nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, dtype=getattr(lucid, dtype), device=device)
    assert repr(ours) == repr(theirs)
    parity(ours, theirs, [np.random.default_rng(2).standard_normal((4, 2, 3))], device, dtype)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("kind", ["RNNCell", "RNNCell-relu", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch_over_several_steps(kind, bias, device, dtype):
    name = kind.split("-")[0]
    options = {"bias": bias, **({"nonlinearity": "relu"} if kind.endswith("relu") else {})}
    theirs = getattr(torch.nn, name)(3, 4, dtype=getattr(torch, dtype), **options)
    ours = getattr(nn, name)(3, 4, dtype=getattr(lucid, dtype), device=device, **options)
    assert repr(ours) == repr(theirs)
    xs = np.random.default_rng(3).standard_normal((3, 2, 3))

    def unroll(cell, x):  # three steps from the zero state: the state flows back through time
        state = None
        outputs = []
        for t in range(x.shape[0]):
            state = cell(x[t], state)
            outputs.append(state)
        return outputs

    parity(ours, theirs, [xs], device, dtype, call=unroll)


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_unbatched_cells_match_torch(name):
    theirs = getattr(torch.nn, name)(3, 2, dtype=torch.float64)
    ours = getattr(nn, name)(3, 2, dtype=lucid.float64)
    load_torch_state(ours, theirs, "cpu", "float64")
    x = np.random.default_rng(4).standard_normal(3)
    compare_outputs(ours(lucid.tensor(x)), theirs(torch.tensor(x)), "float64")


def test_a_torch_state_dict_loads_and_the_layout_is_torchs():
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    t_state, state = theirs.state_dict(), ours.state_dict()
    assert list(state) == list(t_state)
    assert [(tuple(v.shape), v.dtype.name) for v in state.values()] == [
        (tuple(v.shape), str(v.dtype).removeprefix("torch.")) for v in t_state.values()]
    assert ours.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in t_state.items()}).missing_keys == []
    assert [[tuple(w.shape) for w in layer] for layer in ours.all_weights] == [
        [tuple(w.shape) for w in layer] for layer in theirs.all_weights]
    ours.flatten_parameters()
    assert list(ours.state_dict()) == list(t_state)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_init_is_uniform_within_torchs_bound(kind):
    lucid.manual_seed(0)
    module = getattr(nn, kind)(8, 16)
    values = np.concatenate([host(p).ravel() for p in module.parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24
    spread = 0.25 / np.sqrt(3)  # the standard deviation of U(-0.25, 0.25)
    assert abs(values.mean()) < 4 * spread / np.sqrt(values.size) and abs(values.std() - spread) < 0.01
    lucid.manual_seed(0)
    again = np.concatenate([host(p).ravel() for p in getattr(nn, kind)(8, 16).parameters()])
    assert (values == again).all()


def test_dropout_between_layers_in_training_only():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5, dtype=lucid.float64)
    x = lucid.randn(5, 2, 3, dtype=lucid.float64)
    lucid.manual_seed(1)
    first = host(lstm(x)[0])
    lucid.manual_seed(1)
    assert (host(lstm(x)[0]) == first).all()  # seeded
    lucid.manual_seed(2)
    assert not (host(lstm(x)[0]) == first).all()
    lstm.eval()
    assert (host(lstm(x)[0]) == host(lstm(x)[0])).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.GRU(3, 4, num_layers=2, dropout=0.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)


@pytest.mark.parametrize("case", [
    lambda m: m.RNN(2, 3)(m_zeros(m, 2, 3, 4)),
    lambda m: m.RNN(2, 3)(m_zeros(m, 2, 3, 2), m_zeros(m, 2, 3, 3)),
    lambda m: m.LSTM(2, 3)(m_zeros(m, 4, 3, 2), (m_zeros(m, 1, 3, 3), m_zeros(m, 1, 2, 3))),
    lambda m: m.GRU(2, 3)(m_zeros(m, 2, 3, 4, 2)),
    lambda m: m.LSTM(2, 3)(m_zeros(m, 4, 2), (m_zeros(m, 1, 3, 3), m_zeros(m, 1, 3, 3))),
    lambda m: m.GRUCell(2, 3)(m_zeros(m, 2, 3, 4)),
    lambda m: m.GRUCell(2, 3)(m_zeros(m, 2, 3)),
    lambda m: m.GRUCell(2, 3)(m_zeros(m, 5, 2), m_zeros(m, 4, 3)),
    lambda m: m.RNN(2, 0),
    lambda m: m.RNN(2, 3, 0),
    lambda m: m.RNN(2, 3, dropout=2),
    lambda m: m.RNN(2, 3, nonlinearity="gelu"),
    lambda m: m.LSTM(2, 3, proj_size=3),
    lambda m: m.RNN(2.0, 3),
])
def test_errors_match_torch(case):
    assert_same_error(lambda: case(nn), lambda: case(torch.nn))


def m_zeros(module, *shape):
    return lucid.zeros(*shape) if module is nn else torch.zeros(*shape)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_signatures_match_torch(name):
    if name in ("LSTM", "GRU"):  # torch's take *args; compare with the documented constructor
        ours = list(__import__("inspect").signature(getattr(nn, name).__init__).parameters)
        assert ours[:4] == ["self", "input_size", "hidden_size", "num_layers"]
        return
    assert_same_signature(getattr(nn, name).__init__, getattr(torch.nn, name).__init__)


def test_language_model_gradient_step_matches_torch():
    """An embedding, a 2-layer LSTM and a decoder, one SGD step: every parameter after it."""
    dtype = "float64"
    rng = np.random.default_rng(5)
    t_parts = [torch.nn.Embedding(11, 4), torch.nn.LSTM(4, 6, num_layers=2), torch.nn.Linear(6, 11)]
    parts = [nn.Embedding(11, 4), nn.LSTM(4, 6, num_layers=2), nn.Linear(6, 11)]
    for ours, theirs in zip(parts, t_parts):
        theirs.double()
        ours.double()
        load_torch_state(ours, theirs, "cpu", dtype)
    tokens = rng.integers(0, 11, (7, 3))
    out, _ = parts[1](parts[0](lucid.tensor(tokens[:-1])))
    t_out, _ = t_parts[1](t_parts[0](torch.tensor(tokens[:-1])))
    loss = nn.CrossEntropyLoss()(parts[2](out).reshape(-1, 11), lucid.tensor(tokens[1:].reshape(-1)))
    t_loss = torch.nn.CrossEntropyLoss()(t_parts[2](t_out).reshape(-1, 11), torch.tensor(tokens[1:].reshape(-1)))
    compare_outputs(loss, t_loss, dtype)
    loss.backward()
    t_loss.backward()
    for ours, theirs in zip(parts, t_parts):
        named = dict(theirs.named_parameters())
        compare_grads([(p, named[n]) for n, p in ours.named_parameters()], dtype)
