"""What a wheel carries so that a fresh machine neither validates the rule catalog nor compiles hyperscan's
database on its first run: both are made when the wheel is built (setup.py's build hook calls `write_prebuilt`)
and kept in `prebuilt/` beside this module, named as the cache names its entries (ci/cache.py). A name is a hash of
everything that goes into the entry (the rule files and their loader, RepoPilot's and hyperscan's versions, the
machine), so an entry is used only where it fits; anywhere else (another platform, an editable install, a
user's own rules), the first run does the work and caches it, as it always did."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from .cache import SCAN_DATABASE
from .catalog import LazyPattern, Pattern, Rule, load_catalog
from .scanner import Scanner, hyperscan_available
from .verdict import pattern_tables

__all__ = ["compile_patterns", "write_prebuilt"]


def write_prebuilt(into: Path) -> list[str]:
    """Write the validated catalog and, when hyperscan is installed, its compiled databases (and which of them a
    scan's own is: `SCAN_DATABASE`) into `into`; returns the names written."""
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        catalog = load_catalog(cache_dir=cache)
        scans = None
        if hyperscan_available():
            scans = Scanner(catalog, engine="hyperscan", cache_dir=cache).engine.entry
        into.mkdir(parents=True, exist_ok=True)
        names = sorted(p.name for p in cache.iterdir() if p.name.startswith(("catalog-", "hyperscan-")))
        for name in names:
            shutil.copyfile(cache / name, into / name)
        if scans in names:
            (into / SCAN_DATABASE).write_text(scans)
            names.append(SCAN_DATABASE)
    return names


def compile_patterns() -> int:
    """Compile every regex of the bundled catalog (triggers, excludes, blocks, fields) and the verdict's tables;
    returns how many. A run compiles a rule's regexes when a line first needs them (a big log meets a hundred or
    more); a wheel's build calls this so that its precompiled patterns (cli/precompiled.py) hold them all."""
    compiled = [p.compiled() if isinstance(p, LazyPattern) else p
                for rule in load_catalog().rules for p in _rule_patterns(rule)]
    return len(compiled) + len(pattern_tables())


def _rule_patterns(rule: Rule) -> list[Pattern]:
    block = rule.block
    found = [*rule.triggers, rule.exclude, rule.next_line, *(f.pattern for f in rule.fields_from),
             block.up_while, block.up_until, block.down_while, block.down_until]
    return [p for p in found if isinstance(p, LazyPattern | re.Pattern)]
