"""The command line. `run` is the console script: it loads the CLI inside a guard, so Ctrl-C while the modules
are still loading ends quietly (exit 130, the shell's convention) instead of printing a traceback. Before that it
installs what a wheel carries compiled (cli/precompiled.py: regular expressions, dataclasses' methods), so the
modules it loads do not compile them again. The cycle collector is off while the modules load (cli/main.py
says when it comes back)."""

import gc
import sys

__all__ = ["run"]


def run() -> None:
    # Loading the CLI makes about 100k objects and no garbage in cycles: a collection pass over them (several run
    # while they load) frees nothing. Reference counting frees everything else as always.
    gc.disable()
    try:
        from .precompiled import install

        install()
        from .main import main
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(main())
