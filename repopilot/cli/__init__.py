"""The command line. `run` is the console script: it loads the CLI inside a guard, so Ctrl-C while the modules
are still loading ends quietly (exit 130, the shell's convention) instead of printing a traceback. Before that it
installs what a wheel carries compiled (cli/precompiled.py: regular expressions, dataclasses' methods), so the
modules it loads do not compile them again. The cycle collector is off while the modules load (cli/main.py
says when it comes back). It ends the process as `leave` says."""

import gc
import sys
from typing import NoReturn

__all__ = ["leave", "run"]


def run() -> None:
    # Loading the CLI makes about 100k objects and no garbage in cycles: a collection pass over them (several run
    # while they load) frees nothing. Reference counting frees everything else as always.
    gc.disable()
    try:
        from .precompiled import install

        install()
        from ..app import start_early

        start_early(sys.argv[1:])  # the scan-ahead helper of a big log starts while the rest loads
        from .main import main
    except KeyboardInterrupt:
        sys.exit(130)
    leave(main())


def leave(code: int) -> NoReturn:
    """End the process with exit status `code`. Python's own exit takes every module and object apart one by one:
    about 10 ms after a diagnose of a small log (more than its scan) and 12 ms after a big one, for memory the
    kernel frees at once anyway. So when nothing is left to run at exit (no `atexit` callback: logging, telemetry
    exporters and temporary directories register one; no thread but daemons) and the standard streams flush, the
    process ends right there; otherwise, or when a stream cannot be flushed (a closed pipe), it exits as usual.
    Files the commands write are closed where they are written (traces, history, caches), never left to exit."""
    import atexit
    import os
    import threading

    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if atexit._ncallbacks() == 0 and not others:
        try:
            for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
                if stream is not None:
                    stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: Python's exit reports it as it always did
            sys.exit(code)
        os._exit(code)
    sys.exit(code)
