"""Optimizers for training across processes: :class:`ZeroRedundancyOptimizer`.

Examples
--------
>>> from lucid.distributed.optim import ZeroRedundancyOptimizer
>>> ZeroRedundancyOptimizer.__name__
'ZeroRedundancyOptimizer'
"""

from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
