"""``torch.cuda``'s two questions, answered as torch answers them on a machine without CUDA.

lucid has no CUDA device (its devices are ``"cpu"`` and ``"gpu"``, MLX), so a script's
``torch.device("cuda" if torch.cuda.is_available() else "cpu")`` picks the cpu unchanged.

Examples
--------
>>> import lucid
>>> lucid.device("cuda" if lucid.cuda.is_available() else "cpu")
device(type='cpu')
"""

from __future__ import annotations

__all__ = ["is_available", "device_count"]


def is_available() -> bool:
    """False: lucid has no CUDA device (see :mod:`lucid.accelerator` for its ``"gpu"``).

    Examples
    --------
    >>> import lucid
    >>> lucid.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """0: lucid has no CUDA device.

    Examples
    --------
    >>> import lucid
    >>> lucid.cuda.device_count()
    0
    """
    return 0
