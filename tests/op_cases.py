"""The differentiable ops of lucid's core, as a table of small cases.

``test_gradcheck.py`` checks each case's gradients against central finite differences
in float64 on NumPy; ``test_backends.py`` (on MLX and on NumPy) and ``test_tensor_surface.py``
(the ``SURFACE`` cases) run each case in float32 and hold the outputs and the gradients to
the float64 truth of the same computation on the same float32 values: the cases of ``EXACT``
to that truth exactly, the others to ``tolerances.judge`` (torch's float32 error on the same
inputs the ceiling). One table, so a new op is checked every way.

A case is a function of an array module ``m`` (lucid, or torch to compare against) and
tensors of it (all requiring grad) that returns one tensor; its inputs are drawn from ``domain``: "any" is uniform in [-2, 2], "pos" in [0.5, 2]. The draws
are continuous, so no input lands on a kink (abs, relu, clamp bounds, max ties) within the
finite-difference step.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class OpCase:
    name: str
    fn: Callable
    shapes: tuple
    domain: str = "any"

    def arrays(self, seed: int = 0) -> list[np.ndarray]:
        return draw(self.shapes, self.domain, seed)


def draw(shapes, domain="any", seed=0) -> list[np.ndarray]:
    """float64 host arrays of ``shapes`` from ``domain`` ("any" or "pos")."""
    rng = np.random.default_rng(seed)
    low, high = {"any": (-2.0, 2.0), "pos": (0.5, 2.0)}[domain]
    return [rng.uniform(low, high, size=shape) for shape in shapes]


def _index(m, x, values):
    """An int64 index tensor of module ``m`` (lucid or torch) on ``x``'s device."""
    return m.tensor(values, device=x.device)


def _mask(m, x, values):
    return m.tensor(values, dtype=m.bool, device=x.device)


M1 = [True, False, True]
M2 = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]


def _cases():
    c = OpCase
    x234, x34, x3 = ((2, 3, 4),), ((3, 4),), ((3,),)
    yield from [
        # arithmetic, with and without broadcasting, tensors and scalars on either side
        c("add", lambda m, a, b: a + b, ((3, 4), (3, 4))),
        c("add_bcast", lambda m, a, b: a + b, ((2, 1, 4), (3, 1))),
        c("add_scalar", lambda m, a: 2.5 + a + 1, x34),
        c("add_alpha", lambda m, a, b: a.add(b, alpha=-2), ((3, 4), (4,))),
        c("sub", lambda m, a, b: a - b, ((3, 4), (3, 4))),
        c("sub_bcast", lambda m, a, b: a - b, ((4,), (3, 1))),
        c("rsub_scalar", lambda m, a: 1.5 - a - 2, x34),
        c("sub_alpha", lambda m, a, b: a.sub(b, alpha=3), ((3, 4), (3, 4))),
        c("mul", lambda m, a, b: a * b, ((3, 4), (3, 4))),
        c("mul_bcast", lambda m, a, b: a * b, ((2, 3, 1), (1, 4))),
        c("mul_scalar", lambda m, a: 3 * a * -0.5, x34),
        c("mul_self", lambda m, a: a * a, x34),
        c("div", lambda m, a, b: a / b, ((3, 4), (3, 4)), "pos"),
        c("div_bcast", lambda m, a, b: a / b, ((3, 4), (3, 1)), "pos"),
        c("div_scalar", lambda m, a: a / 4, x34),
        c("rdiv_scalar", lambda m, a: 2.0 / a, x34, "pos"),
        c("pow_int", lambda m, a: a ** 3, x34),
        c("pow_float", lambda m, a: a ** 2.5, x34, "pos"),
        c("pow_negative", lambda m, a: a ** -1.5, x34, "pos"),
        c("pow_zero", lambda m, a: a ** 0, x34),
        c("pow_one", lambda m, a: a ** 1, x34),
        c("rpow_scalar", lambda m, a: 2.0 ** a, x34),
        c("rpow_int_scalar", lambda m, a: 3 ** a, x34),
        c("pow_tensor", lambda m, a, b: a ** b, ((3, 4), (3, 4)), "pos"),
        c("pow_tensor_bcast", lambda m, a, b: a ** (b - 1), ((3, 4), (4,)), "pos"),
        c("pow_method", lambda m, a: a.pow(2), x34),
        # matmul in every arrangement torch accepts
        c("matmul_vv", lambda m, a, b: a @ b, ((3,), (3,))),
        c("matmul_vm", lambda m, a, b: a @ b, ((3,), (3, 4))),
        c("matmul_mv", lambda m, a, b: a @ b, ((2, 3), (3,))),
        c("matmul_mm", lambda m, a, b: a @ b, ((2, 3), (3, 4))),
        c("matmul_batched", lambda m, a, b: a @ b, ((2, 2, 3), (2, 3, 4))),
        c("matmul_batch_bcast", lambda m, a, b: a @ b, ((2, 1, 2, 3), (3, 3, 2))),
        c("matmul_batch_matrix", lambda m, a, b: a @ b, ((2, 2, 3), (3, 4))),
        c("matmul_v_batched", lambda m, a, b: a @ b, ((3,), (2, 3, 4))),
        c("matmul_batched_v", lambda m, a, b: a @ b, ((2, 2, 3), (3,))),
        c("matmul_fn", lambda m, a, b: m.matmul(a, b), ((2, 3), (3, 2))),
        # elementwise math
        c("neg", lambda m, a: -a, x34),
        c("neg_method", lambda m, a: a.neg(), x34),
        c("exp", lambda m, a: a.exp(), x34),
        c("exp_fn", lambda m, a: m.exp(a), x34),
        c("log", lambda m, a: a.log(), x34, "pos"),
        c("sqrt", lambda m, a: a.sqrt(), x34, "pos"),
        c("abs", lambda m, a: a.abs(), x34),
        c("abs_builtin", lambda m, a: abs(a), x34),
        c("clamp_min", lambda m, a: a.clamp(min=-0.5), x34),
        c("clamp_max", lambda m, a: a.clamp(max=0.5), x34),
        c("clamp_both", lambda m, a: a.clamp(-0.5, 0.5), x34),
        c("clamp_tensor_bounds", lambda m, a, lo, hi: a.clamp(lo * 0.5 - 0.5, hi * 0.5 + 0.5), ((3, 4), (3, 4), (4,))),
        c("clamp_tensor_min", lambda m, a, lo: m.clamp(a, min=lo), ((3, 4), (3, 1))),
        c("clamp_tensor_max", lambda m, a, hi: m.clip(a, max=hi), ((3, 4), (4,))),
        c("relu", lambda m, a: a.relu(), x34),
        c("sigmoid", lambda m, a: a.sigmoid(), x34),
        c("sigmoid_large", lambda m, a: (a * 20).sigmoid(), x34),
        c("tanh", lambda m, a: a.tanh(), x34),
        # reductions
        c("sum", lambda m, a: a.sum(), x234),
        c("sum_dim", lambda m, a: a.sum(dim=1), x234),
        c("sum_dim_keepdim", lambda m, a: a.sum(-1, keepdim=True), x234),
        c("sum_dims", lambda m, a: a.sum(dim=(0, 2)), x234),
        c("sum_dims_keepdim", lambda m, a: a.sum(dim=(0, -1), keepdim=True), x234),
        c("sum_fn", lambda m, a: m.sum(a, 0), x34),
        c("mean", lambda m, a: a.mean(), x234),
        c("mean_dim", lambda m, a: a.mean(1), x234),
        c("mean_dims_keepdim", lambda m, a: a.mean((0, 1), keepdim=True), x234),
        c("max", lambda m, a: a.max(), x234),
        c("max_dim", lambda m, a: a.max(dim=1)[0], x234),
        c("max_dim_keepdim", lambda m, a: a.max(-1, keepdim=True).values, x234),
        c("max_fn", lambda m, a: m.max(a, 0).values, x34),
        c("min", lambda m, a: a.min(), x234),
        c("min_dim", lambda m, a: a.min(dim=0).values, x234),
        c("min_dim_keepdim", lambda m, a: a.min(2, keepdim=True)[0], x234),
        c("sum_0d", lambda m, a: a.sum(0) * a.sum(), ((),)),
        c("max_0d", lambda m, a: a.max(0).values * a.min(-1)[0] + a.max(), ((),)),
        c("log_softmax", lambda m, a: a.log_softmax(-1), x234),
        c("log_softmax_0d", lambda m, a: a.log_softmax(0) + a, ((),)),
        c("log_softmax_dim0", lambda m, a: m.log_softmax(a * 5, 0), x34),
        # shapes
        c("reshape", lambda m, a: a.reshape(6, 4), x234),
        c("reshape_tuple", lambda m, a: a.reshape((4, -1)), x234),
        c("view", lambda m, a: a.view(-1), x234),
        c("transpose", lambda m, a: a.transpose(0, 2), x234),
        c("transpose_neg", lambda m, a: m.transpose(a, -1, -2), x234),
        c("T_2d", lambda m, a: a.T, x34),
        c("T_3d", lambda m, a: a.T, x234),
        c("permute", lambda m, a: a.permute(2, 0, 1), x234),
        c("permute_fn", lambda m, a: m.permute(a, (1, 2, 0)), x234),
        c("unsqueeze", lambda m, a: a.unsqueeze(1), x34),
        c("unsqueeze_neg", lambda m, a: m.unsqueeze(a, -1), x34),
        c("squeeze", lambda m, a: a.squeeze(), ((3, 1, 4, 1),)),
        c("squeeze_dim", lambda m, a: a.squeeze(1), ((3, 1, 4, 1),)),
        c("flatten", lambda m, a: a.flatten(), x234),
        c("flatten_from", lambda m, a: a.flatten(1), x234),
        c("flatten_range", lambda m, a: m.flatten(a, 0, 1), x234),
        # indexing
        c("index_int", lambda m, a: a[1], x234),
        c("index_negative", lambda m, a: a[-1, -2], x234),
        c("index_slice", lambda m, a: a[0:2], x34),
        c("index_slices", lambda m, a: a[:, 1:3], x34),
        c("index_step", lambda m, a: a[::2, 1::2], x34),
        c("index_none", lambda m, a: a[None, :, None], x34),
        c("index_ellipsis", lambda m, a: a[..., 1], x234),
        c("index_int_ellipsis_none", lambda m, a: a[1, ..., None], x234),
        c("index_tensor", lambda m, a: a[_index(m, a, [0, 0, 2])], x34),
        c("index_list", lambda m, a: a[[2, 0, 2, 2]], x34),
        c("index_list_negative", lambda m, a: a[[-1, 0, -1]], x34),
        c("index_tensor_2d", lambda m, a: a[_index(m, a, [[0, 1], [1, 1]])], x34),
        c("index_tensor_dim1", lambda m, a: a[:, [3, 0, 3]], x34),
        c("index_two_tensors", lambda m, a: a[[0, 1, 1], [2, 2, 0]], x234),
        c("index_tensors_split", lambda m, a: a[[0, 1], :, [1, 3]], x234),
        c("index_int_and_list", lambda m, a: a[1, [0, 2, 0]], x234),
        c("index_int_slice_list", lambda m, a: a[0, :, [2, 1]], x234),
        c("index_list_slice_int", lambda m, a: a[[1, 0], 1:, -1], x234),
        c("index_int_none_mask", lambda m, a: a[1, None, _mask(m, a, M1)], x234),
        c("index_none_tensor_slice_int", lambda m, a: a[None, _index(m, a, [[0, 1], [1, 0]]), ::2, 2], x234),
        c("index_mask", lambda m, a: a[_mask(m, a, M1)], x34),
        c("index_mask_2d", lambda m, a: a[_mask(m, a, M2)], x34),
        c("index_mask_list", lambda m, a: a[M1], x34),
        c("index_mask_dim1", lambda m, a: a[:, _mask(m, a, M1)], x234),
        c("index_mixed", lambda m, a: a[1:, _mask(m, a, M1), [0, -1]], x234),
        c("index_of_index", lambda m, a: a[1:][[0, 0]][:, 2], x34),
        # joining and selecting
        c("cat", lambda m, a, b: m.cat([a, b]), ((2, 4), (3, 4))),
        c("cat_dim1", lambda m, a, b, d: m.cat([a, b, d], dim=1), ((3, 1), (3, 2), (3, 4))),
        c("cat_neg_dim", lambda m, a, b: m.cat((a, b), -1), ((2, 3, 1), (2, 3, 2))),
        c("cat_same", lambda m, a: m.cat([a, a * 2, a], 0), x34),
        c("stack", lambda m, a, b: m.stack([a, b]), ((3, 4), (3, 4))),
        c("stack_last", lambda m, a, b: m.stack([a, b, a], dim=-1), ((3, 4), (3, 4))),
        c("where", lambda m, a, b: m.where(_mask(m, a, M2), a, b), ((3, 4), (3, 4))),
        c("where_bcast", lambda m, a, b: m.where(_mask(m, a, M1).reshape(3, 1), a, b), ((1, 4), (3, 4))),
        c("where_scalar", lambda m, a: m.where(a > 0, a, 0.0), x34),
        c("where_scalar_left", lambda m, a: m.where(a > 0, 1.5, a * 2), x34),
        c("clone", lambda m, a: a.clone() * 2, x34),
        c("to_same", lambda m, a: a.to(a.dtype) * 2, x34),
        # compositions: shared inputs, paths that meet again
        c("alias_sum", lambda m, a, b: (a + b) + a, ((3, 4), (3, 4))),
        c("diamond", lambda m, a: a.exp() * a + a.tanh() / (a * a + 1), x34),
        c("mlp", lambda m, x, w, b: (x @ w + b).tanh().sum(-1).log_softmax(0), ((5, 3), (3, 4), (4,))),
        c("softmax_nll", lambda m, z: -(z.log_softmax(1)[[0, 1, 2], [1, 0, 3]]).mean(), x34),
        c("norm", lambda m, a: ((a * a).sum(1) + 1).sqrt().mean(), x34),
        # the wider torch surface (issue 13): products, views, gathers, sorts, norms
        # (SURFACE below: also run against torch on every device and dtype)
        c("mm", lambda m, a, b: a.mm(b), ((2, 3), (3, 4))),
        c("mm_fn", lambda m, a, b: m.mm(a, b.t()), ((2, 3), (4, 3))),
        c("bmm", lambda m, a, b: m.bmm(a, b), ((2, 2, 3), (2, 3, 4))),
        c("einsum_matmul", lambda m, a, b: m.einsum("ij,jk->ik", a, b), ((2, 3), (3, 4))),
        c("einsum_batch", lambda m, a, b: m.einsum("bij,bkj->bik", a, b), ((2, 2, 3), (2, 4, 3))),
        c("einsum_implicit", lambda m, a, b: m.einsum("ij,kj", a, b), ((2, 3), (4, 3))),
        c("einsum_ellipsis", lambda m, a, b: m.einsum("...ij,jk->...ik", a, b), ((2, 2, 3), (3, 4))),
        c("einsum_bcast", lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), ((2, 2, 3), (1, 3, 4))),
        c("einsum_sum_out", lambda m, a, b: m.einsum("ij,j->", a, b), ((3, 4), (4,))),
        c("einsum_outer_list", lambda m, a, b: m.einsum("i,j->ij", [a, b]), ((3,), (4,))),
        c("einsum_transpose", lambda m, a: m.einsum("ijk->kij", a), x234),
        c("einsum_diagonal", lambda m, a: m.einsum("ii->i", a), ((3, 3),)),
        c("einsum_trace_product", lambda m, a, b: m.einsum("iij,jk->k", a, b), ((3, 3, 2), (2, 4))),
        c("einsum_diagonal_3", lambda m, a: m.einsum("jii->ij", a) * 2, ((2, 3, 3),)),
        c("t", lambda m, a: a.t() * 2, x34),
        c("t_1d", lambda m, a: m.t(a) * 2, x3),
        c("T_prop", lambda m, a: a.T @ a, x34),
        c("narrow", lambda m, a: a.narrow(1, 1, 2), x34),
        c("narrow_neg", lambda m, a: m.narrow(a, -1, -3, 2), x234),
        c("split", lambda m, a: a.split(2, 1)[1] * a.split(2, 1)[0][:, :1], ((3, 5),)),
        c("split_sizes", lambda m, a: m.cat(a.split([1, 3], dim=1)[::-1], 1), x34),
        c("chunk", lambda m, a: a.chunk(3, -1)[2] + a.chunk(3)[0][0], ((3, 5),)),
        c("contiguous", lambda m, a: a.t().contiguous().view(-1), x34),
        c("view_as", lambda m, a, b: a.view_as(b) * b, ((3, 4), (2, 6))),
        c("expand", lambda m, a: a.expand(2, 3, 4), ((3, 1),)),
        c("expand_as", lambda m, a, b: a.expand_as(b) * b, ((4,), (3, 4))),
        c("repeat", lambda m, a: a.repeat(2, 1, 3), x34),
        c("gather", lambda m, a: a.gather(1, _index(m, a, [[0, 0, 3], [1, 2, 1], [3, 3, 3]])), x34),
        c("gather_dim0_small", lambda m, a: m.gather(a, 0, _index(m, a, [[2, 0], [1, 1]])), x34),
        c("scatter", lambda m, a, b: a.scatter(1, _index(m, a, [[0, 2], [3, 1], [1, 0]]), b), ((3, 4), (3, 2))),
        c("scatter_value", lambda m, a: a.scatter(0, _index(m, a, [[2, 0, 1, 0]]), 1.5), x34),
        c("scatter_add", lambda m, a, b: a.scatter_add(1, _index(m, a, [[0, 0], [3, 1], [1, 1]]), b), ((3, 4), (3, 2))),
        c("scatter_add_fn", lambda m, a, b: m.scatter_add(a, 0, _index(m, a, [[2, 2, 0, 1]]), b), ((3, 4), (1, 4))),
        c("index_select", lambda m, a: a.index_select(1, _index(m, a, [3, 0, 3])), x34),
        c("index_select_fn", lambda m, a: m.index_select(a, 0, _index(m, a, [1, 1])), x234),
        c("index_add", lambda m, a, b: a.index_add(0, _index(m, a, [2, 0, 2]), b), ((3, 4), (3, 4))),
        c("index_add_alpha", lambda m, a, b: m.index_add(a, 1, _index(m, a, [1, 1]), b, alpha=-2.5), ((3, 4), (3, 2))),
        c("masked_fill", lambda m, a: a.masked_fill(_mask(m, a, M2), -1.0), x34),
        c("masked_fill_bcast", lambda m, a: m.masked_fill(a, _mask(m, a, [True, False, False, True]), 2.0), x34),
        c("masked_fill_tensor_value", lambda m, a, v: a.masked_fill(_mask(m, a, M2), v.sum()), ((3, 4), (2,))),
        c("sin", lambda m, a: a.sin(), x34),
        c("cos", lambda m, a: m.cos(a * 3), x34),
        c("sort", lambda m, a: a.sort(1).values, x34),
        c("sort_desc", lambda m, a: m.sort(a, 0, descending=True)[0], x234),
        c("topk", lambda m, a: a.topk(2).values, x34),
        c("topk_smallest", lambda m, a: m.topk(a, 2, dim=0, largest=False)[0], x34),
        c("cumsum", lambda m, a: a.cumsum(1), x234),
        c("cumsum_fn", lambda m, a: m.cumsum(a, -1), x34),
        c("clamp_fn_both", lambda m, a: m.clamp(a, -0.5, 0.5), x34),
        c("tril", lambda m, a: a.tril(), x34),
        c("triu_k", lambda m, a: m.triu(a, 1), x234),
        c("tril_neg", lambda m, a: m.tril(a, -1), x34),
        c("softmax", lambda m, a: a.softmax(-1), x234),
        c("softmax_fn", lambda m, a: m.softmax(a * 4, 0), x34),
        c("logsumexp", lambda m, a: a.logsumexp(1), x234),
        c("logsumexp_dims", lambda m, a: m.logsumexp(a, (0, 2), keepdim=True), x234),
        c("var", lambda m, a: a.var(), x234),
        c("var_dim", lambda m, a: a.var(1, keepdim=True), x234),
        c("var_biased", lambda m, a: m.var(a, 0, unbiased=False), x34),
        c("var_correction", lambda m, a: a.var(dim=(0, 1), correction=2), x234),
        c("std", lambda m, a: a.std(-1), x234),
        c("norm_fro", lambda m, a: a.norm(), x34),
        c("norm_dim", lambda m, a: a.norm(dim=1), x234),
        c("norm_p1", lambda m, a: m.norm(a, p=1, dim=0, keepdim=True), x34),
        c("norm_p3", lambda m, a: a.norm(p=3, dim=(0, 2)), x234),
        c("norm_p_half", lambda m, a: a.norm(p=0.5, dim=1), x34),
        c("norm_p1_5", lambda m, a: a.norm(p=1.5), x34),
        c("norm_inf", lambda m, a: a.norm(p=float("inf"), dim=1), x34),
        c("norm_neg_inf", lambda m, a: a.norm(p=float("-inf")), x34),
        c("erf", lambda m, a: a.erf(), x34),
        c("erf_fn", lambda m, a: m.erf(a * 3), x34),
        c("maximum", lambda m, a, b: m.maximum(a, b), ((3, 4), (4,))),
        c("minimum", lambda m, a, b: a.minimum(b), ((3, 4), (3, 4))),
        c("max_binary", lambda m, a, b: m.max(a, b) + m.min(a, b) * 2, ((3, 4), (3, 1))),
        c("add_fn_alpha", lambda m, a, b: m.add(a, b, alpha=0.5), ((3, 4), (4,))),
        c("sub_fn_alpha", lambda m, a, b: m.sub(a, b, alpha=3), ((3, 4), (3, 4))),
        c("pow_fn", lambda m, a: m.pow(a, 2.5) + m.mul(a, 2) - m.div(a, 3) + m.neg(a), x34, "pos"),
        c("remainder", lambda m, a, b: a % (b + 2.5), ((3, 4), (4,)), "pos"),
        c("remainder_scalar", lambda m, a: m.remainder(a * 3, 0.7) + a, x34, "pos"),
        c("rounding", lambda m, a: (a * 3).floor() + (a * 3).ceil() * a + m.round(a * 3) + a, x34),
        c("flip", lambda m, a: a.flip(0) * a, x34),
        c("flip_dims", lambda m, a: m.flip(a, (0, -1)), x234),
        c("unbind", lambda m, a: a.unbind(1)[2] * a.unbind()[0][1], x34),
        c("F_softmax", lambda m, a: m.nn.functional.softmax(a, dim=0), x34),
        c("F_softmax_dtype", lambda m, a: m.nn.functional.softmax(a, -1, dtype=a.dtype), x234),
        # issue 24, the names real scripts use: roll, torch's aliases and scalar-first orders,
        # the in-place shape methods on a non-leaf (the grad_fn becomes the view's)
        c("roll", lambda m, a: m.roll(a, 1) * a, x34),
        c("roll_dims", lambda m, a: a.roll((1, -2, 1), (0, 2, 0)), x234),
        c("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), ((3, 4), (4,), (3, 1))),
        c("addcmul_method", lambda m, a, b, c: a.addcmul(b, c), ((3, 4), (3, 4), (4,))),
        c("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=-2), ((3, 4), (3, 4), (4,)), "pos"),
        c("aliases", lambda m, a, b: m.multiply(m.subtract(a, b), m.divide(m.absolute(a), b + 3))
          + m.negative(m.true_divide(a, 2)), ((3, 4), (4,)), "pos"),
        c("alias_methods", lambda m, a, b: a.multiply(b).subtract(b, alpha=2).divide(3).negative().absolute()
          + m.concat([a, b.expand(3, 4)]).sum(0) + a.swapdims(0, 1).swapaxes(1, 0), ((3, 4), (4,))),
        c("unsqueeze_", lambda m, a: (a * 2).unsqueeze_(1) * a.unsqueeze(0), x34),
        c("squeeze_", lambda m, a: (a * 1).squeeze_(1) + (a * 3).squeeze_(), ((3, 1, 4),)),
        c("t_", lambda m, a: (a * 1).t_() * a.t(), x34),
        c("transpose_", lambda m, a: (a + 0).transpose_(0, 2).swapdims_(0, 1).swapaxes_(1, 2) * 2, x234),
        c("tan", lambda m, a: m.tan(a * 0.7), x34),
        c("asin_acos", lambda m, a: m.asin(a * 0.45) + (a * 0.4).acos() * 2, x34),
        c("atan", lambda m, a: m.atan(a * 3) + a.arctan(), x34),
        c("rsqrt", lambda m, a: m.rsqrt(a) + a.rsqrt() * a, x34, "pos"),
        c("prod", lambda m, a: a.prod(1) + m.prod(a), x34),
        c("prod_keepdim", lambda m, a: m.prod(a, 0, keepdim=True) * a, x34),
        c("select", lambda m, a: a.select(1, -1) * m.select(a, 0, 2), ((3, 3),)),
        c("diag", lambda m, a, b: m.diag(a).sum(0) + m.diag(b, 1) + m.diag(b, -2)[1:, :4].sum(0), ((3, 3), (3,))),
        c("outer", lambda m, a, b: m.outer(a, b) + a.outer(b), ((3,), (4,))),
        c("cross", lambda m, a, b: m.cross(a, b, dim=1) + a.cross(b * 2, dim=-1), ((4, 3), (4, 3))),
        c("log10_log2", lambda m, a: m.log10(a) + a.log2() * 3, x34, "pos"),
        c("square_reciprocal", lambda m, a: m.square(a) + a.reciprocal() + m.reciprocal(a).square(), x34, "pos"),
        c("clamp_min_max", lambda m, a: m.clamp_min(a, -0.5) + a.clamp_max(0.7) * 2, x34),
        c("dot", lambda m, a, b: m.dot(a, b) * a + b.dot(a), ((4,), (4,))),
        c("movedim", lambda m, a: m.movedim(a, (0, 1), (2, 0)) * 2 + a.moveaxis(-1, 0).permute(2, 0, 1), x234),
        c("masked_select", lambda m, a: a.masked_select(m.tensor(M1, device=a.device)) * 3, ((4, 3),)),
        # issue 24 (autograd): a custom autograd.Function (two outputs, a number argument), one code for both
        c("autograd_Function", lambda m, a, b: (lambda s, p: s * p)(*_tanh_sum_and_product(m).apply(a, b, 0.5)),
          ((3, 4), (4,))),
        # convolutions, pooling, padding and resizing (issue 24)
        c("F_conv2d", lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, stride=2, padding=1),
          ((2, 3, 5, 5), (4, 3, 3, 3), (4,))),
        c("F_conv2d_grouped", lambda m, x, w: m.nn.functional.conv2d(x, w, dilation=(2, 1), groups=2, padding="same"),
          ((1, 4, 5, 4), (2, 2, 2, 3))),
        c("F_conv1d", lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, stride=2), ((2, 3, 7), (2, 3, 3), (2,))),
        c("F_conv_transpose2d", lambda m, x, w, b: m.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                                                     output_padding=1),
          ((1, 2, 3, 3), (2, 3, 3, 2), (3,))),
        c("F_conv_transpose1d", lambda m, x, w: m.nn.functional.conv_transpose1d(x, w, stride=3, groups=2, dilation=2),
          ((2, 4, 3), (4, 1, 2))),
        c("F_max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
          ((2, 2, 6, 5),)),
        c("F_max_pool1d", lambda m, x: m.nn.functional.max_pool1d(x, 2, dilation=2), ((2, 3, 7),)),
        c("F_avg_pool2d", lambda m, x: m.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                                 count_include_pad=False), ((2, 2, 6, 5),)),
        c("F_adaptive_avg_pool2d", lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (2, 3)), ((2, 2, 5, 7),)),
        c("F_pad_constant", lambda m, x: m.nn.functional.pad(x, (1, -1, 2, 0), value=0.5), ((2, 3, 4),)),
        c("F_pad_reflect", lambda m, x: m.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"), ((1, 2, 4, 3),)),
        c("F_pad_replicate", lambda m, x: m.nn.functional.pad(x, (2, 3), mode="replicate"), ((2, 3, 4),)),
        c("F_pad_circular", lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1), mode="circular"), ((1, 2, 3, 4),)),
        c("F_interpolate_nearest", lambda m, x: m.nn.functional.interpolate(x, scale_factor=(1.5, 2)),
          ((1, 2, 3, 4),)),
        c("F_interpolate_bilinear", lambda m, x: m.nn.functional.interpolate(x, size=(5, 3), mode="bilinear"),
          ((1, 2, 3, 4),)),
    ]


@functools.cache
def _tanh_sum_and_product(m):
    """``(tanh(a) * k + b, a * b)`` as a custom autograd.Function of framework ``m`` (issue 24)."""
    class TanhSumAndProduct(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.save_for_backward(a, b)
            ctx.k = k
            return a.tanh() * k + b, a * b

        @staticmethod
        def backward(ctx, grad_sum, grad_product):
            a, b = ctx.saved_tensors
            t = a.tanh()
            return grad_sum * ctx.k * (1 - t * t) + grad_product * b, grad_sum + grad_product * a, None

    return TanhSumAndProduct


CASES = list(_cases())
BY_NAME = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"

# the cases of the torch surface that test_tensor_surface.py also runs against torch live on
# every device, in float32 and float64
SURFACE = CASES[[c.name for c in CASES].index("mm"):]


def cotangent(shape, seed) -> np.ndarray:
    """A float64 host array of ``shape`` to backpropagate from: normal numbers rounded to
    multiples of 2**-6 (below 8 in magnitude, so of at most 9 significant bits), so that a
    gradient that only routes, scales by a power of two or adds up a few of them (the
    duplicates of a gather, the broadcast dimensions of an expand) is exact in float32 and
    float16."""
    return np.round(np.random.default_rng(seed).standard_normal(shape) * 64) / 64


# the cases whose float32 output and gradients (from a :func:`cotangent`) are exact by
# construction: they select, move, copy, compare and order their inputs' values, negate them,
# take their absolute values or scale them by powers of two, and their gradients route the
# cotangent or add up a few of its values; tests hold them to the float64 truth exactly
EXACT = frozenset([
    "div_scalar", "pow_zero", "pow_one", "neg", "neg_method", "abs", "abs_builtin", "clamp_min", "clamp_max",
    "clamp_both", "clamp_tensor_min", "clamp_tensor_max", "clamp_fn_both", "relu",
    "max", "max_dim", "max_dim_keepdim", "max_fn", "min", "min_dim", "min_dim_keepdim", "maximum", "minimum",
    "norm_inf", "norm_neg_inf", "sort", "sort_desc", "topk", "topk_smallest",
    "reshape", "reshape_tuple", "view", "transpose", "transpose_neg", "T_2d", "T_3d", "permute", "permute_fn",
    "unsqueeze", "unsqueeze_neg", "squeeze", "squeeze_dim", "flatten", "flatten_from", "flatten_range",
    *(case.name for case in CASES if case.name.startswith("index_") and case.name not in ("index_add", "index_add_alpha")),
    "cat", "cat_dim1", "cat_neg_dim", "cat_same", "stack", "stack_last", "where", "where_bcast", "where_scalar",
    "where_scalar_left", "clone", "to_same", "einsum_transpose", "einsum_diagonal", "einsum_diagonal_3",
    "t", "t_1d", "narrow", "narrow_neg", "split_sizes", "contiguous", "expand", "repeat", "gather",
    "gather_dim0_small", "scatter", "scatter_value", "masked_fill", "masked_fill_bcast", "tril", "triu_k",
    "tril_neg", "flip_dims",
    # issue 24: selections and copies, whose gradients add up a few cotangents
    "F_max_pool2d", "F_max_pool1d", "F_pad_constant", "F_pad_reflect", "F_pad_replicate", "F_pad_circular",
    "F_interpolate_nearest",
])
EXACT = EXACT | {"roll_dims", "squeeze_", "transpose_"}  # issue 24: they move values, or add two
assert EXACT <= set(BY_NAME), sorted(EXACT - set(BY_NAME))
