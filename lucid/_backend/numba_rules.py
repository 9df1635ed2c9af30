"""Elementwise rules compiled by numba: one loop over the elements, in place, cached on disk.

For each rule, a small module is written to the kernel cache folder: numba's scalar
versions of the vocabulary, the rule's own source (and its helpers')
and a loop that runs them on every element, reading each array once and writing it once.
Its file name carries a hash of its text, so a changed rule gets a new module, and numba's
``cache=True`` keeps the machine code beside it (``__pycache__``): a second process loads it
instead of compiling. Each dtype (float32, float64) is compiled the first time it is used.

``error_model="numpy"`` lets a float division vectorise (numba's default checks for a zero
divisor and does not); fastmath stays off, so every operation rounds as written, in the
order the rule writes it (torch's).

The folder is ``$LUCID_KERNEL_CACHE``, else ``$XDG_CACHE_HOME/lucid/kernels`` (by default
``~/.cache/lucid/kernels``), else a folder in the system's temporary directory.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
import textwrap

from . import rules as _rules

_PRELUDE = '''\
import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic


@intrinsic
def pointer(typingctx, address, like):
    """``address`` (an int) as a pointer to elements of ``like``'s dtype (for ``carray``)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return types.CPointer(like.dtype)(address, like), codegen

# the rules' vocabulary on scalars: NumPy's functions keep float32 in float32 (math's would not)


@njit(error_model="numpy")
def sqrt(x):
    return np.sqrt(x)


@njit(error_model="numpy")
def abs(x):
    return np.abs(x)


@njit(error_model="numpy")
def sign(x):
    return np.sign(x)


@njit(error_model="numpy")
def maximum(a, b):
    return np.maximum(a, b)


@njit(error_model="numpy")
def minimum(a, b):
    return np.minimum(a, b)


@njit(error_model="numpy")
def where(condition, a, b):
    return a if condition else b
'''

_LOOP = '''
@njit(cache=True, nogil=True, error_model="numpy")
def kernel(param, grad, {states}scalars):
{unpack}
    for i in range(param.size):
        {outputs} = rule(param[i], grad[i], {state_items}{scalar_names})
        param[i] = p
{writes}
'''

# a rule with sums: each term added to a float64 total as the loop goes, the totals returned in
# ``totals`` (a float64 array of one element per sum)
_LOOP_SUMS = '''
@njit(cache=True, nogil=True, error_model="numpy")
def kernel(param, grad, {states}scalars, totals):
{unpack}
{start}
    for i in range(param.size):
        {outputs} = rule(param[i], grad[i], {state_items}{scalar_names})
        param[i] = p
{writes}
{adds}
{finish}
'''

_MULTI = '''
@njit(cache=True, nogil=True, error_model="numpy")
def multi_kernel(table, grads, scalar_rows, rows):
    # one call for many tensors: row j of the table is (size, param address, state addresses),
    # grads[j] the gradient's address, scalar_rows[rows[j]] the tensor's scalars
    for j in range(table.shape[0]):
        size = table[j, 0]
        kernel(carray(pointer(table[j, 1], scalar_rows), size), carray(pointer(grads[j], scalar_rows), size),
               {state_arrays}scalar_rows[rows[j]])
'''

_ADDRESS = '''\
from numba import njit


@njit(cache=True, nogil=True)
def address(array):
    """Where ``array``'s data starts, or -1 if it is not C-contiguous."""
    return array.ctypes.data if array.flags.c_contiguous else -1
'''


def cache_folder() -> str:
    """Where generated kernel modules and numba's compiled code are kept (see the module doc)."""
    folder = os.environ.get("LUCID_KERNEL_CACHE")
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "lucid", "kernels")
    try:
        os.makedirs(folder, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    folder = os.path.join(tempfile.gettempdir(), f"lucid-kernels-{os.getuid() if hasattr(os, 'getuid') else 0}")
    os.makedirs(folder, exist_ok=True)
    return folder


def _undecorated(fn) -> str:
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    return "\n".join(line for line in lines if not line.startswith("@"))


def module_source(rule: _rules.Rule) -> str:
    """The text of the kernel module for ``rule``."""
    states = "".join(f"{name}, " for name in rule.state)
    # the rule's scalars arrive packed in one array of the parameter's dtype (bools as 0 or 1):
    # numba reads an array argument much faster than a NumPy scalar
    unpack = "\n".join(f"    {name} = scalars[{k}]" for k, name in enumerate(rule.scalars)) or "    pass"
    outputs = "".join(["p, ", *(f"new_{name}, " for name in rule.state), *(f"term_{name}, " for name in rule.sums)])
    state_items = "".join(f"{name}[i], " for name in rule.state)
    writes = "\n".join(f"        {name}[i] = new_{name}" for name in rule.state)
    functions = [_undecorated(_rules.lerp), *rule.sources()]
    body = [_PRELUDE, *("@njit(error_model=\"numpy\")\n" + text for text in functions)]
    body.append(f"rule = {rule.fn.__name__}\n")
    if rule.sums:  # no multi-tensor loop: the caller reads each tensor's totals
        body.append(_LOOP_SUMS.format(
            states=states, unpack=unpack, outputs=outputs, state_items=state_items,
            scalar_names=", ".join(rule.scalars), writes=writes,
            start="\n".join(f"    total_{name} = totals[{k}]" for k, name in enumerate(rule.sums)),
            adds="\n".join(f"        total_{name} += term_{name}" for name in rule.sums),
            finish="\n".join(f"    totals[{k}] = total_{name}" for k, name in enumerate(rule.sums))))
        return "\n\n".join(body)
    body.append(_LOOP.format(states=states, unpack=unpack, outputs=outputs, state_items=state_items,
                             scalar_names=", ".join(rule.scalars), writes=writes))
    state_arrays = "".join(f"carray(pointer(table[j, {k + 2}], scalar_rows), size), " for k in range(len(rule.state)))
    body.append(_MULTI.format(state_arrays=state_arrays))
    return "\n\n".join(body)


_kernels: dict = {}
_modules: dict = {}


def _load(stem: str, source: str, origin: str):
    """The module of ``source``, written to the cache folder as ``{stem}_{hash}.py`` and imported."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    name = f"{stem}_{digest}"
    module = _modules.get(name)
    if module is not None:
        return module
    path = os.path.join(cache_folder(), f"{name}.py")
    if not os.path.exists(path):
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w") as handle:
            handle.write(f"# generated by lucid from {origin}\n")
            handle.write(source)
        os.replace(partial, path)  # atomic: a concurrent process sees the whole file or none
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]  # a .py path: never None
    sys.modules[name] = module  # numba's cache finds the module of what it loads by name
    spec.loader.exec_module(module)  # type: ignore[union-attr]  # a .py path: a spec with a loader
    _modules[name] = module
    return module


def kernel(rule: _rules.Rule):
    """The compiled loop of ``rule``: ``kernel(param, grad, *state, scalars)`` on 1-D
    contiguous arrays of one dtype (``scalars`` too: the rule's scalars in order), updating
    ``param`` and the state in place; a rule with sums takes ``totals`` last (float64 zeros,
    one per sum), to which it adds them."""
    return _module(rule).kernel


def multi_kernel(rule: _rules.Rule):
    """The loop of ``rule`` over many tensors in one call:
    ``multi_kernel(table, grads, scalar_rows, rows)``. Row ``j`` of the
    int64 ``table`` is the size of tensor ``j``, the address of its parameter's data, then
    of each state array's (1-D contiguous, of ``scalar_rows``' dtype); ``grads[j]`` is the
    address of its gradient's data and ``scalar_rows[rows[j]]`` its scalars. The caller
    keeps every array alive during the call."""
    return _module(rule).multi_kernel


def _module(rule: _rules.Rule):
    found = _kernels.get(rule)
    if found is None:
        found = _kernels[rule] = _load(f"lucid_rule_{rule.name}", module_source(rule),
                                       f"the rule {rule.fn.__module__}.{rule.fn.__qualname__}")
    return found


def address_function():
    """``address(array)``: where a NumPy array's data starts, or -1 if it is not C-contiguous
    (a compiled call, several times cheaper than ``array.ctypes.data``)."""
    return _load("lucid_address", _ADDRESS, "lucid._backend.numba_rules").address
