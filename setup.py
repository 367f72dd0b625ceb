"""The build hook (everything else is in pyproject.toml): a wheel carries the validated rule catalog and, where
hyperscan is installed in the build environment, its compiled database (repopilot/ci/prebuild.py), so the first
`repopilot diagnose` on a fresh machine of the same platform does neither. A build that cannot make them warns
and goes on: the first run then makes them, as an editable install always does."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
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
        finally:
            sys.path.remove(lib)
            for name in [m for m in sys.modules if m == "repopilot" or m.startswith("repopilot.")]:
                del sys.modules[name]


setup(cmdclass={"build_py": BuildPyWithPrebuilt})
