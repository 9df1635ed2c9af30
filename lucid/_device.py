"""``lucid.device``: where a tensor lives, spelled and printed as ``torch.device``."""

from __future__ import annotations

from . import _backend


class device(str):
    """A device: ``"cpu"`` (NumPy) or ``"gpu"`` (MLX), with an optional index, as ``torch.device``.

    ``Tensor.device`` returns one, and everything that takes a device name takes one.

    Parameters
    ----------
    type : str or device
        ``"cpu"`` or ``"gpu"`` (``"mps"``, ``"mlx"`` and ``"metal"`` name the gpu too), or
        with an index: ``"cpu:0"``.
    index : int, optional
        The device's index; lucid has one device of each type.

    Notes
    -----
    Unlike ``torch.device``, a lucid device is also the string of its type, so
    ``x.device == "cpu"`` holds where torch would compare a device with a string as unequal.

    Examples
    --------
    >>> import lucid
    >>> d = lucid.device("cpu")
    >>> d, str(d), d.type, d.index
    (device(type='cpu'), 'cpu', 'cpu', None)
    >>> lucid.device("cpu:0")
    device(type='cpu', index=0)
    >>> lucid.zeros(2, device=d).device
    device(type='cpu')
    """

    __slots__ = ("_index",)
    _index: int | None

    def __new__(cls, type: str, index: int | None = None) -> device:  # noqa: A002 - torch's name
        if isinstance(type, device) and index is None:
            return type
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'gpu', got {type!r}")
        name, colon, number = type.partition(":")
        if colon:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(number)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        try:
            name = _backend.canonical_device(name)
        except ValueError:
            raise RuntimeError(
                f"Expected one of cpu, gpu (mps, mlx, metal) device type at start of device string: {type}"
            ) from None
        self = super().__new__(cls, name)
        self._index = index
        return self

    @property
    def type(self) -> str:  # noqa: A003 - torch's name
        """``"cpu"`` or ``"gpu"``.

        Examples
        --------
        >>> import lucid
        >>> lucid.device("mps").type
        'gpu'
        """
        return str.__str__(self)

    @property
    def index(self) -> int | None:  # type: ignore[override]  # torch.device's index, over str.index
        """The index given, or None.

        Examples
        --------
        >>> import lucid
        >>> lucid.device("gpu", 0).index
        0
        """
        return self._index

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self._index})"

    def __str__(self) -> str:
        return self.type if self._index is None else f"{self.type}:{self._index}"

    def __reduce__(self):
        return (device, (self.type, self._index))


CPU, GPU = device("cpu"), device("gpu")


def of(name: str) -> device:
    """The device object for a backend's device name."""
    return CPU if name == "cpu" else GPU
