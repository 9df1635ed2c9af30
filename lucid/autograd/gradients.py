"""``lucid.autograd.grad`` and ``lucid.autograd.backward``: the engine called on several
tensors at once, as torch's functions of those names."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Union

from .. import _autograd
from .._factory import zeros_like
from .._tensor import Tensor

Tensors = Union[Tensor, Sequence[Tensor]]
Gradients = Union[Tensor, Sequence[Union[Tensor, None]], None]

def _as_tuple(tensors) -> tuple:
    return (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)


def _start(outputs: tuple, grad_outputs: Gradients) -> list:
    """The array each output's walk starts from, after torch's checks."""
    grads = [None] * len(outputs) if grad_outputs is None else list(_as_tuple(grad_outputs))
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    started = []
    for i, (output, grad) in enumerate(zip(outputs, grads)):
        if not isinstance(output, Tensor):
            raise TypeError(f"Expected output to be a lucid.Tensor, got {type(output).__name__}")
        if grad is not None and not isinstance(grad, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(grad).__name__}")
        started.append(_autograd.output_gradient(output, grad, i))
    for i, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    return started


def _inputs(inputs, caller: str) -> tuple:
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{caller}()` cannot be empty.")
    for tensor in inputs:
        if not isinstance(tensor, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(tensor).__name__}")
    return inputs


def grad(outputs: Tensors, inputs: Tensors | dict[str, Tensor], grad_outputs: Gradients = None,
         retain_graph: bool | None = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...] | dict[str, Tensor | None]:
    """The gradients of ``outputs`` with respect to ``inputs``, returned rather than
    accumulated: no leaf's ``.grad`` changes (torch's ``torch.autograd.grad``).

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        What is differentiated; their gradients add up.
    inputs : Tensor, sequence of Tensor, or dict of str to Tensor
        The tensors (leaves or not, each requiring grad) to differentiate with respect to;
        a dict gives a dict of gradients under the same keys.
    grad_outputs : Tensor or sequence of (Tensor or None), optional
        d(loss)/d(output) for each output (the vector of the vector-Jacobian product);
        None stands for 1 and is allowed only for a single-element output.
    retain_graph : bool, optional
        Keep the graph for another backward; by default False.
    create_graph : bool, default False
        Must be False (see Notes).
    only_inputs : bool, default True
        Deprecated and ignored, as in torch (False warns).
    allow_unused : bool, optional
        Return None for an input no output depends on, rather than raise. By default
        False, or True with ``materialize_grads``.
    is_grads_batched : bool, default False
        Must be False (lucid has no vmap).
    materialize_grads : bool, default False
        Zeros instead of None for such inputs.

    Returns
    -------
    tuple of (Tensor or None), or dict
        One gradient per input, shaped as the input.

    Raises
    ------
    RuntimeError
        As torch: an input or output that does not require grad, an unused input without
        ``allow_unused``, a missing ``grad_outputs`` entry for an output of several
        elements, a shape mismatch, or a graph already freed.
    NotImplementedError
        For ``create_graph=True`` and ``is_grads_batched=True``.

    Notes
    -----
    First order only: lucid's backward functions compute on arrays, so a gradient has no
    graph of its own and ``create_graph=True`` (double backward, gradient penalties) is
    refused rather than giving a gradient that silently does not differentiate. A
    non-leaf that called ``retain_grad()`` gets its ``.grad``, as in torch.

    Examples
    --------
    >>> import lucid
    >>> from lucid import autograd
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> w = lucid.tensor([3.0], requires_grad=True)
    >>> y = (x * w).sum()
    >>> gx, gw = autograd.grad(y, [x, w])
    >>> gx.tolist(), gw.tolist(), x.grad is None
    ([3.0, 3.0], [3.0], True)
    >>> unused = lucid.ones(1, requires_grad=True)
    >>> autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None
    True
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if create_graph:
        raise NotImplementedError(_autograd.NO_HIGHER_ORDER)
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported: lucid has no vmap; call grad once per "
                                  "row of grad_outputs")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use lucid.autograd.backward.",
                      FutureWarning, stacklevel=2)
    keys = list(inputs) if isinstance(inputs, dict) else None
    tensors = _inputs(inputs.values() if isinstance(inputs, dict) else inputs, "grad")
    outputs = _as_tuple(outputs)
    started = _start(outputs, grad_outputs)
    for tensor in tensors:
        if not tensor.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    found = _autograd.gradients(outputs, started, tensors, bool(retain_graph))
    for i, (tensor, gradient) in enumerate(zip(tensors, found)):
        if gradient is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                found[i] = zeros_like(tensor)
    return dict(zip(keys, found)) if keys is not None else tuple(found)


def backward(tensors: Tensors, grad_tensors: Gradients = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Gradients = None,
             inputs: Tensors | None = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves below them
    (torch's ``torch.autograd.backward``: ``Tensor.backward`` for several tensors at once).

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Their gradients add up.
    grad_tensors : Tensor or sequence of (Tensor or None), optional
        d(loss)/d(tensor) for each tensor; None stands for 1, for a single-element tensor.
    retain_graph : bool, optional
        Keep the graph for another backward; by default False.
    create_graph : bool, default False
        Must be False (see :func:`grad`).
    grad_variables : optional
        torch's old name of ``grad_tensors`` (deprecated).
    inputs : Tensor or sequence of Tensor, optional
        Accumulate into these tensors' ``.grad`` only (leaves or not).

    Examples
    --------
    >>> import lucid
    >>> from lucid import autograd
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> autograd.backward([x * 2, (x * 3).sum()], [lucid.ones(2), None])
    >>> x.grad.tolist()
    [5.0, 5.0]
    """
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "'backward()'. Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    if create_graph:
        raise NotImplementedError(_autograd.NO_HIGHER_ORDER)
    if inputs is not None:
        inputs = _inputs(inputs, "backward")
        for tensor in inputs:
            if not tensor.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    tensors = _as_tuple(tensors)
    if not tensors:
        return
    _autograd.run_backward_many(tensors, _start(tensors, grad_tensors), bool(retain_graph), inputs)
