"""Reverse-mode autograd: a graph of nodes, one topological walk per ``backward``.

Each differentiable op calls :func:`record` with its output array, its inputs and a
``backward`` function that maps the output's gradient to one gradient per input. The engine
walks the graph once in reverse topological order, summing the contributions a tensor
receives before passing them on, so each node runs once however many paths reach it.

Two rules keep gradients right:
- No aliasing: a leaf's ``.grad`` never shares memory with another leaf's or with an array
  the graph still uses; sums are always new arrays.
- No stale values: a node records the version of every tensor whose value its backward reads;
  if an in-place write changed one since, backward raises instead of computing with it.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import Literal, ParamSpec, TypeVar

from ._dtype import describe

P = ParamSpec("P")
R = TypeVar("R")

_mode = threading.local()

# what create_graph=True (a gradient with a graph of its own) meets
NO_HIGHER_ORDER = ("create_graph=True is not supported: lucid's backward functions compute on arrays, so a "
                   "gradient has no graph of its own (no second derivatives); compute it with create_graph=False")

# torch 2.13's words for a graph walked again after a backward freed it
FREED_GRAPH = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
               "have already been freed). Saved intermediate values of the graph are freed when you call "
               ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
               "graph a second time or if you need to access saved tensors after calling backward.")


def is_grad_enabled() -> bool:
    """Whether ops record a graph in this thread (True unless inside :class:`no_grad`).

    Examples
    --------
    >>> import lucid
    >>> with lucid.no_grad():
    ...     print(lucid.is_grad_enabled())
    False
    >>> lucid.is_grad_enabled()
    True
    """
    return getattr(_mode, "enabled", True)


class set_grad_enabled:
    """Turn gradient recording on or off, as a context manager, a decorator or a plain call.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([1.0], requires_grad=True)
    >>> with lucid.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    """

    _previous: bool | None  # the mode to restore; None until entered (no_grad, enable_grad)

    def __init__(self, mode: bool = True) -> None:
        self._previous = is_grad_enabled()
        self.mode = bool(mode)
        _mode.enabled = self.mode

    def __enter__(self) -> set_grad_enabled:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        _mode.enabled = self._previous
        return False

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        # as a decorator, the mode applies to the calls only: undo what __init__ switched
        if type(self) is set_grad_enabled:
            _mode.enabled = self._previous

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with type(self)(self.mode) if type(self) is set_grad_enabled else type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(set_grad_enabled):
    """Run ops without recording a graph (thread-local; nests; also a decorator).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> with lucid.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> @lucid.no_grad
    ... def double(t):
    ...     return t * 2
    >>> double(x).requires_grad
    False
    """

    def __new__(cls, fn=None):
        # ``@no_grad`` without parentheses decorates too, as in torch
        self = object.__new__(cls)
        if fn is None:
            return self
        self.__init__()
        return self(fn)

    def __init__(self) -> None:
        self._previous = None
        self.mode = False

    def __enter__(self) -> no_grad:
        self._previous = is_grad_enabled()
        _mode.enabled = False
        return self


class enable_grad(set_grad_enabled):
    """Record a graph again inside a :class:`no_grad` block (thread-local; also a decorator).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([1.0], requires_grad=True)
    >>> with lucid.no_grad():
    ...     with lucid.enable_grad():
    ...         (x * 2).requires_grad
    True
    """

    def __new__(cls, fn=None):  # as no_grad's: ``@enable_grad`` without parentheses decorates too
        return no_grad.__new__(cls, fn)

    def __init__(self) -> None:
        self._previous = None
        self.mode = True

    def __enter__(self) -> enable_grad:
        self._previous = is_grad_enabled()
        _mode.enabled = True
        return self


class inference_mode(no_grad):
    """Run ops without recording a graph, as ``torch.inference_mode`` (also a decorator).

    Parameters
    ----------
    mode : bool, default True
        False makes it do nothing (grad mode stays as it is).

    Notes
    -----
    lucid has no separate inference tensors: this is :class:`no_grad` under torch's name,
    so tensors made inside may later be used in recorded ops.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([1.0], requires_grad=True)
    >>> with lucid.inference_mode():
    ...     (x * 2).requires_grad
    False
    >>> @lucid.inference_mode()
    ... def predict(t):
    ...     return t * 2
    >>> predict(x).requires_grad
    False
    """

    def __new__(cls, mode=True):
        self = object.__new__(cls)
        if callable(mode):  # @inference_mode without parentheses
            self.__init__()
            return self(mode)
        return self

    def __init__(self, mode: bool = True) -> None:
        self._previous = None
        self.inference = bool(mode)

    def __enter__(self) -> inference_mode:
        self._previous = is_grad_enabled()
        if self.inference:
            _mode.enabled = False
        return self

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        inference = self.inference

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with inference_mode(inference):
                return fn(*args, **kwargs)

        return wrapper


class Node:
    """One recorded op: how to turn its output's gradient into its inputs' gradients."""

    __slots__ = ("name", "backward", "inputs", "saved")

    def __init__(self, name, backward, inputs, saved):
        self.name = name
        self.backward = backward
        self.inputs = inputs
        # the version counters, not the tensors: an op that saves its own output makes no cycle
        self.saved = [(t._versions, t._versions[0], t.dtype, t.shape) for t in saved]

    def __repr__(self):
        return f"<{self.name}>"


def renamed(out, name):
    """``out`` with its node named ``name``, torch's name for the op that made it.

    For an op composed of others (``stack`` of ``cat``, ``unsqueeze`` of ``reshape``), whose
    last step recorded the node: the printed ``grad_fn`` is torch's, not the step's. ``out``
    must be new, made by that step (never an input returned as it is, whose node it would rename).
    """
    if out._node is not None:
        out._node.name = name
    return out


def named_node(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the composite op it wraps returns its (new) result :func:`renamed` ``name``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._autograd import named_node
    >>> @named_node("HardtanhBackward0")
    ... def clip(x):
    ...     return x.clamp(-1, 1)
    >>> clip(lucid.tensor([2.0], requires_grad=True))
    tensor([1.], grad_fn=<HardtanhBackward0>)
    """
    def decorate(op: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(op)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            return renamed(op(*args, **kwargs), name)

        return run

    return decorate


def record(out, name, inputs, backward, saved=()):
    """Attach a node to ``out`` if gradients are enabled and any input requires grad.

    ``backward(grad)`` returns one array (or None) per input; it may return gradients of
    a broadcast shape or a wider dtype: the engine reduces them to each input's shape and
    dtype. ``saved`` lists the tensors whose values ``backward`` reads.
    """
    if getattr(_mode, "enabled", True):
        for t in inputs:
            if t.requires_grad:
                out._requires_grad = True
                out._node = Node(name, backward, tuple(inputs), saved)
                break
    return out


def connect(node, name: str, inputs, outputs, saved, backward) -> None:
    """Record ``node`` (an instance of a Node subclass, not initialised yet) as the grad_fn of
    the tensors of ``outputs`` (None for an output left out of the graph): the graph's side
    of ``lucid.autograd.Function``.

    ``backward(grads)`` is written on Tensors: it takes one gradient Tensor per output (None
    where none arrived) and returns one Tensor or None per input, already checked. Several
    outputs share the node through a 0-d anchor tensor: each output's own node hands its
    gradient over and gives the anchor a zero, so the shared node runs once, after every
    output's gradient has arrived (the walk reaches the anchor after all its consumers).
    """
    places = [i for i, out in enumerate(outputs) if out is not None]
    first = outputs[places[0]]
    make, backend, dtype = first._make, first._backend, first.dtype  # no output itself: no cycle
    arrived: list = [None] * len(outputs)

    def run(grad):
        if len(places) == 1:
            arrived[places[0]] = grad
        grads = tuple(None if g is None else make(g, backend) for g in arrived)
        arrived[:] = [None] * len(arrived)
        # copies: a returned Tensor may be any live tensor (a saved input, the incoming gradient)
        return tuple(None if g is None else g._backend.copy(g._data) for g in backward(grads))

    Node.__init__(node, name, run, tuple(inputs), saved)
    if len(places) == 1:
        first._requires_grad, first._node = True, node
        return
    anchor = make(backend.zeros((), dtype), backend)
    anchor._requires_grad, anchor._node = True, node
    for place in places:
        def hand_over(grad, place=place):
            arrived[place] = grad
            return (backend.zeros((), dtype),)

        outputs[place]._requires_grad, outputs[place]._node = True, Node(name, hand_over, (anchor,), ())


def count_write(tensor) -> None:
    """Count one more in-place write to ``tensor``'s storage, as torch does for a tensor a
    custom Function marks dirty (on top of the writes its forward made)."""
    tensor._versions[0] += 1


def rebase(tensor):
    """Move ``tensor``'s history onto a stand-in and return it, before an in-place op records
    a new node on ``tensor`` itself (``mark_dirty`` of ``lucid.autograd.Function``).

    The nodes that used ``tensor`` until now are given the stand-in instead, so that their
    gradients still reach the history they were recorded on. lucid's graph links tensors,
    not nodes, so they are found among the objects that refer to ``tensor``: a scan of the
    heap, paid only by this rare call.
    """
    if tensor._node is not None and (tensor._base is not None or not tensor._backend.is_exclusive(tensor._data)):
        raise NotImplementedError(
            "mark_dirty of a view of another tensor of the graph is not supported: lucid does not "
            "rebase the history of a view's base; clone() the input first, or modify the base"
        )
    stand_in = tensor._make(tensor._data, tensor._backend)
    stand_in._versions = tensor._versions
    stand_in._requires_grad, stand_in._node = tensor._requires_grad, tensor._node
    held_in = [ref for ref in gc.get_referrers(tensor) if type(ref) is tuple]
    for node in gc.get_referrers(*held_in) if held_in else ():
        if isinstance(node, Node) and any(getattr(node, "inputs", None) is inputs for inputs in held_in):
            node.inputs = tuple(stand_in if t is tensor else t for t in node.inputs)
    tensor._node = None
    return stand_in


def _unbroadcast(backend, grad, shape, dtype):
    """Sum ``grad`` over the dimensions broadcasting added to reach ``shape``; cast to ``dtype``."""
    grad_shape = backend.shape(grad)
    if grad_shape != tuple(shape):
        extra = len(grad_shape) - len(shape)
        axes = tuple(range(extra)) + tuple(
            i + extra for i, n in enumerate(shape) if n == 1 and grad_shape[i + extra] != 1
        )
        if axes:
            grad = backend.sum(grad, axis=axes, keepdims=True)
        grad = backend.reshape(grad, shape)
    if backend.dtype_of(grad) is not dtype:
        grad = backend.astype(grad, dtype)
    return grad


def _topological_order(roots):
    """Tensors reachable from ``roots`` through recorded nodes, each after all its consumers."""
    order, visited, stack = [], set(), [(root, False) for root in roots]
    push, pop, seen, see, finish = stack.append, stack.pop, visited.__contains__, visited.add, order.append
    while stack:
        tensor, expanded = pop()
        if expanded:
            finish(tensor)
            continue
        key = id(tensor)
        if seen(key):
            continue
        see(key)
        node = tensor._node
        if node is None:
            finish(tensor)  # a leaf: nothing below it
            continue
        push((tensor, True))
        for parent in node.inputs:
            if parent.requires_grad and not seen(id(parent)):
                push((parent, False))
    order.reverse()
    return order


def queue_callback(callback) -> None:
    """Run ``callback()`` once the ``backward`` in progress has filled in every gradient.

    For code that runs inside a backward function and needs the finished gradients:
    :class:`lucid.nn.parallel.DistributedDataParallel` reduces them across processes this
    way (torch's ``Variable._execution_engine.queue_callback``). Callbacks run in the order
    queued, only if the backward completes.
    """
    queue = getattr(_mode, "callbacks", None)
    if queue is None:
        raise RuntimeError("queue_callback can only be called during a backward pass")
    queue.append(callback)


def run_backward(root, grad, retain_graph: bool) -> None:
    """Accumulate d(root)/d(leaf) · ``grad`` into the ``.grad`` of every leaf below ``root``,
    then run the callbacks queued during the walk."""
    _run((root,), (grad,), retain_graph, None)


def run_backward_many(roots, grads, retain_graph: bool, inputs=None) -> None:
    """:func:`run_backward` from several tensors at once (their gradients add up), as
    ``torch.autograd.backward``; with ``inputs``, only those tensors' ``.grad`` (leaves or not)
    receive their gradient."""
    if inputs is None:
        _run(roots, grads, retain_graph, None)
        return
    for tensor, grad in zip(inputs, _run(roots, grads, retain_graph, inputs)):
        if grad is not None and not (tensor._node is not None and tensor._retains_grad):  # those have theirs
            _accumulate(tensor, grad, shared=False)  # a captured gradient is its own array


def gradients(roots, grads, inputs, retain_graph: bool) -> list:
    """d(roots)/d(input) · ``grads`` for each of ``inputs`` (an array, a sparse gradient or
    None where no path leads), as ``torch.autograd.grad``: no leaf's ``.grad`` changes (a
    non-leaf that retains its gradient gets it, as in torch), and only the nodes on a path
    from a root to an input run."""
    return [None if grad is None else (grad if _is_sparse(grad) else tensor._like(grad))
            for tensor, grad in zip(inputs, _run(roots, grads, retain_graph, inputs))]


def output_gradient(output, gradient, index: int):
    """The array that starts the walk at ``output``, from ``gradient`` (a Tensor of the
    output's device, or None for a single-element output), with torch's checks."""
    if gradient is None:
        if output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return output._backend.ones(output.shape, output.dtype)
    if gradient.shape != output.shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{index}] has a shape of {gradient.shape} and "
            f"output[{index}] has a shape of {output.shape}."
        )
    if gradient.device != output.device:
        raise RuntimeError(f"gradient is on {gradient.device} but the tensor is on {output.device}")
    grad = gradient._data
    if gradient.dtype is not output.dtype:
        grad = output._backend.astype(grad, output.dtype)
    return grad


def _run(roots, grads, retain_graph: bool, inputs):
    """The walk, then the callbacks queued during it; its captured gradients (see _walk)."""
    outer = getattr(_mode, "callbacks", None) is None
    if outer:
        _mode.callbacks = []
    try:
        captured = _walk(roots, grads, retain_graph, inputs)
        if outer:
            while _mode.callbacks:
                _mode.callbacks.pop(0)()
    finally:
        if outer:
            _mode.callbacks = None
    return captured


# the types of gradient seen to be dense (native arrays): one set lookup instead of a
# getattr that fails on every array
_dense_types: set = set()


def _is_sparse(grad) -> bool:
    if type(grad) in _dense_types:
        return False
    if getattr(grad, "is_sparse", False):
        return True
    _dense_types.add(type(grad))
    return False


def _walk(roots, grads, retain_graph: bool, inputs):
    """Send ``grads`` back from ``roots``. Without ``inputs``, into the leaves' ``.grad``;
    with them, the gradient reaching each input is returned (one per input, None where none
    does) and only nodes with an input below them run."""
    pending: dict = {}
    # how many holders each array has been given to: a leaf may keep an array without a copy
    # only if nothing else (the caller, another tensor, another leaf) holds it too
    holders: dict = {}
    for root, grad in zip(roots, grads):
        earlier = pending.get(id(root))
        if earlier is not None:  # the same tensor twice: its gradients add up
            grad = root._backend.add(earlier, grad)
        pending[id(root)] = grad
        holders[id(grad)] = holders.get(id(grad), 1) + 1  # the caller's and this pending entry
    order = _topological_order(roots)
    wanted = captured = None
    if inputs is not None:
        wanted = {id(tensor): tensor for tensor in inputs}
        order = _leading_to(order, wanted)
        captured = {}
    dense = _dense_types
    for tensor in order:
        grad = pending.pop(id(tensor), None)
        if grad is None:
            continue
        held = holders[id(grad)] = holders[id(grad)] - 1
        node = tensor._node
        if wanted is not None:
            if id(tensor) in wanted:
                captured[id(tensor)] = _owned(tensor._backend, grad, held > 0 or node is not None)
            if node is not None and tensor._retains_grad:
                _accumulate(tensor, grad, shared=True)
        elif node is None or tensor._retains_grad:
            _accumulate(tensor, grad, shared=held > 0 or node is not None)
        if node is None:
            continue
        if type(grad) not in dense and _is_sparse(grad):
            # a sparse gradient reaching an op (F.embedding of ``weight * 2``): the ops' backward
            # functions take dense arrays, so it goes on dense (torch keeps it sparse further)
            grad = grad.to_dense()._data
        if node.backward is None:
            raise RuntimeError(FREED_GRAPH)
        for versions, version, dtype, shape in node.saved:
            if versions[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{describe(dtype, shape)}] is at version {versions[0]}; "
                    f"expected version {version} instead (it was saved by {node.name})."
                )
        grads = node.backward(grad)
        if not retain_graph:
            node.backward, node.saved = None, ()
        for parent, parent_grad in zip(node.inputs, grads):
            if parent_grad is None or not parent.requires_grad:
                continue
            backend = parent._backend
            sparse = type(parent_grad) not in dense and _is_sparse(parent_grad)
            if not sparse and (backend.shape(parent_grad) != parent.shape
                               or backend.dtype_of(parent_grad) is not parent.dtype):
                parent_grad = _unbroadcast(backend, parent_grad, parent.shape, parent.dtype)
            key = id(parent)
            earlier = pending.get(key)
            if earlier is not None:
                holders[id(earlier)] -= 1
                if sparse or (type(earlier) not in dense and _is_sparse(earlier)):
                    parent_grad = _add_sparse(backend, earlier, parent_grad)
                else:
                    parent_grad = backend.add(earlier, parent_grad)  # a new array: no aliasing
            pending[key] = parent_grad
            holders[id(parent_grad)] = holders.get(id(parent_grad), 0) + 1
    return None if captured is None else [captured.get(id(tensor)) for tensor in inputs]


def _leading_to(order, wanted: dict) -> list:
    """The tensors of ``order`` that are in ``wanted`` or have one below them (in order)."""
    leads: set = set()
    for tensor in reversed(order):  # inputs before the tensors made from them
        node = tensor._node
        if id(tensor) in wanted or (node is not None and any(id(p) in leads for p in node.inputs)):
            leads.add(id(tensor))
    return [tensor for tensor in order if id(tensor) in leads]


def _owned(backend, grad, shared: bool):
    """``grad`` to hand out: a copy where the walk or its caller holds the array too."""
    if _is_sparse(grad):
        return grad
    return backend.copy(grad) if shared or not backend.is_exclusive(grad) else grad


def _add_sparse(backend, a, b):
    """``a + b`` where one or both are row-sparse: sparse + sparse concatenates the rows (no
    coalescing, no table-sized array); with a dense array the sum is a new dense array."""
    if getattr(a, "is_sparse", False) and getattr(b, "is_sparse", False):
        return a.add(b)
    sparse, dense = (a, b) if getattr(a, "is_sparse", False) else (b, a)
    return sparse._add_to_array(dense, backend, owned=False)


def _accumulate_sparse(tensor, grad) -> None:
    """Accumulate a row-sparse ``grad`` into ``tensor.grad`` as torch does: a sparse gradient
    grows by concatenation (coalesced lazily, by whoever reads it); a dense one gets the rows
    added in place."""
    held = tensor.grad
    if held is None:
        tensor._grad = grad  # a gradient's sparse tensor is built for its leaf alone
    elif held.is_sparse:
        tensor._grad = held.add(grad)
    else:
        backend = tensor._backend
        held._data = grad._add_to_array(held._data, backend, owned=backend.is_exclusive(held._data))
        held._version += 1


def _accumulate(tensor, grad, shared: bool) -> None:
    backend = tensor._backend
    if type(grad) not in _dense_types and _is_sparse(grad):
        _accumulate_sparse(tensor, grad)
        return
    held = tensor.grad
    if held is None:
        tensor._grad = tensor._like(_owned(backend, grad, shared))
    elif held.is_sparse:
        # a dense gradient onto a sparse one: the sum is dense, a new array
        tensor._grad = tensor._like(_add_sparse(backend, grad, held))
    else:
        # into the gradient's own buffer where it owns one (torch accumulates in place too)
        if backend.is_exclusive(held._data):
            held._data = backend.inplace("add", held._data, grad)
        else:
            held._data = backend.add(held._data, grad)
        held._version += 1
