"""``lucid.autograd`` against ``torch.autograd``, live: custom Functions (values, gradients,
their nodes' names, the ctx's marks, torch's errors), ``autograd.grad`` and ``autograd.backward``,
``Variable``, and ``lucid.load``'s torch keywords.

Each custom Function is written once, against a framework module ``m`` (``lucid`` or ``torch``),
so that the two runs are the same code, as a torch script run with ``import lucid as torch``.
"""

from __future__ import annotations

import functools
import io
import warnings

import numpy as np
import pytest

import lucid
from helpers import assert_same_signature
from nn_parity import DEVICE_DTYPES, DEVICES, assert_same_error, function_parity, ids
from tolerances import close

torch = pytest.importorskip("torch")


# --- custom Functions, written once for both frameworks --------------------------------------
@functools.cache
def functions(m) -> dict:
    """The custom Functions of the tests, as classes of framework ``m``."""
    Function = m.autograd.Function

    class ScaledTanh(Function):  # a saved input and a non-tensor argument
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return m.tanh(x) * k

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            t = m.tanh(x)
            return grad * ctx.k * (1 - t * t), None

    class Exp(Function):  # the new style: forward without ctx, setup_context saves the output
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    class SumAndProduct(Function):  # two outputs, two inputs; grads materialized or not
        @staticmethod
        def forward(ctx, a, b, materialize=True):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(a, b)
            return a + b, a * b

        @staticmethod
        def backward(ctx, grad_sum, grad_product):
            a, b = ctx.saved_tensors
            ga = gb = None
            if grad_sum is not None:
                ga, gb = grad_sum, grad_sum
            if grad_product is not None:
                ga = grad_product * b if ga is None else ga + grad_product * b
                gb = grad_product * a if gb is None else gb + grad_product * a
            return ga, gb, None

    class MaxWithIndex(Function):  # a non-differentiable output
        @staticmethod
        def forward(ctx, x):
            index = x.argmax(1)
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(x, index)
            return x.max(1)[0], index

        @staticmethod
        def backward(ctx, grad, grad_index):
            x, index = ctx.saved_tensors
            return m.zeros_like(x).scatter(1, index.unsqueeze(1), grad.unsqueeze(1))

    class Square_(Function):  # in place: mark_dirty
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x.clone())
            x.mul_(x)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            before, = ctx.saved_tensors
            return 2 * before * grad

    class Identity(Function):  # an input returned unmodified
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    class Abs(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.abs()

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x.sign()

    return {cls.__name__: cls for cls in (ScaledTanh, Exp, SumAndProduct, MaxWithIndex, Square_, Identity, Abs)}


def _calls(m) -> dict:
    """Each case: a function of tensors that goes through a custom Function of ``m``."""
    f = functions(m)
    return {
        "ScaledTanh": lambda x: f["ScaledTanh"].apply(x, 1.5),
        "Exp": lambda x: f["Exp"].apply(x),
        "SumAndProduct": lambda a, b: f["SumAndProduct"].apply(a, b),
        "SumAndProduct-one-used": lambda a, b: f["SumAndProduct"].apply(a, b)[1] * 2,
        "SumAndProduct-unmaterialized": lambda a, b: f["SumAndProduct"].apply(a, b, False)[0] * a,
        "MaxWithIndex": lambda x: f["MaxWithIndex"].apply(x)[0],
        # the tensor modified in place was used before (h0): its gradient must still reach x
        "Square_": lambda x: (lambda h: (lambda h0: f["Square_"].apply(h) * 3 + h0)(h + 1))(x * 2),
        "Square_-after-a-Function": lambda x: (lambda h: (lambda k: f["Square_"].apply(h) + k)(f["Exp"].apply(h)))(x * 2),
        "Identity": lambda x: f["Identity"].apply(x) * x,
        "Abs": lambda x: f["Abs"].apply(x),
    }


SHAPES = {"ScaledTanh": [(3, 4)], "Exp": [(5,)], "SumAndProduct": [(3,), (3,)], "SumAndProduct-one-used": [(2, 3), (3,)],
          "SumAndProduct-unmaterialized": [(4,), (4,)], "MaxWithIndex": [(3, 5)], "Square_": [(4,)], "Square_-after-a-Function": [(3,)],
          "Identity": [(3,)], "Abs": [(2, 3)]}
EXACT = {"MaxWithIndex", "Identity", "Abs"}  # a selection, a scaling by 3 of the cotangent, a sign


@pytest.mark.parametrize("case", sorted(SHAPES))
@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
def test_custom_function_values_and_gradients_match_torch(case, device, dtype):
    arrays = [np.random.default_rng(7).uniform(-2, 2, shape) for shape in SHAPES[case]]
    function_parity(_calls(lucid)[case], _calls(torch)[case], arrays, device, dtype, exact=case in EXACT)


@pytest.mark.parametrize("device", DEVICES)
def test_the_output_node_is_named_and_typed_as_torchs(device):
    for m, dev in ((lucid, device), (torch, "cpu")):
        f = functions(m)
        x = m.ones(3, device=dev, requires_grad=True)
        y = f["ScaledTanh"].apply(x, 2.0)
        assert type(y.grad_fn).__name__ == "ScaledTanhBackward"
        a, b = f["SumAndProduct"].apply(x, x)
        assert a.grad_fn is b.grad_fn if m is torch else a.grad_fn.name == b.grad_fn.name == "SumAndProductBackward"
        value, index = f["MaxWithIndex"].apply(x.reshape(1, 3))
        assert (value.requires_grad, index.requires_grad, index.grad_fn) == (True, False, None)
        assert isinstance(y.grad_fn, m.autograd.function.FunctionCtx)
    assert lucid.autograd.Function.apply.__doc__ and functions(lucid)["Exp"]._backward_cls.__name__ == "ExpBackward"


def test_needs_input_grad_apply_without_grad_and_an_input_returned_as_is():
    seen = {}
    for m in (lucid, torch):
        class Probe(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, w):
                seen[m] = (ctx.needs_input_grad, m.is_grad_enabled())
                return x * k

            @staticmethod
            def backward(ctx, grad):
                return grad, None, None

        x = m.ones(2, requires_grad=True)
        out = Probe.apply(x, 2.0, m.ones(2))
        with m.no_grad():
            quiet = Probe.apply(x, 2.0, m.ones(2))
        same = functions(m)["Identity"].apply(x)
        seen[m] += (out.requires_grad, quiet.requires_grad, quiet.grad_fn is None, same is x, same.is_leaf,
                    same.data_ptr() == x.data_ptr() if m is torch else np.shares_memory(same.detach().numpy(), x.detach().numpy()))
    assert seen[lucid] == seen[torch] == ((True, False, False), False, True, False, True, False, False, True)


def test_integer_and_non_tensor_outputs_as_torch():
    got = {}
    for m in (lucid, torch):
        seen = []

        class Mixed(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, (x > 1).long(), 5, "s"

            @staticmethod
            def backward(ctx, grad, grad_int, grad_number, grad_text):
                seen.append((grad_int.tolist(), grad_int.dtype.is_floating_point, grad_number, grad_text))
                return grad * 2

        x = m.tensor([0.5, 2.0], requires_grad=True)
        doubled, flags, number, text = Mixed.apply(x)
        doubled.sum().backward()
        got[m] = (flags.requires_grad, flags.tolist(), number, text, seen, x.grad.tolist())
    assert got[lucid] == got[torch]


def test_a_dirty_tensor_keeps_its_identity_and_is_at_torchs_version():
    got = {}
    for m in (lucid, torch):
        x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        h = x * 1
        out = functions(m)["Square_"].apply(h)
        got[m] = (out is h, h._version, h.tolist())
        plain = m.tensor([2.0])  # no graph: modified in place, nothing recorded
        got[m] += (functions(m)["Square_"].apply(plain) is plain, plain.requires_grad, plain.tolist())
    assert got[lucid] == got[torch]


def test_a_second_backward_frees_only_the_saved_tensors_as_torch():
    grads = {}
    for m in (lucid, torch):
        x = m.ones(2, dtype=m.float64, requires_grad=True)
        functions(m)["ScaledTanh"].apply(x, 2.0).sum().backward()
        z = functions(m)["Identity"].apply(x)  # saves nothing: its backward runs again
        z.sum().backward()
        z.sum().backward()
        grads[m] = x.grad.tolist()
    close(grads[lucid], grads[torch], "float64")
    assert_same_error(lambda: _second_backward(lucid), lambda: _second_backward(torch))


def _second_backward(m):
    y = functions(m)["ScaledTanh"].apply(m.ones(2, requires_grad=True), 2.0).sum()
    y.backward()
    y.backward()


def _bad_backward(m, returned, args=1, shape=(2,)):
    """A Function of ``args`` arguments whose backward returns ``returned(grad, m)``."""
    class Bad(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, *rest):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return returned(grad, m)

    x = m.ones(*shape, requires_grad=True)
    Bad.apply(x, *[3.0] * (args - 1)).sum().backward()
    return x.grad


BAD_BACKWARDS = {
    "too-many": (lambda g, m: (g, g), 1),
    "none-returned-for-nothing": (lambda g, m: (), 1),
    "a-list": (lambda g, m: [g], 1),
    "an-int": (lambda g, m: 3, 1),
    "a-gradient-for-a-number": (lambda g, m: (g, m.ones(1)), 2),
    "wrong-shape": (lambda g, m: g[:1].reshape(1, 1).expand(2, 1), 1),
    "too-short": (lambda g, m: g[:1], 1),
}


@pytest.mark.parametrize("case", sorted(BAD_BACKWARDS))
def test_a_wrong_backward_raises_torchs_error(case):
    returned, args = BAD_BACKWARDS[case]
    assert_same_error(lambda: _bad_backward(lucid, returned, args), lambda: _bad_backward(torch, returned, args))


def test_a_backward_torch_accepts_is_accepted_alike():
    """Extra trailing Nones, a gradient of a broadcast shape (summed), another float dtype (cast)."""
    for returned, args in [(lambda g, m: (g, None, None), 1), (lambda g, m: g.expand(3, 2), 1),
                           (lambda g, m: g.double(), 1), (lambda g, m: (g * 2, None), 2)]:
        ours, theirs = _bad_backward(lucid, returned, args), _bad_backward(torch, returned, args)
        assert ours.tolist() == theirs.tolist() and ours.dtype.name == str(theirs.dtype).removeprefix("torch.")


def _misuse(m, what):
    Function = m.autograd.Function
    x = m.ones(2, requires_grad=True)
    if what == "no-forward":
        type("NoForward", (Function,), {}).apply(x)
    if what == "no-backward":
        type("NoBackward", (Function,), {"forward": staticmethod(lambda ctx, t: t * 2)}).apply(x).sum().backward()
    if what == "instance-call":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            functions(m)["Exp"]()(x)
    if what == "save-a-number":
        type("SaveNumber", (Function,), {"forward": staticmethod(lambda ctx, t: ctx.save_for_backward(t, 3))}).apply(x)
    if what == "dirty-leaf":
        functions(m)["Square_"].apply(x)
    if what == "dirty-not-returned":
        def forward(ctx, t):
            ctx.mark_dirty(t)
            return t * 2
        type("DirtyElsewhere", (Function,), {"forward": staticmethod(forward)}).apply(x * 1)
    if what == "saved-after-free":
        y = functions(m)["ScaledTanh"].apply(x, 2.0)
        y.sum().backward()
        return y.grad_fn.saved_tensors


@pytest.mark.parametrize("what", ["no-forward", "no-backward", "instance-call", "save-a-number", "dirty-leaf",
                                  "dirty-not-returned", "saved-after-free"])
def test_a_misused_function_raises_torchs_error(what):
    assert_same_error(lambda: _misuse(lucid, what), lambda: _misuse(torch, what))


def test_instantiating_a_function_warns_as_torch():
    for m in (lucid, torch):
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            functions(m)["Exp"]()


def test_a_view_of_a_graph_tensor_cannot_be_dirtied():
    x = lucid.ones(2, 3, requires_grad=True)
    view = (x * 1).reshape(6)
    with pytest.raises(NotImplementedError, match="mark_dirty of a view"):
        functions(lucid)["Square_"].apply(view)


# --- gradcheck ---------------------------------------------------------------------------------
GRADCHECKED = {  # name: (function of framework m, input shapes)
    "ScaledTanh": (lambda m: lambda x: functions(m)["ScaledTanh"].apply(x, 1.5), [(2, 3)]),
    "Exp": (lambda m: functions(m)["Exp"].apply, [(3,)]),
    "SumAndProduct": (lambda m: functions(m)["SumAndProduct"].apply, [(3,), (3,)]),
    "MaxWithIndex": (lambda m: functions(m)["MaxWithIndex"].apply, [(2, 3)]),
    "a-number-argument": (lambda m: lambda x, k: x * k, [(2,), None]),
    "wrong-backward": (lambda m: lambda x: _wrong_cube(m).apply(x), [(3,)]),
}


@functools.cache
def _wrong_cube(m):
    class WrongCube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 3.1 * x ** 2 * grad

    return WrongCube


def _gradcheck_inputs(m, shapes):
    rng = np.random.default_rng(3)
    return tuple(2.5 if shape is None else m.tensor(rng.uniform(0.5, 2, shape), dtype=m.float64, requires_grad=True)
                 for shape in shapes)


@pytest.mark.parametrize("case", sorted(GRADCHECKED))
def test_gradcheck_agrees_with_torchs(case):
    make, shapes = GRADCHECKED[case]
    verdicts = [m.autograd.gradcheck(make(m), _gradcheck_inputs(m, shapes), raise_exception=False) for m in (lucid, torch)]
    assert verdicts == [case != "wrong-backward"] * 2


def test_gradcheck_raises_and_warns_as_torch():
    make, shapes = GRADCHECKED["wrong-backward"]
    raised = []
    for m in (lucid, torch):
        with pytest.raises(RuntimeError) as error:
            m.autograd.gradcheck(make(m), _gradcheck_inputs(m, shapes))
        raised.append((type(error.value).__name__, str(error.value).splitlines()[0]))
    assert raised[0] == raised[1] == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")
    assert_same_error(lambda: lucid.autograd.gradcheck(lambda x: x * 2, (lucid.ones(2),)),
                      lambda: torch.autograd.gradcheck(lambda x: x * 2, (torch.ones(2),)))
    for m in (lucid, torch):
        with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
            m.autograd.gradcheck(lambda x: x * 2, (m.ones(2, requires_grad=True),), raise_exception=False)
    with pytest.raises(NotImplementedError, match="check_forward_ad=True"):
        lucid.autograd.gradcheck(lambda x: x, (lucid.ones(1, dtype=lucid.float64, requires_grad=True),),
                                 check_forward_ad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_runs_on_every_device_and_restores_its_inputs(device):
    x = lucid.tensor([0.5, 1.5], device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        assert lucid.autograd.gradcheck(functions(lucid)["Exp"].apply, (x,), eps=1e-2, atol=1e-3, rtol=1e-3)
    assert x.tolist() == [0.5, 1.5] and x.grad is None


# --- autograd.grad and autograd.backward ---------------------------------------------------------
def test_grad_and_backward_take_torchs_arguments():
    assert_same_signature(lucid.autograd.grad, torch.autograd.grad)
    assert_same_signature(lucid.autograd.backward, torch.autograd.backward)
    assert_same_signature(lucid.autograd.gradcheck, torch.autograd.gradcheck)
    for name in ("Function", "Variable", "grad", "backward", "gradcheck", "no_grad", "enable_grad", "set_grad_enabled",
                 "inference_mode", "function.Function", "function.FunctionCtx", "function.once_differentiable",
                 "variable.Variable"):
        module, attribute = name.rpartition(".")[::2] if "." in name else ("", name)
        ours = getattr(getattr(lucid.autograd, module) if module else lucid.autograd, attribute)
        theirs = getattr(getattr(torch.autograd, module) if module else torch.autograd, attribute)
        assert callable(ours) and callable(theirs), name


def _graph(m, device="cpu", dtype="float64"):
    dtype = getattr(m, dtype)
    x = m.tensor([1.0, -2.0, 0.5], dtype=dtype, device=device, requires_grad=True)
    w = m.tensor([0.3], dtype=dtype, device=device, requires_grad=True)
    unused = m.tensor([5.0], dtype=dtype, device=device, requires_grad=True)
    h = x * w
    h.retain_grad()
    return x, w, unused, h, (h.tanh() * x).sum()


GRAD_CALLS = {  # (what autograd.grad is asked, the backward whose leaves' .grad must be the same)
    "inputs": (lambda m, x, w, u, h, y: m.autograd.grad(y, [x, w]), lambda m, x, w, u, h, y: (y.backward(), [x, w])),
    "one-tensor": (lambda m, x, w, u, h, y: m.autograd.grad(y, x), lambda m, x, w, u, h, y: (y.backward(), [x])),
    "a-non-leaf-and-below": (lambda m, x, w, u, h, y: m.autograd.grad(y, (h, x)),
                             lambda m, x, w, u, h, y: (y.backward(), [h, x])),
    "twice-the-same": (lambda m, x, w, u, h, y: m.autograd.grad(y, [w, w]),
                       lambda m, x, w, u, h, y: (y.backward(), [w, w])),
    "allow-unused": (lambda m, x, w, u, h, y: m.autograd.grad(y, [x, u], allow_unused=True),
                     lambda m, x, w, u, h, y: (y.backward(), [x, u])),
    "materialize": (lambda m, x, w, u, h, y: m.autograd.grad(y, [u, w], materialize_grads=True),
                    lambda m, x, w, u, h, y: (y.backward(), u.grad is None and setattr(u, "grad", m.zeros_like(u)), [u, w])),
    "dict": (lambda m, x, w, u, h, y: tuple(m.autograd.grad(y, {"x": x, "w": w}).values()),
             lambda m, x, w, u, h, y: (y.backward(), [x, w])),
    "grad-outputs": (lambda m, x, w, u, h, y: m.autograd.grad([h, y], [x], grad_outputs=[h.detach() * 0 + 2, None]),
                     lambda m, x, w, u, h, y: (m.autograd.backward([h, y], [h.detach() * 0 + 2, None]), [x])),
    "grad-outputs-int": (lambda m, x, w, u, h, y: m.autograd.grad(h, w, grad_outputs=m.tensor([1, 2, 3], device=x.device)),
                         lambda m, x, w, u, h, y: (h.backward(m.tensor([1, 2, 3], dtype=h.dtype, device=x.device)), [w])),
    "outputs-summed": (lambda m, x, w, u, h, y: m.autograd.grad([y, y * 2], x),
                       lambda m, x, w, u, h, y: ((y * 3).backward(), [x])),
}


@pytest.mark.parametrize("case", sorted(GRAD_CALLS))
def test_grad_matches_torch_and_leaves_every_leaf_grad_alone(case):
    results = {}
    for m in (lucid, torch):
        x, w, u, h, y = _graph(m)
        got = GRAD_CALLS[case][0](m, x, w, u, h, y)
        results[m] = ([None if g is None else g.tolist() for g in got], [t.grad for t in (x, w, u)],
                      None if h.grad is None else h.grad.tolist())
    (ours, our_leaves, our_h), (theirs, their_leaves, their_h) = results[lucid], results[torch]
    assert our_leaves == their_leaves == [None, None, None]
    assert (our_h is None) == (their_h is None)
    if our_h is not None:
        close(our_h, their_h, "float64")
    assert [g is None for g in ours] == [g is None for g in theirs]
    for mine, reference in zip(ours, theirs):
        if mine is not None:
            close(mine, reference, "float64")


@pytest.mark.parametrize("case", sorted(GRAD_CALLS))
@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
def test_grad_gives_what_backward_accumulates_bit_for_bit(case, device, dtype):
    asked, accumulated = GRAD_CALLS[case]
    got = asked(lucid, *_graph(lucid, device, dtype))
    *_, leaves = accumulated(lucid, *_graph(lucid, device, dtype))
    assert [g is None for g in got] == [t.grad is None for t in leaves]
    for g, t in zip(got, leaves):
        if g is not None:
            assert g.dtype is t.dtype and g.device == device and g.tolist() == t.grad.tolist()


def _grad_misuse(m, what):
    x, w, u, h, y = _graph(m)
    calls = {
        "unused": lambda: m.autograd.grad(y, [x, u]),
        "freed": lambda: (m.autograd.grad(y, x), m.autograd.grad(y, x)),
        "no-grad-input": lambda: m.autograd.grad(y, m.ones(1)),
        "no-grad-output": lambda: m.autograd.grad(m.ones(1).sum(), x),
        "empty-inputs": lambda: m.autograd.grad(y, []),
        "not-a-tensor": lambda: m.autograd.grad(y, [x, 3]),
        "implicit-non-scalar": lambda: m.autograd.grad(h, x),
        "shape-mismatch": lambda: m.autograd.grad(h, x, grad_outputs=m.ones(4)),
        "count-mismatch": lambda: m.autograd.grad([h, y], x, grad_outputs=[m.ones(3)]),
        "grad-output-number": lambda: m.autograd.grad(y, x, grad_outputs=[3]),
        "materialize-not-unused": lambda: m.autograd.grad(y, x, allow_unused=False, materialize_grads=True),
        "backward-empty-inputs": lambda: m.autograd.backward(y, inputs=[]),
        "backward-input-no-grad": lambda: m.autograd.backward(y, inputs=[m.ones(1)]),
        "backward-count-mismatch": lambda: m.autograd.backward([h, y], grad_tensors=[m.ones(3)]),
        "backward-implicit": lambda: m.autograd.backward(h),
    }
    return calls[what]()


@pytest.mark.parametrize("what", ["unused", "freed", "no-grad-input", "no-grad-output", "empty-inputs", "not-a-tensor",
                                  "implicit-non-scalar", "shape-mismatch", "count-mismatch", "grad-output-number",
                                  "materialize-not-unused", "backward-empty-inputs", "backward-input-no-grad",
                                  "backward-count-mismatch", "backward-implicit"])
def test_grad_and_backward_raise_torchs_errors(what):
    if what == "shape-mismatch":  # torch spells the shapes as its torch.Size
        with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \(4,\) and "
                                               r"output\[0\] has a shape of \(3,\)\."):
            _grad_misuse(lucid, what)
        return
    assert_same_error(lambda: _grad_misuse(lucid, what), lambda: _grad_misuse(torch, what))


def test_grad_refuses_what_it_cannot_do_and_warns_as_torch():
    x, w, u, h, y = _graph(lucid)
    with pytest.raises(NotImplementedError, match="create_graph=True is not supported"):
        lucid.autograd.grad(y, x, create_graph=True)
    with pytest.raises(NotImplementedError, match="create_graph=True is not supported"):
        lucid.autograd.backward(y, create_graph=True)
    with pytest.raises(NotImplementedError, match="create_graph=True is not supported"):
        y.backward(create_graph=True)
    with pytest.raises(NotImplementedError, match="is_grads_batched=True is not supported"):
        lucid.autograd.grad(y, x, is_grads_batched=True)
    assert x.grad is None and w.grad is None  # nothing ran
    for m in (lucid, torch):
        x, w, u, h, y = _graph(m)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated and is ignored now"):
            m.autograd.grad(y, x, only_inputs=False)


def test_backward_of_several_tensors_and_into_chosen_inputs_matches_torch():
    got = {}
    for m in (lucid, torch):
        x, w, u, h, y = _graph(m)
        m.autograd.backward([h, y], grad_tensors=[m.ones(3, dtype=m.float64), None], retain_graph=True)
        first = [x.grad.tolist(), w.grad.tolist(), h.grad.tolist()]
        x.grad = None
        m.autograd.backward(y, inputs=[w, h])  # only these: x.grad stays None
        got[m] = (first, [w.grad.tolist(), h.grad.tolist()], x.grad)
        with pytest.warns(FutureWarning):
            m.autograd.backward(m.ones(1, requires_grad=True).sum() * 2, grad_variables=m.tensor(1.0))
    for ours, theirs in zip(got[lucid][:2], got[torch][:2]):
        for mine, reference in zip(ours, theirs):
            close(mine, reference, "float64")
    assert got[lucid][2] is None and got[torch][2] is None


# --- Variable -----------------------------------------------------------------------------------
def test_variable_is_a_tensor_as_in_torch():
    got = {}
    for m in (lucid, torch):
        V = m.autograd.Variable
        t = m.tensor([1.0, 2.0])
        y = m.ones(2, requires_grad=True) * 2
        v = V(t, requires_grad=True)
        (v * v).sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            quiet = V(t, volatile=False)
            loud = V(t, False, True)
        got[m] = (type(v).__name__, v.requires_grad, v.is_leaf, v is t, v.grad.data.tolist(), isinstance(t, V),
                  isinstance(3, V), V(y).requires_grad, V(y).grad_fn, V(y, True).is_leaf, V().shape == (0,),
                  type(V(m.nn.Parameter(m.ones(1)))).__name__, quiet.requires_grad, loud.requires_grad,
                  [(w.category, str(w.message).replace("torch.", "lucid.")) for w in caught])
        t.add_(1)
        got[m] += (V(t).tolist(), v.tolist())  # the storage is shared
    assert got[lucid] == got[torch]


@pytest.mark.parametrize("what", ["list", "number", "keyword", "grad-fn", "int-requires-grad"])
def test_variable_refuses_what_torch_refuses(what):
    def make(m):
        V = m.autograd.Variable
        return {"list": lambda: V([1.0]), "number": lambda: V(3.0), "keyword": lambda: V(m.ones(1), foo=1),
                "grad-fn": lambda: V(m.ones(1), False, False, 1),
                "int-requires-grad": lambda: V(m.tensor([1]), requires_grad=True)}[what]()

    if what == "int-requires-grad":  # lucid has no complex dtypes: its message names floating point alone
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
            make(lucid)
        return
    assert_same_error(lambda: make(lucid), lambda: make(torch))


def test_torch_style_imports_work_with_lucid_as_torch():
    namespace: dict = {}
    exec("import lucid as torch\nfrom lucid.autograd import Variable, Function\n"
         "from lucid.autograd.function import once_differentiable\n"
         "x = Variable(torch.ones(2), requires_grad=True)\n"
         "g, = torch.autograd.grad((x * 3).sum(), x)\n", namespace)
    assert namespace["g"].tolist() == [3.0, 3.0]


# --- lucid.load's torch keywords -------------------------------------------------------------------
def test_load_takes_torchs_arguments():
    assert_same_signature(lucid.load, torch.load)


def _saved():
    buffer = io.BytesIO()
    lucid.save({"w": lucid.tensor([1.5, -2.0]), "step": 3}, buffer)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("weights_only", [None, True, False])
def test_load_accepts_weights_only_and_loads_the_same(weights_only):
    out = lucid.load(_saved(), weights_only=weights_only)
    assert out["w"].tolist() == [1.5, -2.0] and out["step"] == 3


@pytest.mark.parametrize("device", DEVICES)
def test_load_takes_a_device_or_a_callable_as_map_location(device):
    assert lucid.load(_saved(), map_location=lucid.device(device))["w"].device == device
    seen = []
    out = lucid.load(_saved(), map_location=lambda storage, location: seen.append(location) or storage.to(device))
    assert out["w"].device == device and out["w"].tolist() == [1.5, -2.0] and seen == ["cpu"]
    assert lucid.load(_saved(), map_location=lambda storage, location: None)["w"].device == "cpu"
    with pytest.raises(ValueError, match=r"map_location returned int for obj\['w'\]"):
        lucid.load(_saved(), map_location=lambda storage, location: 3)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"weights_only": True, "pickle_module": object()}, RuntimeError,
     "Can not safely load weights when explicit pickle_module is specified"),
    ({"weights_only": False, "pickle_module": object()}, ValueError, "lucid.load never unpickles"),
    ({"mmap": True}, ValueError, "f must be a file path in order to use the mmap argument"),
    ({"weights_only": False, "encoding": "latin1"}, ValueError, r"pickle_load_args \(encoding\) cannot be honoured"),
    ({"weights_only": "yes"}, TypeError, "weights_only must be a bool or None"),
])
def test_load_refuses_what_it_cannot_honour(kwargs, error, message):
    with pytest.raises(error, match=message):
        lucid.load(_saved(), **kwargs)


def test_load_refuses_mmap_of_a_path_and_warns_of_pickle_arguments_as_torch(tmp_path):
    path = tmp_path / "checkpoint.safetensors"
    lucid.save({"w": lucid.ones(1)}, path)
    with pytest.raises(ValueError, match="mmap=True is not supported"):
        lucid.load(path, mmap=True)
    with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
        assert lucid.load(path, weights_only=True, encoding="latin1")["w"].tolist() == [1.0]
