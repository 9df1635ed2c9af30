"""Data parallelism across processes: :class:`DistributedDataParallel`.

Examples
--------
>>> from lucid.nn.parallel import DistributedDataParallel
>>> DistributedDataParallel.__name__
'DistributedDataParallel'
"""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
