"""Checkpoint files on disk: atomic saves that clean up after killed ones, and safe opens.

A save writes a temporary file beside its target, named after the target and the writer's
pid (``.<name>.<pid>.<random>.tmp``, the name shortened with a hash where the whole would
pass the 255-byte limit on a file name), holds an exclusive ``flock`` on it while writing,
and renames it over the target. A process killed in between leaves that temporary behind;
the next save of the same target removes it once its writer is gone: its pid no longer
runs here and nobody holds its lock (a writer on another machine sharing the folder
does). Loading opens only regular files, and never blocks on opening one.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import secrets
import stat
from typing import BinaryIO

if os.name == "posix":  # the clean-up of killed saves' temporaries needs POSIX pids and locks
    import fcntl

NAME_MAX = 255  # bytes in one file name, on every file system lucid runs on
# ".<pid, at most 10 digits>.<8 hex digits>.tmp" after the stem
_SUFFIX_BYTES = 1 + 10 + 1 + 8 + 4
_TEMPORARY_SUFFIX = re.compile(r"\.([0-9]{1,10})\.[0-9a-f]{8}\.tmp")
_OPEN_FLAGS = getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def fspath(f) -> str:
    """The str path that ``f`` (a str or an os.PathLike of str) names."""
    path = os.fspath(f)
    if not isinstance(path, str):  # an os.PathLike of bytes: torch takes no bytes paths either
        raise TypeError(f"f must be a str path or an os.PathLike giving one, got {type(f).__name__} giving "
                        f"{type(path).__name__}")
    return path


def _not_regular(path: str, mode: int, action: str) -> ValueError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return ValueError(f"{path} is {kind}, not a regular file: {action}")


# --- loading -----------------------------------------------------------------------------
def open_regular(path: str) -> tuple[BinaryIO, int]:
    """An unbuffered binary file of ``path`` and its size, refusing anything but a regular file.

    The stat comes first, so that a FIFO, a device, a socket or a folder is refused without
    being opened; the open is non-blocking and checked again, so that one swapped in after
    the stat cannot block it either.
    """
    action = "lucid.load reads checkpoint files only"
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode, action)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _OPEN_FLAGS)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise _not_regular(path, status.st_mode, action)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0), status.st_size
    except BaseException:
        os.close(fd)
        raise


# --- saving ------------------------------------------------------------------------------
def write_all(f, data: bytes) -> None:
    """Write all of ``data`` to the binary file object ``f``, at its position: a raw file's
    ``write`` may take only part of what it is given (a pipe, a socket), so write the rest."""
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"f is a text file ({type(f).__name__}): open it in binary mode ('wb')")
    rest = memoryview(data)
    while rest:
        written = f.write(rest)
        if written is None and isinstance(f, io.RawIOBase):
            raise BlockingIOError(errno.EAGAIN, f"the file object took none of the last {len(rest)} bytes of the "
                                                "checkpoint (a non-blocking stream): pass a blocking one")
        if type(written) is not int or written >= len(rest):  # None from a file-like object: it took all
            return
        if written <= 0:
            raise OSError(errno.EIO, f"the file object's write took {written} of the last {len(rest)} bytes of "
                                     "the checkpoint")
        rest = rest[written:]


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that no moment leaves a partial file under that name.

    A symbolic link is written through, as ``open(path, "wb")`` would: the file it points
    to is replaced and the link kept. The bytes go to a new file in the target's folder,
    with the old file's permission bits (a new file gets the umask's, as with ``open``;
    the owner is the saving user, as with any file replaced by a rename), are flushed and
    fsynced, and the file is renamed over the target (atomic on POSIX and Windows); the
    folder is then fsynced so that the rename itself survives a power cut. A failure
    removes the temporary file and leaves the old one as it was.
    """
    target = os.path.realpath(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        advice = "name a file inside it" if stat.S_ISDIR(old.st_mode) else "open it and pass the file object"
        raise _not_regular(path, old.st_mode, f"lucid.save writes checkpoint files ({advice})")
    folder, name = os.path.split(target)
    _remove_stale_temporaries(folder, name)
    temporary = os.path.join(folder, f"{_temporary_stem(name)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o666)
    except OSError as error:  # named after the target: the temporary's name means nothing to the caller
        raise OSError(error.errno, f"lucid.save cannot create a file in {folder!r} ({error.strerror})",
                      path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if os.name == "posix":
                fcntl.flock(fd, fcntl.LOCK_EX)  # held until closed: tells a cleaner elsewhere we are alive
            if old is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, stat.S_IMODE(old.st_mode))  # the old file's permissions, 0600 staying 0600
            handle.write(data)
            handle.flush()
            os.fsync(fd)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    if hasattr(os, "O_DIRECTORY"):  # POSIX: make the rename durable
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)


def _temporary_stem(name: str) -> str:
    """``"." + name``, or for a name too long to leave room for the suffix, its first bytes and a
    hash of the whole, so that a temporary's name fits NAME_MAX and still tells its target."""
    encoded = os.fsencode(name)
    room = NAME_MAX - _SUFFIX_BYTES - 1
    if len(encoded) <= room:
        return "." + name
    digest = hashlib.sha256(encoded).hexdigest()[:8]
    return "." + os.fsdecode(encoded[: room - 9]) + "~" + digest


def _remove_stale_temporaries(folder: str, name: str) -> None:
    """Remove the temporaries that killed saves of ``name`` left in ``folder`` (POSIX)."""
    if os.name != "posix":  # os.kill(pid, 0) would signal, not ask, on Windows
        return
    stem = _temporary_stem(name)
    try:
        with os.scandir(folder) as entries:
            stale = [entry.path for entry in entries if entry.name.startswith(stem)
                     and _is_stale(entry.name[len(stem):]) and entry.is_file(follow_symlinks=False)]
    except OSError:  # a missing or unreadable folder: the save itself says so
        return
    for temporary in stale:
        _remove_if_unlocked(temporary)


def _is_stale(suffix: str) -> bool:
    """Whether ``suffix`` is a temporary's ``.<pid>.<random>.tmp`` of a writer that is gone."""
    match = _TEMPORARY_SUFFIX.fullmatch(suffix)
    if match is None:
        return False
    pid = int(match[1])
    if pid == os.getpid() or pid < 1:  # ours (another thread's save in progress), or no process's
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # alive under another user, or no pid at all
        return False
    return False


def _remove_if_unlocked(temporary: str) -> None:
    """Unlink ``temporary`` unless a writer still holds its lock (one with this pid elsewhere)."""
    try:
        fd = os.open(temporary, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | _OPEN_FLAGS)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(temporary)
    except OSError:  # locked by a live writer, or gone already
        pass
    finally:
        os.close(fd)
