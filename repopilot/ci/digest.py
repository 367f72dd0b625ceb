"""Digests without OpenSSL: `import hashlib` loads OpenSSL's library (`_hashlib`), a few milliseconds of every
`repopilot` start, for digests the interpreter also has built in (the same algorithms: the same digests).
`hashlib`'s are the fallback where the built-in ones were left out. SHA-256 names fingerprints; BLAKE2b names
cache entries (about a quarter of SHA-256's cost in software, and a cache key hashes every rule file at every
start)."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["blake2b", "sha256"]

if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:  # a build without the built-in hashes
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
