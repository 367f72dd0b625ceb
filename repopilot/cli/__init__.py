"""The command line. `run` is the console script: it loads the CLI inside a guard, so Ctrl-C while the modules
are still loading ends quietly (exit 130, the shell's convention) instead of printing a traceback. Before that it
installs what a wheel carries compiled (cli/precompiled.py: regular expressions, dataclasses' methods), so the
modules it loads do not compile them again."""

import sys

__all__ = ["run"]


def run() -> None:
    try:
        from .precompiled import install

        install()
        from .main import main
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(main())
