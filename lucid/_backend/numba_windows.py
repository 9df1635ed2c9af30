"""Loops over windows compiled by numba: max pooling's, one pass over the windows forward
(each window's largest element and its position, as torch's kernel finds them) and one
over the output backward (each gradient added at its window's largest element), and the
sum of a convolution's columns back onto its input (col2im). (The columns themselves,
im2col, are NumPy's copy of a strided view: a loop here writes them no faster.)

The array expressions of :meth:`~lucid._backend.base.Backend.max_windows` take a dozen
passes over the data; these are what the NumPy backend runs where numba is installed.
Arrays are contiguous, ``(B, H, W)`` (a 1-D pooling is ``H = 1``); numba keeps the machine
code in its cache (``cache=True``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def max_pool(x, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, out,
             position):  # pragma: no cover - compiled
    """``out[b, i, j]``: the largest of window (i, j) of ``x[b]``, and ``position`` its index
    in the window (row-major): the first largest, a nan wherever one is (the last), as torch."""
    batch, rows, cols = out.shape
    for b in range(batch):
        for i in range(rows):
            for j in range(cols):
                best = -math.inf
                where = 0
                for p in range(kernel_h):
                    for q in range(kernel_w):
                        value = x[b, i * stride_h + p * dilation_h, j * stride_w + q * dilation_w]
                        if value > best or value != value:
                            best = value
                            where = p * kernel_w + q
                out[b, i, j] = best
                position[b, i, j] = where


@njit(cache=True, nogil=True)
def max_unpool(g, position, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w,
               grad):  # pragma: no cover - compiled
    """``grad`` (zeros of the input's shape) with each ``g[b, i, j]`` added at its window's largest element."""
    batch, rows, cols = g.shape
    down = np.empty(kernel_h * kernel_w, dtype=np.int64)  # each position's offset: no division per element
    across = np.empty(kernel_h * kernel_w, dtype=np.int64)
    for k in range(kernel_h * kernel_w):
        down[k] = (k // kernel_w) * dilation_h
        across[k] = (k % kernel_w) * dilation_w
    for b in range(batch):
        for i in range(rows):
            for j in range(cols):
                where = position[b, i, j]
                grad[b, i * stride_h + down[where], j * stride_w + across[where]] += g[b, i, j]


@njit(cache=True, nogil=True)
def col2im(cols, stride_h, stride_w, dilation_h, dilation_w, out):  # pragma: no cover - compiled
    """A convolution's columns ``cols[n, c, p, q, i, j]`` (the windows' elements) added into
    ``out`` (zeros) at ``[n, c, i * stride_h + p * dilation_h, j * stride_w + q * dilation_w]``,
    where they were read, a row at a time: one pass instead of NumPy's one per kernel element."""
    batch, channels, kernel_h, kernel_w, rows, width = cols.shape
    for n in range(batch):
        for c in range(channels):
            for p in range(kernel_h):
                for q in range(kernel_w):
                    offset = q * dilation_w
                    for i in range(rows):
                        line = out[n, c, i * stride_h + p * dilation_h]
                        column = cols[n, c, p, q, i]
                        if stride_w == 1:  # a contiguous run: the compiler vectorises it
                            for j in range(width):
                                line[j + offset] += column[j]
                        else:
                            for j in range(width):
                                line[j * stride_w + offset] += column[j]
