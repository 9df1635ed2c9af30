"""``lucid.autograd.Function``: custom differentiable operations, written as torch's are.

A subclass gives a static ``forward`` and ``backward``; ``Function.apply`` runs ``forward``
without recording a graph and records one node for all its outputs, whose class is named
after the Function (``MyFnBackward``) and is also the ``ctx`` both methods receive. The
engine's side (one node shared by several outputs, arrays in and out, the history of a
tensor modified in place) is :func:`lucid._autograd.connect` and :func:`~lucid._autograd.rebase`.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .._autograd import FREED_GRAPH, Node, connect, count_write, is_grad_enabled, no_grad, rebase
from .._factory import zeros
from .._tensor import Tensor


class FunctionCtx:
    """What a custom :class:`Function`'s ``forward`` (or ``setup_context``) leaves for its
    ``backward``: saved tensors, attributes of its own, and the marks below.

    ``needs_input_grad`` is a tuple of one bool per argument of ``forward``: whether it is
    a Tensor that requires grad (``backward`` may skip the gradients nobody needs).

    Examples
    --------
    >>> import lucid
    >>> from lucid.autograd import Function
    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return grad * 3 * x ** 2
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    """

    needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep ``tensors`` (inputs, outputs or None) for ``backward``'s :attr:`saved_tensors`.

        A tensor saved this way is checked when ``backward`` runs: if an in-place write has
        changed it since, backward raises instead of computing with the new values.

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Square(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x, None)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         x, nothing = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = lucid.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).backward()
        >>> x.grad.tolist()
        [6.0]
        """
        for i, tensor in enumerate(tensors):
            if tensor is not None and not isinstance(tensor, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(tensor).__name__}")
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to :meth:`save_for_backward`, in order (RuntimeError once the
        graph has been freed by a backward without ``retain_graph=True``).

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Scale(Function):
        ...     @staticmethod
        ...     def forward(ctx, x, w):
        ...         ctx.save_for_backward(w)
        ...         return x * w
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         w, = ctx.saved_tensors
        ...         return grad * w, None
        >>> x = lucid.tensor([1.0], requires_grad=True)
        >>> Scale.apply(x, lucid.tensor([4.0])).backward()
        >>> x.grad.tolist()
        [4.0]
        """
        if getattr(self, "_freed", False):
            raise RuntimeError(FREED_GRAPH)
        return tuple(getattr(self, "_saved", ()))

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare that ``forward`` modified these input tensors in place (each must also be
        returned): the output is the input itself, its history continued by this node.

        Notes
        -----
        As in torch, a leaf that requires grad cannot be modified this way. lucid does not
        rebase the history of a view's base, so a view that is part of a graph is refused
        (NotImplementedError); ``clone()`` it first. lucid's graph links tensors, so the ops
        that used the tensor before are found by a scan of Python's heap when the call is
        recorded: a few milliseconds per call in a large program, where torch pays nothing.

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Double_(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         x.mul_(2)
        ...         ctx.mark_dirty(x)
        ...         return x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad * 2
        >>> w = lucid.tensor([1.0, 5.0], requires_grad=True)
        >>> h = w + 0
        >>> Double_.apply(h) is h, h.tolist()
        (True, [2.0, 10.0])
        >>> h.sum().backward()
        >>> w.grad.tolist()
        [2.0, 2.0]
        """
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no gradient (indices, masks): they do not require grad,
        and ``backward`` receives zeros for them (None without materialized grads).

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class MaxWithIndex(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         index = x.argmax()
        ...         ctx.mark_non_differentiable(index)
        ...         ctx.save_for_backward(index)
        ...         ctx.size = x.shape[0]
        ...         return x.max(), index
        ...     @staticmethod
        ...     def backward(ctx, grad, grad_index):
        ...         index, = ctx.saved_tensors
        ...         return lucid.zeros(ctx.size).index_add(0, index.reshape(1), grad.reshape(1))
        >>> x = lucid.tensor([1.0, 7.0, 3.0], requires_grad=True)
        >>> value, index = MaxWithIndex.apply(x)
        >>> index.requires_grad
        False
        >>> value.backward()
        >>> x.grad.tolist()
        [0.0, 1.0, 0.0]
        """
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (True, the default) or None for the outputs
        that got no gradient.

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Pair(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.set_materialize_grads(False)
        ...         return x * 2, x * 3
        ...     @staticmethod
        ...     def backward(ctx, grad_a, grad_b):
        ...         return grad_b * 3 if grad_a is None else grad_a * 2
        >>> x = lucid.tensor([1.0], requires_grad=True)
        >>> a, b = Pair.apply(x)
        >>> b.backward()
        >>> x.grad.tolist()
        [3.0]
        """
        self._materialize = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The graph node of one call of a custom :class:`Function` (and its ``ctx``); each
    Function has its own subclass, named after it: ``grad_fn`` of ``MyFn.apply(x)`` is a
    ``MyFnBackward``.

    Examples
    --------
    >>> import lucid
    >>> from lucid.autograd import Function
    >>> class MyFn(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad * 2
    >>> y = MyFn.apply(lucid.ones(2, requires_grad=True))
    >>> type(y.grad_fn).__name__, y.grad_fn.name
    ('MyFnBackward', 'MyFnBackward')
    """

    _forward_cls: type[Function]

    def __init__(self) -> None:  # the Node's fields are filled in when the call is recorded (connect)
        pass

    # The engine drops a node's backward once the graph is freed; a custom Function's node
    # keeps it and frees only the saved tensors, so that (as in torch) only a backward that
    # reads them fails the second time.
    @property
    def backward(self) -> Callable | None:
        """The engine's side of this node's backward (arrays in, arrays out).

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Id(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x.clone()
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad
        >>> callable(Id.apply(lucid.ones(1, requires_grad=True)).grad_fn.backward)
        True
        """
        return self.__dict__.get("_run")

    @backward.setter
    def backward(self, run: Callable | None) -> None:
        if run is None:
            self._freed, self._saved = True, ()
        else:
            self._run = run


class FunctionMeta(type):
    """Gives each :class:`Function` subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


def _expandable(shape: tuple, to: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (a gradient of shape ``to`` then sums down to it)."""
    return len(shape) <= len(to) and all(s in (1, t) for s, t in zip(reversed(shape), reversed(to)))


class Function(metaclass=FunctionMeta):
    """A custom differentiable operation: subclass it with a static ``forward`` and
    ``backward``, and call ``MyFn.apply(*args)``.

    ``forward(ctx, *args)`` computes the outputs (a Tensor or a tuple) from any mix of
    tensors and other values, without recording a graph; ``backward(ctx, *grads)`` gets one
    gradient per output and returns one per argument of ``forward`` (None for non-tensors
    and for inputs that need none). Alternatively, ``forward(*args)`` without ``ctx`` and a
    static ``setup_context(ctx, inputs, output)`` that fills the ``ctx`` (torch's new style).

    Notes
    -----
    ``backward`` runs without recording a graph: lucid has no ``create_graph=True``, so a
    custom Function is differentiable once (as with :func:`once_differentiable`). A
    ``vmap`` or ``jvp`` staticmethod is not used (lucid has neither transform).

    Examples
    --------
    >>> import lucid
    >>> from lucid.autograd import Function
    >>> class MulConstant(Function):
    ...     @staticmethod
    ...     def forward(ctx, x, k):
    ...         ctx.k = k
    ...         return x * k
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad * ctx.k, None
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> y = MulConstant.apply(x, 3.0)
    >>> y.tolist(), y.grad_fn.name
    ([3.0, 6.0], 'MulConstantBackward')
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [3.0, 3.0]
    """

    _backward_cls: type[BackwardCFunction]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will "
                      "raise an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """The outputs from the inputs; to be given by the subclass.

        Examples
        --------
        >>> from lucid.autograd import Function
        >>> class Incomplete(Function):
        ...     pass
        >>> Incomplete.apply(1.0)
        Traceback (most recent call last):
        ...
        NotImplementedError: You must implement the forward function for custom autograd.Function.
        """
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> Any:
        """Fill ``ctx`` from the inputs and output, for a ``forward`` written without ``ctx``;
        to be given by the subclass that uses this style.

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Exp(Function):
        ...     @staticmethod
        ...     def forward(x):
        ...         return x.exp()
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.save_for_backward(output)
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         y, = ctx.saved_tensors
        ...         return grad * y
        >>> x = lucid.zeros(2, requires_grad=True)
        >>> Exp.apply(x).sum().backward()
        >>> x.grad.tolist()
        [1.0, 1.0]
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """The gradients of the inputs from those of the outputs; to be given by the subclass.

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class Forward(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x * 2
        >>> Forward.apply(lucid.ones(1, requires_grad=True)).backward()
        Traceback (most recent call last):
        ...
        NotImplementedError: You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.
        """
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` on ``args`` and record its outputs in the graph.

        Examples
        --------
        >>> import lucid
        >>> from lucid.autograd import Function
        >>> class AddMul(Function):
        ...     @staticmethod
        ...     def forward(ctx, a, b):
        ...         return a + b, a * b
        ...     @staticmethod
        ...     def backward(ctx, grad_sum, grad_product):
        ...         a, b = ctx.a, ctx.b
        ...         return grad_sum + grad_product * b, grad_sum + grad_product * a
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.a, ctx.b = inputs
        >>> class AddMulOld(Function):  # the same, with ctx in forward
        ...     @staticmethod
        ...     def forward(ctx, a, b):
        ...         ctx.a, ctx.b = a, b
        ...         return a + b, a * b
        ...     backward = AddMul.backward
        >>> a = lucid.tensor([2.0], requires_grad=True)
        >>> s, p = AddMulOld.apply(a, lucid.tensor([5.0]))
        >>> (s + p).backward()
        >>> a.grad.tolist()
        [6.0]
        """
        new_style = cls.setup_context is not Function.setup_context
        if new_style:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        recording = is_grad_enabled() and any(ctx.needs_input_grad)
        with no_grad():
            if new_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(output, tuple)
        outputs = _own_outputs(ctx, args, (output,) if single else output, recording)
        return outputs[0] if single else outputs


def _own_outputs(ctx: BackwardCFunction, args: tuple, outputs: tuple, recording: bool) -> tuple:
    """``forward``'s outputs as the caller gets them: an input returned unmodified becomes a
    new tensor on its storage, a dirty one stays itself; when ``recording``, the outputs
    that are differentiable get ``ctx`` as their grad_fn."""
    dirty = getattr(ctx, "_dirty", ())
    fixed = {id(t) for t in getattr(ctx, "_non_differentiable", ())}
    returned = {id(out) for out in outputs}
    if any(id(t) not in returned for t in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    inputs = [a for a in args if isinstance(a, Tensor)]
    owned, graph = [], []
    for produced in outputs:
        out = produced
        if isinstance(out, Tensor) and any(out is t for t in dirty):
            count_write(out)
            if recording:
                if out.is_leaf and out.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
                stand_in = rebase(out)
                inputs = [stand_in if t is out else t for t in inputs]
        elif isinstance(out, Tensor) and (any(out is t for t in inputs) or out.requires_grad):
            out = out.detach()  # an input returned as is, as torch's view of it
        owned.append(out)
        differentiable = isinstance(out, Tensor) and id(produced) not in fixed and out.dtype.is_floating_point
        graph.append(out if differentiable else None)
    if recording and any(g is not None for g in graph):
        connect(ctx, type(ctx).__name__, inputs, graph, [t for t in ctx.saved_tensors if t is not None],
                functools.partial(_backward, ctx, args, _layouts(outputs)))
    return tuple(owned)


def _layouts(outputs: tuple) -> list:
    """(shape, dtype, device) of each tensor output (None for the others): what a
    materialized zero gradient needs, without keeping the outputs alive."""
    return [(out.shape, out.dtype, out.device) if isinstance(out, Tensor) else None for out in outputs]


def _backward(ctx: BackwardCFunction, args: tuple, layouts: list, grads: tuple) -> list:
    """Run the Function's ``backward`` (or ``vjp``) on ``grads`` and check what it returns as
    torch does; one gradient (or None) per tensor argument."""
    forward_cls = ctx._forward_cls
    name = type(ctx).__name__
    user_backward, vjp = forward_cls.backward, forward_cls.vjp
    if user_backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                           "only implement one of them.")
    if vjp is not Function.vjp:
        user_backward = vjp
    if getattr(ctx, "_materialize", True):
        grads = tuple(zeros(layout[0], dtype=layout[1], device=layout[2]) if g is None and layout else g
                      for g, layout in zip(grads, layouts))
    with no_grad():
        result = user_backward(ctx, *grads)
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) > len(args) and all(g is None for g in result[len(args):]):
        result = result[:len(args)]
    if len(result) != len(args):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {len(args)}, "
                           f"got {len(result)})")
    per_tensor: list[Tensor | None] = []
    for position, (arg, grad) in enumerate(zip(args, result)):
        if grad is not None and not isinstance(grad, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
        if not isinstance(arg, Tensor):
            if grad is not None:
                raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                   f"{position + 1}, but the corresponding forward input was not a Variable")
            continue
        index = len(per_tensor)
        if grad is not None and arg.requires_grad:
            if grad.shape != arg.shape and not _expandable(arg.shape, grad.shape):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - got "
                                   f"{list(grad.shape)} but expected shape compatible with {list(arg.shape)}")
            if grad.device != arg.device:
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - expected "
                                   f"device {arg.device} but got {grad.device}")
        per_tensor.append(grad if arg.requires_grad else None)
    return per_tensor


def once_differentiable(fn: Callable) -> Callable:
    """Mark a custom Function's ``backward`` as not differentiable itself (torch's decorator).

    Notes
    -----
    Every backward in lucid is differentiable once: it runs without recording a graph, and
    there is no ``create_graph=True``. The decorator keeps torch code unchanged.

    Examples
    --------
    >>> import lucid
    >>> from lucid.autograd import Function
    >>> from lucid.autograd.function import once_differentiable
    >>> class Abs(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x.abs()
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return grad * x.sign()
    >>> x = lucid.tensor([-2.0, 3.0], requires_grad=True)
    >>> Abs.apply(x).sum().backward()
    >>> x.grad.tolist()
    [-1.0, 1.0]
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper
