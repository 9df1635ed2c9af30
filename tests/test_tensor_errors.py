"""Bad inputs raise clear errors of torch's types, the same on every device.

MLX checks less than NumPy (it does not bounds-check indices and grows the target of an
"in-place" op to the broadcast shape), so lucid checks before it computes; each test runs
on both devices. Where torch's message is short and stable, the test matches it.
"""

import pytest

import lucid


def _other(device):
    return "gpu" if device == "cpu" else "cpu"


# --- shapes -----------------------------------------------------------------------------------

BINARY_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b, "and": lambda a, b: (a > 0) & (b > 0), "where": lambda a, b: lucid.where(a > 0, a, b),
    "clamp": lambda a, b: a.clamp(min=b), "radd_list": lambda a, b: b.tolist() + a,
}


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_binary_shape_mismatch_raises_torchs_error(device, op):
    a, b = lucid.ones(3, device=device), lucid.ones(4, device=device)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) "
                                           r"at non-singleton dimension 0"):
        BINARY_OPS[op](a, b)


def test_shape_mismatch_names_the_output_dimension(device):
    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1"):
        lucid.ones(2, 3, device=device) + lucid.ones(4, device=device)
    with pytest.raises(RuntimeError, match=r"tensor a \(5\) must match the size of tensor b \(3\) at non-singleton dimension 0"):
        lucid.where(lucid.ones(5, dtype=lucid.bool, device=device), lucid.ones(3, device=device), 0.0)


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_", "maximum_", "copy_", "lerp_", "addcmul_", "clamp_"])
def test_in_place_ops_never_grow_their_target(device, op):
    x = lucid.zeros(3, device=device)
    big = lucid.ones(2, 3, device=device)
    calls = {
        "add_": lambda: x.add_(big), "sub_": lambda: x.sub_(big), "mul_": lambda: x.mul_(big),
        "div_": lambda: x.div_(big), "maximum_": lambda: x.maximum_(big), "copy_": lambda: x.copy_(big),
        "lerp_": lambda: x.lerp_(big, 0.7), "addcmul_": lambda: x.addcmul_(big, big), "clamp_": lambda: x.clamp_(max=big),
    }
    with pytest.raises(RuntimeError, match=r"doesn't match the broadcast shape \[2, 3\]"):
        calls[op]()
    with pytest.raises(RuntimeError, match="must match the size"):
        x.add_(lucid.ones(4, device=device))
    assert x.shape == (3,) and x.tolist() == [0.0, 0.0, 0.0] and x._version == 0
    x.add_(lucid.ones(1, device=device))  # broadcasting into the target is fine
    x.mul_(lucid.full((3,), 2.0, device=device))
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_in_place_ops_refuse_results_the_dtype_cannot_hold(device):
    i = lucid.tensor([1, 2], device=device)
    for call in (lambda: i.add_(0.5), lambda: i.mul_(lucid.ones(2, device=device)), lambda: i.div_(2)):
        with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired output type int64"):
            call()
    assert i.tolist() == [1, 2]
    i.add_(3)
    i.copy_(lucid.tensor([7.9, -1.2], device=device))  # copy_ casts, as in torch
    assert i.tolist() == [10 - 3, -1]


def test_setitem_value_shape_mismatch(device):
    x = lucid.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to "
                                           r"indexing result of shape \[2\]"):
        x[0, 0:2] = lucid.ones(3, device=device)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[[0, 1]] = lucid.ones(3, 4, device=device)
    with pytest.raises(RuntimeError, match="same device"):
        x[0] = lucid.ones(4, device=_other(device))
    assert x.tolist() == [[0.0] * 4] * 3


def test_matmul_errors(device):
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)"):
        lucid.ones(2, 3, device=device) @ lucid.ones(4, 2, device=device)
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(3 and 4\)"):
        lucid.ones(3, device=device) @ lucid.ones(4, device=device)
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x3 and 4\)"):
        lucid.ones(2, 3, device=device) @ lucid.ones(4, device=device)
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(3\)"):
        lucid.ones(2, 2, 3, device=device) @ lucid.ones(3, 3, 2, device=device)
    with pytest.raises(RuntimeError, match="at least 1D"):
        lucid.tensor(1.0, device=device) @ lucid.tensor(2.0, device=device)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        lucid.ones(2, 3, device=device) @ lucid.ones(3, 2, dtype=lucid.float64, device=device)
    with pytest.raises(NotImplementedError, match="matmul is not implemented for 'Bool'"):
        lucid.ones(2, 2, dtype=lucid.bool, device=device) @ lucid.ones(2, 2, dtype=lucid.bool, device=device)
    with pytest.raises(TypeError, match="matmul expects two Tensors"):
        lucid.matmul(lucid.ones(2, device=device), [1.0, 2.0])


def test_mixed_devices_raise(device):
    a, b = lucid.ones(2, device=device), lucid.ones(2, device=_other(device))
    for call in (lambda: a + b, lambda: a * b, lambda: a @ b, lambda: lucid.where(a > 0, a, b),
                 lambda: lucid.cat([a, b]), lambda: lucid.stack([a, b]), lambda: a.clamp(min=b),
                 lambda: lucid.where(b > 0, a, a), lambda: a.add_(b), lambda: a.copy_(b) if False else a.mul_(b)):
        with pytest.raises(RuntimeError, match="same device"):
            call()
    a.copy_(b)  # copy_ moves its source, as in torch


def test_mixed_devices_in_backward_gradient(device):
    x = lucid.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient is on"):
        (x * 2).backward(lucid.ones(2, device=_other(device)))


# --- indices ----------------------------------------------------------------------------------

@pytest.mark.parametrize("index", [3, -4, (0, 5), (slice(None), -6), [0, 3], [-4], "tensor", "tensor2d", "negative"])
def test_index_out_of_range(device, index):
    x = lucid.zeros(3, 5, device=device)
    if index == "tensor":
        index = lucid.tensor([0, 1, 3], device=device)
    elif index == "tensor2d":
        index = (slice(None), lucid.tensor([[0], [5]], device=device))
    elif index == "negative":
        index = lucid.tensor([-4], device=device)
    with pytest.raises(IndexError, match="out of bounds for dimension"):
        x[index]
    with pytest.raises(IndexError, match="out of bounds for dimension"):
        x[index] = 1.0
    assert not x.numpy().any()


def test_index_errors(device):
    x = lucid.zeros(3, 5, device=device)
    with pytest.raises(IndexError, match="tensors used as indices must be long, int or bool tensors"):
        x[lucid.tensor([0.0, 1.0], device=device)]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int or bool tensors"):
        x[[0.5]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many indices"):
        x[[[True] * 5] * 3, 0]
    with pytest.raises(IndexError, match=r"The shape of the mask \[5\] does not match"):
        x[lucid.ones(5, dtype=lucid.bool, device=device)]
    with pytest.raises(IndexError, match="out of bounds"):
        lucid.zeros(0, device=device)[0]


# --- autograd inputs --------------------------------------------------------------------------

def test_backward_errors(device):
    x = lucid.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \(4,\) and output\[0\] has a shape of \(3,\)"):
        (x * 2).backward(lucid.ones(4, device=device))
    with pytest.raises(RuntimeError, match="does not require grad"):
        lucid.ones(1, device=device).backward()
    assert x.grad is None


def test_assigning_a_wrong_grad(device):
    x = lucid.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"different size \(4,\)"):
        x.grad = lucid.ones(4, device=device)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = lucid.ones(3, dtype=lucid.float64, device=device)
    with pytest.raises(RuntimeError, match="different device"):
        x.grad = lucid.ones(3, device=_other(device))
    with pytest.raises(TypeError, match="Tensor or None"):
        x.grad = [1.0, 1.0, 1.0]
    assert x.grad is None
    x.grad = lucid.full((3,), 2.0, device=device)
    x.grad = None


# --- values, shapes and dims --------------------------------------------------------------------

def test_item_and_conversions(device):
    x = lucid.ones(3, device=device)
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to Scalar"):
        x.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][lucid.tensor(1.0, device=device)]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(lucid.tensor(1.0, device=device))
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        lucid.ones(1, device=device, requires_grad=True).numpy()
    assert lucid.tensor([[2.5]], device=device).item() == 2.5
    assert [1, 2][lucid.tensor(1, device=device)] == 2


def test_reshape_errors(device):
    x = lucid.ones(2, 3, device=device)
    for shape in [(4, 2), (-1, 4), (-1, -1), (0, -1), (7,)]:
        with pytest.raises(RuntimeError, match=r"shape '\[.*\]' is invalid for input of size 6"):
            x.reshape(*shape)
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        x.view(5)


@pytest.mark.parametrize(
    "call",
    [lambda x: x.sum(dim=3), lambda x: x.sum(dim=(0, -4)), lambda x: x.mean(2), lambda x: x.max(dim=-3),
     lambda x: x.min(5), lambda x: x.log_softmax(2), lambda x: x.transpose(0, 2), lambda x: x.permute(0, 2),
     lambda x: x.unsqueeze(3), lambda x: x.unsqueeze(-4), lambda x: x.squeeze(2), lambda x: x.flatten(0, 2),
     lambda x: lucid.cat([x, x], dim=2), lambda x: lucid.stack([x, x], dim=3)],
)
def test_out_of_range_dims(device, call):
    with pytest.raises(IndexError, match="Dimension out of range"):
        call(lucid.ones(2, 3, device=device))


def test_dim_errors(device):
    x = lucid.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        x.sum(dim=(0, -2))
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(1, 0)
    with pytest.raises(RuntimeError, match="not a permutation"):
        x.permute(0)
    with pytest.raises(TypeError, match="dim must be an int"):
        x.max(dim=(0, 1))
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim"):
        lucid.ones(0, device=device).max()
    with pytest.raises(RuntimeError, match=r"min\(\): Expected reduction dim"):
        lucid.ones(0, device=device).min()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        lucid.ones(0, 3, device=device).max(0)


def test_join_errors(device):
    a = lucid.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2"):
        lucid.cat([a, lucid.ones(2, 2, device=device)])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 and 1"):
        lucid.cat([a, lucid.ones(3, device=device)])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 0\) cannot be concatenated"):
        lucid.cat([lucid.tensor(1.0, device=device), lucid.tensor(2.0, device=device)])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3, 2\] at entry 1"):
        lucid.stack([a, lucid.ones(3, 2, device=device)])
    with pytest.raises(ValueError, match="non-empty"):
        lucid.cat([])
    with pytest.raises(TypeError, match="sequence of Tensors"):
        lucid.cat([a, [1.0, 2.0, 3.0]])


def test_op_argument_errors(device):
    x = lucid.ones(2, device=device)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        x.clamp()
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        lucid.where(lucid.ones(2, dtype=lucid.int64, device=device), x, x)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        lucid.tensor([1, 2], device=device).mean()
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        -(x > 0)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors is not supported"):
        (x > 0) - (x > 1)
    for call in (lambda: x - (x > 1), lambda: (x > 0) - 1, lambda: 2.5 - (x > 0), lambda: x - True):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
            call()
    with pytest.raises(NotImplementedError, match="pow is not implemented for 'Bool'"):
        (x > 0) ** (x > 1)
    with pytest.raises(NotImplementedError, match="clamp with a number is not implemented for 'Bool'"):
        (x > 0).clamp(min=True)
    assert ((x > 0) ** True).dtype is lucid.bool  # torch's exceptions to its own rule
    assert (x > 0).clamp(min=x > 1).dtype is lucid.bool
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        lucid.tensor([2], device=device) ** -2
    with pytest.raises(TypeError, match="unsupported operand"):
        x + None
    with pytest.raises(TypeError, match="unsupported operand"):
        x - "a"
    assert (x == None) is False  # noqa: E711 - Python falls back to identity, as with torch
    assert (x != None) is True  # noqa: E711


def test_construction_errors(device):
    with pytest.raises(TypeError, match="cannot make a tensor from"):
        lucid.tensor(["a", "b"], device=device)
    with pytest.raises(TypeError, match="cannot make a tensor from"):
        lucid.tensor(None, device=device)
    with pytest.raises(TypeError, match="dtype must be a lucid dtype"):
        lucid.tensor([1.0], dtype="float32", device=device)
    with pytest.raises(TypeError, match="to\\(\\) expected a device, a dtype or a Tensor"):
        lucid.ones(2, device=device).to(float)
    with pytest.raises(TypeError, match="dtype must be a lucid dtype"):
        lucid.zeros(2, dtype=int, device=device)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        lucid.ones(2, device="tpu")
    with pytest.raises(ValueError, match="sizes must be non-negative integers"):
        lucid.zeros(2, -1, device=device)
    with pytest.raises(ValueError, match="sizes must be non-negative integers"):
        lucid.ones(2.5, device=device)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        lucid.arange(0, 5, 0, device=device)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        lucid.arange(0, 5, -1, device=device)
    with pytest.raises(TypeError, match="unexpected keyword"):
        lucid.ones(2, device=device).to(memory_format=None)
