"""lucid.save and lucid.load on the file system: what a killed save leaves and who removes it,
long names, permissions, symbolic links, and targets and sources that are not regular files."""

from __future__ import annotations

import fcntl
import io
import os
import signal
import socket
import stat
import threading
import time

import pytest

import lucid

def _stalled_saves(*paths) -> list[int]:
    """A forked process for each of ``paths`` that saves to it and stops for good once its
    temporary is written (its fsync never returns), so that it can be SIGKILLed at a known
    moment, between its bytes and its rename. Their pids, once all have written."""
    children = []
    for path in paths:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: save, say when written, wait for the SIGKILL
            try:
                def stall(fd):
                    os.write(write_end, b"w")
                    time.sleep(600)

                os.fsync = stall
                lucid.save({"v": "killed", "w": lucid.arange(100_000)}, path)
            finally:
                os._exit(1)
        os.close(write_end)
        children.append((pid, read_end))
    for pid, read_end in children:
        assert os.read(read_end, 1) == b"w"
        os.close(read_end)
    return [pid for pid, _ in children]


def _forked(action) -> int:
    """The pid of a forked process that runs ``action()`` and exits 0, or 1 if it raised."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            action()
            status = 0
        finally:
            os._exit(status)
    return pid


def _temporaries(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


def _kill(*pids):
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_a_later_save_removes_what_killed_saves_left_and_nothing_of_live_ones(tmp_path):
    path, other = tmp_path / "run.safetensors", tmp_path / "other.safetensors"
    lucid.save({"v": "old"}, path)
    savers = _stalled_saves(path, path, path, other)
    try:
        live = _temporaries(tmp_path)
        assert len(live) == 4
        lucid.save({"v": "new"}, path)  # the three savers of this target are alive: theirs stay
        assert _temporaries(tmp_path) == live
    finally:
        _kill(*savers)
    lucid.save({"v": "newer"}, path)
    assert _temporaries(tmp_path) == [name for name in live if name.startswith(".other.safetensors.")]
    assert sorted(os.listdir(tmp_path)) == sorted(["run.safetensors", *_temporaries(tmp_path)])
    assert lucid.load(path) == {"v": "newer"}


def test_a_temporary_whose_writer_holds_its_lock_is_kept(tmp_path):
    """A writer on another machine (or in another pid namespace) sharing the folder: its pid
    means nothing here, its lock does."""
    gone = _forked(lambda: None)
    os.waitpid(gone, 0)
    path = tmp_path / "run"
    temporary = tmp_path / f".run.{gone}.0123abcd.tmp"
    temporary.write_bytes(b"half a checkpoint")
    with open(temporary, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        lucid.save([1], path)
        assert temporary.exists()
    lucid.save([2], path)
    assert os.listdir(tmp_path) == ["run"]


def _save_ten_times(path, writer: int) -> None:
    for i in range(10):
        lucid.save({"writer": writer, "i": i, "w": lucid.full((20_000,), float(writer))}, path)


def test_concurrent_saves_of_one_target_all_succeed(tmp_path):
    """Processes and threads saving the same file at once: every save succeeds (no one's
    clean-up removes another's temporary), and what is left is one whole checkpoint."""
    path = tmp_path / "shared.safetensors"
    children = [_forked(lambda k=k: _save_ten_times(path, k)) for k in range(2)]
    failures = []

    def save_in_a_thread(writer):
        try:
            _save_ten_times(path, writer)
        except BaseException as error:  # reported below, in the test's own thread
            failures.append(error)

    threads = [threading.Thread(target=save_in_a_thread, args=(k,)) for k in (2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children] == [0, 0]
    assert failures == []
    saved = lucid.load(path)
    assert saved["w"].tolist() == [float(saved["writer"])] * 20_000
    assert os.listdir(tmp_path) == ["shared.safetensors"]


@pytest.mark.parametrize("name", ["a" * 243, "b" * 255, "é" * 127], ids=["243 bytes", "255 bytes", "254 bytes in UTF-8"])
def test_any_valid_file_name_saves_and_its_temporary_fits_too(tmp_path, name):
    path = tmp_path / name
    lucid.save({"v": 1}, path)
    lucid.save({"v": 2}, path)
    assert lucid.load(path) == {"v": 2}
    assert os.listdir(tmp_path) == [name]


def test_a_killed_save_of_a_long_name_is_cleaned_up_too(tmp_path):
    path = tmp_path / ("c" * 250)
    lucid.save({"v": "old"}, path)
    _kill(*_stalled_saves(path))
    assert len(_temporaries(tmp_path)) == 1 and all(len(n.encode()) <= 255 for n in os.listdir(tmp_path))
    lucid.save({"v": "new"}, path)
    assert os.listdir(tmp_path) == [path.name]


def test_a_save_keeps_the_old_files_permissions_and_a_new_file_gets_the_umasks(tmp_path):
    path = tmp_path / "ckpt"
    mask = os.umask(0o027)
    try:
        lucid.save([1], path)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    for mode in (0o600, 0o444, 0o755):
        path.chmod(mode)
        lucid.save([mode], path)
        assert stat.S_IMODE(path.stat().st_mode) == mode and lucid.load(path) == [mode]


def test_a_save_to_a_symbolic_link_writes_through_it_and_keeps_it(tmp_path):
    (tmp_path / "real").mkdir()
    target, link = tmp_path / "real" / "ckpt", tmp_path / "latest"
    lucid.save({"v": 1}, target)
    target.chmod(0o600)
    link.symlink_to(os.path.join("real", "ckpt"))
    lucid.save({"v": 2}, link)
    assert link.is_symlink() and lucid.load(target) == {"v": 2}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["latest", "real"] and os.listdir(tmp_path / "real") == ["ckpt"]
    dangling = tmp_path / "next"
    dangling.symlink_to("real/new")  # as open(path, "wb") would: the file it names is created
    lucid.save({"v": 3}, dangling)
    assert dangling.is_symlink() and lucid.load(tmp_path / "real" / "new") == {"v": 3}


def _special_files(folder):
    """A FIFO, a socket and a directory, made in ``folder``; the socket stays open while in use."""
    os.mkfifo(folder / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "socket"))
    (folder / "folder").mkdir()
    return server, {"fifo": "a FIFO", "socket": "a socket", "folder": "a directory"}


def test_a_save_over_anything_but_a_regular_file_is_refused_and_leaves_it(tmp_path):
    server, kinds = _special_files(tmp_path)
    with server:
        for name, kind in kinds.items():
            before = (tmp_path / name).lstat()
            with pytest.raises(ValueError, match=f"{tmp_path / name} is {kind}, not a regular file"):
                lucid.save({"v": 1}, tmp_path / name)
            after = (tmp_path / name).lstat()
            assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert sorted(os.listdir(tmp_path)) == ["fifo", "folder", "socket"]


def test_a_save_into_a_missing_folder_names_the_target(tmp_path):
    path = tmp_path / "missing" / "ckpt"
    with pytest.raises(FileNotFoundError, match="lucid.save cannot create a file in") as error:
        lucid.save([1], path)
    assert error.value.filename == str(path)


def test_a_path_given_as_bytes_is_refused_clearly(tmp_path):
    class BytesPath:
        def __fspath__(self):
            return os.fsencode(tmp_path / "ckpt")

    for f in (BytesPath(), os.fsencode(tmp_path / "ckpt")):
        with pytest.raises(TypeError, match="f must be a"):
            lucid.save([1], f)
        with pytest.raises(TypeError, match="f must be a"):
            lucid.load(f)
    assert os.listdir(tmp_path) == []


class _Alarm(Exception):
    pass


def _within_seconds(seconds: int, action):
    """``action()``, failing the test if it blocks for ``seconds``."""
    def ring(signum, frame):
        raise _Alarm(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        return action()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_load_of_anything_but_a_regular_file_is_refused_without_blocking(tmp_path):
    server, kinds = _special_files(tmp_path)
    kinds["/dev/zero"] = "a character device"
    with server:
        for name, kind in kinds.items():
            path = tmp_path / name
            with pytest.raises(ValueError, match=f"{path} is {kind}, not a regular file: lucid.load reads"):
                _within_seconds(10, lambda: lucid.load(path))


def test_a_fifo_swapped_in_after_the_check_does_not_block_the_open(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    regular = (tmp_path / "file")
    regular.write_bytes(b"")
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, **kw: real_stat(regular if str(path) == str(fifo) else path, **kw))
    with pytest.raises(ValueError, match="is a FIFO"):
        _within_seconds(10, lambda: lucid.load(fifo))


class _EndlessStream(io.RawIOBase):
    """``prefix``, then zeros without end; fails the test once ``limit`` bytes have been read."""

    def __init__(self, prefix: bytes, limit: int):
        self.prefix, self.limit, self.served = prefix, limit, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.served >= self.limit:
            raise AssertionError(f"read {self.served} bytes, past the {self.limit} allowed")
        count = min(len(buffer), self.limit - self.served)
        chunk = self.prefix[self.served : self.served + count]
        buffer[:count] = chunk + bytes(count - len(chunk))
        self.served += count
        return count


def _checkpoint_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    lucid.save(obj, buffer)
    return buffer.getvalue()


def test_a_load_reads_no_more_than_the_header_declares(tmp_path):
    """A file object is read to the end its header declares and one byte more (to see that it
    ends there), never to its end: /dev/zero and an endless stream are refused at once."""
    good = _checkpoint_bytes({"w": lucid.ones(1000)})
    stream = _EndlessStream(good, limit=len(good) + 1)
    with pytest.raises(ValueError, match=rf"<_EndlessStream>: the tensors take 4000 bytes but the file holds "
                                         r"more than 4000 after the header"):
        lucid.load(stream)
    with open("/dev/zero", "rb") as zeros, pytest.raises(ValueError, match="/dev/zero: the safetensors header "
                                                                             "is not valid JSON"):
        lucid.load(zeros)
    claim = b'{"w":{"dtype":"F32","shape":[274877906944],"data_offsets":[0,1099511627776]}}'
    with pytest.raises(ValueError, match="the tensors take 1099511627776 bytes but the file holds 10 after"):
        lucid.load(io.BytesIO(len(claim).to_bytes(8, "little") + claim + bytes(10)))  # memory: what came


class _Trickle(io.RawIOBase):
    """A raw stream whose write takes at most 1000 bytes a call, as a pipe or a socket may."""

    def __init__(self):
        self.received = bytearray()

    def writable(self):
        return True

    def write(self, data):
        taken = bytes(data[:1000])
        self.received += taken
        return len(taken)


def test_a_save_to_a_file_object_writes_all_of_it_and_refuses_text_mode(tmp_path):
    obj = {"w": lucid.arange(5000, dtype=lucid.float64), "step": 3}
    trickle = _Trickle()
    lucid.save(obj, trickle)
    assert len(trickle.received) == len(_checkpoint_bytes(obj))  # (safetensors orders its header freely)
    loaded = lucid.load(io.BytesIO(trickle.received))
    assert loaded["w"].tolist() == list(range(5000)) and loaded["step"] == 3
    with open(tmp_path / "text", "w", encoding="latin-1") as text, pytest.raises(TypeError, match="binary mode"):
        lucid.save(obj, text)
    assert (tmp_path / "text").read_bytes() == b""
