"""The built-in SHA-256 (ci/digest.py) gives hashlib's digests, so fingerprints and cache names are unchanged, and
the hyperscan database's name is keyed by the same machine name `platform` gives."""

from __future__ import annotations

import hashlib
import platform

from repopilot.ci.cache import cache_key
from repopilot.ci.digest import sha256
from repopilot.ci.fingerprint import fingerprint
from repopilot.ci.scanner import _machine


def test_the_digests_are_hashlibs() -> None:
    for data in (b"", b"abc", "é\x1fpath/to/file.go".encode(), bytes(range(256)) * 300):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    h, ref = sha256(), hashlib.sha256()
    for part in (b"one", b"two" * 1000):
        h.update(part)
        ref.update(part)
    assert h.hexdigest() == ref.hexdigest()


def test_fingerprints_and_cache_names_are_what_hashlib_made() -> None:
    # Values made with hashlib.sha256, before ci/digest.py: recorded histories and caches still match.
    assert fingerprint(rule="go.build-error", category="build", message="undefined: foo", file="main.go") == \
        "66371eec085e1aa7"
    assert cache_key("a", b"b") == "cf6ab613e3942391f88ed698557e1680"


def test_the_machine_is_platforms() -> None:
    assert _machine() == platform.machine()
