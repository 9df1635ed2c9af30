"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells.

The parameters have torch's names, shapes and order (``weight_ih_l0``, ``weight_hh_l0``,
``bias_ih_l0``, ``bias_hh_l0``, ``weight_hr_l0`` with projections, then ``..._reverse`` for
the backward direction, layer by layer), so a torch ``state_dict`` converted to lucid
tensors loads as it is. The time loop runs in Python, one cell step per time step and
direction; the gradient flows through the whole unrolled graph.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any

from ... import _factory
from ..._arguments import LARGEST_COUNT, describe
from ..._ops.shape import cat, stack
from .. import functional as F
from .. import init
from .._functional import rnn as cells
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check_size(value, name: str) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if int(value) > LARGEST_COUNT:  # num_layers=10**400 would loop for ever; the signs are torch's checks
        raise ValueError(f"{name} must be at most 2**63 - 1, got {describe(value)}")


def _size_text(shape) -> str:
    return f"[{', '.join(map(str, shape))}]"


class RNNBase(Module):
    """The machinery shared by :class:`RNN`, :class:`LSTM` and :class:`GRU` (torch's ``RNNBase``).

    Examples
    --------
    >>> from lucid import nn
    >>> isinstance(nn.GRU(2, 3), nn.modules.rnn.RNNBase)
    True
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        _check_size(input_size, "input_size")
        _check_size(hidden_size, "hidden_size")
        _check_size(num_layers, "num_layers")
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        kwargs: dict[str, Any] = {"device": device or "cpu", "dtype": dtype}
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes: list[tuple[str, tuple[int, ...]]] = [("weight_ih", (gate_size, layer_input)),
                                                             ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_factory.zeros(*shape, **kwargs)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self: RNNBase | RNNCellBase) -> None:  # RNNCellBase's too
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> lstm = nn.LSTM(3, 4)
        >>> lstm.reset_parameters()
        >>> all(bool((p.abs() <= 0.5).all()) for p in lstm.parameters())
        True
        """
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """Does nothing: lucid keeps no fused weight buffer (torch's cuDNN one). Scripts call it.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.LSTM(2, 3).flatten_parameters()
        """

    @property
    def all_weights(self) -> list:
        """The parameters of each layer and direction, in torch's order: a list of lists.

        Examples
        --------
        >>> from lucid import nn
        >>> [[tuple(w.shape) for w in layer] for layer in nn.RNN(2, 3).all_weights]
        [[(3, 2), (3, 3), (3,), (3,)]]
        """
        per_direction = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        weights = [getattr(self, name) for name in self._flat_weights_names]
        return [weights[i:i + per_direction] for i in range(0, len(weights), per_direction)]

    def _weights(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
        weights = [getattr(self, n + suffix) if hasattr(self, n + suffix) else None for n in names]
        if self.proj_size:
            weights.append(getattr(self, "weight_hr" + suffix))
        return weights

    def _step(self, x, state, weights):
        if self.mode == "LSTM":
            return cells.lstm_cell(x, state, *weights)
        step = {"RNN_TANH": cells.rnn_tanh_cell, "RNN_RELU": cells.rnn_relu_cell, "GRU": cells.gru_cell}[self.mode]
        return step(x, state, *weights)

    def _check_input(self, input) -> bool:
        """Validate the input's rank and width; return whether it has a batch dimension."""
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.shape[-1]}"
            )
        return input.ndim == 3

    def _initial_state(self, hx, batch: int, input, batched: bool):
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size or self.hidden_size
        sizes = [(self.num_layers * directions, batch, real_hidden)]
        if self.mode == "LSTM":
            sizes.append((self.num_layers * directions, batch, self.hidden_size))
        if hx is None:
            return [_factory.zeros(*size, dtype=input.dtype, device=input.device) for size in sizes]
        states = list(hx) if self.mode == "LSTM" else [hx]
        if not batched:
            if any(s.ndim != 2 for s in states):
                ranks = ", ".join(f"{s.ndim}-D" for s in states)
                kind = "hx and cx should also be 2-D" if self.mode == "LSTM" else "hx should also be 2-D"
                raise RuntimeError(f"For unbatched 2-D input, {kind} but got ({ranks}) tensors")
            states = [s.unsqueeze(1) for s in states]
        elif any(s.ndim != 3 for s in states):
            ranks = ", ".join(f"{s.ndim}-D" for s in states)
            kind = "hx and cx should also be 3-D" if self.mode == "LSTM" else "hx should also be 3-D"
            raise RuntimeError(f"For batched 3-D input, {kind} but got ({ranks}) tensors")
        for index, (state, size) in enumerate(zip(states, sizes)):
            if tuple(state.shape) != size:
                label = f"hidden[{index}]" if self.mode == "LSTM" else "hidden"
                raise RuntimeError(f"Expected {label} size {size}, got {_size_text(state.shape)}")
        return states

    def forward(self, input: Tensor, hx: Tensor | tuple[Tensor, Tensor] | None = None) -> tuple[Tensor,
                Tensor | tuple[Tensor, Tensor]]:
        """Run the sequence ``input`` through every layer; return ``output`` and the last hidden state.

        Parameters
        ----------
        input : Tensor
            ``(L, N, input_size)``, or ``(N, L, input_size)`` with ``batch_first``, or
            ``(L, input_size)`` unbatched.
        hx : Tensor or (Tensor, Tensor), optional
            The initial state (zeros if omitted): ``h_0`` of shape
            ``(num_layers * num_directions, N, hidden)``, and for LSTM ``(h_0, c_0)``.

        Returns
        -------
        output : Tensor
            ``(L, N, num_directions * hidden)`` (batch first with ``batch_first``): the last
            layer's output at every step, both directions concatenated.
        h_n : Tensor or (Tensor, Tensor)
            The final state of every layer and direction (for LSTM ``(h_n, c_n)``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> gru = nn.GRU(4, 3, num_layers=2, batch_first=True, bidirectional=True)
        >>> out, h = gru(lucid.randn(5, 7, 4))
        >>> out.shape, h.shape
        ((5, 7, 6), (4, 5, 3))
        """
        batched = self._check_input(input)
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[0], input.shape[1]
        states = self._initial_state(hx, batch, input, batched)
        directions = 2 if self.bidirectional else 1
        layer_input = [input[t] for t in range(steps)]
        finals: list[list[Tensor]] = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                state = tuple(s[index] for s in states) if self.mode == "LSTM" else states[0][index]
                weights = self._weights(layer, direction)
                order = range(steps - 1, -1, -1) if direction else range(steps)
                results: list[Any] = [None] * steps  # each step's, filled in its order
                for t in order:
                    state = self._step(layer_input[t], state, weights)
                    results[t] = state[0] if self.mode == "LSTM" else state
                outputs.append(results)
                for kept, final in zip(finals, state if self.mode == "LSTM" else (state,)):
                    kept.append(final)
            layer_input = [cat([out[t] for out in outputs], dim=1) if directions == 2 else outputs[0][t]
                           for t in range(steps)]
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = [F.dropout(x, self.dropout) for x in layer_input]
        output = stack(layer_input, dim=0)
        final = [stack(kept, dim=0) for kept in finals]
        if not batched:
            output = output.squeeze(1)
            final = [f.squeeze(1) for f in final]
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, (tuple(final) if self.mode == "LSTM" else final[0])

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text


class RNN(RNNBase):
    """An Elman RNN, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu), stacked.

    Parameters
    ----------
    input_size : int
    hidden_size : int
    num_layers : int, default 1
    nonlinearity : {"tanh", "relu"}, default "tanh"
    bias : bool, default True
    batch_first : bool, default False
        Inputs and outputs are ``(N, L, H)`` instead of ``(L, N, H)``.
    dropout : float, default 0.0
        Dropout on the outputs of every layer but the last, in training.
    bidirectional : bool, default False
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> rnn = nn.RNN(3, 5, num_layers=2)
    >>> rnn
    RNN(3, 5, num_layers=2)
    >>> out, h = rnn(lucid.randn(6, 2, 3))
    >>> out.shape, h.shape
    ((6, 2, 5), (2, 2, 5))
    >>> list(rnn.state_dict())[:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A long short-term memory network, stacked: torch's gates ``i, f, g, o`` in that order.

    ``c_t = f * c_{t-1} + i * g`` and ``h_t = o * tanh(c_t)`` (times ``W_hr^T`` with ``proj_size``).

    Parameters
    ----------
    input_size : int
    hidden_size : int
    num_layers : int, default 1
    bias : bool, default True
    batch_first : bool, default False
    dropout : float, default 0.0
    bidirectional : bool, default False
    proj_size : int, default 0
        Project each ``h_t`` to this size (``weight_hr_l{k}``).
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> lstm = nn.LSTM(4, 8, batch_first=True)
    >>> out, (h, c) = lstm(lucid.randn(2, 5, 4))
    >>> out.shape, h.shape, c.shape
    ((2, 5, 8), (1, 2, 8), (1, 2, 8))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """A gated recurrent unit network, stacked: torch's gates ``r, z, n`` in that order.

    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))`` and ``h' = (1 - z) * n + z * h``.

    Parameters
    ----------
    input_size : int
    hidden_size : int
    num_layers : int, default 1
    bias : bool, default True
    batch_first : bool, default False
    dropout : float, default 0.0
    bidirectional : bool, default False
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> gru = nn.GRU(4, 8)
    >>> out, h = gru(lucid.randn(5, 4))  # unbatched: (L, input_size)
    >>> out.shape, h.shape
    ((5, 8), (1, 8))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)


class RNNCellBase(Module):
    """The parameters and checks shared by the cells (torch's ``RNNCellBase``).

    Examples
    --------
    >>> from lucid import nn
    >>> [name for name, _ in nn.LSTMCell(2, 3).named_parameters()]
    ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
    """

    _gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: str | None = None,
                 dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        _check_size(input_size, "input_size")
        _check_size(hidden_size, "hidden_size")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kwargs: dict[str, Any] = {"device": device or "cpu", "dtype": dtype}
        gate_size = self._gates * hidden_size
        self.weight_ih = Parameter(_factory.zeros(gate_size, input_size, **kwargs))
        self.weight_hh = Parameter(_factory.zeros(gate_size, hidden_size, **kwargs))
        if bias:
            self.bias_ih = Parameter(_factory.zeros(gate_size, **kwargs))
            self.bias_hh = Parameter(_factory.zeros(gate_size, **kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _prepare(self, input, hx):
        """The input and states as batches (``hx`` a tuple of states, or None), and whether it was batched."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}"
            )
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        batch = input.shape[0]
        if hx is None:
            zeros = _factory.zeros(batch, self.hidden_size, dtype=input.dtype, device=input.device)
            return input, (zeros,) * (2 if self._gates == 4 else 1), batched
        states = tuple(hx) if self._gates == 4 else (hx,)
        states = tuple(s if batched else s.unsqueeze(0) for s in states)
        for index, state in enumerate(states):
            if state.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{index} batch size {state.shape[0]}")
            if state.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{index} has inconsistent hidden_size: got {state.shape[1]}, expected {self.hidden_size}"
                )
        return input, states, batched

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            text += f", nonlinearity={nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    Parameters
    ----------
    input_size : int
    hidden_size : int
    bias : bool, default True
    nonlinearity : {"tanh", "relu"}, default "tanh"
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> cell = nn.RNNCell(3, 2, nonlinearity="relu")
    >>> cell
    RNNCell(3, 2, nonlinearity=relu)
    >>> cell(lucid.randn(4, 3)).shape
    (4, 2)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """``h'`` for the batch ``input`` ``(N, input_size)`` (or unbatched) and ``hx`` (zeros if omitted).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.RNNCell(3, 2)(lucid.randn(3), lucid.zeros(2)).shape
        (2,)
        """
        input, (h,), batched = self._prepare(input, hx)
        step = cells.rnn_tanh_cell if self.nonlinearity == "tanh" else cells.rnn_relu_cell
        out = step(input, h, *self._weights())
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h, c)`` to ``(h', c')``, torch's gates ``i, f, g, o``.

    Parameters
    ----------
    input_size : int
    hidden_size : int
    bias : bool, default True
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> cell = nn.LSTMCell(3, 2)
    >>> h, c = cell(lucid.randn(4, 3))
    >>> h.shape, c.shape, cell.weight_ih.shape
    ((4, 2), (4, 2), (8, 3))
    """

    _gates = 4

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """``(h', c')`` for the batch ``input`` and ``hx = (h, c)`` (zeros if omitted).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> h, c = nn.LSTMCell(3, 2)(lucid.randn(3))
        >>> h.shape
        (2,)
        """
        input, state, batched = self._prepare(input, hx)
        h, c = cells.lstm_cell(input, state, *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h' = n + z * (h - n)``, torch's gates ``r, z, n``.

    Parameters
    ----------
    input_size : int
    hidden_size : int
    bias : bool, default True
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.GRUCell(3, 2)(lucid.randn(4, 3)).shape
    (4, 2)
    """

    _gates = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """``h'`` for the batch ``input`` and ``hx`` (zeros if omitted).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.GRUCell(3, 2)(lucid.randn(3)).shape
        (2,)
        """
        input, (h,), batched = self._prepare(input, hx)
        out = cells.gru_cell(input, h, *self._weights())
        return out if batched else out.squeeze(0)
