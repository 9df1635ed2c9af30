"""``python -m lucid.distributed.run``: start a script on several processes, through ``mlx.launch``.

Usage::

    python -m lucid.distributed.run --nproc 4 train.py --epochs 3     # one machine
    python -m lucid.distributed.run --hostfile hosts.json train.py    # several machines

It runs ``mlx.launch`` (which starts the processes, locally or over ssh, and forwards their
output) and adds what ``mlx.launch`` leaves out:

- its exit status is non-zero when any process failed (``mlx.launch`` exits 0 whatever
  happened): the status of the rank that failed first, or 1 for a rank that was killed;
- it picks free ports on 127.0.0.1 itself (``--port`` chooses the first one instead, and
  a port of the range that is in use is named before anything starts);
- it leaves no files behind: ``mlx.launch`` writes a hostfile and a pid file per process
  into ``$TMPDIR``, so on this machine they go into a private directory, removed at the end;
- each process gets ``OMP_NUM_THREADS=1`` unless it is set (as torchrun does), so that the
  processes' BLAS threads do not oversubscribe the cores;
- it never hangs on a failure: once a process has failed, the others get ``--grace``
  seconds (default 60) to end before they are killed. (They normally end within a second:
  ``mlx.launch`` stops them, and a collective whose peer died raises
  :class:`lucid.distributed.DistBackendError`.)

On one machine the processes talk over 127.0.0.1 only: ``mlx.launch`` reaches any other
host name, ``localhost`` included, through ssh. For several machines give ``mlx.launch``'s
hostfile (a JSON list of ``{"ssh": "name", "ips": ["10.0.0.1"]}``, one per process);
``mlx.distributed_config`` can write one. Each machine needs the same Python environment
and the script at the same path.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from ._worker import EXIT_MARK

_MARK = re.compile(re.escape(EXIT_MARK) + r" (\d+) (-?\d+)\x1e\n?")
_MLX_FAILURE = re.compile(r"Node with rank (\d+) (?:exited with code|was killed)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lucid.distributed.run",
        description="Run a lucid script on several processes (on this machine, or on several "
        "through a hostfile), through mlx.launch.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--nproc", type=int, default=None, help="processes on this machine (127.0.0.1)")
    where.add_argument("--hostfile", help="mlx.launch's JSON hostfile: one process per entry, over ssh")
    parser.add_argument("--backend", default="ring", choices=("ring", "mpi"), help="MLX backend (default: ring)")
    parser.add_argument("--port", type=int, default=None, help="the first port of the ring (default: free ports)")
    parser.add_argument("--grace", type=float, default=60.0,
                        help="seconds the other processes get to end once one has failed (default: 60)")
    parser.add_argument("--verbose", action="store_true", help="mlx.launch's own messages")
    parser.add_argument("script", help="the Python script each process runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser


def _mlx_launch() -> list:
    """The command that runs ``mlx.launch``: its script beside this interpreter, or on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    found = beside if os.access(beside, os.X_OK) else shutil.which("mlx.launch")
    if found is None:
        raise SystemExit(
            "lucid.distributed.run: mlx.launch was not found (it comes with MLX: pip install 'lucid-autograd[mlx]')"
        )
    return [found]


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _port_listened_on(port: int) -> bool:
    """Whether a socket holds ``port`` on 127.0.0.1 so that the ring cannot listen on it
    (a port left in TIME_WAIT by an earlier job is not: the ring binds it again)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def check_ports(start: int, count: int) -> None:
    """Exit with a message naming the port if any of the ``count`` ports from ``start``
    (one per process on 127.0.0.1) is out of range or in use."""
    if not 1 <= start <= 65536 - count:
        raise SystemExit(f"lucid.distributed.run: --port {start} leaves no room for {count} consecutive ports "
                         f"(one per process): give a port from 1 to {65536 - count}")
    for port in range(start, start + count):
        if _port_listened_on(port):
            raise SystemExit(
                f"lucid.distributed.run: port {port} on 127.0.0.1 is in use (the {count} processes listen on "
                f"ports {start} to {start + count - 1}, one each): pass another --port, or leave --port out "
                "and the launcher picks free ports"
            )


def free_ports(count: int, attempts: int = 200) -> int:
    """The first of ``count`` consecutive ports free on 127.0.0.1 (the ring takes one per process)."""
    rng = random.Random()
    for _ in range(attempts):
        start = rng.randrange(20000, 60000 - count)
        if all(_port_free(start + i) for i in range(count)):
            return start
    raise SystemExit(f"lucid.distributed.run: found no {count} consecutive free ports on 127.0.0.1")


def _count_hosts(path: str) -> int:
    import json

    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    hosts = data["hosts"] if isinstance(data, dict) else data
    return len(hosts)


class _Ranks:
    """What the processes reported: each rank's exit status, and when the first failed."""

    def __init__(self):
        self.status: dict[int, int] = {}
        self.failed_first = None  # the rank that reported a failure first: the likely cause
        self.first_failure = None
        self.lock = threading.Lock()

    def failed(self) -> None:
        with self.lock:
            if self.first_failure is None:
                self.first_failure = time.monotonic()

    def forward(self, stream, out) -> None:
        """Copy ``stream`` (mlx.launch's stderr) to ``out``, taking the ranks' exit lines out."""
        for line in iter(stream.readline, b""):
            text = line.decode(errors="replace")
            for rank, status in _MARK.findall(text):
                self.status[int(rank)] = int(status)
                if int(status) != 0:
                    if self.failed_first is None:
                        self.failed_first = int(rank)
                    self.failed()
            if _MLX_FAILURE.search(text):
                self.failed()
            text = _MARK.sub("", text)
            if text:
                out.write(text)
                out.flush()


def _stop(process, sig) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.hostfile is None:
        nproc = 1 if args.nproc is None else args.nproc
        if nproc < 1:
            raise SystemExit(f"lucid.distributed.run: --nproc must be at least 1, got {nproc}")
        where = ["--hosts", "127.0.0.1", "-n", str(nproc)]
    else:
        nproc = _count_hosts(args.hostfile)
        where = ["--hostfile", args.hostfile]
    if not os.path.isfile(args.script):
        raise SystemExit(f"lucid.distributed.run: no such script: {args.script}")
    if args.port is not None and args.hostfile is None:
        check_ports(args.port, nproc)  # the hostfile's ports are on other machines: init says which failed
    port = args.port if args.port is not None else free_ports(nproc)
    command = _mlx_launch() + where + ["--backend", args.backend, "--starting-port", str(port)]
    if args.verbose:
        command.append("--verbose")
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        # as torchrun: several processes each with a BLAS thread per core oversubscribe the
        # cores (measured: a step 30x slower on a busy 2-core machine)
        command += ["--env", "OMP_NUM_THREADS=1"]
        print("lucid.distributed.run: OMP_NUM_THREADS=1 in each process (set OMP_NUM_THREADS to choose)",
              file=sys.stderr, flush=True)
    command += ["--", sys.executable, "-m", "lucid.distributed._worker", args.script, *args.args]

    private = tempfile.mkdtemp(prefix="lucid-run-")
    env = dict(os.environ, TMPDIR=private)
    ranks = _Ranks()
    process = None
    try:
        # a session of its own, so that the launcher and its processes can be stopped together;
        # stdin a pipe kept open: mlx.launch forwards stdin, and spins on one at end of file
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                   start_new_session=True)
        reader = threading.Thread(target=ranks.forward, args=(process.stderr, sys.stderr), daemon=True)
        reader.start()
        while process.poll() is None:
            try:
                process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
            if ranks.first_failure is not None and time.monotonic() - ranks.first_failure > args.grace:
                print(f"lucid.distributed.run: processes still running {args.grace:g} s after a failure: "
                      "killing them", file=sys.stderr, flush=True)
                _stop(process, signal.SIGKILL)
                process.wait()
        reader.join(timeout=5)
    except KeyboardInterrupt:
        if process is not None:
            _stop(process, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _stop(process, signal.SIGKILL)
        return 130
    finally:
        if process is not None:
            _stop(process, signal.SIGKILL)  # anything of the session still alive
            process.stdin.close()  # type: ignore[union-attr]  # stdin=PIPE: never None, as typeshed cannot say
        shutil.rmtree(private, ignore_errors=True)
    return _report(ranks.status, nproc, ranks.failed_first)


def _report(status: dict, nproc: int, failed_first=None) -> int:
    """Say which ranks failed (the first to report a failure first); the launcher's exit
    status: that rank's, or 1 when no rank reported one (a rank was killed)."""
    problems = []
    order = ([failed_first] if failed_first is not None else []) + [r for r in range(nproc) if r != failed_first]
    for rank in order:
        if rank not in status:
            problems.append(f"rank {rank} ended without reporting (killed, or stopped after another failed)")
        elif status[rank] != 0:
            problems.append(f"rank {rank} exited with status {status[rank]}")
    if not problems:
        return 0
    print("lucid.distributed.run: " + "; ".join(problems), file=sys.stderr, flush=True)
    first = status.get(failed_first, 1) if failed_first is not None else 1
    return first if 0 < first < 256 else 1


if __name__ == "__main__":
    sys.exit(main())
