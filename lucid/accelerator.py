"""``torch.accelerator``'s device queries: lucid's accelerator is the ``"gpu"`` device (MLX).

pytorch/examples pick their device with
``torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"``;
these answer for lucid's ``"gpu"``, one device, available where MLX is installed.

Examples
--------
>>> import lucid
>>> device = lucid.accelerator.current_accelerator() if lucid.accelerator.is_available() else "cpu"
>>> lucid.zeros(2, device=device).device == device
True
"""

from __future__ import annotations

from . import _backend
from ._device import device as _device_type

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def is_available() -> bool:
    """Whether the accelerator, lucid's ``"gpu"`` device (MLX), can be used here.

    Examples
    --------
    >>> import lucid
    >>> lucid.accelerator.is_available() == lucid.is_available("gpu")
    True
    """
    return _backend.is_available("gpu")


def current_accelerator(check_available: bool = False) -> _device_type | None:
    """``lucid.device("gpu")`` where MLX is installed, else None (as torch where it has none).

    Parameters
    ----------
    check_available : bool, default False
        As torch's: None unless the accelerator is also available (the same here).

    Examples
    --------
    >>> import lucid
    >>> accelerator = lucid.accelerator.current_accelerator()
    >>> accelerator is None or accelerator.type == "gpu"
    True
    """
    return _device_type("gpu") if is_available() else None


def device_count() -> int:
    """How many accelerator devices there are: 1 where MLX is installed, else 0.

    Examples
    --------
    >>> import lucid
    >>> lucid.accelerator.device_count() in (0, 1)
    True
    """
    return int(is_available())


def _check_available() -> None:
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the current accelerator device: 0, the one there is.

    Examples
    --------
    >>> import lucid
    >>> lucid.accelerator.current_device_index() if lucid.accelerator.is_available() else 0
    0
    """
    _check_available()
    return 0


def set_device_index(device: _device_type | str | int) -> None:
    """Make ``device`` the current accelerator device: only index 0 (``"gpu"``) exists.

    Examples
    --------
    >>> import lucid
    >>> if lucid.accelerator.is_available():
    ...     lucid.accelerator.set_device_index(0)
    """
    _check_available()
    index = device if isinstance(device, int) else (_device_type(device).index or 0)
    if index != 0:
        raise RuntimeError(f"Invalid device index {index}: lucid has one accelerator device, index 0")


def synchronize(device: _device_type | str | int | None = None) -> None:
    """Wait for the accelerator's queued work: lucid's ``"gpu"`` (MLX) computes lazily, when a
    value is read or :func:`lucid.eval` is called, so there is none to wait for.

    Examples
    --------
    >>> import lucid
    >>> lucid.accelerator.synchronize()
    """
