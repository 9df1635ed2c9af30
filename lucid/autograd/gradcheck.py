"""``lucid.autograd.gradcheck``: a function's gradients against central finite differences,
as torch's ``torch.autograd.gradcheck`` (its slow, element by element mode)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

from .._autograd import no_grad
from .._factory import zeros, zeros_like
from .._ops.shape import stack
from .._tensor import Tensor
from .gradients import grad


class GradcheckError(RuntimeError):
    """What :func:`gradcheck` raises when a Jacobian does not match (a RuntimeError, as torch's).

    Examples
    --------
    >>> from lucid.autograd.gradcheck import GradcheckError
    >>> issubclass(GradcheckError, RuntimeError)
    True
    """


def _as_tuple(values) -> tuple:
    return values if isinstance(values, tuple) else tuple(values) if isinstance(values, list) else (values,)


def _flat(t: Tensor) -> Tensor:
    """``t``'s storage seen as one row (writes through it reach ``t``), outside the graph."""
    return t.detach().reshape(-1)


def _analytical(outputs: tuple, inputs: list) -> list:
    """Per differentiable output, per input: the Jacobian (input elements by output elements)
    that backward computes, one output element at a time."""
    jacobians = []
    for output in outputs:
        columns: list[list] = [[] for _ in inputs]
        for j in range(output.numel()):
            seed = zeros(output.numel(), dtype=output.dtype, device=output.device)
            seed[j] = 1.0
            # inputs is a list, so a tuple comes back: one gradient (or None) per input
            found = cast(tuple, grad(output, inputs, seed.reshape(output.shape), retain_graph=True,
                                     allow_unused=True))
            for column, got, source in zip(columns, found, inputs):
                column.append((zeros_like(source) if got is None else got).reshape(-1))
        jacobians.append([_matrix(column, source, output, 1) for column, source in zip(columns, inputs)])
    return jacobians


def _numerical(func: Callable, args: tuple, inputs: list, places: list, outputs: tuple, eps: float) -> list:
    """The same Jacobians from central differences: each element of each input moved by
    ``±eps`` in place (as torch does) and restored exactly."""
    jacobians: list[list] = [[] for _ in outputs]
    for source in inputs:
        flat = _flat(source)
        rows: list[list] = [[] for _ in outputs]
        for k in range(source.numel()):
            with no_grad():
                original = flat[k].item()
                flat[k] = original + eps
                plus = _as_tuple(func(*args))
                flat[k] = original - eps
                minus = _as_tuple(func(*args))
                flat[k] = original
            for row, place in zip(rows, places):
                row.append((_flat(plus[place]) - _flat(minus[place])) / (2 * eps))
        for per_output, row, output in zip(jacobians, rows, outputs):
            per_output.append(_matrix(row, source, output, 0))
    return jacobians


def _matrix(vectors: list, source: Tensor, output: Tensor, dim: int) -> Tensor:
    """The Jacobian of ``output`` with respect to ``source`` from its columns (``dim=1``) or rows."""
    if not vectors:
        return zeros(source.numel(), output.numel(), dtype=output.dtype, device=output.device)
    return stack(vectors, dim)


def _differentiable(outputs) -> list:
    """The positions of the outputs that have a gradient (floating point, requiring grad)."""
    return [k for k, out in enumerate(_as_tuple(outputs))
            if isinstance(out, Tensor) and out.dtype.is_floating_point and out.requires_grad]


def gradcheck(func: Callable[..., Tensor | Sequence[Tensor]], inputs: Tensor | Sequence[Any], *,
              eps: float = 1e-06, atol: float = 1e-05, rtol: float = 0.001, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    For every differentiable output and every input that requires grad, the Jacobian that
    backward gives (one output element at a time) must match the one of finite differences
    (each input element moved by ``±eps``) elementwise: ``|a - n| <= atol + rtol * |n|``.

    Parameters
    ----------
    func : callable
        Takes ``inputs`` and returns a Tensor or a tuple of them.
    inputs : Tensor or sequence
        The arguments; those that are floating point Tensors requiring grad are checked
        (float64 ones, else the check warns as torch's: float32 differences are too coarse).
    eps, atol, rtol : float
        The step and the tolerances, torch's defaults.
    raise_exception : bool, default True
        Raise :class:`GradcheckError` on a mismatch (else return False).
    nondet_tol, check_undefined_grad, check_grad_dtypes, check_backward_ad, fast_mode, masked
        torch's; see Notes.
    check_batched_grad, check_batched_forward_grad, check_forward_ad : bool, default False
        True raises NotImplementedError: lucid has no vmap and no forward-mode AD.

    Returns
    -------
    bool
        True if every Jacobian matches.

    Notes
    -----
    ``fast_mode=True`` runs the full, element by element check (stricter than torch's fast
    one). lucid's backward is deterministic, so ``nondet_tol`` has nothing to tolerate;
    ``check_undefined_grad`` and ``check_grad_dtypes`` add no check here (a custom
    Function's backward gets zeros for unused outputs, and the engine casts gradients to
    their input's dtype); ``check_backward_ad=False`` checks nothing; ``masked=True``
    (sparse inputs) raises NotImplementedError.

    Examples
    --------
    >>> import lucid
    >>> from lucid.autograd import Function, gradcheck
    >>> x = lucid.tensor([0.5, -1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).tanh(), (x,))
    True
    >>> class WrongSquare(Function):
    ...     @staticmethod
    ...     def forward(ctx, t):
    ...         ctx.save_for_backward(t)
    ...         return t * t
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         t, = ctx.saved_tensors
    ...         return 2.1 * t * g
    >>> gradcheck(WrongSquare.apply, (x,), raise_exception=False)
    False
    """
    for flag, name in ((check_batched_grad, "check_batched_grad"), (check_batched_forward_grad,
                        "check_batched_forward_grad"), (check_forward_ad, "check_forward_ad"), (masked, "masked")):
        if flag:
            raise NotImplementedError(f"gradcheck({name}=True) is not supported: lucid has no vmap, no forward-mode "
                                      "AD and no masked (sparse) inputs")
    args = _as_tuple(inputs)
    checked = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and a.requires_grad and a.dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=2)
    if not check_backward_ad:
        return True
    results = _as_tuple(func(*args))
    places = _differentiable(results)
    outputs = tuple(results[k] for k in places)
    analytical = _analytical(outputs, checked)
    numerical = _numerical(func, args, checked, places, outputs, eps)
    for o, (per_output, per_numeric) in enumerate(zip(analytical, numerical)):
        for i, (a, n) in enumerate(zip(per_output, per_numeric)):
            if not bool(((a - n).abs() <= atol + rtol * n.abs()).all()):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {o} with respect to input {i},\n"
                                     f"numerical:{n}\nanalytical:{a}\n")
    return True
