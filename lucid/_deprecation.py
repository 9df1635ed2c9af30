"""The warning for torch's deprecated overloads (``p.data.add_(-lr, p.grad.data)``), given
once per process for all of them, as torch's ``TORCH_WARN_ONCE`` does."""

from __future__ import annotations

import warnings

_warned = [False]


def scalar_first(name: str, scalar: str, tensors: str, function: bool = False) -> None:
    """Warn, the first time in this process, that ``name(Number scalar, tensors)`` (torch's
    old order: ``add_(-lr, grad)``, ``addcmul(input, value, t1, t2)``) is deprecated: torch's
    UserWarning, its text up to the C++ location. ``function`` for ``torch.name(input, ...)``,
    whose signatures name the input and ``out``.

    Examples
    --------
    >>> import warnings
    >>> from lucid._deprecation import scalar_first
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     scalar_first("add_", "alpha", "Tensor other")
    >>> len(caught) <= 1  # none when one of torch's old orders was used before in this process
    True
    """
    if _warned[0]:
        return
    _warned[0] = True
    first, out = ("Tensor input, ", ", Tensor out = None") if function else ("", "")
    old = f"{name}({first}Number {scalar}, {tensors}{', *' + out if function else ''})"
    new = f"{name}({first}{tensors}, *, Number {scalar} = 1{out})"
    warnings.warn(f"This overload of {name} is deprecated:\n\t{old}\n"
                  f"Consider using one of the following signatures instead:\n\t{new}", UserWarning, stacklevel=3)
