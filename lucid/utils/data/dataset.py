"""Datasets: indexable collections of samples (and streams of them), as ``torch.utils.data``'s."""

from __future__ import annotations

import bisect
import math
import numbers
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, cast

from ... import _factory
from ..._tensor import Tensor

if TYPE_CHECKING:
    from ... import Generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split"]


class _MapDataset(Protocol):
    """What a map-style dataset is to a reader: ``dataset[i]`` (a Dataset, a list, a tensor...)."""

    def __getitem__(self, index: int, /) -> Any: ...


class _SizedMapDataset(_MapDataset, Protocol):
    """A map-style dataset with a ``len()``, as samplers, ConcatDataset and random_split need."""

    def __len__(self) -> int: ...


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i``; subclasses define ``__getitem__``
    (and usually ``__len__``, which samplers need).

    ``a + b`` is their :class:`ConcatDataset`.

    Examples
    --------
    >>> from lucid.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
    ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self: _SizedMapDataset, other: _SizedMapDataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``; a DataLoader batches what it yields.

    Examples
    --------
    >>> from lucid.utils.data import DataLoader, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: object) -> NoReturn:  # refused, as torch's
        raise TypeError("IterableDataset does not support concatenation with +; chain the iterators instead")


class TensorDataset(Dataset):
    """Samples that are the rows of tensors: ``dataset[i] == (t[i] for t in tensors)``.

    Parameters
    ----------
    *tensors : Tensor
        All of one size in their first dimension.

    Examples
    --------
    >>> import lucid
    >>> from lucid.utils.data import TensorDataset
    >>> ds = TensorDataset(lucid.arange(6).reshape(3, 2), lucid.tensor([0.5, 1.5, 2.5]))
    >>> len(ds), ds[1]
    (3, (tensor([2, 3]), tensor(1.5000)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects Tensors, got {type(t).__name__}")
        if any(t.shape[:1] != tensors[0].shape[:1] for t in tensors) or any(t.ndim == 0 for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    Examples
    --------
    >>> from lucid.utils.data import Subset
    >>> s = Subset([10, 11, 12, 13], [3, 0])
    >>> len(s), s[0], s[[0, 1]]
    (2, 13, [13, 10])
    """

    def __init__(self, dataset: _MapDataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: int | list[int]) -> Any:
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several map-style datasets one after the other.

    Examples
    --------
    >>> from lucid.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1]
    (5, 3, 5)
    """

    def __init__(self, datasets: Iterable[_SizedMapDataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset: _SizedMapDataset, lengths: Sequence[float],
                 generator: Generator | None = None) -> list[Subset]:
    """``dataset`` cut into non-overlapping random :class:`Subset` s of the given lengths.

    Parameters
    ----------
    dataset : Dataset
    lengths : sequence of int or of float
        Sizes that sum to ``len(dataset)``, or fractions that sum to 1 (each gets
        ``floor(fraction * len)``, and what is left goes one by one to the first splits).
    generator : lucid.Generator, optional
        The permutation's source (the default generator otherwise).

    Examples
    --------
    >>> import lucid
    >>> from lucid.utils.data import random_split
    >>> train, test = random_split(range(10), [0.8, 0.2], generator=lucid.Generator().manual_seed(0))
    >>> len(train), len(test), sorted(list(train) + list(test)) == list(range(10))
    (8, 2, True)
    """
    lengths = list(lengths)
    total = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and not all(
            isinstance(n, numbers.Integral) for n in lengths):
        sizes: list[int] = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(total * fraction)))
        for i in range(total - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, n in enumerate(sizes):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
        lengths = sizes
    if sum(lengths) != total:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    counts = cast("Sequence[int]", lengths)  # ints from here: randperm refuses a float sum, as torch's
    order = _factory.randperm(sum(counts), generator=generator).tolist()
    subsets, start = [], 0
    for n in counts:
        subsets.append(Subset(dataset, order[start:start + n]))
        start += n
    return subsets
