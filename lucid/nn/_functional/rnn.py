"""One time step of the recurrent cells, in torch's arithmetic (ATen's ``RNN.cpp`` cells).

Each takes a batch ``x`` of shape ``(N, input_size)``, the previous state and the weights of
one layer and direction, and returns the next state. The gates are torch's, in torch's
order: LSTM ``i, f, g, o``; GRU ``r, z, n``.
"""

from __future__ import annotations

from ..._ops.elementwise import relu, sigmoid, tanh

from ..functional import linear


def _gates(x, h, w_ih, w_hh, b_ih, b_hh):
    """``(h W_hh^T + b_hh) + (x W_ih^T + b_ih)``: torch adds the hidden part first."""
    return linear(h, w_hh, b_hh) + linear(x, w_ih, b_ih)


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    """``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid.nn._functional.rnn import rnn_tanh_cell
    >>> rnn_tanh_cell(lucid.zeros(1, 2), lucid.zeros(1, 3), lucid.ones(3, 2), lucid.ones(3, 3))
    tensor([[0., 0., 0.]])
    """
    return tanh(_gates(x, h, w_ih, w_hh, b_ih, b_hh))


def rnn_relu_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    """``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid.nn._functional.rnn import rnn_relu_cell
    >>> rnn_relu_cell(lucid.ones(1, 2), lucid.zeros(1, 1), -lucid.ones(1, 2), lucid.ones(1, 1))
    tensor([[0.]])
    """
    return relu(_gates(x, h, w_ih, w_hh, b_ih, b_hh))


def lstm_cell(x, state, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One LSTM step: ``(h, c)`` to ``(h', c')``; with ``w_hr`` the output is projected, ``h' W_hr^T``.

    Examples
    --------
    >>> import lucid
    >>> from lucid.nn._functional.rnn import lstm_cell
    >>> h, c = lstm_cell(lucid.zeros(1, 2), (lucid.zeros(1, 1), lucid.ones(1, 1)), lucid.zeros(4, 2), lucid.zeros(4, 1))
    >>> c  # f = sigmoid(0) keeps half the cell; i * g = 0.5 * tanh(0) adds nothing
    tensor([[0.5000]])
    """
    h, c = state
    gates = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    size = gates.shape[-1] // 4
    ingate = sigmoid(gates[..., :size])
    forgetgate = sigmoid(gates[..., size:2 * size])
    cellgate = tanh(gates[..., 2 * size:3 * size])
    outgate = sigmoid(gates[..., 3 * size:])
    c_next = forgetgate * c + ingate * cellgate
    h_next = outgate * tanh(c_next)
    if w_hr is not None:
        h_next = linear(h_next, w_hr)
    return h_next, c_next


def gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: ``n + z * (h - n)`` with ``n = tanh(i_n + r * h_n)``, as torch computes it.

    Examples
    --------
    >>> import lucid
    >>> from lucid.nn._functional.rnn import gru_cell
    >>> gru_cell(lucid.zeros(1, 2), lucid.ones(1, 1), lucid.zeros(3, 2), lucid.zeros(3, 1))  # z = 0.5
    tensor([[0.5000]])
    """
    gi, gh = linear(x, w_ih, b_ih), linear(h, w_hh, b_hh)
    size = gi.shape[-1] // 3
    resetgate = sigmoid(gh[..., :size] + gi[..., :size])
    inputgate = sigmoid(gh[..., size:2 * size] + gi[..., size:2 * size])
    newgate = tanh(gi[..., 2 * size:] + gh[..., 2 * size:] * resetgate)
    return (h - newgate) * inputgate + newgate
