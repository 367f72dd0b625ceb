"""The built-in SHA-256 and BLAKE2b (ci/digest.py) give hashlib's digests, so fingerprints are unchanged and cache
names are what hashlib would make, and the hyperscan database's name is keyed by the same machine name `platform`
gives."""

from __future__ import annotations

import hashlib
import platform

from repopilot.ci.cache import cache_key
from repopilot.ci.digest import blake2b, sha256
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
    for data in (b"", b"abc", bytes(range(256)) * 300):
        assert blake2b(data, digest_size=16).hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()


def test_fingerprints_and_cache_names_are_what_hashlib_made() -> None:
    # A value made with hashlib.sha256, before ci/digest.py: recorded histories still match.
    assert fingerprint(rule="go.build-error", category="build", message="undefined: foo", file="main.go") == \
        "66371eec085e1aa7"
    # Cache names: each part's length, then the part, through BLAKE2b (a cache is rebuilt when its name changes).
    ref = hashlib.blake2b(digest_size=16)
    for part in (b"a", b"b"):
        ref.update(len(part).to_bytes(8, "little") + part)
    assert cache_key("a", b"b") == ref.hexdigest() == "6a93c5780b9861cdd8d2761a748d9591"


def test_the_machine_is_platforms() -> None:
    assert _machine() == platform.machine()
