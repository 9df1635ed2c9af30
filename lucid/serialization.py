"""``lucid.save`` and ``lucid.load``: checkpoints as plain safetensors files, never pickles.

A checkpoint is one safetensors file. Its tensors hold every Tensor of the saved object
(as host bytes, whatever their device); its ``__metadata__`` holds the structure around
them as JSON under ``"lucid.structure"``, with ``"lucid.format"`` giving the version of
that encoding. Loading reads JSON and numbers only, so no file can run code, and every
way a file can be damaged ends in one ValueError that names the file.

The structure encodes each value as JSON, tagged where JSON alone would lose something:

=====================  ================================================================
value                  JSON
=====================  ================================================================
None, bool, str        themselves
int                    itself, or ``{"int": "<digits>"}`` beyond 2**53
float                  itself (shortest repr, ``-0.0`` kept), or ``{"float": "nan"}``,
                       ``"inf"``, ``"-inf"``
list                   a JSON list
tuple                  ``{"tuple": [...]}``
dict                   ``{"dict": [[key, value], ...]}`` (keys keep their type);
                       ``"odict"`` for OrderedDict, ``"counter"`` for Counter
Tensor, Parameter      ``{"tensor": name, "dtype", "shape", "device", "requires_grad",
                       "parameter"}`` naming its entry in the file
lucid dtype            ``{"dtype": "float32"}``
NumPy array, scalar    ``{"ndarray": name}``, ``{"npscalar": name}``
=====================  ================================================================
"""

from __future__ import annotations

import collections
import decimal
import json
import math
import os
import re
import reprlib
import warnings
from collections.abc import Callable
from typing import Any, BinaryIO, NoReturn

from . import _backend
from . import _checkpoint_file
from . import _dtype
from ._backend import safetensors_file as _file
from ._sparse import SparseTensor
from ._tensor import Tensor
from .nn.parameter import Parameter

FORMAT_KEY = "lucid.format"
STRUCTURE_KEY = "lucid.structure"
FORMAT_VERSION = "1"
MAX_DEPTH = 200  # nesting beyond this is refused on save and on load, well inside Python's recursion limit
_EXACT_INT = 2**53  # larger ints are written as strings, so that every JSON reader keeps them exact
# Python's default limit on int <-> str conversion (a guard against quadratic time): the largest
# int a checkpoint stores, and reads, has this many digits, whatever sys.set_int_max_str_digits says
MAX_INT_DIGITS = 4300
_INT_DIGITS = re.compile(rf"-?[0-9]{{1,{MAX_INT_DIGITS}}}")

_SCALARS = (type(None), bool, str)
_MAPPINGS: dict[type, str] = {dict: "dict", collections.OrderedDict: "odict", collections.Counter: "counter"}
_MAPPING_TYPES = {tag: kind for kind, tag in _MAPPINGS.items()}
_DTYPE_NAMES = {d.name for d in _dtype.ALL}
_TAGS = {"int", "float", "tuple", "tensor", "dtype", "ndarray", "npscalar", *_MAPPING_TYPES}


# --- paths, for messages ------------------------------------------------------------------
def _at(path: str) -> str:
    return path or "the object itself"


def _child(path: str, key) -> str:
    return f"{path or 'obj'}[{key!r}]"


# --- saving ------------------------------------------------------------------------------
class _Encoder:
    """Turns an object into JSON-ready structure plus the host arrays it names."""

    def __init__(self):
        self.arrays: dict = {}
        self._active: set = set()  # ids of the containers on the current path (cycles)

    def _name(self, path: str) -> str:
        base = path.replace("obj[", "").replace("][", ".").replace("]", "").replace("'", "") or "obj"
        name, n = base, 1
        while name in self.arrays or name == "__metadata__":
            n += 1
            name = f"{base}#{n}"
        return name

    def encode(self, value, path: str = "", depth: int = 0):
        if depth > MAX_DEPTH:
            raise TypeError(f"lucid.save cannot store {_at(path)}: the object is nested deeper than {MAX_DEPTH} levels")
        kind = type(value)
        if kind in _SCALARS:
            return value
        if kind is int:
            return value if abs(value) <= _EXACT_INT else {"int": self._digits(value, path)}
        if kind is float:
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, Tensor):
            return self._tensor(value, path)
        if kind is _dtype.dtype:
            return {"dtype": value.name}
        if _file.is_host_value(value):
            return self._host(value, path)
        if kind in (list, tuple) or kind in _MAPPINGS:
            if id(value) in self._active:
                raise TypeError(f"lucid.save cannot store {_at(path)}: it contains itself (a cycle)")
            self._active.add(id(value))
            try:
                if kind is list:
                    return [self.encode(v, _child(path, i), depth + 1) for i, v in enumerate(value)]
                if kind is tuple:
                    return {"tuple": [self.encode(v, _child(path, i), depth + 1) for i, v in enumerate(value)]}
                return {_MAPPINGS[kind]: [[self._key(k, path), self.encode(v, _child(path, k), depth + 1)]
                                          for k, v in value.items()]}
            finally:
                self._active.discard(id(value))
        raise TypeError(f"lucid.save cannot store {_at(path)}: {_what(value)} is not one of the types a "
                        "checkpoint holds (tensors, numbers, strings, bools, None, and lists, tuples and "
                        "dicts of them)")

    @staticmethod
    def _digits(value: int, path: str) -> str:
        if abs(value) >= 10**MAX_INT_DIGITS:
            raise TypeError(f"lucid.save cannot store {_at(path)}: an int of more than {MAX_INT_DIGITS} digits (a "
                            f"checkpoint holds ints of up to {MAX_INT_DIGITS} digits, Python's default limit for "
                            "converting ints to text)")
        return str(decimal.Decimal(value))  # exact, and free of the interpreter's digit limit

    def _key(self, key, path: str):
        kind = type(key)
        if kind in _SCALARS or kind in (int, float) or (
            kind is tuple and all(type(k) in (*_SCALARS, int, float) for k in key)
        ):
            return self.encode(key, path)
        raise TypeError(f"lucid.save cannot store the key {key!r} of {_at(path)}: dict keys must be str, int, "
                        "float, bool, None or tuples of them")

    def _tensor(self, tensor: Tensor, path: str):
        if type(tensor) not in (Tensor, Parameter):
            raise TypeError(f"lucid.save cannot store {_at(path)}: a {type(tensor).__name__} (only Tensor and "
                            "nn.Parameter are stored as themselves)")
        name = self._name(path)
        self.arrays[name] = tensor.detach().numpy()
        return {"tensor": name, "dtype": tensor.dtype.name, "shape": list(tensor.shape), "device": tensor.device,
                "requires_grad": tensor.requires_grad, "parameter": type(tensor) is Parameter}

    def _host(self, value, path: str):
        if _file.host_dtype_name(value) is None:
            raise TypeError(f"lucid.save cannot store {_at(path)}: a {_file.describe_host(value)} (lucid "
                            "stores NumPy values of dtype bool, int32, int64, float16, float32 and float64)")
        name = self._name(path)
        self.arrays[name] = value
        return {"npscalar" if _file.is_host_scalar(value) else "ndarray": name}


def _what(value) -> str:
    if isinstance(value, SparseTensor):
        return "a SparseTensor (save its to_dense(), or its indices and values)"
    if callable(value) and getattr(value, "__name__", "") == "<lambda>":
        return "a lambda"
    if isinstance(value, (set, frozenset)):
        return f"a {type(value).__name__} (its order is not kept: use a list)"
    hint = " (save its state_dict() instead)" if callable(getattr(value, "state_dict", None)) else ""
    return f"a {type(value).__module__}.{type(value).__qualname__}{hint}"


def _encode(obj):
    """The arrays and the metadata of ``obj``'s file (TypeError for what cannot be stored)."""
    encoder = _Encoder()
    structure = encoder.encode(obj)
    metadata = {FORMAT_KEY: FORMAT_VERSION, STRUCTURE_KEY: json.dumps(structure, allow_nan=False,
                                                                      separators=(",", ":"))}
    return encoder.arrays, metadata


def save(obj: object, f: str | os.PathLike[str] | BinaryIO) -> None:
    """Save ``obj`` (tensors, numbers, strings and containers of them) to a checkpoint file.

    The file is a plain safetensors file: its tensors are the object's tensors, its metadata
    the structure around them as JSON. Anything a training run saves fits: module,
    optimizer, scheduler, wrapper, ``AveragedModel`` and schedule state dicts, any mix of
    them, and Python numbers (NaN, infinities, -0.0, ints of up to 4300 digits), strings,
    bools and None.

    Parameters
    ----------
    obj : object
        Nested dicts (also OrderedDict and Counter), lists and tuples of Tensors (every
        dtype, shape and device), NumPy arrays and scalars, lucid dtypes, ints, floats,
        strs, bools and None. Dict keys may be str, int, float, bool, None or tuples of them.
    f : str, os.PathLike or binary file object
        Where to write. A path is written atomically: the bytes go to a temporary file in
        the same folder, are flushed to disk, and the file is renamed over ``f``, so that a
        process killed at any moment leaves the previous file or the complete new one; the
        next save of ``f`` removes the temporary file a killed save left. The new file keeps
        the old one's permission bits. A symbolic link is written through and kept, as
        ``open(f, "wb")`` would. A file object is written at its position and flushed (no
        atomicity).

    Raises
    ------
    TypeError
        For anything it cannot store faithfully (functions, arbitrary objects, sets,
        generators, SparseTensors, NumPy object arrays, cycles, over 200 levels of nesting,
        ints of more than 4300 digits), naming where the value sits inside ``obj``; nothing
        is written then. Also if ``f`` is neither a str path nor a binary file object.
    ValueError
        If ``f`` names a directory, a FIFO, a device or a socket (not a regular file).
    OSError
        If the file cannot be written (a missing folder, no permission, a full disk),
        naming ``f``; the old file is left as it was.

    Notes
    -----
    Tensors are written from host memory with their device recorded, so a checkpoint taken
    on ``"gpu"`` loads on ``"cpu"`` (``map_location="cpu"``) where MLX is not installed.
    Where torch pickles, lucid never does: :func:`load` runs no code whatever the file holds.

    Examples
    --------
    >>> import io, lucid
    >>> buffer = io.BytesIO()
    >>> lucid.save({"step": 3, "weights": [lucid.ones(2)], "loss": float("nan")}, buffer)
    >>> _ = buffer.seek(0)
    >>> lucid.load(buffer)
    {'step': 3, 'weights': [tensor([1., 1.])], 'loss': nan}
    """
    data = _file.encode(*_encode(obj))  # everything is checked before any file is touched
    if isinstance(f, (str, os.PathLike)):
        _checkpoint_file.write_atomically(_checkpoint_file.fspath(f), data)
        return
    if not callable(getattr(f, "write", None)):
        raise TypeError(f"f must be a path or a binary file object, got {type(f).__name__}")
    _checkpoint_file.write_all(f, data)
    if callable(getattr(f, "flush", None)):
        f.flush()


# --- loading -----------------------------------------------------------------------------
def _target_device(map_location):
    """The one device ``map_location`` names, None (each tensor's own), or the callable itself."""
    if map_location is None or (callable(map_location) and not isinstance(map_location, (str, type))):
        return map_location
    try:
        return _backend.canonical_device(map_location)
    except ValueError:
        raise ValueError(f"map_location must be None, 'cpu' or 'gpu', got {map_location!r} (or a lucid.device, "
                         "or a callable of a tensor and its saved device)") from None


def _check_load_options(f, pickle_module, weights_only, mmap, pickle_load_args: dict) -> None:
    """torch's keywords of ``torch.load``, where lucid can honour them (it never unpickles)."""
    if weights_only not in (None, True, False):
        raise TypeError(f"weights_only must be a bool or None, got {weights_only!r}")
    if pickle_module is not None:
        if weights_only is False:
            raise ValueError("lucid.load never unpickles (a checkpoint is a safetensors file), so pickle_module "
                             "cannot be used; leave it None")
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if mmap:
        if not isinstance(f, (str, os.PathLike)):
            raise ValueError("f must be a file path in order to use the mmap argument")
        raise ValueError("mmap=True is not supported: lucid.load reads the whole file, it does not map it "
                         "into memory")
    if pickle_load_args:
        if weights_only is False:
            raise ValueError(f"lucid.load never unpickles, so pickle_load_args ({', '.join(pickle_load_args)}) "
                             "cannot be honoured")
        warnings.warn("pickle_load_args only works if `weights_only=False`.", UserWarning, stacklevel=3)


def _read(f):
    """The metadata and arrays of the safetensors file ``f``, and the name to give it in messages."""
    if isinstance(f, (str, os.PathLike)):
        source = _checkpoint_file.fspath(f)
        handle, size = _checkpoint_file.open_regular(source)
        with handle:
            return (*_file.read(handle, source, size), source)
    if not callable(getattr(f, "read", None)):
        raise TypeError(f"f must be a path or a binary file object, got {type(f).__name__}")
    source = str(getattr(f, "name", None) or f"<{type(f).__name__}>")
    return (*_file.read(f, source), source)


class _Decoder:
    """Rebuilds an object from its structure and the file's arrays, checking as it goes."""

    def __init__(self, arrays: dict, device, source: str):
        self.arrays, self.device, self.source = arrays, device, source

    def fail(self, path: str, problem: str) -> NoReturn:
        raise ValueError(f"{self.source}: the lucid structure is broken at {_at(path)}: {problem}")

    def decode(self, node, path: str = "", depth: int = 0):
        if depth > MAX_DEPTH:
            self.fail(path, f"nested deeper than {MAX_DEPTH} levels")
        if node is None or type(node) in (bool, str, int, float):
            return node
        if type(node) is list:
            return [self.decode(v, _child(path, i), depth + 1) for i, v in enumerate(node)]
        if type(node) is not dict:
            self.fail(path, f"unexpected JSON {type(node).__name__}")
        tag = "tensor" if "tensor" in node else next(iter(node), None)
        if tag not in _TAGS or (tag != "tensor" and len(node) != 1):
            self.fail(path, f"unknown entry {sorted(node)!r}")
        body = node[tag]
        if tag == "int":
            if type(body) is not str or not _INT_DIGITS.fullmatch(body):
                self.fail(path, f"an int must be written as up to {MAX_INT_DIGITS} digits, got {reprlib.repr(body)}")
            return int(decimal.Decimal(body))  # exact, and free of the interpreter's digit limit
        if tag == "float":
            if body not in ("nan", "inf", "-inf"):
                self.fail(path, f"a tagged float must be 'nan', 'inf' or '-inf', got {body!r}")
            return float(body)
        if tag == "dtype":
            if type(body) is not str or body not in _DTYPE_NAMES:
                self.fail(path, f"unknown dtype {body!r}")
            return _dtype.from_name(body)
        if tag == "tuple":
            if type(body) is not list:
                self.fail(path, "a tuple must hold a JSON list")
            return tuple(self.decode(v, _child(path, i), depth + 1) for i, v in enumerate(body))
        if tag in _MAPPING_TYPES:
            return self._mapping(_MAPPING_TYPES[tag], body, path, depth)
        if tag == "tensor":
            return self._tensor(node, path)
        return self._host(tag, body, path)

    def _mapping(self, kind, pairs, path: str, depth: int):
        if type(pairs) is not list or not all(type(p) is list and len(p) == 2 for p in pairs):
            self.fail(path, "a dict must hold a list of [key, value] pairs")
        result = kind()
        for key_node, value_node in pairs:
            key = self.decode(key_node, path, depth + 1)
            if not _hashable_key(key):
                self.fail(path, f"a dict key must be a str, number, bool, None or tuple of them, got {key!r}")
            if key in result:
                self.fail(path, f"the key {key!r} appears twice")
            result[key] = self.decode(value_node, _child(path, key), depth + 1)
        return result

    def _array(self, name, path: str):
        if type(name) is not str or name not in self.arrays:
            self.fail(path, f"it names a tensor {name!r} that the file does not hold")
        return self.arrays[name]

    def _tensor(self, node: dict, path: str):
        fields = {"tensor", "dtype", "shape", "device", "requires_grad", "parameter"}
        if set(node) != fields:
            self.fail(path, f"a tensor entry must have exactly the fields {sorted(fields)}")
        dtype, shape, array = self._array(node["tensor"], path)
        if node["dtype"] != dtype:
            self.fail(path, f"tensor {node['tensor']!r} is {node['dtype']!r} in the structure and {dtype!r} in the file")
        if node["shape"] != list(shape):
            self.fail(path, f"tensor {node['tensor']!r} has shape {node['shape']!r} in the structure and "
                            f"{list(shape)} in the file")
        if node["device"] not in _backend.DEVICES:
            self.fail(path, f"unknown device {node['device']!r}")
        if type(node["requires_grad"]) is not bool or type(node["parameter"]) is not bool:
            self.fail(path, "requires_grad and parameter must be bools")
        tensor = self._placed(array, _dtype.from_name(dtype), node["device"], path)
        if node["parameter"]:
            if not tensor.dtype.is_floating_point and node["requires_grad"]:
                self.fail(path, "an integer or bool Parameter cannot require grad")
            return Parameter(tensor, requires_grad=node["requires_grad"])
        if node["requires_grad"]:
            if not tensor.dtype.is_floating_point:
                self.fail(path, "an integer or bool tensor cannot require grad")
            tensor.requires_grad_(True)
        return tensor

    def _placed(self, array, dtype, saved: str, path: str) -> Tensor:
        """The tensor of ``array`` where ``map_location`` puts it (by default, where it was saved)."""
        if callable(self.device):
            # torch's map_location(storage, location): here the tensor (on cpu) and its saved device;
            # what it returns is used, None meaning the default
            chosen = self.device(Tensor(array, dtype=dtype, device="cpu"), saved)
            if chosen is not None:
                if not isinstance(chosen, Tensor) or chosen.dtype is not dtype or chosen.shape != tuple(array.shape):
                    raise ValueError(f"{self.source}: map_location returned {type(chosen).__name__} for "
                                     f"{_at(path)}, not a Tensor of its dtype {dtype.name} and shape "
                                     f"{list(array.shape)} (or None)")
                return chosen
        device = self.device if isinstance(self.device, str) else saved
        if not _backend.is_available(device):
            raise RuntimeError(
                f"{self.source}: {_at(path)} was saved on {device!r}, which is not available here (MLX is not "
                "installed); load with map_location='cpu'"
            )
        backend = _backend.get(device)
        if max(array.shape, default=0) > backend.max_dimension:
            raise ValueError(f"{self.source}: {_at(path)} has shape {list(array.shape)}, with a dimension over "
                             f"{backend.max_dimension}, which {backend.library} arrays on {device!r} cannot have; "
                             "load it with map_location='cpu'")
        return Tensor(array, dtype=dtype, device=device)

    def _host(self, tag: str, name, path: str):
        _, _, array = self._array(name, path)
        if tag == "npscalar":
            if array.ndim:
                self.fail(path, f"a NumPy scalar must be stored as a 0-d tensor, got shape {list(array.shape)}")
            return _file.as_host_scalar(array)
        return array.copy()


def _hashable_key(key) -> bool:
    kind = type(key)
    return kind in (*_SCALARS, int, float) or (kind is tuple and all(_hashable_key(k) for k in key))


def load(f: str | os.PathLike[str] | BinaryIO,
         map_location: str | Callable[[Tensor, str], Tensor | None] | None = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved by :func:`save`, or the tensors of any safetensors file.

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        A path must name a regular file. A file object is read from its position, to the
        end its header declares and no further.
    map_location : {None, "cpu", "gpu"}, lucid.device or callable, optional
        Where to put every tensor. By default each goes back to the device it was saved
        from; ``"cpu"`` loads a ``"gpu"`` checkpoint where MLX is not installed. A callable
        is called as torch's ``map_location(storage, location)`` is, with each tensor (on
        ``"cpu"``) and the device it was saved from, and returns the tensor to use, or None
        for the default (``lambda storage, loc: storage`` loads everything on ``"cpu"``).
    pickle_module : None
        torch's; must be None (see Notes).
    weights_only : bool, optional
        torch's keyword, accepted: lucid always loads only tensors and plain data (see Notes).
    mmap : bool, optional
        torch's; True is refused (lucid reads the whole file).
    **pickle_load_args
        torch's arguments for ``pickle.load``: with ``weights_only=False`` refused, otherwise
        ignored with torch's warning.

    Returns
    -------
    object
        What was saved: dicts (int keys, OrderedDict and Counter kept), lists, tuples,
        Tensors and Parameters (their own copies), numbers, strings. A safetensors file
        that lucid did not write loads as a flat ``{name: Tensor}`` dict.

    Raises
    ------
    ValueError
        For a bad ``map_location``, and for any file that is not a well-formed checkpoint:
        empty, truncated, random bytes, a pickle, a torch zip file, a NumPy file, a header
        whose lengths, offsets, shapes or dtypes do not fit its data, or lucid metadata
        that is not valid JSON, has the wrong shape, or names a tensor that is missing or
        of another dtype or shape, or a tensor that ``map_location``'s device cannot hold.
        Also for a path that names a directory, a FIFO, a device or a socket, refused
        before it is read. The message names the file and the problem.
    TypeError
        If ``f`` is neither a path nor a binary file object.
    RuntimeError
        If a tensor was saved on ``"gpu"`` and MLX is missing here (pass
        ``map_location="cpu"``).
    OSError
        If the file cannot be read (missing, no permission).

    Notes
    -----
    lucid never unpickles and never imports or calls anything named in a file, so loading
    an untrusted checkpoint is safe (torch's ``torch.load`` unpickles; ``weights_only``
    narrows what it accepts). ``weights_only=True`` is therefore lucid's only mode, whatever
    is passed: ``weights_only=False`` loads the same file the same way, since a lucid
    checkpoint holds nothing to unpickle, and a file that would need unpickling (a torch
    pickle) is refused as with True. A ``map_location`` dict (torch's ``{"cuda:0": "cpu"}``)
    is refused: lucid has one device of each type, so name the target device instead.

    Examples
    --------
    >>> import io, lucid
    >>> from lucid import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> optimizer = optim.Adam(model.parameters(), lr=0.1)
    >>> buffer = io.BytesIO()
    >>> lucid.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    >>> _ = buffer.seek(0)
    >>> checkpoint = lucid.load(buffer, map_location="cpu", weights_only=True)
    >>> model.load_state_dict(checkpoint["model"])
    <All keys matched successfully>
    >>> optimizer.load_state_dict(checkpoint["optimizer"])
    >>> list(checkpoint["model"])
    ['weight', 'bias']
    """
    _check_load_options(f, pickle_module, weights_only, mmap, pickle_load_args)
    device = _target_device(map_location)
    metadata, arrays, source = _read(f)
    if metadata is None or FORMAT_KEY not in metadata:
        return {name: _Decoder(arrays, device, source).decode(_plain_entry(name, entry)) for name, entry in arrays.items()}
    if metadata[FORMAT_KEY] != FORMAT_VERSION:
        raise ValueError(f"{source}: lucid checkpoint format {metadata[FORMAT_KEY]!r} is not one this lucid reads "
                         f"(it reads {FORMAT_VERSION!r}); it may come from a newer lucid")
    if STRUCTURE_KEY not in metadata:
        raise ValueError(f"{source}: the lucid metadata has no {STRUCTURE_KEY!r} entry")
    structure = _file.parse_json(metadata[STRUCTURE_KEY], "the lucid structure", source)
    return _Decoder(arrays, device, source).decode(structure)


def _plain_entry(name: str, entry) -> dict:
    """The structure of a tensor of a safetensors file without lucid's metadata."""
    dtype, shape, _ = entry
    return {"tensor": name, "dtype": dtype, "shape": list(shape), "device": "cpu", "requires_grad": False,
            "parameter": False}
