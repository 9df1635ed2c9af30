"""lucid.distributed, DistributedDataParallel and ZeroRedundancyOptimizer.

The multi-process tests start real processes on 127.0.0.1 (MLX's ring backend), each run
bounded in time: one job per world size runs every check of tests/distributed_checks.py,
so that start-up is paid once per world size. The failure tests start processes by hand
(MLX_RANK and MLX_HOSTFILE, as mlx.launch sets them) to see each process's own error.
"""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import lucid
import lucid.distributed as dist
from lucid import nn, optim
from lucid.distributed import run as launcher
from lucid.distributed.optim import ZeroRedundancyOptimizer
from lucid.nn.parallel import DistributedDataParallel as DDP

pytest.importorskip("mlx.core")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = os.path.join(ROOT, "tests", "distributed_checks.py")
BOUND = 60  # seconds: a failure must end every process within it


def _env(tmp):
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in ("MLX_RANK", "MLX_HOSTFILE", "OMP_NUM_THREADS"):
        env.pop(name, None)
    return env


def _launch(tmp_path, *args, timeout=240):
    """Run the launcher; returns (exit status, output, seconds). TMPDIR is a fresh directory."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "lucid.distributed.run", *args], cwd=ROOT, env=_env(tmp),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    assert list(tmp.iterdir()) == [], "the launcher left files in TMPDIR"
    return done.returncode, done.stdout + done.stderr, elapsed


@pytest.fixture(autouse=True)
def _no_group_left():
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


# --- several processes ----------------------------------------------------------------------
def _check_names():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        import distributed_checks
    finally:
        sys.path.pop(0)
    return list(distributed_checks.CHECKS)


@pytest.mark.parametrize("nproc", [2, 4])
def test_processes_train_as_one(tmp_path, nproc):
    # the sparse embedding on 2 processes only (the case): each job is one start-up
    names = [n for n in _check_names() if nproc == 2 or n != "ddp_sparse_embedding"]
    status, output, _ = _launch(tmp_path, "--nproc", str(nproc), CHECKS, *names)
    assert status == 0, output
    for name in names:
        assert f"PASS {name} (world size {nproc})" in output, output


def _script(tmp_path, body):
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_launcher_fails_when_a_rank_raises(tmp_path):
    script = _script(tmp_path, """
        import lucid, lucid.distributed as dist
        dist.init_process_group("ring")
        t = lucid.ones(3)
        dist.all_reduce(t)
        if dist.get_rank() == 1:
            raise ValueError("rank 1 fails on purpose")
        for _ in range(1000):
            dist.all_reduce(t)
    """)
    status, output, elapsed = _launch(tmp_path, "--nproc", "2", script, timeout=BOUND + 30)
    assert status == 1, output
    assert "ValueError: rank 1 fails on purpose" in output
    assert "rank 1 exited with status 1" in output
    assert elapsed < BOUND


def test_collectives_that_disagree_fail_the_job_on_every_rank(tmp_path):
    # float32[4] against float64[2]: the same bytes, which MLX summed into nonsense (exit 0)
    script = _script(tmp_path, """
        import lucid, lucid.distributed as dist
        dist.init_process_group("ring")
        rank = dist.get_rank()
        dist.all_reduce(lucid.ones(4) if rank == 0 else lucid.ones(2, dtype=lucid.float64))
        print("rank", rank, "went on", flush=True)
    """)
    status, output, elapsed = _launch(tmp_path, "--nproc", "2", script, timeout=BOUND + 30)
    assert status == 1 and "went on" not in output, output
    for rank in (0, 1):
        assert (f"lucid.distributed.DistBackendError: all_reduce on rank {rank} of 2: the processes called "
                "collectives that disagree on the dtype (float32 against float64): rank 0 called "
                "all_reduce(float32[4], op=SUM); rank 1 called all_reduce(float64[2], op=SUM)") in output, output
        assert f"rank {rank} exited with status 1" in output, output
    assert elapsed < BOUND


def test_a_disagreement_names_each_call_and_what_differs():
    from lucid.distributed._agreement import Call, disagreement

    many = Call("DDP", op="AVG", tensors=tuple(("float32", (n,)) for n in range(6)), layout=((0,) * 6,))
    other = Call("DDP", op="AVG", tensors=many.tensors[:5] + (("float64", (5,)),), layout=((0,) * 6,))
    calls = [Call.decode(c.encode()) for c in (many, other, other, many)]
    assert disagreement(calls).startswith(
        "the processes called collectives that disagree on the dtype of tensor 5 (float32 against float64): "
        "ranks 0, 3 called DDP([float32[0], float32[1], float32[2], float32[3], ... (6 tensors)], op=AVG, "
        "grouped as [[0, 0, 0, 0, 0, 0]]); ranks 1, 2 called DDP(")
    again = Call("DDP", op="AVG", tensors=tuple(("float32", (n,)) for n in range(6)), layout=((0,) * 6,))
    assert many.fingerprint() == again.fingerprint() != other.fingerprint()


def test_launcher_with_a_hostfile_passes_arguments_and_status(tmp_path):
    script = _script(tmp_path, """
        import os, sys, lucid.distributed as dist
        dist.init_process_group("ring")
        print("rank", dist.get_rank(), "of", dist.get_world_size(), "args", sys.argv[1:],
              "threads", os.environ.get("OMP_NUM_THREADS"), flush=True)
        dist.barrier()
        sys.exit(3 if dist.get_rank() == 0 else 0)
    """)
    # a hostfile as for several machines: entries named 127.0.0.1 run here, without ssh
    hostfile = tmp_path / "hosts.json"
    hostfile.write_text(json.dumps([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2))
    status, output, _ = _launch(tmp_path, "--hostfile", str(hostfile), script, "--flag", "x")
    for rank in (0, 1):  # the script's arguments, and one BLAS thread per process (as torchrun)
        assert f"rank {rank} of 2 args ['--flag', 'x'] threads 1" in output, output
    assert status == 3 and "rank 0 exited with status 3" in output


def test_launcher_one_process(tmp_path):
    script = _script(tmp_path, """
        import lucid, lucid.distributed as dist
        dist.init_process_group("ring")
        t = lucid.tensor([2.0])
        dist.all_reduce(t)
        print("world", dist.get_world_size(), t.item(), flush=True)
    """)
    status, output, _ = _launch(tmp_path, "--nproc", "1", script)
    assert status == 0 and "world 1 2.0" in output, output


def _by_hand(tmp_path, body, timeout_s):
    """Start two processes of ``body`` with a hostfile of our own; returns both Popen objects."""
    script = _script(tmp_path, body)
    port = launcher.free_ports(2)
    hostfile = tmp_path / "hosts.json"
    hostfile.write_text(json.dumps([[f"127.0.0.1:{port}"], [f"127.0.0.1:{port + 1}"]]))
    env = _env(tmp_path)
    env.update(MLX_HOSTFILE=str(hostfile), LUCID_TEST_TIMEOUT=str(timeout_s))
    return [subprocess.Popen([sys.executable, script], env=dict(env, MLX_RANK=str(rank)), cwd=ROOT,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for rank in (0, 1)]


def _finish(process, timeout):
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"a process did not end within {timeout} s: {out}{err}")
    return process.returncode, out + err


def test_a_killed_rank_makes_the_others_raise(tmp_path):
    survivor, victim = _by_hand(tmp_path, """
        import os, signal, lucid, lucid.distributed as dist
        dist.init_process_group("ring")
        t = lucid.ones(1000)
        dist.all_reduce(t)
        if dist.get_rank() == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        for _ in range(100000):
            dist.all_reduce(t)
    """, 60)
    start = time.monotonic()
    status, output = _finish(survivor, BOUND)
    assert time.monotonic() - start < BOUND
    victim.wait(timeout=BOUND)
    assert status == 1, output
    assert "lucid.distributed.DistBackendError: all_reduce failed on rank 0 of 2" in output, output
    assert "Another process of the job has died or raised" in output


def test_the_watchdog_ends_a_wait_for_a_stuck_peer(tmp_path):
    waiting, stuck = _by_hand(tmp_path, """
        import os, time, lucid, lucid.distributed as dist
        dist.init_process_group("ring", timeout=float(os.environ["LUCID_TEST_TIMEOUT"]))
        if dist.get_rank() == 1:
            time.sleep(30)  # alive, but never joins the collective
        dist.all_reduce(lucid.ones(3))
    """, 2)
    start = time.monotonic()
    status, output = _finish(waiting, BOUND)
    elapsed = time.monotonic() - start
    stuck.kill()
    stuck.communicate()
    assert status == 1, output
    assert "all_reduce on rank 0 of 2 waited more than 2 s" in output, output
    assert elapsed < 30


def test_init_ends_when_a_peer_never_comes(tmp_path):
    alone, absent = _by_hand(tmp_path, """
        import os, sys, lucid.distributed as dist
        if os.environ["MLX_RANK"] == "1":
            sys.exit(0)  # never joins
        dist.init_process_group("ring", timeout=float(os.environ["LUCID_TEST_TIMEOUT"]))
    """, 2)
    status, output = _finish(alone, BOUND)
    absent.communicate(timeout=BOUND)
    assert status == 1, output
    assert "Timeout (0:00:02)!" in output and "in connect_to_every_process" in output, output
    assert "in init_process_group" in output, output


# --- one process: the API and its errors ----------------------------------------------------
def test_not_initialised_raises():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier, lambda: dist.all_reduce(lucid.ones(1)),
                 lambda: DDP(nn.Linear(2, 1)), lambda: ZeroRedundancyOptimizer([nn.Parameter(lucid.ones(1))], optim.SGD, lr=1)):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


def test_init_checks_its_arguments(monkeypatch):
    monkeypatch.delenv("MLX_RANK", raising=False)
    monkeypatch.delenv("MLX_HOSTFILE", raising=False)
    with pytest.raises(ValueError, match="backend must be one of 'ring', 'mpi', 'any'"):
        dist.init_process_group("nccl2")
    with pytest.raises(ValueError, match="timeout must be a positive"):
        dist.init_process_group("any", timeout=0)
    with pytest.raises(RuntimeError, match="needs MLX_RANK and MLX_HOSTFILE.*lucid.distributed.run"):
        dist.init_process_group("ring")
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="world_size=2, but the launcher started 1"):
        dist.init_process_group("any", world_size=2)
    dist.init_process_group("any", world_size=1, rank=0)
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("any")


def test_without_mlx_the_error_says_how_to_install(monkeypatch):
    from lucid._backend import collective

    monkeypatch.setattr(collective, "mx", None)
    assert not dist.is_available()
    with pytest.raises(RuntimeError, match=r"MLX is not installed: pip install 'lucid-autograd\[mlx\]'"):
        dist.init_process_group("any")


def test_collective_arguments_are_checked():
    dist.init_process_group("any")
    with pytest.raises(TypeError, match="must be a lucid Tensor"):
        dist.all_reduce([1.0])
    with pytest.raises(TypeError, match="ReduceOp.AVG needs floating-point"):
        dist.all_reduce(lucid.tensor([1, 2]), op=dist.ReduceOp.AVG)
    with pytest.raises(TypeError, match="op must be a lucid.distributed.ReduceOp"):
        dist.all_reduce(lucid.ones(1), op="sum")
    with pytest.raises(TypeError, match="dense Tensor"):
        dist.all_reduce(lucid.sparse_coo_tensor([[0]], [[1.0]], (2, 1)))
    with pytest.raises(ValueError, match="world_size=1 tensors"):
        dist.all_gather([lucid.ones(1), lucid.ones(1)], lucid.ones(1))
    with pytest.raises(ValueError, match="tensor_list\\[0\\] must have tensor's shape"):
        dist.all_gather([lucid.ones(2)], lucid.ones(1))
    with pytest.raises(ValueError, match="src must be a rank from 0 to 0"):
        dist.broadcast(lucid.ones(1), src=1)
    with pytest.raises(ValueError, match="one process group"):
        dist.barrier(group=object())
    work = dist.all_reduce(lucid.ones(1), async_op=True)
    assert work.wait() and work.is_completed()


def test_all_reduce_writes_in_place_on_both_devices(device):
    dist.init_process_group("any")
    for dtype in (lucid.float32, lucid.float64, lucid.int64):
        w = nn.Parameter(lucid.tensor([1.0, -2.0], device=device).to(dtype)) if dtype.is_floating_point else None
        t = lucid.tensor([3, -4], device=device).to(dtype)
        before = t._version
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        assert t.tolist() == [3, -4] and t.dtype is dtype and t.device == device and t._version == before + 1
        if w is not None:  # a parameter that requires grad is written too, as in torch
            dist.broadcast(w, src=0)
            assert w.requires_grad and w.tolist() == [1.0, -2.0]


def test_ddp_in_one_process_leaves_gradients_as_they_are():
    dist.init_process_group("any")
    lucid.manual_seed(0)
    plain = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    model = DDP(plain, bucket_cap_mb=1e-5)  # a bucket per parameter
    assert model.module is plain and list(model.state_dict())[0] == "module.0.weight"
    x = lucid.randn(5, 3)
    (model(x) ** 2).sum().backward()
    grads = [p.grad.clone() for p in plain.parameters()]
    for p in plain.parameters():
        p.grad = None
    (plain(x) ** 2).sum().backward()
    for g, p in zip(grads, plain.parameters()):
        assert g.tolist() == p.grad.tolist()
    assert len(model._buckets) == 4


def test_ddp_checks_its_arguments():
    dist.init_process_group("any")
    with pytest.raises(TypeError, match="wraps a lucid.nn.Module"):
        DDP(lambda x: x)
    with pytest.raises(ValueError, match="device_ids must be None"):
        DDP(nn.Linear(2, 1), device_ids=[0])
    with pytest.raises(ValueError, match="bucket_cap_mb must be a positive number"):
        DDP(nn.Linear(2, 1), bucket_cap_mb=0)
    frozen = nn.Linear(2, 1).requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        DDP(frozen)


def test_zero_checks_its_arguments():
    dist.init_process_group("any")
    w = nn.Parameter(lucid.ones(2))
    with pytest.raises(TypeError, match="optimizer_class must be a lucid.optim.Optimizer subclass"):
        ZeroRedundancyOptimizer([w], object, lr=0.1)
    with pytest.raises(ValueError, match="overlap_with_ddp=True is not supported"):
        ZeroRedundancyOptimizer([w], optim.SGD, overlap_with_ddp=True, lr=0.1)
    zero = ZeroRedundancyOptimizer([w], optim.Adam, lr=0.1)
    with pytest.raises(RuntimeError, match="has not been consolidated on this rank"):
        zero.state_dict()
    w.sum().backward()
    zero.step()
    before = zero.optim.state_dict()
    bad = optim.Adam([w], lr=0.1).state_dict()
    bad["state"] = {0: {"step": 1, "exp_avg": lucid.ones(3), "exp_avg_sq": lucid.ones(3)}}
    with pytest.raises(ValueError, match="refused on rank 0.*shape"):
        zero.load_state_dict(bad)
    after = zero.optim.state_dict()
    assert after["state"][0]["exp_avg"].tolist() == before["state"][0]["exp_avg"].tolist()
    assert after["state"][0]["step"] == 1


def test_zero_partition_is_torchs_greedy_by_size(monkeypatch):
    dist.init_process_group("any")
    params = [nn.Parameter(lucid.zeros(n)) for n in (3, 10, 1, 7, 5)]
    zero = ZeroRedundancyOptimizer(params, optim.SGD, lr=0.1)
    monkeypatch.setattr(zero, "world_size", 2)
    zero._partition_cache = None
    sizes = [[p.numel() for g in groups for p in g["params"]] for groups in zero._partition()]
    assert sizes == [[10, 3], [7, 5, 1]]  # largest first, each to the rank with fewer elements


@pytest.fixture
def port_in_use():
    """A port on 127.0.0.1 that a socket listens on (with SO_REUSEADDR, as a server would)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", launcher.free_ports(3) + 1))
    server.listen()
    yield server.getsockname()[1]
    server.close()


def test_a_port_in_use_is_named_by_the_launcher(tmp_path, port_in_use):
    script = _script(tmp_path, "print('started', flush=True)\n")
    status, output, _ = _launch(tmp_path, "--nproc", "2", "--port", str(port_in_use - 1), script)
    assert status == 1 and "started" not in output, output
    assert (f"port {port_in_use} on 127.0.0.1 is in use (the 2 processes listen on ports {port_in_use - 1} to "
            f"{port_in_use}, one each): pass another --port, or leave --port out") in output, output
    again = tmp_path / "again"
    again.mkdir()
    status, output, _ = _launch(again, "--nproc", "2", "--port", "65535", script)
    assert status == 1 and "--port 65535 leaves no room for 2 consecutive ports" in output, output


def test_init_names_the_address_it_cannot_listen_on(tmp_path, port_in_use):
    # a hostfile of one's own (or mlx.launch's) whose port is taken: MLX says only "error: 98"
    hostfile = tmp_path / "hosts.json"
    hostfile.write_text(json.dumps([[f"127.0.0.1:{port_in_use}"], [f"127.0.0.1:{port_in_use + 1}"]]))
    script = _script(tmp_path, """
        import lucid.distributed as dist
        dist.init_process_group("ring", timeout=20)
    """)
    env = dict(_env(tmp_path), MLX_HOSTFILE=str(hostfile), MLX_RANK="0")
    done = subprocess.run([sys.executable, script], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=BOUND)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"RuntimeError: init_process_group(backend='ring'): this process (MLX_RANK=0) could not listen on "
            f"127.0.0.1:{port_in_use}: Address already in use (errno 98). Another program or job holds that "
            "port: start the job on other ports") in done.stderr, done.stderr


def test_init_refuses_a_launcher_environment_that_is_not_one(tmp_path):
    # MLX took a rank of "x" or "-1" for some rank and waited for peers that never came
    hostfile = tmp_path / "hosts.json"
    hostfile.write_text(json.dumps([["127.0.0.1:1"], ["127.0.0.1:2"]]))
    (tmp_path / "dict.json").write_text('{"hosts": 2}')
    (tmp_path / "garbage.json").write_text("not json")
    cases = [("x", hostfile, "MLX_RANK must be an integer from 0 to 1 (MLX_HOSTFILE lists 2 processes), got 'x'"),
             ("-1", hostfile, "MLX_RANK must be an integer from 0 to 1 (MLX_HOSTFILE lists 2 processes), got '-1'"),
             ("2", hostfile, "MLX_RANK must be an integer from 0 to 1 (MLX_HOSTFILE lists 2 processes), got '2'"),
             ("0", tmp_path / "missing.json", "missing.json' cannot be read (No such file or directory)"),
             ("0", tmp_path / "dict.json", "dict.json' must be a JSON list with one entry per process"),
             ("0", tmp_path / "garbage.json", "garbage.json' is not JSON")]
    script = _script(tmp_path, """
        import json, os, sys, lucid.distributed as dist
        for backend in ("ring", "any"):
            for rank, path in json.loads(sys.argv[1]):
                os.environ.update(MLX_RANK=rank, MLX_HOSTFILE=path)
                try:
                    dist.init_process_group(backend, timeout=5)
                except ValueError as error:
                    print(error, flush=True)
                assert not dist.is_initialized()
    """)
    done = subprocess.run([sys.executable, script, json.dumps([(rank, str(path)) for rank, path, _ in cases])],
                          env=_env(tmp_path), cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=BOUND)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 * len(cases), done.stdout
    for line, (backend, (_, _, expected)) in zip(lines, [(b, c) for b in ("ring", "any") for c in cases]):
        assert line.startswith(f"init_process_group(backend={backend!r}): ") and expected in line, line


def test_free_ports_are_consecutive_and_free():
    start = launcher.free_ports(4)
    assert all(launcher._port_free(start + i) for i in range(4))


def test_the_example_learns_on_two_processes(tmp_path):
    example = os.path.join(ROOT, "examples", "train_distributed.py")
    status, output, _ = _launch(tmp_path, "--nproc", "2", example, "--steps", "100")
    assert status == 0, output
    lines = [line for line in output.splitlines() if line.startswith(("step", "done"))]
    first, last = lines[0].split(), lines[-2].split()
    assert float(last[3]) < float(first[3]) / 2 and float(last[5]) > 0.9, output
    assert lines[-1] == "done on 2 processes: rank 0 kept moments for 1 of 4 parameters; consolidated 4", output


def test_queue_callback_runs_once_the_gradients_are_in():
    from lucid._autograd import queue_callback, record

    w = nn.Parameter(lucid.tensor([1.0, 2.0]))
    seen = []

    def backward(grad):
        queue_callback(lambda: seen.append(w.grad.tolist()))
        return (grad,)

    out = record((w * 3).detach(), "Probe", (w * 3,), backward)
    (out * out).sum().backward()
    assert seen == [[18.0, 36.0]]  # the leaf's gradient was complete when the callback ran
    with pytest.raises(RuntimeError, match="only be called during a backward pass"):
        queue_callback(lambda: None)


def _public(obj):
    for name in sorted(vars(obj)):
        if not name.startswith("_") and callable(getattr(obj, name)):
            yield name, getattr(obj, name)


@pytest.mark.parametrize("name", dist.__all__)
def test_every_public_name_has_examples(name):
    import inspect
    import re

    examples = re.compile(r"^Examples\n-{8,}\n(?:(?!>>> ).*\n)*?>>> ", re.MULTILINE)
    obj = getattr(dist, name)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return  # default_pg_timeout, a value
    members = [(name, obj)]
    if name == "init_process_group":  # the two classes that live elsewhere, once
        members += [("DDP", DDP), ("ZeRO", ZeroRedundancyOptimizer)]
        members += [(f"DDP.{n}", m) for n, m in _public(DDP)] + [(f"ZeRO.{n}", m) for n, m in _public(ZeroRedundancyOptimizer)]
    for label, member in members:
        assert examples.search(inspect.getdoc(member) or ""), f"{label} has no Examples section"


def test_launcher_kills_what_outlives_a_failure(tmp_path):
    script = _script(tmp_path, """
        import signal, time, lucid.distributed as dist
        dist.init_process_group("ring")
        if dist.get_rank() == 1:
            raise SystemExit(4)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # mlx.launch's SIGTERM cannot stop it
        time.sleep(120)
    """)
    status, output, elapsed = _launch(tmp_path, "--nproc", "2", "--grace", "3", script, timeout=BOUND + 30)
    assert status == 4 and "rank 1 exited with status 4" in output, output
    assert "still running 3 s after a failure: killing them" in output, output
    assert elapsed < 30, elapsed
