"""Utilities around the parameters of a model: gradient clipping and flat vectors.

As ``torch.nn.utils``: :func:`clip_grad_norm_` (which returns the norm before clipping),
:func:`get_total_norm` and :func:`clip_grads_with_norm_` (its two halves),
:func:`clip_grad_value_`, :func:`parameters_to_vector` and :func:`vector_to_parameters`.

Examples
--------
>>> import lucid
>>> from lucid import nn
>>> model = nn.Linear(4, 1)
>>> model(lucid.ones(3, 4)).sum().backward()
>>> norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
>>> float(nn.utils.get_total_norm([p.grad for p in model.parameters()])) <= 0.5
True
"""

from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
    "parameters_to_vector", "vector_to_parameters",
]
