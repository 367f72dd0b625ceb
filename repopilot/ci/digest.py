"""SHA-256 for fingerprints and cache names, without OpenSSL: `import hashlib` loads OpenSSL's library
(`_hashlib`), a few milliseconds of every `repopilot` start, for one digest the interpreter also has built in
(the same algorithm: the same digests). `hashlib`'s is the fallback where the built-in one was left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["sha256"]

if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:  # a build without the built-in hashes
            from hashlib import sha256
