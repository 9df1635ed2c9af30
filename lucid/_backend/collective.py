"""Collectives between processes, on MLX's distributed layer (``mlx.core.distributed``).

:mod:`lucid.distributed` calls these; they are the part of it that knows NumPy from MLX.
A tensor on either device travels as an MLX array: a ``"cpu"`` (NumPy) tensor is copied
into one on the host, keeping its dtype (float64 included: MLX's ring backend sums,
maximises and gathers float64 exactly on the CPU), and the result is copied back into the
tensor's own storage. Several tensors go as one flat buffer, so one collective serves them
all; a broadcast or an exchange of shards moves their bytes, so every value arrives bit for
bit (``-0.0``, NaN payloads and integers included).

Every function takes the MLX group :func:`init` returned and blocks until the collective
is done on this process (MLX's lazy arrays are evaluated here, once per call).
"""

from __future__ import annotations

import json
import os

import numpy as np

from . import get

try:
    import mlx.core as mx
except ImportError:  # pragma: no cover - exercised only without mlx
    mx = None  # type: ignore[assignment]  # no MLX: require_mlx() says how to install it

REDUCTIONS = ("sum", "max", "min")


def require_mlx() -> None:
    """Raise RuntimeError unless MLX, which lucid's collectives run on, is installed."""
    if mx is None:
        raise RuntimeError(
            "lucid.distributed runs on MLX's distributed layer, and MLX is not installed: "
            "pip install 'lucid-autograd[mlx]' (from a checkout: pip install '.[mlx]'; or mlx on macOS, "
            "'mlx[cpu]' on Linux)"
        )


def backend_available(name: str) -> bool:
    """Whether MLX can start the distributed backend ``name`` ("ring", "mpi" or "any") here."""
    require_mlx()
    return bool(mx.distributed.is_available(name))


def single_process_env() -> bool:
    """Whether ``MLX_HOSTFILE`` describes one process (an empty file, or one host entry):
    what ``mlx.launch -n 1`` sets, and a group the ring backend cannot form with itself."""
    path = os.environ.get("MLX_HOSTFILE")
    if not path or not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as file:
        text = file.read().strip()
    if not text:
        return True
    try:
        hosts = json.loads(text)
    except ValueError:
        return False
    return isinstance(hosts, list) and len(hosts) == 1


_HOSTFILE_FORMAT = ('a JSON list with one entry per process, each a list of "ip:port" strings '
                    '(as mlx.launch writes it)')


def ring_environment_problem() -> str | None:
    """What is wrong with ``MLX_RANK`` and ``MLX_HOSTFILE`` for the ring backend, or None
    (also None where they are absent: connecting then says that they are needed).

    MLX reads a rank of "x" or "-1" as some rank and waits for peers that never come, and
    says only "parse error" of a missing hostfile.
    """
    path, rank = os.environ.get("MLX_HOSTFILE"), os.environ.get("MLX_RANK")
    if not path or rank is None:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            hosts = json.loads(file.read())
    except OSError as error:
        return f"MLX_HOSTFILE={path!r} cannot be read ({error.strerror or error})"
    except ValueError as error:
        return f"MLX_HOSTFILE={path!r} is not JSON ({error}): it must be {_HOSTFILE_FORMAT}"
    if not (isinstance(hosts, list) and hosts and all(_addresses(entry) for entry in hosts)):
        return f"MLX_HOSTFILE={path!r} must be {_HOSTFILE_FORMAT}, got {json.dumps(hosts)[:200]}"
    if not (rank.strip().isdigit() and int(rank) < len(hosts)):
        return (f"MLX_RANK must be an integer from 0 to {len(hosts) - 1} (MLX_HOSTFILE lists {len(hosts)} "
                f"processes), got {rank!r}")
    return None


def own_addresses() -> list:
    """The ``ip:port`` addresses this process listens on, as the launcher's hostfile gives
    them (``MLX_HOSTFILE``'s entry at ``MLX_RANK``), or [] where they cannot be read."""
    path, rank = os.environ.get("MLX_HOSTFILE"), os.environ.get("MLX_RANK", "")
    try:
        with open(path, encoding="utf-8") as file:  # type: ignore[arg-type]  # None: TypeError, caught
            hosts = json.load(file)
        entry = hosts[int(rank)]
    except (OSError, TypeError, ValueError, IndexError, KeyError):
        return []
    return _addresses(entry)


def _addresses(entry) -> list:
    """A hostfile entry's "ip:port" addresses (a list of them, or one), or [] if it is not one."""
    addresses = entry if isinstance(entry, list) else [entry]
    if addresses and all(isinstance(a, str) and ":" in a for a in addresses):
        return addresses
    return []


def connect_to_every_process(backend: str, strict: bool):
    """The MLX group of every process of the job (blocks until all have connected; the name
    is what a timeout's stack shows)."""
    require_mlx()
    return mx.distributed.init(strict=strict, backend=backend)


def singleton_group():
    """A group of this process alone, whatever the environment says."""
    require_mlx()
    saved = {name: os.environ.pop(name) for name in ("MLX_RANK", "MLX_HOSTFILE") if name in os.environ}
    try:
        return mx.distributed.init(strict=False, backend="any")
    finally:
        os.environ.update(saved)


def rank(group) -> int:
    return group.rank()


def size(group) -> int:
    return group.size()


# --- moving arrays between a tensor and the wire ----------------------------------------
def _wire(array, backend):
    """A tensor's native ``array`` as an MLX array of the same dtype."""
    if backend.device == "gpu":
        return array
    return mx.array(array, dtype=get("gpu").native_dtype(backend.dtype_of(array)))


def _native(wire, backend):
    """An MLX array as ``backend``'s native array (a copy on the host for NumPy)."""
    return wire if backend.device == "gpu" else np.array(wire, copy=True)


def _as_bytes(wire):
    """A flat uint8 view of an MLX array (bools as one byte each)."""
    if wire.dtype == mx.bool_:
        wire = wire.astype(mx.uint8)
    return mx.view(wire.reshape(-1), mx.uint8)


def _from_bytes(data, dtype, shape):
    """The MLX array of ``dtype`` and ``shape`` whose bytes are the uint8 array ``data``."""
    if dtype == mx.bool_:
        return data.reshape(shape).astype(mx.bool_)
    return mx.view(data, dtype).reshape(shape)


def _write(tensor, wire) -> None:
    """Write the MLX array ``wire`` into ``tensor``'s storage (not recorded by autograd)."""
    backend = tensor._backend
    tensor._data = backend.assign(tensor._data, _native(wire, backend))
    tensor._version += 1


def _flat_wire(tensors):
    """The tensors (one device and dtype) as one flat MLX array, and their sizes."""
    sizes = [t.numel() for t in tensors]
    backend = tensors[0]._backend
    flat = backend.concatenate([backend.reshape(t._data, (-1,)) for t in tensors], axis=0)
    return _wire(flat, backend), sizes


def _write_flat(tensors, wire, sizes) -> None:
    start = 0
    for tensor, count in zip(tensors, sizes):
        _write(tensor, wire[start:start + count].reshape(tensor.shape))
        start += count


def _run(result):
    mx.eval(result)
    return result


# --- the collectives ----------------------------------------------------------------------
_REDUCE = {"sum": "all_sum", "max": "all_max", "min": "all_min"}


def all_reduce(tensors, op: str, divide_by, group) -> None:
    """Reduce the tensors (one device and dtype) elementwise over all processes, in place.

    ``op`` is "sum", "max" or "min"; unless ``divide_by`` is None, each process's values
    are first divided by it (an average as torch's DDP computes one: divide, then sum).
    """
    wire, sizes = _flat_wire(tensors)
    if divide_by is not None:
        wire = wire / mx.array(divide_by, dtype=wire.dtype)
    reduced = _run(getattr(mx.distributed, _REDUCE[op])(wire, group=group))
    _write_flat(tensors, reduced, sizes)


def all_gather(tensor, outputs, group) -> None:
    """Write every process's ``tensor`` (same shape and dtype on all) into ``outputs``, in rank order."""
    wire = _wire(tensor._data, tensor._backend)
    gathered = _run(mx.distributed.all_gather(wire.reshape((1,) + tuple(wire.shape)), group=group))
    for r, out in enumerate(outputs):
        _write(out, gathered[r])


def broadcast(tensors, src: int, group) -> None:
    """Give every process the values of the tensors on process ``src``, bit for bit, in place.

    The tensors (any devices and dtypes, the same list on every process) travel as one byte
    buffer that ``src`` fills and the others leave zero, summed over the processes.
    """
    wires = [_wire(t._data, t._backend) for t in tensors]
    pieces = [_as_bytes(w) for w in wires]
    flat = mx.concatenate(pieces) if pieces else mx.zeros((0,), dtype=mx.uint8)
    if group.rank() != src:
        flat = mx.zeros_like(flat)
    summed = _run(mx.distributed.all_sum(flat, group=group))
    if group.rank() == src:
        return
    start = 0
    for tensor, wire, piece in zip(tensors, wires, pieces):
        count = piece.shape[0]
        _write(tensor, _from_bytes(summed[start:start + count], wire.dtype, wire.shape))
        start += count


def exchange_shards(shards, group) -> None:
    """``shards[r]`` lists the tensors process ``r`` holds the values of (the same lists on
    every process); afterwards every process has every shard's values, bit for bit.

    One all_gather of bytes: each process sends its own shard, padded to the largest.
    """
    me = group.rank()
    wires = [[_wire(t._data, t._backend) for t in shard] for shard in shards]
    lengths = [sum(_nbytes(w) for w in shard) for shard in wires]
    longest = max(lengths) if lengths else 0
    if longest == 0:
        return
    own = [_as_bytes(w) for w in wires[me]]
    padding = mx.zeros((longest - lengths[me],), dtype=mx.uint8)
    flat = mx.concatenate(own + [padding]) if own else padding
    gathered = _run(mx.distributed.all_gather(flat, group=group))
    for r, (shard, shard_wires) in enumerate(zip(shards, wires)):
        if r == me:
            continue
        start = r * longest
        for tensor, wire in zip(shard, shard_wires):
            count = _nbytes(wire)
            _write(tensor, _from_bytes(gathered[start:start + count], wire.dtype, wire.shape))
            start += count


def _nbytes(wire) -> int:
    return wire.size * (1 if wire.dtype == mx.bool_ else wire.dtype.size)


def all_gather_bytes(payload: bytes, group) -> list:
    """Every process's ``payload`` (of any length), in rank order."""
    n = group.size()
    length = mx.array([len(payload)], dtype=mx.int64)
    lengths = np.array(_run(mx.distributed.all_gather(length, group=group))).tolist()
    longest = max(lengths)
    if longest == 0:
        return [b""] * n
    data = np.zeros(longest, dtype=np.uint8)
    data[:len(payload)] = np.frombuffer(payload, dtype=np.uint8)
    gathered = np.array(_run(mx.distributed.all_gather(mx.array(data), group=group)))
    return [gathered[r * longest:r * longest + lengths[r]].tobytes() for r in range(n)]


def all_gather_words(words: list, group) -> list:
    """Every process's list of int64 ``words`` (the same length on all), in rank order."""
    gathered = np.array(_run(mx.distributed.all_gather(mx.array(words, dtype=mx.int64), group=group)))
    return gathered.reshape(group.size(), len(words)).tolist()


def all_gather_rows(tensor, lengths, group) -> list:
    """Every process's ``tensor``, whose first dimension is ``lengths[r]`` on process ``r``
    (the rest of the shape the same on all), as native arrays in rank order."""
    backend = tensor._backend
    wire = _wire(tensor._data, backend)
    longest = max(lengths)
    if longest == 0:
        return [_native(wire, backend) for _ in lengths]
    rest = tuple(wire.shape[1:])
    if wire.shape[0] < longest:
        wire = mx.concatenate([wire, mx.zeros((longest - wire.shape[0],) + rest, dtype=wire.dtype)])
    gathered = _run(mx.distributed.all_gather(wire, group=group))
    return [_native(gathered[r * longest:r * longest + n], backend) for r, n in enumerate(lengths)]
