"""The bytes of a safetensors file: host arrays in, host arrays out, every header checked.

A safetensors file is an 8-byte little-endian header length ``N``, ``N`` bytes of JSON
(``{name: {"dtype", "shape", "data_offsets"}, "__metadata__": {str: str}}``) and the raw
little-endian tensor bytes. Writing goes through the ``safetensors`` package. Reading
checks the whole header here first (lengths, offsets, shapes, dtypes, coverage of the
data), so that a damaged or hostile file raises one ValueError that names the file and
what is wrong, and never reaches a parser's own failure modes. Nothing in a file is ever
executed: the header is JSON and the rest is numbers.
"""

from __future__ import annotations

import json
import math

import numpy as np
import safetensors.numpy

# lucid's dtypes by name, as safetensors spells them, and the NumPy type of each
_CODES = {"bool": "BOOL", "int32": "I32", "int64": "I64", "float16": "F16", "float32": "F32", "float64": "F64"}
_NAMES = {code: name for name, code in _CODES.items()}
_NUMPY: dict[str | None, np.dtype] = {name: np.dtype(name).newbyteorder("<") for name in _CODES}
_ITEMSIZE = {name: dtype.itemsize for name, dtype in _NUMPY.items()}
# dtypes a safetensors file may hold that lucid has no dtype for
_FOREIGN = {"BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "U16", "I16",
            "U32", "U64", "C64"}

MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit on the JSON header
_MAX_BYTES = 2**62  # no array can be larger, even one with a zero-sized dimension
_CHUNK = 64 * 1024 * 1024  # what a read allocates ahead of the bytes that come
MAX_NDIM = 32  # NumPy 1.x's limit, so that every shape a header may give can be built
_SIGNATURES = (
    (b"PK\x03\x04", "a zip archive, as torch.save writes: open it with torch.load(..., weights_only=True) "
                    "and convert its tensors (see the Checkpoints guide)"),
    (b"\x93NUMPY", "a NumPy .npy file: read it with numpy.load(..., allow_pickle=False)"),
)


def _is_pickle(data) -> bool:
    # protocol 2 and above start with PROTO (0x80) and the protocol number
    return len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5


def host_dtype_name(array) -> str | None:
    """The lucid dtype name of a host array or scalar, or None if lucid has no such dtype."""
    dtype = np.asarray(array).dtype
    return dtype.name if dtype.name in _CODES and dtype.kind != "O" else None


def is_host_value(value) -> bool:
    """Whether ``value`` is a NumPy array or NumPy scalar (a host value, not a Python number)."""
    return isinstance(value, (np.ndarray, np.generic))


def is_host_scalar(value) -> bool:
    """Whether ``value`` is a NumPy scalar (``np.float32(1.0)``)."""
    return isinstance(value, np.generic)


def describe_host(value) -> str:
    """A short description of a host value for messages: ``ndarray of dtype object``."""
    kind = "NumPy scalar" if is_host_scalar(value) else "NumPy array"
    return f"{kind} of dtype {np.asarray(value).dtype}"


def as_host_scalar(array):
    """The 0-d host ``array`` as a NumPy scalar of its dtype."""
    return array[()]


def encode(arrays: dict, metadata: dict) -> bytes:
    """The bytes of a safetensors file holding ``arrays`` (name -> host array) and ``metadata``.

    (Not ``safetensors.numpy.save_file``: it renames a temporary file of its own into place,
    so a killed save would leave files that lucid does not name; lucid writes the bytes.)
    """
    contiguous = {name: np.asarray(a, dtype=_NUMPY[host_dtype_name(a)], order="C") for name, a in arrays.items()}
    return safetensors.numpy.save(contiguous, metadata=metadata)


def _unique_object(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the name {key!r} appears twice")
        seen[key] = value
    return seen


def parse_json(text: str, what: str, source: str):
    """``json.loads(text)``, refusing duplicate names, non-finite numbers and deep nesting,
    with a ValueError naming ``what`` and the file."""
    def refuse_constant(name):
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=_unique_object, parse_constant=refuse_constant)
    except RecursionError:
        raise ValueError(f"{source}: {what} is nested too deeply to be read") from None
    except ValueError as error:  # json.JSONDecodeError is one
        raise ValueError(f"{source}: {what} is not valid JSON ({error})") from None


def read(stream, source: str, size: int | None = None):
    """``(metadata, {name: (dtype name, shape, host array)})`` of the safetensors file ``stream`` holds.

    ``stream`` is a binary file object, read from its position: the 8-byte length, the
    header, then exactly the bytes the header's tensors take and (when ``size``, the bytes
    left in a regular file, is unknown) one more to see that the file ends there. So no
    stream is read past what its header declares, and ``/dev/zero`` is refused at its
    header. ``metadata`` is the ``__metadata__`` dict (str to str) or None; the arrays are
    views of one buffer, in native byte order, in the header's order: copy what you keep.
    Raises ValueError, naming ``source``, for anything that is not a well-formed
    safetensors file whose tensors lucid has dtypes for.
    """
    prefix = _take(stream, 8, source)
    _check_prefix(prefix, source)
    header_size = int.from_bytes(prefix, "little")
    if header_size > MAX_HEADER:
        raise ValueError(f"{source}: not a safetensors file (its header length {header_size} is over the "
                         f"{MAX_HEADER}-byte limit)")
    text = b"" if size is not None and 8 + header_size > size else _take(stream, header_size, source)
    if len(text) < header_size:
        follow = len(text) if size is None else size - 8
        raise ValueError(f"{source}: the file is truncated (its header says {header_size} bytes of JSON, "
                         f"and only {follow} follow)")
    header, metadata = _header(text, source)
    body_limit = _MAX_BYTES if size is None else size - 8 - header_size
    entries = [(name, *_entry(name, info, source, body_limit)) for name, info in header.items()]
    declared = max((stop for *_, (_, stop) in entries), default=0)
    body = _take(stream, declared, source, known=size is not None)
    if size is None:  # a stream: one byte more tells whether the file ends where its tensors do
        body_size = len(body) + len(_take(stream, 1, source))
    else:
        body_size = body_limit if len(body) == declared else len(body)  # shorter: cut while being read
    end = 0
    for name, _, _, (begin, stop) in sorted(entries, key=lambda e: tuple(e[3])):
        if begin != end:
            problem = "overlap" if begin < end else "leave a gap"
            raise ValueError(f"{source}: the tensors' data offsets {problem} at tensor {name!r} (byte {begin})")
        end = stop
    if end != body_size:
        held = f"more than {end}" if size is None and body_size > end else body_size
        raise ValueError(f"{source}: the tensors take {end} bytes but the file holds {held} after the "
                         "header (truncated or padded)")
    arrays = {}
    for name, dtype, shape, (begin, stop) in entries:
        raw = memoryview(body)[begin:stop]
        array = np.frombuffer(raw, dtype=_NUMPY[dtype]).reshape(shape).astype(_NUMPY[dtype].newbyteorder("="), copy=False)
        if dtype == "bool" and array.size and np.frombuffer(raw, dtype=np.uint8).max() > 1:
            raise ValueError(f"{source}: tensor {name!r} is bool but holds bytes other than 0 and 1")
        arrays[name] = (dtype, tuple(shape), array)
    return metadata, arrays


def _check_prefix(prefix: bytearray, source: str) -> None:
    """Refuse, by its first (up to 8) bytes, what is not a safetensors file at all."""
    if not prefix:
        raise ValueError(f"{source}: the file is empty; it is not a checkpoint")
    if _is_pickle(prefix):
        raise ValueError(
            f"{source}: this is a pickle, which lucid never loads (unpickling can run any code); "
            "lucid reads safetensors files, as lucid.save writes them"
        )
    for signature, what in _SIGNATURES:
        if prefix.startswith(signature):
            raise ValueError(f"{source}: this is {what}; lucid.load reads safetensors files only")
    if len(prefix) < 8:
        raise ValueError(f"{source}: the file is truncated ({len(prefix)} bytes; a safetensors header length "
                         "alone takes 8)")


def _header(text: bytes | bytearray, source: str):
    """The header's tensor entries (a dict) and its ``__metadata__`` (or None), checked as JSON."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{source}: not a safetensors file (its header is not UTF-8 text)") from None
    header = parse_json(decoded, "the safetensors header", source)
    if not isinstance(header, dict):
        raise ValueError(f"{source}: the safetensors header must be a JSON object, got {type(header).__name__}")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
    ):
        raise ValueError(f"{source}: the header's __metadata__ must map names to strings")
    return header, metadata


def _take(stream, count: int, source: str, known: bool = False) -> bytearray:
    """Up to ``count`` bytes of ``stream`` (fewer only where it ends), into one buffer: allocated
    at once where ``known`` (the file's size vouches for ``count``), else grown as the bytes come,
    so that the memory taken follows the data, not the count a header claims."""
    buffer = bytearray(count if known else min(count, _CHUNK))
    filled = 0
    while filled < count:
        if filled == len(buffer):
            buffer += bytes(min(len(buffer), count - filled))
        with memoryview(buffer) as whole, whole[filled:] as free:
            got = _read_into(stream, free, source)
        if not got:
            break
        filled += got
    del buffer[filled:]
    return buffer


def _read_into(stream, free: memoryview, source: str) -> int:
    readinto = getattr(stream, "readinto", None)
    if callable(readinto):
        got = readinto(free)
    else:
        data = stream.read(len(free))
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{source}: the file object gave {type(data).__name__}, not bytes: open it in "
                            "binary mode")
        got = len(data)
        if got > len(free):
            raise ValueError(f"{source}: the file object's read({len(free)}) gave {got} bytes")
        free[:got] = data
    if got is None:
        raise ValueError(f"{source}: the file object has no data ready (a non-blocking stream): pass a "
                         "blocking one or the bytes in an io.BytesIO")
    return got


def _entry(name, info, source: str, body_size: int):
    """The checked ``(dtype name, shape, (begin, end))`` of one header entry."""
    where = f"{source}: tensor {name!r}"
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"{where}: a header entry must be an object with exactly 'dtype', 'shape' and "
                         "'data_offsets'")
    code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if type(code) is not str:
        raise ValueError(f"{where} has a dtype that is not a string: {code!r}")
    if code in _FOREIGN:
        raise ValueError(f"{where} has dtype {code}, which lucid has no dtype for (lucid has "
                         f"{', '.join(_NAMES)}); convert it before saving")
    if code not in _NAMES:
        raise ValueError(f"{where} has an unknown dtype {code!r}")
    if not _is_index_list(shape) or len(shape) > MAX_NDIM:
        raise ValueError(f"{where} has a bad shape {shape!r} (a list of at most {MAX_NDIM} sizes >= 0)")
    if not _is_index_list(offsets) or len(offsets) != 2 or offsets[0] > offsets[1]:
        raise ValueError(f"{where} has bad data_offsets {offsets!r} (two byte positions, begin <= end)")
    if offsets[1] > body_size:
        raise ValueError(f"{where} ends at byte {offsets[1]}, past the {body_size} bytes of data (truncated?)")
    dtype = _NAMES[code]
    if math.prod(size for size in shape if size) * _ITEMSIZE[dtype] > _MAX_BYTES:
        raise ValueError(f"{where} has a shape {shape} too large for any array")
    nbytes = math.prod(shape) * _ITEMSIZE[dtype]
    if offsets[1] - offsets[0] != nbytes:
        raise ValueError(f"{where}: shape {shape} of {code} takes {nbytes} bytes, but its data_offsets "
                         f"give {offsets[1] - offsets[0]}")
    return dtype, shape, offsets


def _is_index_list(value) -> bool:
    return isinstance(value, list) and all(type(v) is int and v >= 0 for v in value)
