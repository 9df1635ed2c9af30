"""Lookup tables: ``Embedding`` and ``EmbeddingBag``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import _factory
from ..._arguments import count
from ..._autograd import no_grad
from .. import functional as F
from .. import init
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

if TYPE_CHECKING:
    from typing_extensions import Self

    import lucid  # the annotations' lucid.dtype

__all__ = ["Embedding", "EmbeddingBag"]


def _check_table(num_embeddings, embedding_dim, max_norm, norm_type) -> None:
    """An embedding table's sizes (non-negative ints) and renormalisation, naming the argument."""
    count("num_embeddings", num_embeddings), count("embedding_dim", embedding_dim)
    F._check_renorm(max_norm, norm_type)


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by index.

    The forward is :func:`lucid.nn.functional.embedding` with this module's settings.

    Parameters
    ----------
    num_embeddings : int
        The number of rows.
    embedding_dim : int
        The size of each row.
    padding_idx : int, optional
        A row that is zeroed at initialisation and gets no gradient (so training leaves it
        as it is). Negative values count from the end. Out of range raises ValueError
        ("Padding_idx must be within num_embeddings: ...", torch's words; torch asserts),
        and anything but an int TypeError.
    max_norm : float, optional
        Each forward first rescales, in place, every *looked-up* row whose
        ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``. Other rows are untouched.
    norm_type : float, default 2.0
        The ``p`` of that norm.
    scale_grad_by_freq : bool, default False
        Divide each row's gradient by how often the row appears in the batch.
    sparse : bool, default False
        Give the weight a row-sparse gradient (a :class:`lucid.SparseTensor` listing the
        looked-up rows), so that backward, :class:`lucid.optim.SparseAdam` (or ``SGD``,
        ``Adagrad``) and ``zero_grad`` cost O(batch), not O(table). See
        :func:`lucid.nn.functional.embedding`.
    _weight : Tensor, optional
        Use these values (shape ``(num_embeddings, embedding_dim)``) instead of a random
        initialisation; the padding row is then *not* zeroed (as in torch).
    _freeze : bool, default False
        Create the weight with ``requires_grad=False``.
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Attributes
    ----------
    weight : Parameter
        Shape ``(num_embeddings, embedding_dim)``, initialised from N(0, 1) with
        :func:`lucid.randn` (so :func:`lucid.manual_seed` fixes it).

    Notes
    -----
    Bad arguments raise before anything is built, where torch asserts or fails inside a
    tensor factory: ``padding_idx`` (above), sizes that are not non-negative ints
    (TypeError or ValueError naming the argument), a negative or NaN ``max_norm``
    (ValueError) and a ``_weight`` of the wrong shape (ValueError, torch: AssertionError).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> emb = nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(lucid.tensor([[1, 2, 0], [4, 4, 9]])).shape
    (2, 3, 3)
    >>> emb.weight[0]
    tensor([0., 0., 0.], grad_fn=<SelectBackward0>)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: str | None = None,
                 dtype: lucid.dtype | None = None) -> None:
        _check_table(num_embeddings, embedding_dim, max_norm, norm_type)
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = F._validate_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            empty = _factory.zeros(num_embeddings, embedding_dim, dtype=dtype, device=device or "cpu")
            self.weight = Parameter(empty, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise ValueError("Shape of weight does not match num_embeddings and embedding_dim: got "
                                 f"{list(_weight.shape)}, expected {[num_embeddings, embedding_dim]}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self: Embedding | EmbeddingBag) -> None:  # EmbeddingBag's too
        """Draw the weight from N(0, 1) (:func:`lucid.nn.init.normal_`) and zero the padding row.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> emb = nn.Embedding(4, 2, padding_idx=-1)
        >>> emb.reset_parameters()
        >>> emb.padding_idx, emb.weight[3].tolist()
        (3, [0.0, 0.0])
        """
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self: Embedding | EmbeddingBag) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        """The rows of ``weight`` named by the integer tensor ``input``: shape ``input.shape + (embedding_dim,)``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> emb = nn.Embedding.from_pretrained(lucid.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> emb(lucid.tensor([[1], [0]]))
        tensor([[[2., 3.]],
        <BLANKLINE>
                [[0., 1.]]])
        """
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Self:
        """An Embedding whose weight is ``embeddings`` (a 2-D tensor; storage shared where possible).

        Parameters
        ----------
        embeddings : Tensor
            Shape ``(num_embeddings, embedding_dim)``.
        freeze : bool, default True
            Give the weight ``requires_grad=False``, so training does not change it.
        padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse
            As for :class:`Embedding`. The padding row is *not* zeroed.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> table = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> emb = nn.Embedding.from_pretrained(table)
        >>> emb(lucid.tensor([1, 1]))
        tensor([[3., 4.],
                [3., 4.]])
        >>> emb.weight.requires_grad
        False
        """
        if embeddings.ndim != 2:
            raise ValueError(f"Embeddings parameter is expected to be 2-dimensional, got shape {list(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """A table of vectors whose bags of rows are summed, averaged or maxed, without the rows per bag.

    The forward is :func:`lucid.nn.functional.embedding_bag` with this module's settings.

    Parameters
    ----------
    num_embeddings : int
    embedding_dim : int
    max_norm : float, optional
        Renormalise, in place, each looked-up row whose ``norm_type``-norm exceeds it.
    norm_type : float, default 2.0
    scale_grad_by_freq : bool, default False
    mode : {"sum", "mean", "max"}, default "mean"
    sparse : bool, default False
        Give the weight a row-sparse gradient, for :class:`lucid.optim.SparseAdam`, ``SGD``
        or ``Adagrad`` (not with ``mode="max"``).
    _weight : Tensor, optional
        Use these values instead of a random initialisation.
    include_last_offset : bool, default False
    padding_idx : int, optional
        Entries equal to it are left out of the bags; the row is zeroed at initialisation and
        gets no gradient.
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Attributes
    ----------
    weight : Parameter
        ``(num_embeddings, embedding_dim)``, initialised from N(0, 1) (:func:`lucid.randn`).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> bag = nn.EmbeddingBag(10, 3, mode="sum", sparse=True)
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> out = bag(lucid.tensor([1, 2, 4, 5, 4]), lucid.tensor([0, 2]))
    >>> out.shape
    (2, 3)
    >>> out.sum().backward()
    >>> bag.weight.grad.is_sparse
    True
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        _check_table(num_embeddings, embedding_dim, max_norm, norm_type)
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = F._validate_padding_idx(padding_idx, num_embeddings)
        if _weight is None:
            empty = _factory.zeros(num_embeddings, embedding_dim, dtype=dtype, device=device or "cpu")
            self.weight = Parameter(empty)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None) -> Tensor:
        """One reduced row per bag: ``(bags, embedding_dim)``.

        Parameters
        ----------
        input : Tensor
            ``(B, N)`` indices, or 1-D with ``offsets``.
        offsets : Tensor, optional
            The start of each bag of a 1-D ``input``.
        per_sample_weights : Tensor, optional
            Weights of ``input``'s shape (``mode="sum"`` only).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> bag = nn.EmbeddingBag.from_pretrained(lucid.tensor([[1.0, 0.0], [0.0, 1.0]]), mode="sum")
        >>> bag(lucid.tensor([[0, 1, 1]]), per_sample_weights=lucid.tensor([[2.0, 1.0, 1.0]]))
        tensor([[2., 2.]])
        """
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> Self:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D); ``freeze`` turns its gradient off.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> bag = nn.EmbeddingBag.from_pretrained(lucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> bag(lucid.tensor([[0, 1]])), bag.weight.requires_grad
        (tensor([[2., 3.]]), False)
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
