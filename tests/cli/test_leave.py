"""The console script ends the process itself (`cli.leave`) when nothing is left to run at exit, skipping Python's
teardown of every object: what was printed is all there, the exit status is the command's, and anything that does
need the exit (an atexit callback, a thread still working, a stream that cannot be flushed) gets Python's exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

# A module-level object whose finaliser prints: Python's teardown runs it, ending the process at once does not.
_CHILD = """
import atexit, sys, threading, time
from repopilot.cli import leave

class Teardown:
    def __del__(self):
        sys.stderr.write("torn down\\n")

marker = Teardown()
case = sys.argv[1]
print("x" * 100_000)  # more than a pipe's buffer, left in Python's own buffer
sys.stderr.write("said")
if case == "atexit":
    atexit.register(lambda: sys.stderr.write(" atexit ran"))
elif case == "thread":
    threading.Thread(target=lambda: (time.sleep(0.2), sys.stderr.write(" thread done"))).start()
elif case == "daemon":
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
elif case == "closed":
    sys.stdout.close()
leave(3)
"""


@pytest.mark.parametrize(("case", "teardown", "extra"), [
    ("plain", False, ""), ("daemon", False, ""),  # nothing left to run: no teardown
    ("atexit", True, " atexit ran"), ("thread", True, " thread done"), ("closed", True, ""),
])
def test_leave(case: str, teardown: bool, extra: str) -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD, case], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 3
    if case != "closed":
        assert done.stdout == "x" * 100_000 + "\n"
    assert done.stderr.startswith("said" + extra)
    assert ("torn down" in done.stderr) is teardown
