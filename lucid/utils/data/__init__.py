"""``lucid.utils.data``: datasets, samplers and the DataLoader, as ``torch.utils.data``'s.

Examples
--------
>>> import lucid
>>> from lucid.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(lucid.randn(8, 3), lucid.randint(2, (8,)))
>>> for x, y in DataLoader(ds, batch_size=4):
...     print(x.shape, y.shape)
(4, 3) (4,)
(4, 3) (4,)
"""

from .dataloader import DataLoader, default_collate, default_convert
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
    "BatchSampler", "DataLoader", "default_collate", "default_convert",
]
