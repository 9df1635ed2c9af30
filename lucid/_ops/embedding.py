"""The embedding lookup's kernel: rows of a table gathered, their gradient scattered back.

:func:`lucid.nn.functional.embedding` checks its arguments and renormalises rows; this is
the recorded op under it, on the backend's arrays like every op here. Its backward is a
dense scatter-add into a table-shaped gradient, or (``sparse=True``) a row-sparse
:class:`lucid.SparseTensor` that lists the looked-up rows as they come.
"""

from __future__ import annotations

from .. import _dtype
from .._autograd import record
from .._sparse import SparseTensor


def lookup_rows(input, flat, weight, padding_idx, scale_grad_by_freq: bool, sparse: bool):
    """``weight[input]`` (``flat`` is ``input`` as a vector, already validated), recorded.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.embedding import lookup_rows
    >>> index = lucid.tensor([[2, 0]])
    >>> lookup_rows(index, index.reshape(-1), lucid.tensor([[1.0], [2.0], [3.0]]), None, False, False)
    tensor([[[3.],
             [1.]]])
    """
    rows, dim = weight.shape
    backend, dtype = weight._backend, weight.dtype
    index = flat._data
    out = weight._like(backend.reshape(backend.getitem(weight._data, (index,)), input.shape + (dim,)))

    def backward(grad):
        grad = backend.reshape(grad, (-1, dim))
        if padding_idx is not None:
            is_pad = backend.expand_dims(backend.compare("equal", index, padding_idx), 1)
            grad = backend.where(is_pad, backend.zeros_like(grad), grad)
        if scale_grad_by_freq:
            ones = backend.ones(backend.shape(index), dtype)
            counts = backend.scatter_add((rows,), dtype, (index,), ones)  # how often each row is named
            # torch scales by the reciprocal of the count
            scale = backend.divide(backend.ones((1,), dtype), backend.getitem(counts, (index,)))
            grad = backend.multiply(grad, backend.expand_dims(scale, 1))
        return (backend.scatter_add((rows, dim), dtype, (index,), grad),)

    if sparse:
        backward = _sparse_embedding_backward(backend, index, rows, dim, dtype, padding_idx, scale_grad_by_freq)
    # the indices are saved: changing them in place before backward is an error, as in torch
    return record(out, "EmbeddingBackward0", (weight,), backward, saved=(input,))


def _sparse_embedding_backward(backend, index, rows, dim, dtype, padding_idx, scale_grad_by_freq):
    """torch's ``embedding_sparse_backward``: the indices and the gradient's rows, as they come."""

    def backward(grad):
        if scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        grad = backend.reshape(grad, (-1, dim))
        indices = backend.astype(index, _dtype.int64)
        if padding_idx is not None:  # the padding rows are left out, not listed as zeros
            keep = backend.nonzero(backend.compare("not_equal", indices, padding_idx))
            if keep.shape[0] != backend.shape(indices)[0]:
                keep = backend.asarray(keep, _dtype.int64)
                indices, grad = backend.getitem(indices, (keep,)), backend.getitem(grad, (keep,))
        if backend.dtype_of(grad) is not dtype:
            grad = backend.astype(grad, dtype)
        elif not backend.is_exclusive(grad):
            grad = backend.copy(grad)  # the gradient's values are its own, as a leaf's .grad must be
        if indices is index:
            indices = backend.copy(indices)
        return (SparseTensor._make(indices, grad, (rows, dim), backend),)

    return backward
