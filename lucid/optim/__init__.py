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
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .adopt import ADOPT
from .asgd import ASGD
from .lbfgs import LBFGS
from .lion import Lion
from .muon import Muon
from .muon_with_adamw import MuonWithAdamW
from .nadam import NAdam, RAdam
from .optimizer import Optimizer, register_optimizer_step_post_hook, register_optimizer_step_pre_hook, required
from . import lr_scheduler, schedules, swa_utils
from .prodigy import Prodigy
from .rmsprop import RMSprop
from .rprop import Rprop
from .schedule_free import AdamWScheduleFree, RAdamScheduleFree, SGDScheduleFree
from .schedule_free_wrapper import ScheduleFreeWrapper
from .sgd import SGD
from .soap import SOAP
from .sparse_adam import SparseAdam
from .wrappers import GradientAccumulation, SkipNonFinite

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "SparseAdam", "required",
    "GradientAccumulation", "SkipNonFinite", "swa_utils",
    "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
    "Adadelta", "Adagrad", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop",
    "lr_scheduler", "schedules",
    "Lion", "Adafactor", "Muon", "LBFGS", "ADOPT",
    "MuonWithAdamW",
    "Prodigy",
    "SGDScheduleFree", "AdamWScheduleFree", "RAdamScheduleFree", "ScheduleFreeWrapper",
    "SOAP",
]
