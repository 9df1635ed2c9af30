"""``lucid.autograd``: torch.autograd's names for lucid's graph.

:class:`Function` for custom differentiable operations, :func:`grad` and :func:`backward`
over several tensors at once, :func:`gradcheck`, :class:`Variable` for scripts older than
torch 0.4, and the grad modes (also at the top level: ``lucid.no_grad``). The engine itself is
``lucid/_autograd.py``; this package adds no state of its own.

Examples
--------
>>> import lucid
>>> from lucid.autograd import Variable
>>> x = Variable(lucid.tensor([2.0]), requires_grad=True)
>>> lucid.autograd.grad((x * x).sum(), x)[0].tolist()
[4.0]
"""

from .._autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from . import function, variable  # noqa: F401 - torch.autograd.function and .variable, as modules too
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck
from .gradients import backward, grad
from .variable import Variable

__all__ = [
    "Function", "FunctionCtx", "once_differentiable", "Variable", "grad", "backward", "gradcheck",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
]
