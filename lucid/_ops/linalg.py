"""Products and norms: mm, bmm, einsum, norm (matmul, with the broadcasting rules, is elementwise.py's)."""

from __future__ import annotations

import math
import numbers
import string
import warnings
from collections.abc import Sequence
from typing import NamedTuple

from .. import _dtype
from .._autograd import is_grad_enabled, record, renamed
from .._tensor import Tensor
from .elementwise import _matmul_shape, _same_device, matmul
from .dims import axes as _axes
from .broadcast import broadcast_shapes
from .shape import cat


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """The product of two matrices (2-D tensors only; :func:`matmul` broadcasts).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1.0, 2.0]]).mm(lucid.tensor([[3.0], [4.0]]))
    tensor([[11.]])
    """
    if not isinstance(input, Tensor) or not isinstance(mat2, Tensor):
        raise TypeError(f"mm(): expected two Tensors, got {type(input).__name__} and {type(mat2).__name__}")
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """The products of two stacks of matrices, ``(b, n, m) @ (b, m, p) -> (b, n, p)`` (no broadcasting).

    Examples
    --------
    >>> import lucid
    >>> lucid.bmm(lucid.ones(4, 2, 3), lucid.ones(4, 3, 5)).shape
    (4, 2, 5)
    """
    if not isinstance(input, Tensor) or not isinstance(mat2, Tensor):
        raise TypeError(f"bmm(): expected two Tensors, got {type(input).__name__} and {type(mat2).__name__}")
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    expected = [input.shape[0], input.shape[2]]
    if list(mat2.shape[:2]) != expected:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {expected} but got: {list(mat2.shape[:2])}."
        )
    return renamed(matmul(input, mat2), "BmmBackward0")


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` as one recorded op, as torch's addmm: a 2-D ``weight`` of
    ``input``'s dtype and device, ``bias`` None or of shape ``(out_features,)`` and that dtype.

    One node instead of three (transpose, matmul, add), whose backward is torch's:
    ``grad @ weight``, ``grad.T @ input`` and the sum of ``grad`` over the batch, each computed
    only for an input that requires grad. :func:`lucid.nn.functional.linear` checks the
    arguments and calls it where they fit; other cases (a 1-D weight, a broadcast bias,
    mixed dtypes) go through :func:`matmul` and ``+``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.linalg import linear
    >>> x = lucid.tensor([[1.0, 2.0]], requires_grad=True)
    >>> w = lucid.tensor([[1.0, 0.0], [1.0, 1.0]], requires_grad=True)
    >>> y = linear(x, w, lucid.tensor([0.5, 0.0]))
    >>> y
    tensor([[1.5000, 3.0000]], grad_fn=<AddmmBackward0>)
    >>> y.sum().backward()
    >>> x.grad, w.grad
    (tensor([[2., 1.]]), tensor([[1., 2.],
            [1., 2.]]))
    """
    out_features, in_features = weight.shape
    if input.shape[-1] != in_features:
        _matmul_shape(input.shape, (in_features, out_features))  # raises torch's message
    backend, x, w = input._backend, input._data, weight._data
    if input.ndim > 2:  # one product of the rows, not a batch of small ones (NumPy's broadcast matmul)
        rows = backend.reshape(x, (-1, in_features))
        out = backend.reshape(backend.matmul(rows, backend.swapaxes(w, 0, 1)), input.shape[:-1] + (out_features,))
    else:
        out = backend.matmul(x, backend.swapaxes(w, 0, 1))
    if bias is not None:
        out = backend.inplace("add", out, bias._data)  # a new array: it may be written
    out = input._like(out)
    if bias is None:
        return record(out, _linear_node_name(input.ndim, False), (input, weight), _linear_backward(backend, input, weight, None),
                      saved=(input, weight))
    return record(out, _linear_node_name(input.ndim, True), (input, weight, bias), _linear_backward(backend, input, weight, bias),
                  saved=(input, weight))


def _linear_node_name(ndim: int, bias: bool) -> str:
    """The name of torch's last node in ``F.linear``: addmm or mm of a matrix; of other inputs
    the view (with a bias) or the unsafe view or squeeze (without) back to their shape."""
    if ndim == 2:
        return "AddmmBackward0" if bias else "MmBackward0"
    return "ViewBackward0" if bias else "SqueezeBackward4" if ndim == 1 else "UnsafeViewBackward0"


def _linear_backward(backend, input, weight, bias):
    x, w = input._data, weight._data
    out_features, in_features = weight.shape
    rows = 1
    for n in input.shape[:-1]:
        rows *= n
    matrix = input.ndim == 2  # else the batch dimensions are flattened into one

    def backward(g):
        g2 = g if matrix else backend.reshape(g, (rows, out_features))
        grad_input = None
        if input.requires_grad:
            grad_input = backend.matmul(g2, w)
            grad_input = grad_input if matrix else backend.reshape(grad_input, input.shape)
        grad_weight = None
        if weight.requires_grad:
            grad_weight = backend.matmul(backend.swapaxes(g2, 0, 1),
                                         x if matrix else backend.reshape(x, (rows, in_features)))
        if bias is None:
            return grad_input, grad_weight
        return grad_input, grad_weight, (backend.sum(g2, axis=0) if bias.requires_grad else None)

    return backward


# --- einsum ----------------------------------------------------------------------------------


def _parse_einsum(equation: str, shapes):
    """``(terms, output, sizes)`` with every ellipsis spelled out as letters.

    Letters of size 1 in an operand where the letter is larger elsewhere (broadcasting) are
    dropped from that operand's term; the caller squeezes those axes.
    """
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    used = set(equation) - set(".,->")
    for letter in used:
        if letter not in string.ascii_letters:
            raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(letter)} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis = max((len(shape) - len(term.replace("...", "")) for term, shape in zip(terms, shapes)
                    if "..." in term), default=0)
    filler = "".join(spare[:ellipsis])
    spelled = []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        if "..." in term:
            count = len(shape) - len(term.replace("...", ""))
            if count < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term) - 3}) is more "
                                   f"than the number of dimensions ({len(shape)}) for operand {i}")
            term = term.replace("...", filler[ellipsis - count:] if count else "")
        elif len(term) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {i} and no ellipsis was given")
        spelled.append(term)
    sizes: dict = {}
    for i, (term, shape) in enumerate(zip(spelled, shapes)):
        own: dict = {}
        for letter, n in zip(term, shape):
            if own.setdefault(letter, n) != n:
                raise RuntimeError(f"einsum(): subscript {letter} is repeated for operand {i} but the sizes don't "
                                   f"match, {n} != {own[letter]}")
            seen = sizes.get(letter)
            if seen is None or seen == 1:
                sizes[letter] = n
            elif n != seen and n != 1:
                raise RuntimeError(f"einsum(): subscript {letter} has size {n} for operand {i} which does not "
                                   f"broadcast with previously seen size {seen}")
    if arrow:
        output = rhs.replace("...", filler)
        for letter in output:
            if not any(letter in term for term in spelled):
                raise RuntimeError(f"einsum(): output subscript {letter} does not appear in the equation for any "
                                   "input operand")
    else:
        counts = "".join(spelled)
        output = filler + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in filler))
    return spelled, output, sizes


def einsum(equation: str, *operands: Tensor) -> Tensor:
    """The sum of products that an Einstein-summation ``equation`` names, as torch's.

    ``"ij,jk->ik"`` is a matrix product, ``"bij,bjk->bik"`` a batched one, ``"ii->i"`` a
    diagonal, ``"...ij->...ji"`` a transpose of the last two dimensions. Without ``->``
    the output is the letters that appear once, in alphabetical order (after the
    ellipsis). Operands may be given as a list. Dimensions of size 1 broadcast.

    Parameters
    ----------
    equation : str
        Letters ``a-zA-Z``, ``,`` between operands, ``...`` for the dimensions not named.
    *operands : Tensor
        Of one dtype and device.

    Examples
    --------
    >>> import lucid
    >>> a, b = lucid.ones(2, 3), lucid.ones(3, 4)
    >>> lucid.einsum("ij,jk->ik", a, b).shape
    (2, 4)
    >>> lucid.einsum("ii", lucid.eye(3))
    tensor(3.)
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, got {type(t).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    _same_device(*operands)
    dtype = operands[0].dtype
    for t in operands[1:]:
        if t.dtype is not dtype:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype, got {dtype} and {t.dtype}")
    terms, output, sizes = _parse_einsum(equation, [t.shape for t in operands])
    backend = operands[0]._backend
    arrays, squeezed = [], []
    for term, t in zip(terms, operands):
        keep = [i for i, letter in enumerate(term) if not (t.shape[i] == 1 and sizes[letter] != 1)]
        term2 = "".join(term[i] for i in keep)
        array = backend.reshape(t._data, [t.shape[i] for i in keep]) if len(keep) != len(term) else t._data
        arrays.append(array)
        squeezed.append(term2)
    out = operands[0]._like(backend.einsum(",".join(squeezed) + "->" + output, *arrays))

    spare = [c for c in string.ascii_letters if c not in set("".join(squeezed) + output)]
    dtype = operands[0].dtype

    def backward(g):
        grads = []
        for i, (term, t) in enumerate(zip(squeezed, operands)):
            if not t.requires_grad:
                grads.append(None)
                continue
            others = [s for j, s in enumerate(squeezed) if j != i]
            present = set(output).union(*others) if others else set(output)
            unique = "".join(dict.fromkeys(term))  # a repeated letter is a diagonal: one index
            reduced = "".join(c for c in unique if c in present)
            grad = backend.einsum(",".join([output] + others) + "->" + reduced, g,
                                  *[a for j, a in enumerate(arrays) if j != i])
            if reduced != unique:  # letters only this operand had were summed: their gradient is broadcast
                grad = backend.reshape(grad, [sizes[c] if c in present else 1 for c in unique])
                grad = backend.broadcast_to(grad, [sizes[c] for c in unique])
            if unique != term:  # back onto the diagonal: one identity matrix per repeat
                fresh, full, diagonals, eyes = iter(spare), [], [], []
                for position, c in enumerate(term):
                    if c in term[:position]:
                        f = next(fresh)
                        full.append(f)
                        diagonals.append(c + f)
                        eyes.append(backend.eye(sizes[c], sizes[c], dtype))
                    else:
                        full.append(c)
                grad = backend.einsum(",".join([unique] + diagonals) + "->" + "".join(full), grad, *eyes)
            grads.append(backend.reshape(grad, t.shape))
        return tuple(grads)

    return record(out, _einsum_node_name(terms, output), operands, backward, saved=operands)


def _einsum_node_name(terms: list[str], output: str) -> str:
    """The name of torch's last node in an einsum: of one operand, its sum over the letters
    not kept, else its permutation; of several, the view after their last contraction (a
    letter summed over two operands), else their product."""
    summed = set("".join(terms)) - set(output)
    if len(terms) == 1:
        return "SumBackward1" if summed else "PermuteBackward0"
    shared = any(sum(letter in term for term in terms) > 1 for letter in summed)
    return "ViewBackward0" if shared else "MulBackward0"


# --- norms -----------------------------------------------------------------------------------


def norm(input: Tensor, p: float | str = "fro", dim: int | Sequence[int] | None = None, keepdim: bool = False,
         dtype: _dtype.dtype | None = None) -> Tensor:
    """The vector ``p``-norm of ``input`` over ``dim`` (all elements by default).

    Parameters
    ----------
    input : Tensor
        Floating point.
    p : float, inf, -inf or "fro", default "fro"
        ``"fro"`` (the Frobenius norm) is the 2-norm of the elements; 0 counts the nonzero
        elements; ``inf`` and ``-inf`` are the largest and smallest absolute values. The
        nuclear norm (``"nuc"``) is not implemented.
    dim : int or tuple of int, optional
    keepdim : bool, default False
    dtype : lucid.dtype, optional
        Convert ``input`` first.

    Notes
    -----
    The gradient is torch's: 0 (not nan) where the norm is 0, and for ``inf`` shared
    evenly among the elements that reach the maximum.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
    >>> n = x.norm(dim=1)
    >>> n
    tensor([5., 0.], grad_fn=<LinalgVectorNormBackward0>)
    >>> n.sum().backward()
    >>> x.grad
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]])
    >>> lucid.tensor([1.0, -3.0]).norm(p=float("inf"))
    tensor(3.)
    """
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {input.dtype}")
    if p == "fro" or p is None:
        p = 2.0
    elif isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("norm(p='nuc'), the nuclear norm, is not implemented in lucid")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    elif not isinstance(p, numbers.Real):
        raise TypeError(f"norm(): p must be a number, inf or 'fro', got {p!r}")
    p = float(p)
    axes = _axes(input, dim)
    backend, x, shape = input._backend, input._data, input.shape
    reduce = {"axis": axes if axes else None, "keepdims": True}

    def value(b, x):
        magnitude = b.abs(x)
        if math.isinf(p):
            return (b.max if p > 0 else b.min)(magnitude, **reduce)
        if p == 0:
            return b.sum(b.astype(b.compare("not_equal", x, 0), b.dtype_of(x)), **reduce)
        if p == 1:
            return b.sum(magnitude, **reduce)
        if p == 2:
            return b.sqrt(b.sum(x * x, **reduce))
        return b.power(b.sum(b.power(magnitude, p), **reduce), 1.0 / p)

    # at the backend's working precision, rounded once (float16 squares do not overflow)
    n = backend.precisely(value, x)
    kept_shape = backend.shape(n)
    out_shape = kept_shape if keepdim else tuple(s for i, s in enumerate(shape) if i not in (axes or range(len(shape))))
    out = input._like(backend.reshape(n, out_shape))

    def gradient(b, g, x):
        n = value(b, x)  # again, at the working precision
        magnitude = b.abs(x)
        zeros = b.zeros_like(x)
        at_zero = b.compare("equal", n, 0)
        safe = b.where(at_zero, b.ones_like(n), n)  # the gradient is 0 there: no 0 / 0
        if p == 0:
            return zeros
        if math.isinf(p):
            hit = b.astype(b.compare("equal", magnitude, n), b.dtype_of(x))
            return b.sign(x) * hit * (g / b.sum(hit, **reduce))
        if p == 1:
            return b.sign(x) * g
        if p == 2:
            return x * b.where(at_zero, b.zeros_like(n), g / safe)
        if p < 1:
            scaled = b.where(b.compare("equal", x, 0), zeros, b.sign(x) * b.power(magnitude, p - 1))
            return scaled * (g * b.power(n, 1 - p))
        scale = b.where(at_zero, b.zeros_like(n), g / b.power(safe, p - 1))
        if p < 2:
            return b.sign(x) * b.power(magnitude, p - 1) * scale
        return x * b.power(magnitude, p - 2) * scale

    def backward(g):
        g = backend.reshape(g, kept_shape) if not keepdim else g
        return (backend.precisely(gradient, g, x),)

    return record(out, "LinalgVectorNormBackward0", (input,), backward, saved=(input,))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors: ``out[i, j] = input[i] * vec2[j]`` (also ``ger``).

    Examples
    --------
    >>> import lucid
    >>> lucid.outer(lucid.tensor([1, 2]), lucid.tensor([1, 10, 100])).tolist()
    [[1, 10, 100], [2, 20, 200]]
    """
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcast); without ``dim``, along the first
    dimension of size 3, with torch's deprecation warning.

    Examples
    --------
    >>> import lucid
    >>> lucid.cross(lucid.tensor([0.0, 1.0, 0.0]), lucid.tensor([1.0, 0.0, 0.0]), dim=0).tolist()
    [0.0, 0.0, -1.0]
    """
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        sizes = list(broadcast_shapes(input.shape, other.shape))
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    for t in (input, other):
        (axis,) = _axes(t, dim) if t.ndim else (0,)
        if t.ndim == 0 or t.shape[axis] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                               f"Got {input.shape[dim] if input.ndim else 0} and {other.shape[dim] if other.ndim else 0}")

    def part(t, i):
        return t.narrow(dim, i, 1)

    first = part(input, 1) * part(other, 2) - part(input, 2) * part(other, 1)
    second = part(input, 2) * part(other, 0) - part(input, 0) * part(other, 2)
    third = part(input, 0) * part(other, 1) - part(input, 1) * part(other, 0)
    return renamed(cat([first, second, third], dim), "LinalgCrossBackward0")


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The dot product of two vectors of one size and dtype (also ``inner`` of vectors).

    Examples
    --------
    >>> import lucid
    >>> lucid.dot(lucid.tensor([1.0, 2.0]), lucid.tensor([3.0, 4.0])).item()
    11.0
    """
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.shape != tensor.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{tensor.shape[0]}] "
                           f"to have the same number of elements, but got {input.shape[0]} and {tensor.shape[0]} "
                           "elements respectively")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dtype.scalar_type(input.dtype)} and {_dtype.scalar_type(tensor.dtype)}")
    return renamed(matmul(input, tensor), "DotBackward0")


class EighResult(NamedTuple):
    """What :func:`eigh` returns; its repr names the op, as torch.return_types.linalg_eigh's."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """What :func:`qr` returns; its repr names the op, as torch.return_types.linalg_qr's."""

    Q: Tensor
    R: Tensor


EighResult.__name__, QRResult.__name__ = "linalg_eigh", "linalg_qr"


def _decomposable(name: str, kernel: str, input: Tensor) -> None:
    """torch's errors for what ``linalg.{name}`` cannot decompose; lucid records no gradient for it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if name == "qr" and not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.qr: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype.scalar_type(input.dtype)}")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type(input.dtype)}\'')
    if input.requires_grad and is_grad_enabled():
        raise RuntimeError(f"linalg.{name}: lucid has no gradient for it; call it under lucid.no_grad() or on a "
                           "detached tensor")


def eigh(input: Tensor) -> EighResult:
    """``(eigenvalues, eigenvectors)`` of the symmetric matrices ``input`` (..., n, n), as
    torch.linalg.eigh: eigenvalues ascending, eigenvectors the columns, the lower triangle read.

    Each eigenvector is unique only up to its sign, and those of a repeated eigenvalue only up
    to a rotation within their eigenspace: which one comes back is the LAPACK build's (torch's
    and NumPy's may differ), so compare what does not depend on it (the eigenvalues,
    ``V diag(w) V^T``, ``|v^T u|``). float32 and float64; on the "gpu" device (MLX) the
    decomposition runs on MLX's CPU stream, float64 included. No gradient is recorded: the
    input must not require one where grad mode is on.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.linalg import eigh
    >>> w, v = eigh(lucid.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=lucid.float64))
    >>> w
    tensor([1., 3.], dtype=lucid.float64)
    >>> (v @ lucid.diag(w) @ v.T - lucid.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=lucid.float64)).abs().max().item() < 1e-15
    True
    """
    _decomposable("eigh", "linalg_eigh_cpu", input)
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"linalg.eigh: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    values, vectors = input._backend.eigh(input._data)
    return EighResult(input._like(values), input._like(vectors))


def qr(input: Tensor) -> QRResult:
    """``(Q, R)``, the reduced QR decomposition of the matrices ``input`` (..., m, n), as
    torch.linalg.qr's default mode: ``Q`` (..., m, k) with orthonormal columns and ``R``
    (..., k, n) upper triangular, ``k = min(m, n)``, by Householder reflections (LAPACK's).

    float32 and float64; on the "gpu" device (MLX) it runs on MLX's CPU stream. No gradient is
    recorded: the input must not require one where grad mode is on.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.linalg import qr
    >>> q, r = qr(lucid.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> r.abs()
    tensor([[5.0000, 2.2000],
            [0.0000, 0.4000]])
    >>> (q.T @ q - lucid.eye(2)).abs().max().item() < 1e-6
    True
    """
    _decomposable("qr", "geqrf_cpu", input)
    q, r = input._backend.qr(input._data)
    return QRResult(input._like(q), input._like(r))
