"""Neural-network building blocks: Parameter, Module, layers and :mod:`lucid.nn.functional`.

Examples
--------
>>> import lucid
>>> from lucid import nn
>>> import lucid.nn.functional as F
>>> _ = lucid.manual_seed(0)
>>> model = nn.Sequential(nn.Embedding(10, 4), nn.Tanh(), nn.Linear(4, 3))
>>> logits = model(lucid.tensor([1, 5, 7]))
>>> loss = F.cross_entropy(logits, lucid.tensor([0, 2, 1]))
>>> loss.backward()
>>> [p.grad.shape for p in model.parameters()]
[(10, 4), (3, 4), (3,)]
"""

from . import functional, init, utils
from .module import Module
from . import modules as _modules
from .modules import *  # noqa: F401,F403 - the layers, listed in modules.__all__
from .parameter import Parameter

__all__ = ["Parameter", "Module", *_modules.__all__, "functional", "init", "utils"]
