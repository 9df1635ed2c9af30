"""A bound on how long a collective may wait for the other processes.

A process whose peer has died gets an error from MLX within about a second; one whose
peer is alive but never joins (stuck, or gone down another code path) would wait forever.
The watchdog thread ends such a process after ``timeout`` with a message saying why, as
torch's collective watchdog does: the job then fails instead of hanging, and the other
processes see the connection drop. It needs no lock on the hot path: a collective sets the
``(name, deadline)`` it is waiting on, and clears it when done.
"""

from __future__ import annotations

import os
import sys
import threading
import time


class Watchdog:
    def __init__(self, timeout: float, describe):
        self.timeout = timeout
        self._describe = describe  # "rank R of N", for the message
        self._waiting: tuple[str, float] | None = None  # (the collective, its deadline)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="lucid.distributed watchdog", daemon=True)
        self._thread.start()

    def start(self, name: str) -> None:
        self._waiting = (name, time.monotonic() + self.timeout)

    def done(self) -> None:
        self._waiting = None

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        interval = min(1.0, max(self.timeout / 10, 0.05))
        while not self._stop.wait(interval):
            waiting = self._waiting
            if waiting is not None and time.monotonic() > waiting[1]:
                self._abort(waiting[0])

    def _abort(self, name: str) -> None:
        message = (
            f"\nlucid.distributed: {name} on {self._describe()} waited more than {self.timeout:g} s "
            "for the other processes (init_process_group's timeout): one of them is stuck or "
            "has taken another path. Ending this process (exit status 1) so that the job fails "
            "instead of hanging.\n"
        )
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream must not stop the exit
                pass
        os.write(2, message.encode())
        os._exit(1)
