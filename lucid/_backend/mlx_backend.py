"""The MLX backend: device ``"gpu"``.

MLX runs on the Apple GPU where there is one and on its CPU device elsewhere (the
``mlx[cpu]`` build on Linux), so this same code is tested on machines without a GPU.
MLX arrays are lazy values: nothing here writes into an array another holder can see,
and :meth:`eval` is how the optimizer materialises a step.
"""

from __future__ import annotations

import numpy as np

import os

from .. import _dtype
from .base import Backend

try:
    import mlx.core as mx
except ImportError as error:  # pragma: no cover - exercised only without mlx
    raise RuntimeError(
        "the 'gpu' device needs MLX, which is not installed: "
        "pip install 'lucid-autograd[mlx]' (from a checkout: pip install '.[mlx]'; or pip install mlx on macOS, "
        "'mlx[cpu]' on Linux)"
    ) from error

from . import mlx_special as special  # noqa: E402 - it needs MLX, checked above

_TO_NATIVE = {
    _dtype.bool_: mx.bool_,
    _dtype.int32: mx.int32,
    _dtype.int64: mx.int64,
    _dtype.float16: mx.float16,
    _dtype.float32: mx.float32,
    _dtype.float64: mx.float64,
}


class MlxBackend(Backend):
    device = "gpu"
    _xp = mx
    views_share_memory = False
    lazy = True
    library = "MLX"
    max_dimension = 2**31 - 1
    to_native = _TO_NATIVE

    def owns(self, array) -> bool:
        return isinstance(array, mx.array)

    def asarray(self, data, dtype):
        if isinstance(data, mx.array):
            return data.astype(_TO_NATIVE[dtype])
        # through NumPy, naming the dtype: mx.array(float64 ndarray) would give float32
        host = np.asarray(data, dtype=np.dtype(dtype.name if dtype is not _dtype.bool_ else "bool"))
        return mx.array(host, dtype=_TO_NATIVE[dtype])

    def to_numpy(self, array):
        if array.dtype == mx.bfloat16:  # NumPy has no bfloat16
            array = array.astype(mx.float32)
        return np.array(array, copy=True)

    def native(self, value):
        return value if isinstance(value, mx.array) else mx.array(value)

    def copy(self, array):
        return array  # arrays are values here: no write can reach another holder

    def eval(self, arrays):
        if _evaluate_first:  # new parameters of split rule kernels first (see _run_compiled)
            first = _evaluate_first[:]
            _evaluate_first.clear()
            mx.eval(first)
        mx.eval(list(arrays))

    # float16 formulas are evaluated in float32 (see precisely), as torch computes half ops;
    # float32 ones in float32, as a GPU has nothing wider (mlx_special: where MLX's lose digits)
    working_dtypes = {_dtype.float16: _dtype.float32}

    def exp(self, a):
        return _by_dtype(a, special.exp64, special.exp32, mx.exp)

    def erf(self, a):
        return _by_dtype(a, special.erf64, special.erf32, mx.erf)

    def erfc(self, a):
        return _by_dtype(a, special.erfc64, special.erfc32, lambda x: special.erfc32(x.astype(mx.float32)).astype(x.dtype))

    def ndtr(self, a):
        return special.ndtr32(a) if a.dtype == mx.float32 else super().ndtr(a)

    def sum(self, a, axis=None, keepdims=False):
        return special.sum32(a, axis, keepdims) if a.dtype == mx.float32 else mx.sum(a, axis=axis, keepdims=keepdims)

    def mean(self, a, axis=None, keepdims=False):
        if a.dtype != mx.float32:
            return mx.mean(a, axis=axis, keepdims=keepdims)
        total = special.sum32(a, axis, keepdims)
        return total / (a.size // total.size) if a.size else mx.mean(a, axis=axis, keepdims=keepdims)

    def cumsum(self, a, axis, reverse=False):
        if a.dtype != mx.float32:
            return super().cumsum(a, axis, reverse)
        if reverse:
            return self.flip(special.cumsum32(self.flip(a, axis), axis), axis)
        return special.cumsum32(a, axis)

    def exp_neg_square(self, a, scale=1.0):
        return special.exp_neg_square32(a, scale) if a.dtype == mx.float32 else super().exp_neg_square(a, scale)

    def matmul(self, a, b):
        if mx.issubdtype(a.dtype, mx.inexact):
            return mx.matmul(a, b)
        # MLX multiplies floating types only: integers go through an exact broadcast product
        left, right = a.ndim == 1, b.ndim == 1
        a = a[None, :] if left else a
        b = b[:, None] if right else b
        out = mx.sum(mx.expand_dims(a, -1) * mx.expand_dims(b, -3), axis=-2)
        if left:
            out = mx.squeeze(out, -2)
        return mx.squeeze(out, -1) if right else out

    # MLX decomposes on its CPU stream only (it has no GPU kernel for either), float64
    # included; on Apple silicon the arrays stay where they are (unified memory)
    def eigh(self, a):
        return tuple(mx.linalg.eigh(a, stream=mx.cpu))

    def qr(self, a):
        return tuple(mx.linalg.qr(a, stream=mx.cpu))

    # convolutions by MLX's own kernel (channels last), their gradients by its vjp; float64
    # by the products over windows of the base (MLX's float64 kernel lacks groups and dilation)
    def conv(self, x, w, stride, dilation, groups):
        if x.dtype == mx.float64:
            return super().conv(x, w, stride, dilation, groups)
        return _channels_first(_conv_last(_channels_last(x), _channels_last(w), stride, dilation, groups)), None

    def conv_input_grad(self, g, w, size, stride, dilation, groups):
        if g.dtype == mx.float64:
            return super().conv_input_grad(g, w, size, stride, dilation, groups)
        # the input the windows reach (what lies past it gets no gradient), then zeros up to size
        reach = tuple((o - 1) * s + v * (k - 1) + 1
                      for o, s, v, k in zip(g.shape[2:], stride, dilation, w.shape[2:]))
        primal = mx.zeros((g.shape[0],) + reach + (w.shape[1] * groups,), dtype=g.dtype)
        w_last = _channels_last(w)
        _, (grad,) = mx.vjp(lambda a: _conv_last(a, w_last, stride, dilation, groups), [primal],
                            [_channels_last(g)])
        return self.pad(_channels_first(grad), [(0, 0), (0, 0)] + [(0, n - r) for n, r in zip(size, reach)])

    def conv_weight_grad(self, x, g, kernel, stride, dilation, groups, saved=None):
        if g.dtype == mx.float64:
            return super().conv_weight_grad(x, g, kernel, stride, dilation, groups, saved)
        primal = mx.zeros((g.shape[1],) + tuple(kernel) + (x.shape[1] // groups,), dtype=g.dtype)
        x_last = _channels_last(x)
        _, (grad,) = mx.vjp(lambda v: _conv_last(x_last, v, stride, dilation, groups), [primal],
                            [_channels_last(g)])
        return _channels_first(grad)

    def normalize_index(self, index):
        # MLX cannot index with boolean masks: turn each into the integer indices it selects
        out = []
        for part in index:
            if isinstance(part, mx.array) and part.dtype == mx.bool_:
                out.extend(mx.array(i) for i in np.nonzero(np.array(part)))
            else:
                out.append(part)
        return tuple(out)

    def scatter_add(self, shape, dtype, index, values):
        out = mx.zeros(tuple(shape), dtype=_TO_NATIVE[dtype])
        if values.size == 0:  # MLX 0.32 dies of SIGFPE scattering nothing through array indices
            return out
        if _none_with_arrays(index):
            positions = _positions(out, index)
            values = mx.broadcast_to(values, positions.shape)
            return out.reshape(-1).at[positions.reshape(-1)].add(values.reshape(-1)).reshape(out.shape)
        return out.at[index].add(values)

    def setitem(self, a, index, values):
        if a[index].size == 0:  # nothing to write (and MLX would die of SIGFPE, as above)
            return a
        if _none_with_arrays(index):
            positions = _positions(a, index)
            values = mx.broadcast_to(mx.array(values, dtype=a.dtype), positions.shape)
            flat = mx.array(a).reshape(-1)
            flat[positions.reshape(-1)] = values.reshape(-1)
            return flat.reshape(a.shape)
        out = mx.array(a)  # a copy we own: the caller's array stays as it was
        out[index] = values
        return out

    def coalesce_rows(self, indices, values):
        count = indices.shape[0]
        if count < 2:
            return indices, values
        # a stable order: sort by (index, position), so duplicates keep their order
        key = indices.astype(mx.int64) * count + mx.arange(count, dtype=mx.int64)
        order = mx.argsort(key)
        ordered, values = indices[order], values[order]
        first = mx.concatenate([mx.array([True]), ordered[1:] != ordered[:-1]])
        starts = np.flatnonzero(np.array(first))  # the number of rows decides a shape: one sync
        if starts.shape[0] == count:
            return ordered, values
        segment = mx.cumsum(first.astype(mx.int64)) - 1
        sums = mx.zeros((starts.shape[0],) + tuple(values.shape[1:]), dtype=values.dtype)
        return ordered[mx.array(starts)], sums.at[segment].add(values)

    def index_add_rows(self, a, rows, values, unique=False):
        if rows.shape[0] == 0:  # MLX dies of SIGFPE scattering nothing (see scatter_add)
            return a
        return a.at[rows].add(values)

    def sin(self, a):
        return special.sin_cos64(a, cosine=False) if a.dtype == mx.float64 else mx.sin(a)

    def cos(self, a):
        return special.sin_cos64(a, cosine=True) if a.dtype == mx.float64 else mx.cos(a)

    def _argsort(self, a, axis):
        if a.dtype == mx.bool_:
            a = a.astype(mx.int8)
        # mx.argsort is not documented as stable: break ties by position explicitly
        n = a.shape[axis]
        if n < 2:
            return mx.zeros(a.shape, dtype=mx.int64)
        order = mx.argsort(a, axis=axis)
        ordered = mx.take_along_axis(a, order, axis=axis)
        ties = _slice(ordered, axis, 1, None) == _slice(ordered, axis, 0, -1)
        if not mx.any(ties).item():
            return order
        # rank of each element's value, then a stable order of (rank, position)
        rank = mx.cumsum(mx.concatenate([mx.zeros_like(_slice(ties, axis, 0, 1)), ~ties], axis=axis)
                         .astype(mx.int64), axis=axis)
        ranks = mx.zeros(a.shape, dtype=mx.int64)
        ranks = mx.put_along_axis(ranks, order, rank, axis=axis)
        shape = [1] * a.ndim
        shape[axis] = n
        key = ranks * n + mx.arange(n, dtype=mx.int64).reshape(shape)
        return mx.argsort(key, axis=axis)

    def assign(self, a, value):
        value = value.astype(a.dtype) if isinstance(value, mx.array) else mx.array(value, dtype=a.dtype)
        return mx.broadcast_to(value, a.shape)

    def _inplace(self, name, a, *args):
        out = getattr(mx, name)(a, *args)
        # an in-place op keeps its target's dtype, as NumPy's out= and torch do
        return out if out.dtype == a.dtype else out.astype(a.dtype)

    # --- update rules ----------------------------------------------------------------------
    @property
    def rule_runner(self):
        return "mx.compile" if _should_compile(()) else "eager MLX"

    def run_rule(self, rule, items):
        if rule.sums:
            return _run_with_sums(rule, items)
        if _should_compile(items):
            return _run_compiled(rule, items)
        fn = rule.with_vocabulary(MLX_VOCABULARY)
        return [_keep_dtypes(fn(arrays[0], grad, *arrays[1:], *scalars), arrays) for arrays, grad, scalars in items]

    def rule_batch(self, rule, arrays):
        """A :class:`_CompiledBatch` where the group's rule runs compiled in one fused kernel
        per parameter; the general runner (:meth:`run_rule` each step) where it runs eagerly,
        or split per output (an array over :data:`SPLIT_BYTES` on MLX's CPU device, see
        :func:`_run_compiled`)."""
        params = arrays[::1 + len(rule.state)]
        if not _should_compile(()) or rule.sums or \
                (mx.default_device() == mx.cpu and any(p.nbytes > SPLIT_BYTES for p in params)):
            return super().rule_batch(rule, arrays)
        return _CompiledBatch(rule, any(_owns_numbers(p, True) for p in params))



def _channels_last(a):
    return mx.moveaxis(a, 1, -1)


def _channels_first(a):
    return mx.moveaxis(a, -1, 1)


def _conv_last(x, w, stride, dilation, groups):
    return mx.conv_general(x, w, stride=list(stride), kernel_dilation=list(dilation), groups=groups)


def _by_dtype(a, float64, float32, other):
    """The function of ``a``'s dtype: MLX's own where it is accurate, mlx_special's elsewhere."""
    if a.dtype == mx.float64:
        return float64(a)
    return float32(a) if a.dtype == mx.float32 else other(a)


def _slice(a, axis, start, stop):
    index = [slice(None)] * a.ndim
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def _none_with_arrays(index) -> bool:
    """MLX 0.32's setitem and .at[] mis-shape a None next to array indices (getitem is right)."""
    return any(part is None for part in index) and any(isinstance(part, mx.array) for part in index)


def _positions(a, index):
    """The flat positions in ``a`` that ``a[index]`` reads, in the shape of ``a[index]``."""
    return mx.arange(a.size).reshape(a.shape)[index]


# --- update rules on MLX -----------------------------------------------------------------------

def _lerp(start, end, weight):
    """torch's lerp (see rules.lerp); under mx.compile the weight is an array, so both sides are
    computed and one selected."""
    diff = end - start
    if isinstance(weight, (int, float)):
        return start + diff * weight if -0.5 < weight < 0.5 else end - diff * (1 - weight)
    return mx.where((weight < 0.5) & (weight > -0.5), start + diff * weight, end - diff * (1 - weight))


MLX_VOCABULARY = {"sqrt": mx.sqrt, "abs": mx.abs, "sign": mx.sign, "maximum": mx.maximum,
                  "minimum": mx.minimum, "where": mx.where, "lerp": _lerp}


_with_sums: dict = {}


def _run_with_sums(rule, items):
    """A rule with sums: per item its new arrays, then its sums as Python floats, every item's
    arrays and sums evaluated together once (the caller needs the numbers now). One compiled
    call over all items, as the other rules' (the numbers as 0-d arrays of the parameter's
    dtype, once per distinct scalars, so that new values are new inputs), or eager with
    LUCID_MLX_COMPILE=0."""
    compiled = _should_compile(items)
    step = _with_sums.get((rule, compiled))
    if step is None:
        fn, count = rule.with_vocabulary(MLX_VOCABULARY), 1 + len(rule.state)

        def sums_step(arrays, grads, numbers):
            results = [fn(a[0], g, *a[1:], *n) for a, g, n in zip(arrays, grads, numbers)]
            return [[*r[:count], *(mx.sum(term) for term in r[count:])] for r in results]

        step = _with_sums[(rule, compiled)] = mx.compile(sums_step) if compiled else sums_step
    shared: dict = {}
    for arrays, _, scalars in items:
        key = (id(scalars), arrays[0].dtype)
        if key not in shared:
            shared[key] = [v if isinstance(v, bool) else mx.array(v, dtype=arrays[0].dtype) for v in scalars]
    results = step([list(arrays) for arrays, _, _ in items], [grad for _, grad, _ in items],
                   [shared[(id(scalars), arrays[0].dtype)] for arrays, _, scalars in items])
    out = [(*_keep_dtypes(r[:len(arrays)], arrays), *r[len(arrays):]) for r, (arrays, _, _) in zip(results, items)]
    mx.eval(out)
    return [(*values[:-len(rule.sums)], *(total.item() for total in values[-len(rule.sums):])) for values in out]


def _keep_dtypes(results, arrays):
    """Each result in its array's dtype (a state array keeps its dtype, as in place)."""
    out = []
    for result, array in zip(results, arrays):
        result = result if isinstance(result, mx.array) else mx.array(result)
        out.append(result if result.dtype == array.dtype else result.astype(array.dtype))
    return out


def _compile_setting() -> str:
    return os.environ.get("LUCID_MLX_COMPILE", "auto").strip().lower()


def _should_compile(items) -> bool:
    """Whether to run a group's rule under mx.compile (the default; LUCID_MLX_COMPILE=1) or
    eagerly (LUCID_MLX_COMPILE=0, the path the test command also replays the golden files on).

    On a GPU compiling is what fuses the rule into one kernel per parameter. On Linux's CPU
    build it was measured faster too (bench_optim_step.py's contenders, lucid compiled
    against lucid eager, SGD-momentum, Adam and Adagrad): 1.2-1.8x with one tensor of 1e6
    or 1e7 elements (before the split below), 1.4-2.7x at 500 x 2000 and 50 x 64x64.
    (mlx.optimizers' own compiled step is slower than its eager one at 1 x 1e6 and above
    there; lucid's differs in splitting large arrays' kernels per output, see
    :func:`_run_compiled`.)
    """
    setting = _compile_setting()
    return setting not in ("0", "false", "no", "off")


#: Above this many bytes an array is one output per kernel on MLX's CPU device (see
#: :func:`_run_compiled`): glibc maps a buffer over 32 MiB fresh for every allocation, and
#: MLX's CPU cache keeps no more than that, so an output that cannot take over its input's
#: buffer is page-faulted in as it is written. Measured (minor faults of a fused Adam step,
#: 3 outputs): 1 x 8e6 float32 (32 MB), about 2,200 a step; 1 x 9e6, 26,000: every page.
SPLIT_BYTES = 32 << 20

#: From this many elements a float32 parameter on MLX's CPU device gets its rule's numbers
#: as 0-d float64 arrays of its own, cast to float32 inside its kernel (the same float32
#: values: one rounding of the same double). MLX's C++ code generator does not vectorise a
#: kernel with several outputs that reads a 0-d input of the outputs' type (the outputs may
#: alias it, so the loop reloads it); one of another type cannot alias them. A number shared
#: by several parameters would be cast once, outside their kernels, hence each its own.
#: Measured on Linux, SGD-momentum's kernel over 1 x 1e6 float32: 1.18 ms instead of 1.45;
#: over 500 x 2000 and 50 x 4096 the extra inputs cost more than the vector loop saves
#: (17.9 ms instead of 11.4, 2.42 instead of 1.84 for Adam); the threshold lies between.
OWN_NUMBERS_ELEMENTS = 1 << 16

_compiled: dict = {}
_numbers: dict = {}  # (value, dtype) -> 0-d array, reused across steps (bounded, see _number)
_evaluate_first: list = []  # new parameters of split kernels, evaluated before their state


def _number(value, dtype):
    """``value`` as a 0-d array of ``dtype``: an input of compiled code, never a constant,
    so that a new learning rate or bias correction does not trace again."""
    key = (value, dtype) if value else (repr(value), dtype)  # -0.0 is not 0.0 here
    found = _numbers.get(key)
    if found is None:
        if len(_numbers) > 1024:  # a schedule makes a new lr each step: keep the cache small
            _numbers.clear()
        found = _numbers[key] = mx.array(value, dtype=dtype)
    return found


def _owns_numbers(array, on_cpu: bool) -> bool:
    """Whether ``array``'s rule reads its numbers as float64 arrays of its own (see
    :data:`OWN_NUMBERS_ELEMENTS`)."""
    return on_cpu and array.dtype == mx.float32 and array.size >= OWN_NUMBERS_ELEMENTS


def _slots(values, dtype, numbers: list, own: bool = False) -> tuple:
    """What the compiled step reads for each of ``values`` (the rule's scalars): bools as they are (constants of the trace), and for a
    number its index in ``numbers``, to which its 0-d array is appended (``own``: a new
    float64 array, which the step casts to ``dtype``)."""
    slots: list[bool | int | None] = []
    for value in values:
        if isinstance(value, bool):
            slots.append(value)
        else:
            slots.append(len(numbers))
            numbers.append(mx.array(value, dtype=mx.float64) if own else _number(value, dtype))
    return tuple(slots)


def _run_compiled(rule, items):
    """``items`` through ``mx.compile``d functions, one per rule and pattern of flags.

    Numbers become 0-d arrays of the parameter's dtype, passed in once per group however
    many parameters share them, so a new learning rate or bias correction is a new input,
    not a new graph; bools are constants of the compiled function
    (a change traces it again).

    On a GPU (and for arrays up to :data:`SPLIT_BYTES`) one function computes every output of
    the group: one fused kernel per parameter. On MLX's CPU device a kernel with several
    outputs cannot give any of them its input's buffer, which costs a page fault per 4 KiB
    written above 32 MiB; there each output of a large array gets its own kernel (the rule
    evaluated once per output, the unused part removed by mx.compile), and the new
    parameters are evaluated before the state (:meth:`MlxBackend.eval`), so that every
    kernel finds its input's buffer free to take. Measured over 1 x 1e7 float32 on Linux:
    SGD-momentum 22 ms a step instead of 98 fused, Adam 69 instead of 161.
    """
    split = mx.default_device() == mx.cpu
    small, large = [], []
    for index, item in enumerate(items):
        (large if split and item[0][0].nbytes > SPLIT_BYTES else small).append(index)
    if not large:
        return _compiled_group(rule, items, None)
    out = [None] * len(items)
    if small:
        for index, arrays in zip(small, _compiled_group(rule, [items[i] for i in small], None)):
            out[index] = arrays
    chosen = [items[i] for i in large]
    per_output = [_compiled_group(rule, chosen, k) for k in range(1 + len(rule.state))]
    _evaluate_first.extend(arrays[0] for arrays in per_output[0])
    for n, index in enumerate(large):
        out[index] = [arrays[n][0] for arrays in per_output]
    return out


def _compiled_group(rule, items, output):
    """One compiled call over ``items``: per item its new arrays, or only the ``output``-th."""
    inputs, numbers, specs, pattern = [], [], {}, []
    on_cpu = mx.default_device() == mx.cpu
    for arrays, grad, scalars in items:
        dtype = arrays[0].dtype
        if _owns_numbers(arrays[0], on_cpu):
            spec = _slots(scalars, dtype, numbers, own=True)
        else:
            key = (id(scalars), dtype)
            spec = specs.get(key)
            if spec is None:  # once per distinct scalars (the optimizer shares them in a group)
                spec = specs[key] = _slots(scalars, dtype, numbers)
        pattern.append(spec)
        inputs.extend(arrays)
        inputs.append(grad)
    pattern = (len(rule.state), output, tuple(pattern))
    fn = _compiled.get((rule, pattern))
    if fn is None:
        step = _group_step(rule.with_vocabulary(MLX_VOCABULARY), pattern)
        fn = _compiled[(rule, pattern)] = mx.compile(step)
    results = fn(inputs, numbers)
    if output is not None:
        return [[r] for r in results]
    width = 1 + len(rule.state)
    return [results[i:i + width] for i in range(0, len(results), width)]


class _CompiledBatch:
    """One rule over the same parameters step after step, compiled: :func:`_compiled_group`
    with the per-item work done once. Its ``run(arrays, grads, scalars)`` takes the
    parameters' and state arrays flat (per item the parameter, then its state in the rule's
    order) and returns their new values in that order; the caller keeps the arrays."""

    __slots__ = ("_rule", "_width", "_specs", "_owns")

    def __init__(self, rule, owns_numbers: bool):
        self._rule, self._width = rule, 1 + len(rule.state)
        self._specs: dict = {}  # slots -> the group's pattern, built once
        self._owns = owns_numbers  # a large float32 parameter reads numbers of its own on the CPU

    def run(self, arrays, grads, scalars) -> list:
        width = self._width
        per_item = not isinstance(scalars, tuple)
        if per_item or (self._owns and mx.default_device() == mx.cpu):
            # one row per parameter (NAdam, ASGD), or numbers of its own for a large parameter:
            # the general call (its per-item work is small beside such a parameter's kernel)
            items = [(arrays[j * width:(j + 1) * width], grad, scalars[j] if per_item else scalars)
                     for j, grad in enumerate(grads)]
            return [array for out in _compiled_group(self._rule, items, None) for array in out]
        numbers: list = []
        spec = _slots(scalars, arrays[0].dtype, numbers)
        pattern = self._specs.get(spec)
        if pattern is None or len(pattern[2]) != len(grads):
            pattern = self._specs[spec] = (width - 1, None, (spec,) * len(grads))
        fn = _compiled.get((self._rule, pattern))
        if fn is None:
            step = _group_step(self._rule.with_vocabulary(MLX_VOCABULARY), pattern)
            fn = _compiled[(self._rule, pattern)] = mx.compile(step)
        inputs = []
        for j, grad in enumerate(grads):  # per item its arrays, then its gradient (as _group_step reads them)
            inputs.extend(arrays[j * width:(j + 1) * width])
            inputs.append(grad)
        return fn(inputs, numbers)


def _group_step(fn, pattern):
    """The function mx.compile traces for one group: ``inputs`` holds per item the parameter,
    its state and its gradient; ``numbers`` the 0-d arrays the items' slots point into."""
    count, output, specs = pattern

    def step(inputs, numbers):
        out = []
        at = 0
        for slots in specs:
            item, grad = inputs[at:at + count + 1], inputs[at + count + 1]
            at += count + 2
            values = [numbers[s] if type(s) is int else s for s in slots]  # noqa: E721 - bools are ints
            dtype = item[0].dtype  # a number of its own (float64) is cast inside the kernel
            values = [v.astype(dtype) if isinstance(v, mx.array) and v.dtype != dtype else v for v in values]
            results = fn(item[0], grad, *item[1:], *values)
            if output is not None:
                results = results[output:output + 1]
                item = item[output:output + 1]
            out.extend(r if r.dtype == a.dtype else r.astype(a.dtype) for r, a in zip(results, item))
        return out

    return step
