"""Optimizers with torch.optim's names, defaults, errors and numbers, on every device.

Examples
--------
>>> import lucid
>>> from lucid import nn, optim
>>> model = nn.Linear(3, 1)
>>> optimizer = optim.AdamW(model.parameters(), lr=1e-2)
>>> x, y = lucid.randn(8, 3), lucid.randn(8, 1)
>>> for _ in range(3):
...     optimizer.zero_grad()
...     loss = nn.functional.mse_loss(model(x), y)
...     loss.backward()
...     optimizer.step()
"""

from .adafactor import Adafactor
from .adam import Adam, AdamW
from .lion import Lion
from .muon import Muon
from .optimizer import Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook, required
from . import lr_scheduler
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "SparseAdam", "required",
    "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
    "lr_scheduler",
    "Lion", "Adafactor", "Muon",
]
