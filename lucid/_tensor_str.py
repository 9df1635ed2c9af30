"""How a tensor prints: torch 2.13's ``torch/_tensor_str.py``, character for character.

The logic is torch's, step for step (the formatter's choice of integer, fixed or scientific
notation, the line wrapping, the summary with ``...``, the suffixes); only the values come
differently: as a host array (``Tensor.numpy()`` of a detached tensor), read with indexing,
``shape`` and ``tolist()`` alone, so this module knows no array library. Python formats the
values as doubles, as torch's does (``tolist()`` and ``item()`` give Python numbers).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

from . import _dtype


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES: dict[str, dict[str, float]] = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set the options for printing tensors, as ``torch.set_printoptions``.

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point of floating-point values (default 4).
    threshold : float, optional
        Tensors of more elements than this print summarised, with ``...`` (default 1000).
    edgeitems : int, optional
        Items shown at the start and at the end of each summarised dimension (default 3).
    linewidth : int, optional
        The characters per line before a line break (default 80).
    profile : {"default", "short", "full"}, optional
        A preset of the four above, which any of them given with it overrides.
    sci_mode : bool, optional
        Scientific notation always (True) or never (False); None (the default, and what
        every call without it sets) lets the values decide, as torch does.

    Notes
    -----
    As torch's, each call resets ``sci_mode`` to its argument, and an unknown ``profile`` is
    ignored. Torch keeps ``get_printoptions`` and the ``printoptions`` context manager in
    ``torch._tensor_str``; lucid keeps them in ``lucid._tensor_str``.

    Examples
    --------
    >>> import lucid
    >>> lucid.set_printoptions(precision=2)
    >>> lucid.tensor([1.12345])
    tensor([1.12])
    >>> lucid.set_printoptions(threshold=5)
    >>> lucid.arange(10)
    tensor([0, 1, 2,  ..., 7, 8, 9])
    >>> lucid.set_printoptions(profile="default")
    >>> lucid.tensor([1.12345])
    tensor([1.1235])
    """
    given: dict[str, float | None] = dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                                          linewidth=linewidth)
    chosen = _PROFILES.get(profile or "", {}) | {name: value for name, value in given.items() if value is not None}
    for name, value in chosen.items():
        setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`.

    Examples
    --------
    >>> from lucid._tensor_str import get_printoptions
    >>> get_printoptions()
    {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """The print options of :func:`set_printoptions` for the duration of a ``with`` block.

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor_str import printoptions
    >>> with printoptions(precision=1):
    ...     print(lucid.tensor([0.25, 2.0]))
    tensor([0.2, 2.0])
    >>> print(lucid.tensor([0.25, 2.0]))
    tensor([0.2500, 2.0000])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """torch's ``_Formatter``: one width and one notation for all the values shown."""

    def __init__(self, floating: bool, values: list) -> None:
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for value in values:
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        nonzero_finite = [v for v in values if math.isfinite(v) and v != 0]
        if not nonzero_finite:
            return
        magnitudes = [abs(v) for v in nonzero_finite]
        smallest, largest = min(magnitudes), max(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in nonzero_finite)
        self.sci_mode = (largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            widths = [len(f"{v:.{precision}e}") for v in nonzero_finite]
        elif self.int_mode:  # the "." after an integer-valued float counts too
            widths = [len(f"{v:.0f}") + 1 for v in nonzero_finite]
        else:
            widths = [len(f"{v:.{precision}f}") for v in nonzero_finite]
        self.max_width = max(self.max_width, *widths)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if not self.floating_dtype:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return (self.max_width - len(text)) * " " + text


def _vector_str(array, indent: int, summarize: bool, formatter: _Formatter) -> str:
    element_length = formatter.width() + 2  # with the comma and the space after it
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        data = ([formatter.format(v) for v in array[:edge].tolist()] + [" ..."]
                + [formatter.format(v) for v in array[-edge:].tolist()])
    else:
        data = [formatter.format(v) for v in array.tolist()]
    lines = [", ".join(data[i:i + elements_per_line]) for i in range(0, len(data), elements_per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(array, indent: int, summarize: bool, formatter: _Formatter) -> str:
    dim = len(array.shape)
    if dim == 0:
        return formatter.format(array.tolist())
    if dim == 1:
        return _vector_str(array, indent, summarize, formatter)
    size, edge = array.shape[0], PRINT_OPTS.edgeitems
    if summarize and size > 2 * edge:
        rows = [*range(edge), None, *range(size - edge, size)]
    else:
        rows = list(range(size))
    slices = ["..." if i is None else _tensor_str_with_formatter(array[i], indent + 1, summarize, formatter)
              for i in rows]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _shown_values(array) -> list:
    """The values the summary shows, flat: what torch's ``get_summarized_data`` keeps."""
    dim, edge = len(array.shape), PRINT_OPTS.edgeitems
    if dim == 0:
        return [array.tolist()]
    size = array.shape[0]
    if dim == 1:
        # torch's self[-0:] is the whole vector: with edgeitems 0 it keeps every value
        return array[:edge].tolist() + array[-edge:].tolist() if size > 2 * edge else array.tolist()
    if not edge:
        return []
    rows = [*range(edge), *range(size - edge, size)] if size > 2 * edge else range(size)
    return [value for i in rows for value in _shown_values(array[i])]


def _flat(values) -> list:
    if not isinstance(values, list):
        return [values]
    return [v for part in values for v in _flat(part)]


def _numel(shape) -> int:
    return math.prod(shape)


def _tensor_str(array, floating: bool, indent: int) -> str:
    """The bracketed values of the host ``array``, laid out to start at column ``indent``."""
    if _numel(array.shape) == 0:
        return "[]"
    summarize = _numel(array.shape) > PRINT_OPTS.threshold
    formatter = _Formatter(floating, _shown_values(array) if summarize else _flat(array.tolist()))
    return _tensor_str_with_formatter(array, indent, summarize, formatter)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int, force_newline: bool) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _host(tensor):
    return tensor.detach().numpy()


def _size(shape) -> str:
    return "size=" + str(tuple(shape))


def tensor_repr(tensor, prefix: str = "tensor(") -> str:
    """``repr(tensor)`` as torch writes it, for a dense tensor or a :class:`lucid.SparseTensor`.

    Notes
    -----
    The dtype and the sparse layout print as lucid names them (``dtype=lucid.float64``,
    ``layout=lucid.sparse_coo``) where torch writes ``torch.``. A tensor on lucid's gpu prints
    ``device='gpu'``, its device's ``str``, as torch prints ``device='cuda:0'`` (the default
    device, the cpu, is not printed, as in torch).

    Examples
    --------
    >>> import lucid
    >>> w = lucid.tensor([1.0, 2.5], requires_grad=True)
    >>> print(tensor_repr(w * 2))
    tensor([2., 5.], grad_fn=<MulBackward0>)
    """
    indent = len(prefix)
    suffixes = []
    if tensor.device.type != "cpu":  # torch names every device but the default one
        suffixes.append(f"device='{tensor.device}'")
    default = _dtype.default_float
    dtype_suffix = "dtype=" + str(tensor.dtype)
    if tensor.is_sparse:
        tensor_str = _sparse_str(tensor, indent, suffixes)
        if tensor.dtype not in (default, _dtype.int64, _dtype.bool_):
            suffixes.append(dtype_suffix)
        suffixes.append("layout=lucid." + str(tensor.layout))
    elif _numel(tensor.shape) == 0:
        if len(tensor.shape) != 1:  # (0,) is what "[]" says; any other empty shape is printed
            suffixes.append(_size(tensor.shape))
        if tensor.dtype is not default:  # no values tell an empty tensor's dtype
            suffixes.append(dtype_suffix)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(_size(tensor.shape))
        if tensor.dtype not in (default, _dtype.int64, _dtype.bool_):
            suffixes.append(dtype_suffix)
        tensor_str = _tensor_str(_host(tensor), tensor.dtype.is_floating_point, indent)
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{tensor.grad_fn.name}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=tensor.is_sparse)


def _sparse_str(tensor, indent: int, suffixes: list[str]) -> str:
    """torch's COO layout: its indices and values, each as a tensor, then its size and nnz."""
    suffixes += [_size(tensor.shape), f"nnz={tensor._nnz()}"]
    parts = []
    for name, part in (("indices", tensor.indices()), ("values", tensor.values())):
        part_prefix = name + "=tensor("
        text = _tensor_str(_host(part), part.dtype.is_floating_point, indent + len(part_prefix))
        if _numel(part.shape) == 0:
            text += ", " + _size(part.shape)
        parts.append(part_prefix + text + ")")
    return (",\n" + " " * indent).join(parts)
