"""The one sanitiser for untrusted text that is shown to a person: diffs, model text, tool results, log lines,
job names, file names, run ids read from disk.

Untrusted text must not be able to act on the terminal (move the cursor, clear the screen or a line, set the
clipboard with OSC 52, make a link with OSC 8, change the window title) nor reorder or hide what is shown
(bidi overrides and isolates, zero-width characters). Every such character is replaced by a visible stand-in,
so a person always sees that something was there and what it was:

- C0 controls and DEL become their Unicode "control pictures": ESC is `␛`, CR `␍`, BEL `␇`, DEL `␡`, so
  `ESC [ 2 K` is shown as `␛[2K`. Tab and (in multi-line text) newline are kept: they cannot hide anything.
- Every other invisible or control character (C1 controls such as U+009B, the 8-bit CSI; Unicode format
  characters: bidi overrides U+202A-U+202E, isolates U+2066-U+2069, marks U+200E/U+200F/U+061C, zero-width
  U+200B-U+200D, U+2060, U+FEFF, tag characters; line and paragraph separators; lone surrogates) becomes
  `⟨U+XXXX⟩`.

The character class is also what diff validation refuses (`repo.diff`), so what is refused and what is shown
escaped are the same set. Pure functions, standard library only: every layer that renders can use them.
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "describe", "json_visible", "unsafe_chars", "visible"]

# C0 except tab and newline (those are judged per call), DEL, C1; then the Unicode format characters (category
# Cf: bidi, zero-width, invisible operators, tags, ...), line/paragraph separators (Zl/Zp) and surrogates (Cs).
# A hard-coded class: computing it from unicodedata would cost a walk over every code point at start-up;
# tests/core/test_sanitize.py checks it covers every Cc/Cf/Zl/Zp/Cs character of this Python's Unicode tables.
_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
    "\ud800-\udfff"
)
UNSAFE = re.compile(f"[{_CLASS}]")
_UNSAFE_OR_NEWLINE = re.compile(f"[{_CLASS}\n]")

_NAMES = {0x1B: "ESC", 0x0D: "CR", 0x07: "BEL", 0x08: "BS", 0x7F: "DEL", 0x9B: "CSI", 0x9D: "OSC",
          0x202A: "LRE", 0x202B: "RLE", 0x202C: "PDF", 0x202D: "LRO", 0x202E: "RLO", 0x2066: "LRI",
          0x2067: "RLI", 0x2068: "FSI", 0x2069: "PDI", 0x200B: "ZWSP", 0x200C: "ZWNJ", 0x200D: "ZWJ",
          0x2060: "WJ", 0xFEFF: "BOM/ZWNBSP", 0x200E: "LRM", 0x200F: "RLM"}


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"⟨U+{code:04X}⟩"


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` with every character that could act on a terminal or hide text replaced by a visible stand-in.
    With `newlines=False` (one-line fields: names, ids, table cells) a newline is shown as `␊` too."""
    pattern = UNSAFE if newlines else _UNSAFE_OR_NEWLINE
    if pattern.search(text) is None:  # the usual case: no copy
        return text
    return pattern.sub(_stand_in, text)


def json_visible(text: str) -> str:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with the unsafe characters it leaves raw
    (DEL, C1, format characters) written as `\\uXXXX` escapes: the same data, nothing that acts on a terminal.
    Valid because those characters only ever occur inside JSON strings."""
    # Every character of the class is unprintable (tests/core/test_sanitize.py): a text of printable characters
    # and newlines (nearly every report) has none, which `str.isprintable` tells several times faster than the
    # class's search.
    if text.replace("\n", "").isprintable() or UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(lambda m: "".join(f"\\u{unit:04x}" for unit in _utf16(m.group())), text)


def _utf16(ch: str) -> list[int]:
    code = ord(ch)
    if code < 0x10000:
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]


def unsafe_chars(text: str) -> set[str]:
    """The distinct unsafe characters in `text` (tab and newline are never among them)."""
    return set(UNSAFE.findall(text))


def describe(ch: str) -> str:
    """`U+001B (ESC)`: how a refused character is named in a message, without the character itself."""
    code = ord(ch)
    name = _NAMES.get(code)
    return f"U+{code:04X}" + (f" ({name})" if name else "")
