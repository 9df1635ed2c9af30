"""Checks that run on every process of a launched job (tests/test_distributed.py starts them).

    python -m lucid.distributed.run --nproc 2 tests/distributed_checks.py [CHECK ...]

Each check compares what the processes compute together with what one process computes
alone on the whole batch, and raises AssertionError on any process where they differ;
rank 0 prints ``PASS <check>`` after each. Batching the checks into one job per world size
keeps the start-up cost (importing, connecting) to one per world size.
"""

import os
import sys
import tempfile
import time

import numpy as np

import lucid
import lucid.distributed as dist
import lucid.nn.functional as F
from lucid import nn, optim
from lucid.distributed.optim import ZeroRedundancyOptimizer
from lucid.nn.parallel import DistributedDataParallel as DDP
from tolerances import close as parity, judge

BATCH = 16  # divisible by every world size tested (2 and 4)
CONFIGS = [("cpu", lucid.float64), ("cpu", lucid.float32)] + (
    [("gpu", lucid.float32)] if lucid.is_available("gpu") else [])
CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def rank():
    return dist.get_rank()


def world():
    return dist.get_world_size()


def host(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float64)


def close(actual, expected, what, truth=None):
    """float64: ``actual`` as ``expected`` to 1e-12. float32: both judged against ``truth``
    (float64, the same computation on the same float32 values), ``expected`` (one process,
    or the correctly rounded value) the ceiling of ``actual``'s error."""
    if expected.dtype is lucid.float64:
        parity(host(actual), host(expected), "float64")
        return
    assert truth is not None, f"{what}: a float32 result needs its float64 truth"
    judge(host(actual), host(expected), host(truth), expected.dtype.name, what=f"{what} on rank {rank()}")


def widened(t):
    """A float64 copy of ``t`` on the host, for the truth of a float32 computation."""
    return t.detach().to("cpu", lucid.float64).clone()


def same_bits(actual, expected, what):
    a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
    assert a.dtype == e.dtype and np.array_equal(a.view(np.uint8), e.view(np.uint8)), f"{what} on rank {rank()}"


def mlp(seed, device, dtype):
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3), nn.Tanh(), nn.Linear(3, 1)).to(device, dtype)


def data(device, dtype):
    lucid.manual_seed(100)
    x = lucid.randn(BATCH, 4, dtype=dtype, device=device)
    return x, (x.sum(dim=1, keepdim=True) * 0.5).tanh()


def local_slice(t):
    part = BATCH // world()
    return t[rank() * part:(rank() + 1) * part]


# --- collectives ------------------------------------------------------------------------
@check
def collectives():
    r, n = rank(), world()
    for device, dtype in CONFIGS:
        base = lucid.tensor([0.1, -2.0, 3.0], dtype=dtype, device=device)
        t = base * (r + 1)
        dist.all_reduce(t)
        host = base.cpu().numpy()
        want = host * 0
        for k in range(n):
            want = want + host.astype(np.float64) * (k + 1)
        close(t, lucid.tensor(want, dtype=dtype), f"all_reduce SUM {device} {dtype}", lucid.tensor(want))
        for op, fold in ((dist.ReduceOp.MAX, np.maximum), (dist.ReduceOp.MIN, np.minimum)):
            t = base * (r + 1)
            dist.all_reduce(t, op=op)
            want = host * 1
            for k in range(1, n):
                want = fold(want, host * (k + 1))
            same_bits(t, lucid.tensor(want, dtype=dtype), f"all_reduce {op.name} {device} {dtype}")
        t = base * (r + 1)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        want = host * 0
        for k in range(n):
            want = want + host.astype(np.float64) * (k + 1) / np.asarray(n, dtype=host.dtype)
        close(t, lucid.tensor(want, dtype=dtype), f"all_reduce AVG {device} {dtype}", lucid.tensor(want))
        # all_gather and broadcast move bits: -0.0 and every rank's values exactly
        mine = lucid.tensor([float(r), -0.0], dtype=dtype, device=device) / 3
        out = [lucid.zeros(2, dtype=dtype, device=device) for _ in range(n)]
        dist.all_gather(out, mine)
        for k in range(n):
            same_bits(out[k], lucid.tensor([float(k), -0.0], dtype=dtype, device=device) / 3, "all_gather")
        t = lucid.tensor([float(r), -0.0], dtype=dtype, device=device) / 7
        dist.broadcast(t, src=n - 1)
        same_bits(t, lucid.tensor([float(n - 1), -0.0], dtype=dtype, device=device) / 7, "broadcast")
    counts = lucid.tensor([r, 1])
    dist.all_reduce(counts)
    assert counts.tolist() == [n * (n - 1) // 2, n], counts
    objects = [None] * n
    dist.all_gather_object(objects, {"rank": r})
    assert objects == [{"rank": k} for k in range(n)], objects
    box = [f"from {r}"]
    dist.broadcast_object_list(box, src=1)
    assert box == ["from 1"], box
    dist.barrier()


# --- DistributedDataParallel --------------------------------------------------------------
def train(model, optimizer, x, y, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()


@check
def ddp_matches_one_process():
    makers = {
        "SGD-momentum": lambda params: optim.SGD(params, lr=0.1, momentum=0.9),
        "Adam": lambda params: optim.Adam(params, lr=0.01),
    }
    for device, dtype in CONFIGS:
        x, y = data(device, dtype)
        for name, make in makers.items():
            reference = mlp(0, device, dtype)
            train(reference, make(reference.parameters()), x, y, steps=3)
            # the truth: one process in float64 from the same values (mlp's are float32 draws)
            truth = mlp(0, "cpu", lucid.float64)
            train(truth, make(truth.parameters()), widened(x), widened(y), steps=3)
            model = DDP(mlp(rank(), device, dtype))  # rank 0's initial values reach every process
            train(model, make(model.parameters()), local_slice(x), local_slice(y), steps=3)
            for (pname, p), q, t in zip(model.module.named_parameters(), reference.parameters(), truth.parameters()):
                close(p, q, f"DDP {name} {device} {dtype} {pname}", t)


@check
def ddp_no_sync_accumulates():
    device, dtype = "cpu", lucid.float64
    x, y = data(device, dtype)
    half = BATCH // 2
    reference = mlp(0, device, dtype)
    for part in (slice(0, half), slice(half, BATCH)):
        F.mse_loss(reference(x[part]), y[part]).backward()
    model = DDP(mlp(0, device, dtype))
    xs = [x[:half], x[half:]]
    ys = [y[:half], y[half:]]
    part = half // world()
    mine = slice(rank() * part, (rank() + 1) * part)
    with model.no_sync():
        F.mse_loss(model(xs[0][mine]), ys[0][mine]).backward()
    local = model.module[0].weight.grad.clone()
    gathered = [lucid.zeros_like(local) for _ in range(world())]
    dist.all_gather(gathered, local)
    assert any(not np.array_equal(g.numpy(), local.numpy()) for g in gathered), "no_sync reduced the gradients"
    F.mse_loss(model(xs[1][mine]), ys[1][mine]).backward()
    for p, q in zip(model.module.parameters(), reference.parameters()):
        close(p.grad, q.grad, "no_sync then a synced backward")


@check
def ddp_refuses_different_shapes():
    width = 4 if rank() == 0 else 5
    try:
        DDP(nn.Linear(width, 2))
    except RuntimeError as error:
        assert "same model" in str(error) and "'weight'" in str(error), error
    else:
        raise AssertionError("DDP accepted modules of different shapes")


@check
def ddp_sparse_embedding():
    for device, dtype in CONFIGS:
        rows = np.random.default_rng(7).integers(0, 20, size=BATCH)
        idx = lucid.tensor(rows.tolist(), device=device)
        lucid.manual_seed(5)
        target = lucid.randn(BATCH, 3, dtype=dtype, device=device)

        def table(seed):
            lucid.manual_seed(seed)
            return nn.Embedding(20, 3, sparse=True).to(device, dtype)

        reference = table(0)
        opt = optim.SparseAdam(reference.parameters(), lr=0.1)
        truth = nn.Embedding.from_pretrained(widened(reference.weight), freeze=False, sparse=True)
        topt = optim.SparseAdam(truth.parameters(), lr=0.1)
        model = DDP(table(rank()))
        zopt = optim.SparseAdam(model.parameters(), lr=0.1)
        for _ in range(3):
            for m, o, goal, where in ((reference, opt, target, idx), (truth, topt, widened(target), idx.cpu())):
                o.zero_grad()
                F.mse_loss(m(where), goal).backward()
                o.step()
            zopt.zero_grad()
            F.mse_loss(model(local_slice(idx)), local_slice(target)).backward()
            grad = model.module.weight.grad
            assert grad.is_sparse and grad.is_coalesced(), "the reduced gradient must stay row-sparse"
            zopt.step()
        close(model.module.weight, reference.weight, f"sparse embedding {device} {dtype}", truth.weight)


# --- ZeroRedundancyOptimizer ----------------------------------------------------------------
def zero_run(optimizer_class, scheduler=None, steps=6, device="cpu", dtype=lucid.float64, **defaults):
    """A ZeRO run and an unsharded one on the same full batch: both models and optimizers."""
    x, y = data(device, dtype)
    reference = mlp(0, device, dtype)
    single = optimizer_class(reference.parameters(), **defaults)
    model = mlp(0, device, dtype)
    zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class, **defaults)
    schedulers = [scheduler(single), scheduler(zero)] if scheduler else []
    for _ in range(steps):
        for m, o in ((reference, single), (model, zero)):
            o.zero_grad()
            F.mse_loss(m(x), y).backward()
            o.step()
        for s in schedulers:
            s.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        same_bits(p, q, f"ZeRO {optimizer_class.__name__} parameters")
    return x, y, reference, single, model, zero, schedulers


def equal_state_dicts(actual, expected, what):
    assert actual["param_groups"] == expected["param_groups"], (what, actual["param_groups"], expected["param_groups"])
    assert sorted(actual["state"]) == sorted(expected["state"]), what
    for index, state in expected["state"].items():
        assert sorted(actual["state"][index]) == sorted(state), what
        for key, value in state.items():
            if isinstance(value, lucid.Tensor):
                same_bits(actual["state"][index][key], value, f"{what} state {index} {key}")
            else:
                assert actual["state"][index][key] == value, (what, index, key)


@check
def zero_adam_shards_state():
    for device, dtype in CONFIGS[1:]:  # float32 on each device (float64: the next check)
        zero_run(optim.Adam, steps=3, device=device, dtype=dtype, lr=0.01)
    *_, model, zero, _ = zero_run(optim.Adam, lr=0.01)
    params = list(model.parameters())
    mine = [p for g in zero.optim.param_groups for p in g["params"]]
    # only this process's shard has state, and the shards cover every parameter once
    assert len(zero.optim.state) == len(mine)
    owners = [0] * len(params)
    for k in range(world()):
        for p in [p for g in zero._partition()[k] for p in g["params"]]:
            owners[[id(q) for q in params].index(id(p))] += 1
    assert owners == [1] * len(params), owners


@check
def zero_adamw_scheduler_state_dict_resume():
    def cosine(o):
        return optim.lr_scheduler.CosineAnnealingLR(o, T_max=8)

    x, y, reference, single, model, zero, (ref_sched, zero_sched) = zero_run(
        optim.AdamW, scheduler=cosine, lr=0.05, weight_decay=0.1)
    snapshot = single.state_dict()
    zero.consolidate_state_dict(to=0)
    if rank() == 0:
        consolidated = zero.state_dict()
        equal_state_dicts(consolidated, single.state_dict(), "consolidated ZeRO state dict")
        # a checkpoint file of it (lucid.save), resumed in one process: bit for bit the unsharded run
        handle, path = tempfile.mkstemp(suffix=".safetensors")
        os.close(handle)
        try:
            lucid.save({"model": model.state_dict(), "optimizer": consolidated,
                        "scheduler": zero_sched.state_dict()}, path)
            checkpoint = lucid.load(path)
        finally:
            os.remove(path)
        equal_state_dicts(checkpoint["optimizer"], single.state_dict(), "checkpoint of the consolidated state dict")
        resumed = mlp(0, "cpu", lucid.float64)
        resumed.load_state_dict(checkpoint["model"])
        opt = optim.AdamW(resumed.parameters(), lr=0.05, weight_decay=0.1)
        opt.load_state_dict(checkpoint["optimizer"])
        sched = cosine(opt)
        sched.load_state_dict(checkpoint["scheduler"])
        for m, o, s in ((reference, single, ref_sched), (resumed, opt, sched)):
            for _ in range(3):
                o.zero_grad()
                F.mse_loss(m(x), y).backward()
                o.step()
                s.step()
        for p, q in zip(resumed.parameters(), reference.parameters()):
            same_bits(p, q, "resumed from the consolidated state dict")
    else:
        try:
            zero.state_dict()
        except RuntimeError as error:
            assert "has not been consolidated" in str(error)
        else:
            raise AssertionError("state_dict() on a rank that was not consolidated to")
    # an unsharded state dict loads into a ZeRO optimizer on every process
    fresh = mlp(0, "cpu", lucid.float64)
    for p, q in zip(fresh.parameters(), model.parameters()):
        p.data = q.detach().clone()
    loaded = ZeroRedundancyOptimizer(fresh.parameters(), optim.AdamW, lr=0.5)
    loaded.load_state_dict(snapshot)
    assert loaded.param_groups[0]["lr"] == snapshot["param_groups"][0]["lr"]
    loaded.consolidate_state_dict(to=world() - 1)
    if rank() == world() - 1:
        equal_state_dicts(loaded.state_dict(), snapshot, "ZeRO loaded from an unsharded dict")


# --- collectives that disagree -----------------------------------------------------------
def raises_on_this_rank(call, *fragments):
    """``call()`` must raise DistBackendError naming every fragment; afterwards the group
    still works (nothing was exchanged) and gives the right numbers."""
    try:
        call()
    except dist.DistBackendError as error:
        for fragment in fragments:
            assert fragment in str(error), (fragment, str(error))
        assert f"on rank {rank()} of {world()}" in str(error), str(error)
    else:
        raise AssertionError(f"no DistBackendError on rank {rank()}; expected {fragments}")
    t = lucid.tensor([1.0, float(rank())])
    dist.all_reduce(t)
    assert t.tolist() == [world(), world() * (world() - 1) / 2], t


def on_rank0(a, b):
    """``a`` on rank 0, ``b`` on the others."""
    return a if rank() == 0 else b


def gather(t):
    dist.all_gather([lucid.zeros_like(t) for _ in range(world())], t)


def others(call):
    """How the message names what every rank but 0 called."""
    return ("rank 1 called " if world() == 2 else f"ranks {', '.join(map(str, range(1, world())))} called ") + call


@check
def collectives_that_disagree():
    f32, f64 = lucid.float32, lucid.float64
    sum_, max_ = dist.ReduceOp.SUM, dist.ReduceOp.MAX
    # the five cases
    raises_on_this_rank(lambda: dist.all_reduce(lucid.ones(on_rank0(3, 5))), "disagree on the shape",
                        "rank 0 called all_reduce(float32[3], op=SUM)", others("all_reduce(float32[5], op=SUM)"))
    raises_on_this_rank(lambda: dist.all_reduce(on_rank0(lucid.ones(4, dtype=f32), lucid.ones(2, dtype=f64))),
                        "disagree on the dtype", "rank 0 called all_reduce(float32[4], op=SUM)",
                        others("all_reduce(float64[2], op=SUM)"))
    raises_on_this_rank(lambda: on_rank0(dist.broadcast, dist.all_reduce)(lucid.ones(4), *on_rank0((0,), ())),
                        "disagree on the collective", "rank 0 called broadcast(float32[4], src=0)",
                        others("all_reduce(float32[4], op=SUM)"))
    raises_on_this_rank(lambda: dist.broadcast(lucid.ones(4), src=on_rank0(0, 1)), "disagree on the root",
                        "rank 0 called broadcast(float32[4], src=0)", others("broadcast(float32[4], src=1)"))
    raises_on_this_rank(lambda: on_rank0(dist.all_reduce, gather)(lucid.ones(4)), "disagree on the collective",
                        "rank 0 called all_reduce(float32[4], op=SUM)", others("all_gather(float32[4])"))
    # the same family on every other collective
    raises_on_this_rank(lambda: dist.all_reduce(lucid.ones(2), op=on_rank0(sum_, max_)), "disagree on the op",
                        "all_reduce(float32[2], op=SUM)", "all_reduce(float32[2], op=MAX)")
    raises_on_this_rank(lambda: dist.all_reduce(on_rank0(lucid.ones(2, dtype=f64), lucid.tensor([1, 2]))),
                        "disagree on the dtype (float64 against int64)")
    raises_on_this_rank(lambda: dist.all_reduce_coalesced([lucid.ones(2), lucid.ones(on_rank0(3, 4))]),
                        "disagree on the shape of tensor 1 (float32[3] against float32[4])",
                        "all_reduce_coalesced([float32[2], float32[3]], op=SUM)")
    raises_on_this_rank(lambda: dist.all_reduce_coalesced([lucid.ones(2)] * on_rank0(2, 1)),
                        "disagree on the number of tensors")
    raises_on_this_rank(lambda: dist.all_reduce_coalesced(on_rank0([], [lucid.ones(1)])),
                        "disagree on the number of tensors", "rank 0 called all_reduce_coalesced(op=SUM)")
    raises_on_this_rank(lambda: gather(lucid.ones(on_rank0(3, 5))), "disagree on the shape",
                        "rank 0 called all_gather(float32[3])")
    raises_on_this_rank(lambda: gather(lucid.ones(2, dtype=on_rank0(f32, f64))), "disagree on the dtype",
                        others("all_gather(float64[2])"))
    raises_on_this_rank(lambda: dist.broadcast(lucid.ones(on_rank0((2, 3), (3, 2))), src=0),
                        "disagree on the shape", "broadcast(float32[2, 3], src=0)", "broadcast(float32[3, 2], src=0)")
    raises_on_this_rank(lambda: dist.broadcast(lucid.ones(3, dtype=on_rank0(f32, f64)), src=0),
                        "disagree on the dtype")
    raises_on_this_rank(lambda: on_rank0(dist.barrier, lambda: dist.all_reduce(lucid.ones(1)))(),
                        "disagree on the collective", "rank 0 called barrier()")
    raises_on_this_rank(lambda: on_rank0(lambda: dist.all_gather_object([None] * world(), 1),
                                         lambda: dist.broadcast_object_list([1], src=0))(),
                        "disagree on the collective", "rank 0 called all_gather_object()",
                        others("broadcast_object_list(src=0)"))
    raises_on_this_rank(lambda: dist.broadcast_object_list([rank()], src=on_rank0(0, 1)), "disagree on the root",
                        "broadcast_object_list(src=0)", "broadcast_object_list(src=1)")


@check
def ddp_and_zero_that_disagree():
    lucid.manual_seed(0)
    x = lucid.randn(4, 3)

    def backward(model):
        model(x).sum().backward()

    # buckets of different sizes (bucket_cap_mb differs): one bucket against one per parameter
    model = DDP(nn.Linear(3, 2), bucket_cap_mb=on_rank0(25, 1e-6))
    raises_on_this_rank(lambda: backward(model), "DistributedDataParallel's gradient reduction",
                        "disagree on how the tensors are grouped")
    # a model converted to float64 on rank 0 only, after DDP took it
    model = DDP(nn.Linear(3, 2))
    if rank() == 0:
        model.double()
    raises_on_this_rank(lambda: backward(model) if rank() else model(x.double()).sum().backward(),
                        "disagree on the dtype of tensor 0 (float64 against float32)")
    # a backward through DDP on rank 0 against an all_reduce on the others
    model = DDP(nn.Linear(3, 2))
    raises_on_this_rank(lambda: on_rank0(lambda: backward(model), lambda: dist.all_reduce(lucid.ones(2)))(),
                        "disagree on the collective", "rank 0 called DistributedDataParallel's gradient reduction(")
    # buffers broadcast on rank 0 only (broadcast_buffers differs)
    model = DDP(nn.BatchNorm1d(3), broadcast_buffers=rank() == 0)
    raises_on_this_rank(lambda: backward(model), "disagree on the collective",
                        "rank 0 called DistributedDataParallel's broadcast of buffers(")
    # ZeRO: a parameter of another shape on rank 0, found before the step changes anything
    w = nn.Parameter(lucid.ones(on_rank0(3, 4)))
    zero = ZeroRedundancyOptimizer([w, nn.Parameter(lucid.ones(2))], optim.Adam, lr=0.1)
    w.sum().backward()
    raises_on_this_rank(zero.step, "ZeroRedundancyOptimizer's exchange of shards", "disagree on the shape of tensor 0")
    assert w.tolist() == [1.0] * w.numel() and not zero.optim.state, "the refused step changed the parameters"
    zero = ZeroRedundancyOptimizer([nn.Parameter(lucid.ones(2))], optim.SGD, lr=0.1)
    raises_on_this_rank(lambda: zero.consolidate_state_dict(to=on_rank0(0, 1)), "disagree on the root",
                        "ZeroRedundancyOptimizer.consolidate_state_dict(to=0)")


def main(names):
    dist.init_process_group("ring", timeout=60)
    for name in names or list(CHECKS):
        start = time.perf_counter()
        CHECKS[name]()
        dist.barrier()
        if rank() == 0:
            print(f"PASS {name} (world size {world()}) in {time.perf_counter() - start:.1f} s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
