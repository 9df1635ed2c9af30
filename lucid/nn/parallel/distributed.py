"""``DistributedDataParallel``: one model per process, gradients averaged across them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ... import distributed as dist
from ..._autograd import is_grad_enabled, no_grad, queue_callback, record
from ..._dtype import int64
from ..._factory import zeros, zeros_like
from ..._ops.shape import cat
from ..._sparse import sparse_coo_tensor
from ..._tensor import Tensor
from ...distributed import collectives
from ...distributed._agreement import Call, tensor_entry
from ..module import Module

__all__ = ["DistributedDataParallel"]

# what a parameter's gradient is on one process, in the exchange before a reduction
_NONE, _DENSE, _SPARSE = 0, 1, 2
# the name of each collective, in the message when the processes' calls disagree
_REDUCTION = "DistributedDataParallel's gradient reduction"


class DistributedDataParallel(Module):
    """Train one copy of ``module`` per process, each on its part of the batch, as one model.

    At construction the processes check that their modules have the same parameters and
    buffers (names, shapes, dtypes) and take rank 0's values. After each ``backward()``
    through this module's output, every parameter's gradient is the average of the
    processes' gradients, so that the same optimizer step on every process keeps the
    copies equal: with equal slices of a batch, as one process stepping on the whole batch.

    Parameters
    ----------
    module : Module
        The model; the same on every process.
    device_ids, output_device : None
        torch's arguments for a process driving several GPUs; a lucid process drives
        its module's device, so only None is accepted.
    broadcast_buffers : bool, default True
        Give every process rank 0's buffers before each forward (as torch).
    process_group : None
        The world (the only group).
    bucket_cap_mb : float, default 25
        The gradients of a device and dtype go in flat buckets of at most this many MiB
        (a larger gradient gets a bucket of its own): one collective per bucket.
    find_unused_parameters : bool, default False
        Accepted for torch's scripts; a parameter with no gradient on some processes is
        handled either way (see Notes).

    Attributes
    ----------
    module : Module
        The wrapped model (its ``state_dict`` keys appear under ``module.``, as in torch).

    Raises
    ------
    RuntimeError
        When the processes' modules differ in their parameters or buffers (every process
        raises, naming the first difference), or no parameter requires a gradient.
    ValueError
        Without :func:`lucid.distributed.init_process_group`.
    lucid.distributed.DistBackendError
        From ``backward()``, on every process, when the processes' reductions disagree
        (buckets of another ``bucket_cap_mb``, a parameter converted on one process, a
        backward on one process against another collective on the others): checked
        once per reduction, before any gradient is exchanged.

    Notes
    -----
    - Gradients are reduced after the backward pass, not overlapped with it (a collective
      on MLX's CPU backends does not run beside the backward pass anyway). Each
      process's gradient is divided by the world size, then summed, as torch's default.
    - Before reducing, the processes exchange which parameters have a gradient, dense or
      sparse, in one small collective: a parameter no process has a gradient for keeps
      ``grad=None``; one that only some have is averaged with zeros from the others
      (torch needs ``find_unused_parameters=True`` for that).
    - Row-sparse gradients (``Embedding(sparse=True)``) are reduced as rows: each process
      sends its indices and values, every process concatenates them all and coalesces;
      nothing table-sized is made. Where some processes have a dense gradient for the
      same parameter, the sparse ones are made dense.
    - Inside :meth:`no_sync`, forward passes mark their backward for no reduction:
      gradients accumulate on each process, and the first backward outside averages
      the accumulated gradients.

    Examples
    --------
    Launched with ``python -m lucid.distributed.run --nproc 2 train.py``, each process
    trains on its half of the batch; here, a world of one process:

    >>> import lucid
    >>> import lucid.distributed as dist
    >>> from lucid import nn, optim
    >>> from lucid.nn.parallel import DistributedDataParallel as DDP
    >>> dist.init_process_group("any")
    >>> _ = lucid.manual_seed(0)
    >>> model = DDP(nn.Linear(3, 1))
    >>> optimizer = optim.SGD(model.parameters(), lr=0.1)
    >>> x = lucid.randn(8, 3)
    >>> part = x.reshape(dist.get_world_size(), -1, 3)[dist.get_rank()]
    >>> loss = (model(part) ** 2).mean()
    >>> loss.backward()
    >>> optimizer.step()
    >>> model.module.weight.grad.shape
    (1, 3)
    >>> dist.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids: None = None, output_device: None = None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group: None = None, bucket_cap_mb: float = 25,
                 find_unused_parameters: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a lucid.nn.Module, got {type(module).__name__}")
        for name, value in (("device_ids", device_ids), ("output_device", output_device)):
            if value is not None:
                raise ValueError(
                    f"{name} must be None: a lucid process drives its module's own device, got {value!r}"
                )
        if dim != 0:
            raise ValueError(f"dim must be 0 (the batch is split by the caller), got {dim!r}")
        if isinstance(bucket_cap_mb, bool) or not isinstance(bucket_cap_mb, (int, float)) or not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be a positive number, got {bucket_cap_mb!r}")
        collectives._check_group(process_group)
        self.world_size = dist.get_world_size()
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.bucket_cap_mb = bucket_cap_mb
        self.require_backward_grad_sync = True
        self._params = [p for p in module.parameters() if p.requires_grad]
        if not self._params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient."
            )
        self._check_same_module()
        with no_grad():
            collectives._broadcast_coalesced(list(module.parameters()) + list(module.buffers()), 0,
                                             "DistributedDataParallel's broadcast of rank 0's parameters and buffers")
        self._buckets = self._assign_buckets(bucket_cap_mb * 2 ** 20)
        self._queued = False

    # --- construction -----------------------------------------------------------------
    def _check_same_module(self) -> None:
        """Raise on every process if any process's parameters or buffers differ from rank 0's."""
        mine = [("parameter", name, tuple(t.shape), t.dtype.name, t.requires_grad)
                for name, t in self.module.named_parameters()]
        mine += [("buffer", name, tuple(t.shape), t.dtype.name, False) for name, t in self.module.named_buffers()]
        every = collectives._all_gather_object(mine, Call("DistributedDataParallel's check of the model"))
        reference = every[0]
        for rank, theirs in enumerate(every[1:], start=1):
            if theirs == reference:
                continue
            if len(theirs) != len(reference):
                raise RuntimeError(
                    f"DistributedDataParallel expects the same model on every process, but rank 0 has "
                    f"{len(reference)} parameters and buffers and rank {rank} has {len(theirs)}"
                )
            for ours, other in zip(reference, theirs):
                if ours != other:
                    raise RuntimeError(
                        f"DistributedDataParallel expects the same model on every process, but {ours[0]} "
                        f"{ours[1]!r} has shape {ours[2]}, dtype {ours[3]} (requires_grad={ours[4]}) on rank 0 "
                        f"and {other[0]} {other[1]!r} shape {other[2]}, dtype {other[3]} "
                        f"(requires_grad={other[4]}) on rank {rank}"
                    )

    def _assign_buckets(self, cap_bytes: float) -> list:
        """Consecutive parameters of one device and dtype, up to ``cap_bytes`` per bucket."""
        buckets: list[list[Tensor]] = []
        open_bucket: dict[tuple[object, object], dict[str, Any]] = {}  # (device, dtype): the bucket being filled
        for param in self._params:
            key = (param.device, param.dtype)
            size = param.numel() * param.dtype.itemsize
            bucket = open_bucket.get(key)
            if bucket is None or (bucket["bytes"] + size > cap_bytes and bucket["params"]):
                bucket = open_bucket[key] = {"params": [], "bytes": 0}
                buckets.append(bucket["params"])
            bucket["params"].append(param)
            bucket["bytes"] += size
        return buckets

    # --- forward and the reduction after backward ---------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.broadcast_buffers and self.world_size > 1:
            buffers = list(self.module.buffers())
            if buffers:
                with no_grad():
                    collectives._broadcast_coalesced(buffers, 0, "DistributedDataParallel's broadcast of buffers")
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            output = _map_tensors(output, self._mark)
        return output

    def _mark(self, tensor: Tensor) -> Tensor:
        """``tensor``, passed through a node whose backward queues the reduction (once)."""
        if not tensor.requires_grad:
            return tensor

        def backward(grad):
            if not self._queued:
                self._queued = True
                queue_callback(self._reduce_gradients)
            return (grad,)

        # torch's DDP adds no node of its own: the output prints the module's last op
        name = tensor.grad_fn.name if tensor.grad_fn is not None else "AliasBackward0"
        return record(tensor.detach(), name, (tensor,), backward)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within it, backward passes accumulate gradients locally, without a collective.

        The first backward after it averages the gradients accumulated so far, so that
        ``k`` micro-batches cost one reduction.

        Examples
        --------
        >>> import lucid
        >>> import lucid.distributed as dist
        >>> from lucid import nn
        >>> from lucid.nn.parallel import DistributedDataParallel as DDP
        >>> dist.init_process_group("any")
        >>> model = DDP(nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model(lucid.ones(4, 2)).sum().backward()  # accumulated here only
        >>> model(lucid.ones(4, 2)).sum().backward()  # averaged across processes
        >>> model.module.bias.grad
        tensor([8.])
        >>> dist.destroy_process_group()
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def _reduce_gradients(self) -> None:
        self._queued = False
        if self.world_size == 1:
            return
        # one check per step covers every exchange below: the same parameters in the same buckets
        collectives._check_agreement(self._reduction_call())
        kinds, lengths = self._exchange_kinds()
        with no_grad():
            for bucket in self._buckets:
                dense = [p for p in bucket if _DENSE in kinds[id(p)]]
                for param in dense:
                    if param.grad is None:
                        param.grad = zeros_like(param)
                    elif param.grad.is_sparse:
                        param.grad = param.grad.to_dense()
                if dense:
                    # one collective per bucket: each gradient / world size, summed
                    collectives._reduce([p.grad for p in dense], dist.ReduceOp.AVG, _REDUCTION, checked=False)
            for param in self._params:
                if _SPARSE in kinds[id(param)] and _DENSE not in kinds[id(param)]:
                    self._reduce_rows(param, lengths[id(param)])

    def _reduction_call(self) -> Call:
        """What this process's gradient reduction will send: each parameter's dtype and shape,
        in bucket order, and for each bucket which collective (device and dtype) each is in."""
        tensors, layout = [], []
        for bucket in self._buckets:
            kinds: dict = {}
            layout.append(tuple(kinds.setdefault((p.device, p.dtype), len(kinds)) for p in bucket))
            tensors += [tensor_entry(p) for p in bucket]
        return Call(_REDUCTION, op="AVG", tensors=tuple(tensors), layout=tuple(layout))

    def _exchange_kinds(self):
        """What each parameter's gradient is on every process (none, dense, or sparse with
        how many rows), by parameter: one small all_gather."""
        codes = []
        for param in self._params:
            grad = param.grad
            if grad is None:
                codes += [_NONE, 0]
            elif grad.is_sparse:
                codes += [_SPARSE, grad._nnz()]
            else:
                codes += [_DENSE, 0]
        table = collectives._all_gather_words(codes, _REDUCTION)
        kinds = {id(p): {row[2 * i] for row in table} for i, p in enumerate(self._params)}
        lengths = {id(p): [row[2 * i + 1] for row in table] for i, p in enumerate(self._params)}
        return kinds, lengths

    def _reduce_rows(self, param, lengths) -> None:
        """Average a row-sparse gradient: gather every process's rows, then coalesce."""
        grad = param.grad
        if grad is None:
            rows = zeros((0,), dtype=int64, device=param.device)
            values = zeros((0,) + tuple(param.shape[1:]), dtype=param.dtype, device=param.device)
        else:
            rows, values = grad.indices()[0], grad.values()
        values = values / self.world_size
        all_rows = collectives._all_gather_rows(rows, lengths, _REDUCTION)
        all_values = collectives._all_gather_rows(values, lengths, _REDUCTION)
        param.grad = sparse_coo_tensor(cat(all_rows).reshape(1, -1), cat(all_values), param.shape).coalesce()


def _map_tensors(output, fn):
    """``output`` with ``fn`` applied to every Tensor in it (tuples, lists and dicts followed)."""
    if isinstance(output, Tensor):
        return fn(output)
    if isinstance(output, tuple) and hasattr(output, "_fields"):
        return type(output)(*(_map_tensors(o, fn) for o in output))
    if isinstance(output, (list, tuple)):
        return type(output)(_map_tensors(o, fn) for o in output)
    if isinstance(output, dict):
        return type(output)((k, _map_tensors(v, fn)) for k, v in output.items())
    return output
