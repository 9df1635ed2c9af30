"""Training across processes and machines, on MLX's distributed layer.

``torch.distributed``'s names over ``mlx.core.distributed``: the processes that
``python -m lucid.distributed.run`` starts (on one machine, or on several through a
hostfile) join one process group with :func:`init_process_group` and exchange tensors on
"cpu" or "gpu" with :func:`all_reduce`, :func:`all_gather`, :func:`broadcast` and
:func:`barrier`. :class:`lucid.nn.parallel.DistributedDataParallel` averages gradients
across them, and :class:`lucid.distributed.optim.ZeroRedundancyOptimizer` shards the
optimizer's state.

Examples
--------
>>> import lucid
>>> import lucid.distributed as dist
>>> dist.init_process_group("any")  # a world of one process, without the launcher
>>> t = lucid.tensor([1.0, 2.0])
>>> dist.all_reduce(t, op=dist.ReduceOp.AVG)
>>> t
tensor([1., 2.])
>>> dist.destroy_process_group()
"""

from .collectives import (
    DistBackendError,
    ReduceOp,
    all_gather,
    all_gather_object,
    all_reduce,
    all_reduce_coalesced,
    barrier,
    broadcast,
    broadcast_object_list,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
)

__all__ = [
    "DistBackendError", "ReduceOp", "default_pg_timeout", "is_available", "is_initialized",
    "init_process_group", "destroy_process_group", "get_rank", "get_world_size", "get_backend",
    "all_reduce", "all_reduce_coalesced", "all_gather", "broadcast", "barrier",
    "all_gather_object", "broadcast_object_list",
]
