"""Samplers: the order in which a DataLoader visits a dataset's indices."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from ... import _factory
from ..._backend import random
from ..._generator import Generator

if TYPE_CHECKING:
    from ..._tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)  # what a sampler yields: an index, or a batch of them


class Sampler(Generic[T_co]):
    """The base of samplers: an iterable of indices (or of lists of indices, for a batch sampler).

    Examples
    --------
    >>> from lucid.utils.data import Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> list(Backwards(3))
    [2, 1, 0]
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``.

    Examples
    --------
    >>> from lucid.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _generator_for_epoch(generator):
    """torch's rule: without a generator, each pass seeds a fresh one from the default generator."""
    if generator is not None:
        return generator
    seed = int(_factory.randint(0, 2**62, (1,)).item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """The indices in random order: a new permutation each pass, or draws with replacement.

    Parameters
    ----------
    data_source : Dataset
    replacement : bool, default False
        Draw ``num_samples`` indices independently.
    num_samples : int, optional
        How many indices per pass (``len(data_source)`` by default); without replacement,
        more than that chains permutations.
    generator : lucid.Generator, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(5), generator=lucid.Generator().manual_seed(1)))
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, numbers.Integral) or isinstance(self.num_samples, bool) \
                or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass gives.

        Examples
        --------
        >>> from lucid.utils.data import RandomSampler
        >>> RandomSampler(range(5)).num_samples, RandomSampler(range(5), True, 9).num_samples
        (5, 9)
        """
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = _generator_for_epoch(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _factory.randint(high=n, size=(32,), generator=generator).tolist()
            yield from _factory.randint(high=n, size=(self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _factory.randperm(n, generator=generator).tolist()
        yield from _factory.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in random order, a new permutation each pass.

    Examples
    --------
    >>> from lucid.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([4, 7, 9]))
    [4, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _factory.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Examples
    --------
    >>> from lucid.utils.data import WeightedRandomSampler
    >>> set(WeightedRandomSampler([0.0, 1.0, 0.0], num_samples=5))
    {1}
    """

    weights: list[float]
    num_samples: int
    replacement: bool
    generator: Generator | None

    def __init__(self, weights: Sequence[float] | Tensor, num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = [float(w) for w in (weights.tolist() if hasattr(weights, "tolist") else weights)]
        if any(w < 0 for w in weights) or not sum(weights) > 0:
            raise RuntimeError("invalid multinomial distribution (weights must be non-negative with a positive sum)")
        if not replacement and num_samples > sum(w > 0 for w in weights):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from random.choice(self.weights, self.num_samples, self.replacement, self.generator)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Lists of ``batch_size`` indices from ``sampler`` (the last shorter, or dropped with ``drop_last``).

    Examples
    --------
    >>> from lucid.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> len(BatchSampler(range(5), 2, drop_last=True))
    2
    """

    sampler: Sampler[int] | Iterable[int]
    batch_size: int
    drop_last: bool

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(cast("Sized", self.sampler))  # a BatchSampler has a len() where its sampler has one
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
