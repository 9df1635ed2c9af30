"""Broadcasting rules, checked before any array is touched, with torch's error messages.

The array libraries disagree on what they reject (MLX happily grows the target of an
"in-place" add), so lucid decides shapes itself and raises the same RuntimeError on
every device.
"""

from __future__ import annotations


def broadcast_shapes(*shapes) -> tuple:
    """The shape that ``shapes`` broadcast to, or torch's RuntimeError naming the mismatch.

    Examples
    --------
    >>> from lucid._ops.broadcast import broadcast_shapes
    >>> broadcast_shapes((2, 1, 4), (3, 1))
    (2, 3, 4)
    >>> broadcast_shapes((3,), (4,))
    Traceback (most recent call last):
        ...
    RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0
    """
    first = tuple(shapes[0]) if shapes else ()
    if all(shape == first for shape in shapes[1:]):
        return first
    result: tuple = ()
    for i, shape in enumerate(shapes):
        shape = tuple(shape)
        result = shape if i == 0 else _pair(result, shape)
    return result


def _pair(a: tuple, b: tuple) -> tuple:
    ndim = max(len(a), len(b))
    a2, b2 = (1,) * (ndim - len(a)) + a, (1,) * (ndim - len(b)) + b
    out = []
    for dim, (m, n) in enumerate(zip(a2, b2)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(
                f"The size of tensor a ({m}) must match the size of tensor b ({n}) "
                f"at non-singleton dimension {dim}"
            )
        out.append(n if m == 1 else m)
    return tuple(out)


def check_fits(target: tuple, *others) -> None:
    """Raise unless every shape in ``others`` broadcasts to ``target`` without growing it.

    Examples
    --------
    >>> from lucid._ops.broadcast import check_fits
    >>> check_fits((2, 3), (3,), ())
    >>> check_fits((3,), (2, 3))
    Traceback (most recent call last):
        ...
    RuntimeError: output with shape [3] doesn't match the broadcast shape [2, 3]
    """
    target = tuple(target)
    if all(shape == target or not shape for shape in others):
        return
    shape = broadcast_shapes(target, *others)
    if shape != target:
        raise RuntimeError(f"output with shape {list(target)} doesn't match the broadcast shape {list(shape)}")
