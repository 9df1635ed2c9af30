"""What each process the launcher starts runs: the user's script, then a report of how it ended.

``python -m lucid.distributed._worker SCRIPT ARGS...`` runs SCRIPT as ``__main__`` (as
``python SCRIPT ARGS...`` would) and then writes one line to stderr, ``EXIT_MARK`` with
its rank and exit status. ``mlx.launch`` exits 0 whatever its processes did, so this line
(or its absence, for a process killed outright) is how ``lucid.distributed.run`` learns
whether each rank succeeded, on this machine or, through ssh, on another.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback

EXIT_MARK = "\x1elucid.distributed.run:exit"


def exit_line(rank: str, status: int) -> str:
    return f"{EXIT_MARK} {rank} {status}\x1e\n"


def _status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"), as Python reports it
    return 1


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m lucid.distributed._worker SCRIPT [ARGS...]")
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        status = _status(exit_.code)
    except BaseException as error:  # noqa: BLE001 - report any failure as Python would, then the status
        # the traceback from the script down, as ``python SCRIPT`` prints it (not this module's frames)
        tb = error.__traceback__
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != os.path.abspath(script):
            tb = tb.tb_next
        traceback.print_exception(type(error), error, tb or error.__traceback__)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    sys.stderr.write(exit_line(os.environ.get("MLX_RANK", "0"), status))
    sys.stderr.flush()
    sys.exit(status)


if __name__ == "__main__":
    main()
