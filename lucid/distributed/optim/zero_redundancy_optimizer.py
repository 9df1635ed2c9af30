"""``ZeroRedundancyOptimizer``: each process keeps the optimizer state of its shard only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._autograd import no_grad
from ...optim.optimizer import Optimizer, with_step_hooks
from .. import collectives
from .._agreement import Call

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..._tensor import Tensor
    from ...optim.optimizer import ParamsT

__all__ = ["ZeroRedundancyOptimizer"]

# the name of the step's collective, in the message when the processes' calls disagree
_EXCHANGE = "ZeroRedundancyOptimizer's exchange of shards"


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap an optimizer so that each process holds and updates one shard of its state.

    The parameters are split among the processes (in each group, largest first, each to
    the process with the fewest elements so far, as torch does). Each process runs a plain
    ``optimizer_class`` over its shard, so its state memory is about 1/world_size of
    the whole, and after each :meth:`step` every process receives the others' updated
    parameters (one collective, the bytes of every shard: bit for bit). With the same
    gradients on every process (those of
    :class:`~lucid.nn.parallel.DistributedDataParallel`, say), the parameters follow the
    unsharded optimizer's trajectory exactly.

    Parameters
    ----------
    params : iterable of Parameter or of dict
        The parameters or parameter groups, the same on every process.
    optimizer_class : type
        A :class:`lucid.optim.Optimizer` subclass, e.g. ``lucid.optim.Adam``.
    process_group : None
        The world (the only group).
    parameters_as_bucket_view : bool, default False
        Accepted for torch's scripts; the shards always travel as one flat buffer.
    overlap_with_ddp : bool, default False
        Must be False (the step is not overlapped with DDP's reduction).
    **defaults
        ``optimizer_class``'s hyperparameters (``lr=1e-3``, ...).

    Attributes
    ----------
    optim : Optimizer
        This process's optimizer, over its shard only.
    param_groups : list of dict
        The groups over every parameter, with every hyperparameter of ``optimizer_class``:
        a scheduler changes them here, and each step passes them on to ``optim``.

    Notes
    -----
    - :meth:`consolidate_state_dict` must run on every process; afterwards
      :meth:`state_dict` on the target process is the state dict the unsharded optimizer
      would have (parameters numbered over all groups, torch's layout), which
      :func:`lucid.save` writes and ``optimizer_class(params, **defaults)`` in a single
      process loads.
      :meth:`load_state_dict` takes such a dict on every process, each keeping its shard.
    - The consolidation gathers every shard on every process for a moment (MLX's
      backends have no gather to one process): it needs the memory of the whole state once.
    - A load that any process refuses leaves every process's optimizer as it was.
    - Before each step the processes check that they hold the same shards (one small
      exchange); otherwise every process raises
      :class:`~lucid.distributed.DistBackendError` and nothing has changed.
      ``consolidate_state_dict`` checks that every process names the same ``to``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.distributed as dist
    >>> from lucid import nn, optim
    >>> from lucid.distributed.optim import ZeroRedundancyOptimizer
    >>> dist.init_process_group("any")
    >>> model = nn.Linear(3, 2)
    >>> zero = ZeroRedundancyOptimizer(model.parameters(), optim.Adam, lr=0.01)
    >>> model(lucid.ones(4, 3)).sum().backward()
    >>> zero.step()
    >>> zero.consolidate_state_dict(to=0)
    >>> sd = zero.state_dict()
    >>> sorted(sd["state"]), sd["state"][0]["step"], sd["param_groups"][0]["betas"]
    ([0, 1], 1, (0.9, 0.999))
    >>> single = optim.Adam(model.parameters(), lr=0.01)
    >>> single.load_state_dict(sd)
    >>> dist.destroy_process_group()
    """

    def __init__(self, params: ParamsT, optimizer_class: type[Optimizer], process_group: None = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False, **defaults: Any) -> None:
        collectives._check_group(process_group)
        if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
            raise TypeError(f"optimizer_class must be a lucid.optim.Optimizer subclass, got {optimizer_class!r}")
        if issubclass(optimizer_class, ZeroRedundancyOptimizer):
            raise TypeError("optimizer_class must be a plain optimizer, not ZeroRedundancyOptimizer")
        if overlap_with_ddp:
            raise ValueError("overlap_with_ddp=True is not supported: the step runs after DDP's reduction")
        self.world_size = collectives.get_world_size()
        self.rank = collectives.get_rank()
        self.parameters_as_bucket_view = bool(parameters_as_bucket_view)
        self._optimizer_class = optimizer_class
        self._partition_cache: list[list[dict]] | None = None
        self._all_state_dicts: list = []
        self._initialized = False
        super().__init__(params, defaults)
        self.optim = optimizer_class(self._partition()[self.rank], **defaults)
        _sync_param_groups(self.optim.param_groups, self.param_groups)
        self._initialized = True

    # --- which process owns which parameter -----------------------------------------------
    def _partition(self) -> list:
        """For each rank, its param groups: each global group with that rank's parameters."""
        if self._partition_cache is None:
            per_rank: list[list[dict]] = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                mine: list[list[Tensor]] = [[] for _ in range(self.world_size)]
                for param in sorted(group["params"], key=lambda p: p.numel(), reverse=True):
                    rank = sizes.index(min(sizes))
                    mine[rank].append(param)
                    sizes[rank] += param.numel()
                for rank in range(self.world_size):
                    shard = dict(group)
                    shard["params"] = mine[rank]
                    shard.pop("param_names", None)  # names stay with the global groups
                    per_rank[rank].append(shard)
            self._partition_cache = per_rank
        return self._partition_cache

    def _shards(self) -> list:
        """The parameters each rank updates, in its local optimizer's order."""
        return [[p for group in groups for p in group["params"]] for groups in self._partition()]

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (on every process: each takes its shard of it).

        Examples
        --------
        >>> import lucid
        >>> import lucid.distributed as dist
        >>> from lucid import nn, optim
        >>> from lucid.distributed.optim import ZeroRedundancyOptimizer
        >>> dist.init_process_group("any")
        >>> a, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(3))
        >>> zero = ZeroRedundancyOptimizer([a], optim.SGD, lr=0.1)
        >>> zero.add_param_group({"params": [b], "lr": 0.01})
        >>> [g["lr"] for g in zero.optim.param_groups]
        [0.1, 0.01]
        >>> dist.destroy_process_group()
        """
        super().add_param_group(param_group)
        if self._initialized:
            self._partition_cache = None
            groups = self._partition()[self.rank]
            self.optim.add_param_group(groups[-1])
            _sync_param_groups(self.optim.param_groups, self.param_groups)

    # --- stepping ---------------------------------------------------------------------
    @with_step_hooks  # the base's step is not called: its hooks run here
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """Update this process's shard with its optimizer, then share every shard's values.

        Must run on every process. Hyperparameters set in :attr:`param_groups` (by a
        scheduler, say) apply to this step.

        Examples
        --------
        >>> import lucid
        >>> import lucid.distributed as dist
        >>> from lucid import nn, optim
        >>> from lucid.distributed.optim import ZeroRedundancyOptimizer
        >>> dist.init_process_group("any")
        >>> w = nn.Parameter(lucid.tensor([1.0, 2.0]))
        >>> zero = ZeroRedundancyOptimizer([w], optim.SGD, lr=0.5)
        >>> (w * w).sum().backward()
        >>> zero.step()
        >>> w.detach()
        tensor([0., 0.])
        >>> dist.destroy_process_group()
        """
        shards = self._shards()
        # before anything changes: every process must be at this step, with the same shards
        collectives._check_agreement(collectives._shards_call(shards, _EXCHANGE))
        self._steps_taken += 1  # Optimizer.step_count, which lr schedulers read
        _sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = self.optim.step() if closure is None else self.optim.step(closure)
        _sync_param_groups(self.optim.param_groups, self.param_groups)
        with no_grad():
            collectives._exchange_shards(shards, _EXCHANGE)
        return loss

    # --- saving and loading -----------------------------------------------------------
    def consolidate_state_dict(self, to: int = 0) -> None:
        """Collect every process's shard of the state on process ``to`` (call it on all).

        Afterwards :meth:`state_dict` on ``to`` gives the whole state.

        Examples
        --------
        >>> import lucid
        >>> import lucid.distributed as dist
        >>> from lucid import nn, optim
        >>> from lucid.distributed.optim import ZeroRedundancyOptimizer
        >>> dist.init_process_group("any")
        >>> w = nn.Parameter(lucid.ones(2))
        >>> zero = ZeroRedundancyOptimizer([w], optim.SGD, lr=0.1, momentum=0.9)
        >>> w.sum().backward()
        >>> zero.step()
        >>> zero.consolidate_state_dict(to=0)
        >>> zero.state_dict()["state"]
        {0: {'momentum_buffer': tensor([1., 1.])}}
        >>> dist.destroy_process_group()
        """
        collectives._check_src(to, "to")
        _sync_param_groups(self.param_groups, self.optim.param_groups)
        # every process must name the same ``to``: otherwise two would each think they hold the state
        every = collectives._all_gather_object(self.optim.state_dict(),
                                               Call("ZeroRedundancyOptimizer.consolidate_state_dict", root=("to", to)))
        self._all_state_dicts = every if self.rank == to else []

    def state_dict(self) -> dict:
        """The unsharded optimizer's state dict, on the process :meth:`consolidate_state_dict` chose.

        Raises
        ------
        RuntimeError
            On a process the state was not consolidated to (torch's message).

        Examples
        --------
        >>> import lucid
        >>> import lucid.distributed as dist
        >>> from lucid import nn, optim
        >>> from lucid.distributed.optim import ZeroRedundancyOptimizer
        >>> dist.init_process_group("any")
        >>> a, b = nn.Parameter(lucid.ones(3)), nn.Parameter(lucid.ones(2))
        >>> zero = ZeroRedundancyOptimizer([{"params": [a]}, {"params": [b], "lr": 0.5}], optim.SGD,
        ...                                lr=0.1, momentum=0.9)
        >>> (a.sum() + b.sum()).backward()
        >>> zero.step()
        >>> zero.consolidate_state_dict(to=0)
        >>> sd = zero.state_dict()
        >>> sorted(sd["state"]), [g["params"] for g in sd["param_groups"]], [g["lr"] for g in sd["param_groups"]]
        ([0, 1], [[0], [1]], [0.1, 0.5])
        >>> dist.destroy_process_group()
        """
        if not self._all_state_dicts:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. "
                f"Please call `consolidate_state_dict(to={self.rank})` on "
                "all ranks beforehand if you meant to save the global state."
            )
        result = super().state_dict()  # the global groups, numbered over every parameter
        index_of = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        state = {}
        for local, groups in zip(self._all_state_dicts, self._partition()):
            for local_group, group in zip(local["param_groups"], groups):
                for local_index, param in zip(local_group["params"], group["params"]):
                    if local_index in local["state"]:
                        state[index_of[id(param)]] = local["state"][local_index]
        result["state"] = dict(sorted(state.items()))
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Load an unsharded optimizer's state dict on every process; each keeps its shard.

        Raises
        ------
        ValueError
            When the dict does not fit, on any process; every process is then unchanged.

        Examples
        --------
        >>> import lucid
        >>> import lucid.distributed as dist
        >>> from lucid import nn, optim
        >>> from lucid.distributed.optim import ZeroRedundancyOptimizer
        >>> dist.init_process_group("any")
        >>> w = nn.Parameter(lucid.ones(2))
        >>> single = optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.sum().backward()
        >>> single.step()
        >>> zero = ZeroRedundancyOptimizer([w], optim.SGD, lr=0.5, momentum=0.9)
        >>> zero.load_state_dict(single.state_dict())
        >>> zero.param_groups[0]["lr"], zero.optim.state[0]["momentum_buffer"]
        (0.1, tensor([1., 1.]))
        >>> dist.destroy_process_group()
        """
        error = None
        try:
            local = self._local_state_dict(state_dict)
        except (TypeError, ValueError, KeyError) as refused:
            error, local = refused, None
        previous = self.optim.state_dict()
        if local is not None:  # (error is None)
            try:
                self.optim.load_state_dict(local)
            except (TypeError, ValueError, KeyError) as refused:
                error = refused
        verdicts = collectives._all_gather_object(None if error is None else f"{type(error).__name__}: {error}",
                                                  Call("ZeroRedundancyOptimizer.load_state_dict"))
        if error is not None:
            raise ValueError(f"ZeroRedundancyOptimizer.load_state_dict refused on rank {self.rank}: {error}") from error
        refusals = [(r, v) for r, v in enumerate(verdicts) if v is not None]
        if refusals:
            self.optim.load_state_dict(previous)  # another process refused: back to where all were
            rank, why = refusals[0]
            raise ValueError(f"ZeroRedundancyOptimizer.load_state_dict refused on rank {rank}: {why}")
        _sync_param_groups(self.optim.param_groups, self.param_groups)

    def _local_state_dict(self, state_dict) -> dict:
        """The part of the unsharded ``state_dict`` this process's optimizer holds."""
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("a state dict must be a dict with 'state' and 'param_groups' entries")
        saved_groups = state_dict["param_groups"]
        if not isinstance(saved_groups, (list, tuple)) or len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        index_of = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        groups, state, local_index = [], {}, 0
        for saved, live, mine in zip(saved_groups, self.param_groups, self._partition()[self.rank]):
            if not isinstance(saved, dict) or len(saved.get("params", ())) != len(live["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
                )
            saved_index = dict(zip((index_of[id(p)] for p in live["params"]), saved["params"]))
            indices = []
            for param in mine["params"]:
                key = saved_index[index_of[id(param)]]
                if key in state_dict["state"]:
                    state[local_index] = state_dict["state"][key]
                indices.append(local_index)
                local_index += 1
            group = {k: v for k, v in saved.items() if k not in ("params", "param_names")}
            group["params"] = indices
            groups.append(group)
        return {"state": state, "param_groups": groups}


def _sync_param_groups(source: list, target: list) -> None:
    """Copy every hyperparameter (all but the parameters and their names) group by group."""
    for src, dst in zip(source, target):
        for key, value in src.items():
            if key not in ("params", "param_names"):
                dst[key] = value
