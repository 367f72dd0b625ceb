"""What a command starts before the rest of the program loads: the helper that scans a big log ahead for
`diagnose` (ci/ahead.py). Its start-up (an interpreter and hyperscan's module, 20-30 ms) then overlaps the loading
of the CLI and the catalog, where it overlapped the scan of the log's first pieces, which this process read and
scanned itself meanwhile."""

from __future__ import annotations

__all__ = ["start_early"]


def start_early(argv: list[str]) -> None:
    """For `diagnose` with an argument naming a regular file big enough to be scanned ahead, start the helper now
    (an option's value counts too: a baseline log is scanned as well). A scan that does not take it (the setting
    off, a small log, parts in workers) ends it; nothing else is read here (the settings are read once, later)."""
    if len(argv) >= 2 and argv[0] == "diagnose":
        from ..ci import prestart_helper  # only for a diagnose

        prestart_helper([arg for arg in argv[1:] if not arg.startswith("-")])
