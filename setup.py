"""The build hook (everything else is in pyproject.toml): a wheel carries the validated rule catalog and, where
hyperscan is installed in the build environment, its compiled database (repopilot/ci/prebuild.py), so the first
`repopilot diagnose` on a fresh machine of the same platform does neither; and the regular expressions and
dataclass methods a diagnose compiles, compiled by the building Python (repopilot/cli/precompiled.py), so that no
run of the same Python compiles them. A build that cannot make them warns and goes on: the first run then makes the
catalog and database, as an editable install always does, and every run compiles its patterns and methods."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildPyWithPrebuilt(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the source tree is the package: nothing generated is written into it
        lib = str(Path(self.build_lib).resolve())
        sys.path.insert(0, lib)
        try:
            from repopilot.ci import write_prebuilt

            names = write_prebuilt(Path(lib) / "repopilot" / "ci" / "prebuilt")
            print(f"repopilot: prebuilt {', '.join(names)}")
        except Exception as exc:  # a wheel without them still works: the first run makes them
            print(f"repopilot: warning: no prebuilt catalog or hyperscan database ({type(exc).__name__}: {exc})",
                  file=sys.stderr)
        try:
            _write_precompiled(lib)
        except Exception as exc:  # every run compiles its patterns and methods, as without a wheel
            print(f"repopilot: warning: nothing precompiled ({type(exc).__name__}: {exc})", file=sys.stderr)
        finally:
            sys.path.remove(lib)
            for name in [m for m in sys.modules if m == "repopilot" or m.startswith("repopilot.")]:
                del sys.modules[name]


def _write_precompiled(lib: str) -> None:
    """The patterns and dataclass methods a diagnose compiles, recorded by a new process (every module imported
    afresh) that runs on the tree being built, with its runs, cache and history in a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (lib, os.environ.get("PYTHONPATH")) if p),
               "REPOPILOT_RUNS_DIR": f"{tmp}/runs", "REPOPILOT_CACHE_DIR": f"{tmp}/cache",
               "REPOPILOT_HISTORY": f"{tmp}/history.sqlite3", "XDG_CONFIG_HOME": f"{tmp}/config"}
        env.pop("REPOPILOT_MODEL", None)
        into = str(Path(lib) / "repopilot" / "cli" / "prebuilt")
        subprocess.run([sys.executable, "-m", "repopilot.cli.precompiled", into], env=env, cwd=tmp,
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
        print(f"repopilot: prebuilt {', '.join(os.listdir(into))}")


# The scanner's per-byte passes in C (repopilot/ci/native.py): optional, so that an install without a compiler
# still works, on the pure-Python forms that give the same results.
NATIVE = Extension("repopilot.ci._native", ["repopilot/ci/_native.c"], optional=True)
# The secret rules' keyword pass in C (repopilot/core/secret_rules.py): optional too, on a regex that finds the same.
KEYWORDS = Extension("repopilot.core._keywords", ["repopilot/core/_keywords.c"], optional=True)

setup(cmdclass={"build_py": BuildPyWithPrebuilt}, ext_modules=[NATIVE, KEYWORDS])
