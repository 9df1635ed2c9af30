"""The process group and its collectives, with ``torch.distributed``'s names.

One process group per job, the world: every process started by
``python -m lucid.distributed.run`` (or ``mlx.launch``) joins it with
:func:`init_process_group`. A collective blocks until every process has called it; a
process whose peer has died gets :class:`DistBackendError` within about a second, and one
whose peer never joins is ended by a watchdog after ``timeout``.
"""

from __future__ import annotations

import datetime
import enum
import errno
import faulthandler
import numbers
import io
import os
import pickle
import re
import sys
from collections.abc import Sequence
from typing import Any

from .._backend import collective as _wire
from .._sparse import SparseTensor
from .._tensor import Tensor
from ._agreement import Call, disagreement, tensor_entry
from ._watchdog import Watchdog

__all__ = [
    "ReduceOp", "DistBackendError", "default_pg_timeout", "is_available", "is_initialized",
    "init_process_group", "destroy_process_group", "get_rank", "get_world_size", "get_backend",
    "all_reduce", "all_reduce_coalesced", "all_gather", "broadcast", "barrier",
    "all_gather_object", "broadcast_object_list",
]

BACKENDS = ("ring", "mpi", "any")

# how long init and each collective wait for the other processes before this one is ended
default_pg_timeout = datetime.timedelta(seconds=60)


class ReduceOp(enum.Enum):
    """How :func:`all_reduce` combines the processes' values, elementwise.

    ``AVG`` divides each process's values by the world size, then sums them (the order in
    which torch's DistributedDataParallel averages gradients); it needs a floating-point
    tensor.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> [op.name for op in dist.ReduceOp]
    ['SUM', 'AVG', 'MAX', 'MIN']
    """

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"


class DistBackendError(RuntimeError):
    """A collective failed: the processes called collectives that disagree, or the
    connection to another process broke (torch's name).

    Disagreeing calls (another collective, op, root, dtype or shape on some process) are
    found before any data moves: every process raises, naming each process's call, and
    the process group can still be used. A broken connection means the other process has
    died or raised (its own output says why); the process group cannot be used afterwards.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> issubclass(dist.DistBackendError, RuntimeError)
    True
    """


class _World:
    """The state of this process's membership: MLX's group and the watchdog."""

    def __init__(self):
        self.group = None
        self.backend = None
        self.watchdog = None

    def describe(self) -> str:
        return f"rank {self.group.rank()} of {self.group.size()}"


_world = _World()
ReduceOp.__module__ = DistBackendError.__module__ = "lucid.distributed"  # where users name them


class _Work:
    """What ``async_op=True`` returns: the collective has already completed (MLX's run to
    the end before returning here), so ``wait()`` returns at once."""

    def wait(self, timeout: object = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def is_available() -> bool:
    """Whether lucid.distributed can run here: MLX, whose distributed layer it uses, is installed.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.is_available()
    True
    """
    return _wire.mx is not None


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and :func:`destroy_process_group` has not).

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _world.group is not None


def _seconds(timeout) -> float:
    if timeout is None:
        timeout = default_pg_timeout
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:  # type: ignore[operator]  # typeshed's numbers ABCs do not compare with int
        raise ValueError(f"timeout must be a positive datetime.timedelta or number of seconds, got {timeout!r}")
    return float(timeout)


def init_process_group(backend: str | None = None, *, timeout: datetime.timedelta | float | None = None, world_size: int = -1, rank: int = -1) -> None:
    """Join this process to the job's process group, on one of MLX's distributed backends.

    The launcher (``python -m lucid.distributed.run``, or ``mlx.launch``) starts the
    processes and tells each its rank and its peers through ``MLX_RANK`` and
    ``MLX_HOSTFILE``; this reads them and connects to the others, blocking until all
    have connected.

    Parameters
    ----------
    backend : {"ring", "mpi", "any"}, optional
        MLX's backend: ``"ring"`` (TCP sockets, on every platform), ``"mpi"`` (where
        an MPI library is installed), or ``"any"`` (the default), the first that works:
        with no launcher around, ``"any"`` gives a world of this process alone.
    timeout : datetime.timedelta or float, optional
        How long connecting, and later each collective, may wait for the other processes
        (default :data:`default_pg_timeout`, 60 s). Past it the process ends with a
        message (exit status 1), so that a job never hangs on a stuck peer.
    world_size, rank : int, optional
        If given, what the launcher must have said; a mismatch raises ValueError.

    Raises
    ------
    ValueError
        For an unknown backend, a second call, a world size or rank that differs, or a
        launcher environment that is not one (``MLX_RANK`` not a rank of the hostfile,
        ``MLX_HOSTFILE`` missing or not a hostfile).
    RuntimeError
        Without MLX; for a backend this MLX build lacks; for ``"ring"`` or ``"mpi"``
        without a launcher's environment.

    Notes
    -----
    While the processes connect, MLX holds Python's interpreter lock, so no Python code
    can run to stop a wait for a process that never comes: past ``timeout``, Python's
    ``faulthandler`` prints ``Timeout`` with the stack (``connect_to_every_process``,
    called by ``init_process_group``) and exits with status 1; a
    ``faulthandler.dump_traceback_later`` of the caller's is cancelled. A world of one process (``--nproc 1``, or ``"any"`` without
    a launcher) makes every collective a copy of the process's own values.

    Examples
    --------
    Without a launcher, ``backend="any"`` gives a world of one process:

    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()

    Under the launcher, ``python -m lucid.distributed.run --nproc 4 train.py``, each of
    the four processes gets its rank 0 to 3 and a world size of 4.
    """
    backend = "any" if backend is None else backend
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    seconds = _seconds(timeout)
    for name, value in (("world_size", world_size), ("rank", rank)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if _world.group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    _wire.require_mlx()
    if backend in ("ring", "any") and _wire.single_process_env():
        group = _wire.singleton_group()  # mlx.launch -n 1: the ring cannot form with itself
    else:
        if backend != "any" and not _wire.backend_available(backend):
            raise RuntimeError(f"MLX's {backend!r} backend is not available in this build of MLX")
        problem = _wire.ring_environment_problem() if backend in ("ring", "any") else None
        if problem is not None:
            raise ValueError(f"init_process_group(backend={backend!r}): {problem}; the launcher "
                             "(python -m lucid.distributed.run, or mlx.launch) sets both")
        group = _connect(backend, seconds)
    if world_size != -1 and world_size != group.size():
        raise ValueError(f"init_process_group: world_size={world_size}, but the launcher started {group.size()} processes")
    if rank != -1 and rank != group.rank():
        raise ValueError(f"init_process_group: rank={rank}, but the launcher gave this process rank {group.rank()}")
    _world.group, _world.backend = group, backend
    _world.watchdog = Watchdog(seconds, _world.describe)


def _connect(backend: str, seconds: float):
    """MLX's group, connecting to the peers; past ``seconds`` faulthandler ends the process."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=_stderr_with_a_descriptor())
    try:
        return _wire.connect_to_every_process(backend, strict=backend != "any")
    except RuntimeError as error:
        unbound = _UNBOUND.search(str(error))
        if unbound is not None:
            raise RuntimeError(_cannot_listen(backend, int(unbound.group(1)))) from error
        if "MLX_RANK" in str(error) or "MLX_HOSTFILE" in str(error):
            raise RuntimeError(
                f"init_process_group(backend={backend!r}) needs MLX_RANK and MLX_HOSTFILE, which the "
                "launcher sets: start the processes with `python -m lucid.distributed.run --nproc N "
                "script.py` (or mlx.launch); backend='any' without them gives a world of one process"
            ) from error
        raise RuntimeError(f"init_process_group(backend={backend!r}) failed: {error}") from error
    finally:
        faulthandler.cancel_dump_traceback_later()


# MLX's ring backend, when this process cannot listen on its address
_UNBOUND = re.compile(r"Couldn't bind socket \(error: (\d+)\)")


def _cannot_listen(backend: str, code: int) -> str:
    """What to say when this process could not listen on its address (``code``: the errno)."""
    addresses = _wire.own_addresses()
    where = " or ".join(addresses) if addresses else "the address the launcher's hostfile gives it"
    message = (f"init_process_group(backend={backend!r}): this process (MLX_RANK={os.environ.get('MLX_RANK', '?')}) "
               f"could not listen on {where}: {os.strerror(code)} (errno {code})")
    if code == errno.EADDRINUSE:
        message += (". Another program or job holds that port: start the job on other ports (python -m "
                    "lucid.distributed.run picks free ones when --port is left out, or pass another --port; "
                    "mlx.launch takes --starting-port)")
    elif code == errno.EADDRNOTAVAIL:
        message += ": that IP address is not one of this machine's; correct the hostfile's \"ips\""
    return message


def _stderr_with_a_descriptor():
    """sys.stderr, or the process's own where it was replaced by a stream without a file
    descriptor (a notebook, sphinx-gallery), which faulthandler cannot write to."""
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return sys.__stderr__


def destroy_process_group(group: None = None) -> None:
    """Leave the process group; collectives raise until :func:`init_process_group` again.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    _check_group(group)
    _require()
    _world.watchdog.stop()
    _world.group = _world.backend = _world.watchdog = None


def _require():
    if _world.group is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call init_process_group."
        )
    return _world.group


def _check_group(group) -> None:
    if group is not None:
        raise ValueError(
            "lucid.distributed has one process group, the world of every launched process "
            f"(MLX's ring backend cannot split it): pass group=None, got {group!r}"
        )


def get_rank(group: None = None) -> int:
    """This process's rank, 0 to world size - 1.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> dist.get_rank()
    0
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    return _wire.rank(_require())


def get_world_size(group: None = None) -> int:
    """The number of processes in the group.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    return _wire.size(_require())


def get_backend(group: None = None) -> str:
    """The backend name given to :func:`init_process_group` ("ring", "mpi" or "any").

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> dist.get_backend()
    'any'
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    _require()
    return _world.backend


def _collective(name: str, run, *args, call: Call | None):
    """Run the seam's collective ``run(*args, group)`` under the watchdog, naming failures.

    With a ``call``, the processes first check that they all describe the same call
    (one small exchange); ``call=None`` is for the exchanges a checked call already covers
    (DDP's buckets after its step's check).
    """
    group = _require()
    watchdog = _world.watchdog
    watchdog.start(name)
    try:
        if call is not None:
            _agree(call, group)
        return run(*args, group)
    except DistBackendError:
        raise
    except RuntimeError as error:
        raise DistBackendError(
            f"{name} failed on {_world.describe()}: {error}. Another process of the job has died or "
            "raised (its output says why); this process group cannot be used any more."
        ) from error
    finally:
        watchdog.done()


def _agree(call: Call, group) -> None:
    """Return once every process has described the same ``call``; otherwise raise
    DistBackendError on every process, naming each one's call (nothing else was sent)."""
    if _wire.size(group) == 1:
        return
    fingerprints = _wire.all_gather_words(call.fingerprint(), group)
    if all(row == fingerprints[0] for row in fingerprints):
        return
    calls = [Call.decode(payload) for payload in _wire.all_gather_bytes(call.encode(), group)]
    raise DistBackendError(f"{call.collective} on {_world.describe()}: {disagreement(calls)}")


def _nothing(group) -> None:
    """The collective that the check alone makes: an exchange every process must join."""


def _check_agreement(call: Call) -> None:
    """Check that every process is at ``call`` (one small exchange), for a sequence of
    unchecked exchanges that ``call`` describes (DDP's gradient reduction)."""
    _collective(call.collective, _nothing, call=call)


def _check_tensor(tensor, argument: str = "tensor") -> None:
    if isinstance(tensor, SparseTensor):
        raise TypeError(f"{argument} must be a dense Tensor; a sparse one goes as its indices() and values()")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{argument} must be a lucid Tensor, got {type(tensor).__name__}")


def _check_async(async_op):
    return _Work() if async_op else None


def _op_name(op) -> str:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a lucid.distributed.ReduceOp, got {op!r}")
    return op.value


def _reduce(tensors, op, name, checked: bool = True):
    kind = _op_name(op)
    world = get_world_size()
    if kind == "avg":
        for tensor in tensors:
            if not tensor.dtype.is_floating_point:
                raise TypeError(f"{name} with ReduceOp.AVG needs floating-point tensors, got {tensor.dtype}")
    # one collective per device and dtype, each over one flat buffer
    by_kind: dict = {}
    for tensor in tensors:
        by_kind.setdefault((tensor.device, tensor.dtype), []).append(tensor)
    groups = list(by_kind.values())
    divide_by = float(world) if kind == "avg" else None

    def run(group):
        for same in groups:
            _wire.all_reduce(same, "sum" if kind == "avg" else kind, divide_by, group)

    call = None
    if checked:
        # which group each tensor travels in, where there are several (devices differ)
        group_of = {id(t): g for g, same in enumerate(groups) for t in same}
        layout = tuple(group_of[id(t)] for t in tensors) if len(groups) > 1 else ()
        call = Call(name, op=op.name, tensors=tuple(tensor_entry(t) for t in tensors), layout=layout)
    _collective(name, run, call=call)


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: None = None, async_op: bool = False) -> _Work | None:
    """Combine ``tensor``'s values over every process, elementwise, in place on each.

    Parameters
    ----------
    tensor : Tensor
        The same shape and dtype on every process, on "cpu" or "gpu"; afterwards each
        holds the result (not recorded by autograd).
    op : ReduceOp, default ReduceOp.SUM
        ``SUM``, ``AVG``, ``MAX`` or ``MIN``.
    group : None
        The world (the only group).
    async_op : bool, default False
        If True, return a handle whose ``wait()`` returns at once (the reduction is done).

    Notes
    -----
    A ``"cpu"`` tensor travels as an MLX array on the host and back; float64 stays exact
    (MLX's ring backend reduces float64 on the CPU). Every process gets the same bits.

    Examples
    --------
    >>> import lucid
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> t = lucid.tensor([1.0, 2.0]) * (dist.get_rank() + 1)
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)
    >>> t  # the sum over one process
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    _check_tensor(tensor)
    _reduce([tensor], op, "all_reduce")
    return _check_async(async_op)


def all_reduce_coalesced(tensors: Sequence[Tensor], op: ReduceOp = ReduceOp.SUM, group: None = None, async_op: bool = False) -> _Work | None:
    """:func:`all_reduce` of several tensors at once: one collective per device and dtype.

    The tensors of one device and dtype travel as one flat buffer (how
    :class:`~lucid.nn.parallel.DistributedDataParallel` reduces a bucket of gradients).

    Examples
    --------
    >>> import lucid
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> a, b = lucid.ones(2), lucid.full((2, 2), 3.0)
    >>> dist.all_reduce_coalesced([a, b], op=dist.ReduceOp.MAX)
    >>> a, b
    (tensor([1., 1.]), tensor([[3., 3.],
            [3., 3.]]))
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    tensors = list(tensors)
    for i, tensor in enumerate(tensors):
        _check_tensor(tensor, f"tensors[{i}]")
    _reduce(tensors, op, "all_reduce_coalesced")
    return _check_async(async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: None = None, async_op: bool = False) -> _Work | None:
    """Write every process's ``tensor`` into ``tensor_list``, in rank order, on each process.

    Parameters
    ----------
    tensor_list : list of Tensor
        ``world_size`` tensors of ``tensor``'s shape, dtype and device, written in place.
    tensor : Tensor
        This process's contribution: the same shape and dtype on every process.

    Examples
    --------
    >>> import lucid
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> out = [lucid.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.all_gather(out, lucid.tensor([5.0, 6.0]))
    >>> out
    [tensor([5., 6.])]
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    _check_tensor(tensor)
    world = get_world_size()
    if not isinstance(tensor_list, list) or len(tensor_list) != world:
        raise ValueError(f"tensor_list must be a list of world_size={world} tensors")
    for i, out in enumerate(tensor_list):
        _check_tensor(out, f"tensor_list[{i}]")
        if out.shape != tensor.shape or out.dtype is not tensor.dtype or out.device != tensor.device:
            raise ValueError(
                f"tensor_list[{i}] must have tensor's shape {tensor.shape}, dtype {tensor.dtype} and device "
                f"{tensor.device!r}, got {out.shape}, {out.dtype}, {out.device!r}"
            )
    _collective("all_gather", _wire.all_gather, tensor, tensor_list,
                call=Call("all_gather", tensors=(tensor_entry(tensor),)))
    return _check_async(async_op)


def broadcast(tensor: Tensor, src: int, group: None = None, async_op: bool = False) -> _Work | None:
    """Give every process the values ``tensor`` has on process ``src``, bit for bit, in place.

    Examples
    --------
    >>> import lucid
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> t = lucid.tensor([3.0, -0.0])
    >>> dist.broadcast(t, src=0)
    >>> t
    tensor([3., -0.])
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    _check_tensor(tensor)
    _check_src(src, "src")
    _collective("broadcast", _wire.broadcast, [tensor], src,
                call=Call("broadcast", root=("src", src), tensors=(tensor_entry(tensor),)))
    return _check_async(async_op)


def _check_src(src, argument: str) -> None:
    world = get_world_size()
    if isinstance(src, bool) or not isinstance(src, numbers.Integral) or not 0 <= src < world:  # type: ignore[operator]  # typeshed's numbers ABCs do not compare with int
        raise ValueError(f"{argument} must be a rank from 0 to {world - 1}, got {src!r}")


def barrier(group: None = None, async_op: bool = False) -> _Work | None:
    """Return once every process has reached its call.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    _collective("barrier", _nothing, call=Call("barrier"))  # the check is an exchange all must join
    return _check_async(async_op)


def all_gather_object(object_list: list[Any], obj: object, group: None = None) -> None:
    """Fill ``object_list`` with every process's picklable ``obj``, in rank order.

    Objects travel pickled, as in torch: use it only among the job's own processes.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> out = [None] * dist.get_world_size()
    >>> dist.all_gather_object(out, {"rank": dist.get_rank()})
    >>> out
    [{'rank': 0}]
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    world = get_world_size()
    if not isinstance(object_list, list) or len(object_list) != world:
        raise ValueError(f"object_list must be a list of world_size={world} entries")
    object_list[:] = _all_gather_object(obj, Call("all_gather_object"))


def _all_gather_object(obj, call: Call) -> list:
    """Every process's picklable ``obj``, in rank order, after checking ``call``."""
    payloads = _collective(call.collective, _wire.all_gather_bytes, pickle.dumps(obj), call=call)
    return [pickle.loads(payload) for payload in payloads]


def broadcast_object_list(object_list: list[Any], src: int = 0, group: None = None) -> None:
    """Replace ``object_list``'s entries on every process with those on process ``src``.

    Examples
    --------
    >>> import lucid.distributed as dist
    >>> dist.init_process_group("any")
    >>> config = [{"lr": 0.1}] if dist.get_rank() == 0 else [None]
    >>> dist.broadcast_object_list(config, src=0)
    >>> config
    [{'lr': 0.1}]
    >>> dist.destroy_process_group()
    """
    _check_group(group)
    _check_src(src, "src")
    if not isinstance(object_list, list):
        raise TypeError(f"object_list must be a list, got {type(object_list).__name__}")
    mine = pickle.dumps(object_list) if get_rank() == src else b""
    payloads = _collective("broadcast_object_list", _wire.all_gather_bytes, mine,
                           call=Call("broadcast_object_list", root=("src", src)))
    object_list[:] = pickle.loads(payloads[src])


def _exchange_shards(shards, name: str) -> None:
    """Every process's values of its shard ``shards[rank]``, to every process (bit for bit).

    For :class:`~lucid.distributed.optim.ZeroRedundancyOptimizer`: ``shards[r]`` lists the
    tensors process ``r`` updated, the same lists on every process (unchecked: the caller
    checks :func:`_shards_call` before its step); one collective.
    """
    _collective(name, _wire.exchange_shards, shards, call=None)


def _shards_call(shards, name: str) -> Call:
    """The description of an exchange of ``shards``: every tensor, and how many each process sends."""
    return Call(name, tensors=tuple(tensor_entry(t) for shard in shards for t in shard),
                layout=tuple(len(shard) for shard in shards))


def _broadcast_coalesced(tensors, src: int, name: str) -> None:
    """:func:`broadcast` of several tensors (any dtypes and devices) as one collective."""
    _check_src(src, "src")
    tensors = list(tensors)
    call = Call(name, root=("src", src), tensors=tuple(tensor_entry(t) for t in tensors))
    _collective(name, _wire.broadcast, tensors, src, call=call)


def _all_gather_words(words: list, name: str) -> list:
    """Every process's list of ints (the same length on all, unchecked: a checked call
    before it must cover it), in rank order."""
    return _collective(name, _wire.all_gather_words, list(words), call=None)


def _all_gather_rows(tensor, lengths, name: str) -> list:
    """Every process's ``tensor``, ``lengths[r]`` rows long on process ``r``, as Tensors
    (unchecked: for DDP's sparse gradients, which its step's check covers)."""
    arrays = _collective(name, _wire.all_gather_rows, tensor, list(lengths), call=None)
    return [Tensor(a, dtype=tensor.dtype, device=tensor.device) for a in arrays]

