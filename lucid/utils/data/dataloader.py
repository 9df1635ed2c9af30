"""``DataLoader``: batches of a dataset's samples, in a sampler's order, collated into tensors."""

from __future__ import annotations

import collections.abc
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ... import _dtype, _factory
from ..._backend import host
from ..._ops.shape import stack
from ..._tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

if TYPE_CHECKING:
    from ... import Generator
    from .dataset import _SizedMapDataset

__all__ = ["DataLoader", "default_collate", "default_convert"]


def default_collate(batch: Sequence[Any]) -> Any:
    """Samples merged into a batch as torch's ``default_collate`` merges them.

    Tensors (and NumPy arrays) are stacked along a new first dimension; Python floats
    become a float64 tensor, ints an int64 one, bools a bool one; strings stay a list;
    dicts, named tuples and sequences are collated field by field (a tuple of fields gives
    a list, as in torch; a field of strings stays the sequence it was).

    Examples
    --------
    >>> import lucid
    >>> from lucid.utils.data import default_collate
    >>> default_collate([(lucid.tensor([1.0, 2.0]), 0), (lucid.tensor([3.0, 4.0]), 1)])
    [tensor([[1., 2.],
            [3., 4.]]), tensor([0, 1])]
    >>> default_collate([{"x": 0.5, "name": "a"}, {"x": 1.5, "name": "b"}])
    {'x': tensor([0.5000, 1.5000], dtype=lucid.float64), 'name': ['a', 'b']}
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if host.is_array(elem):
        return stack([_factory.tensor(b) for b in batch], 0)
    if host.is_host_scalar(elem):  # NumPy scalars keep their dtype, as torch.as_tensor does
        return _factory.tensor(host.as_array(list(batch)))
    if isinstance(elem, bool):
        return _factory.tensor(list(batch), dtype=_dtype.bool_)
    if isinstance(elem, numbers.Integral):
        return _factory.tensor(list(batch), dtype=_dtype.int64)
    if isinstance(elem, numbers.Real):
        return _factory.tensor(list(batch), dtype=_dtype.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)  # type: ignore[call-arg]  # elem's own type, not the ABC typeshed sees
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(field) for field in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)  # type: ignore[call-arg]  # elem's own type, not the ABC typeshed sees
        except TypeError:
            return fields
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {type(elem)}"
    )


def default_convert(data: Any) -> Any:
    """A sample as a DataLoader without batching (``batch_size=None``) gives it: NumPy arrays
    become tensors, containers are converted field by field, the rest stays as it is.

    Examples
    --------
    >>> import numpy as np
    >>> from lucid.utils.data import default_convert
    >>> default_convert((np.array([1, 2]), "a"))
    (tensor([1, 2]), 'a')
    """
    if host.is_array(data):
        return _factory.tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]  # as above
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return tuple(default_convert(d) for d in data)
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Batches of ``dataset``'s samples, as torch's ``DataLoader`` (in this process).

    Parameters
    ----------
    dataset : Dataset or IterableDataset
    batch_size : int or None, default 1
        Samples per batch; None turns batching off (each sample is converted alone).
    shuffle : bool, optional
        Visit the samples in a new random order each epoch (a :class:`RandomSampler`).
    sampler : Sampler or iterable, optional
        The order of the indices (excludes ``shuffle``).
    batch_sampler : Sampler or iterable, optional
        Lists of indices, one per batch (excludes ``batch_size``, ``shuffle``, ``sampler``
        and ``drop_last``).
    num_workers : int, default 0
        Accepted for torch scripts; lucid loads in this process whatever the value.
    collate_fn : callable, optional
        Merges a list of samples into a batch (:func:`default_collate` by default).
    pin_memory, timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers, pin_memory_device, in_order
        Accepted for torch's signature; they concern worker processes and CUDA.
    drop_last : bool, default False
        Drop the last batch if it is smaller than ``batch_size``.
    generator : lucid.Generator, optional
        The source of the shuffled order, so ``generator=lucid.Generator().manual_seed(s)``
        repeats an epoch's order.

    Notes
    -----
    There are no worker processes: ``num_workers > 0`` loads in the main process too.

    Examples
    --------
    >>> import lucid
    >>> from lucid.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(lucid.arange(10).float().reshape(5, 2), lucid.arange(5))
    >>> loader = DataLoader(ds, batch_size=2, shuffle=True, generator=lucid.Generator().manual_seed(0))
    >>> [y.shape for x, y in loader], len(loader)
    ([(2,), (2,), (1,)], 3)
    """

    # as given (__init__'s types): which of them is in use follows _iterable and batch_size
    dataset: Any
    sampler: Any
    batch_sampler: Any
    batch_size: int | None
    drop_last: bool
    collate_fn: Callable[[Any], Any]
    _iterable: bool

    def __init__(self, dataset: _SizedMapDataset | IterableDataset, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler[int] | Iterable[int] | None = None,
                 batch_sampler: Sampler[list[int]] | Iterable[Sequence[int]] | None = None, num_workers: int = 0,
                 collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: object | None = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_size is not None or batch_sampler is not None else default_convert)

    def _fetch(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        return getitems(indices) if getitems is not None else [self.dataset[i] for i in indices]

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            yield from self._iter_stream()
        elif self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
        else:
            for indices in self.batch_sampler:
                yield self.collate_fn(self._fetch(list(indices)))

    def _iter_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
