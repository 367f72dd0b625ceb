"""How a raw log line is read for matching: the GitHub timestamp prefix and ANSI codes removed, `\\r` segments
split, invalid UTF-8 replaced. Line numbers are never changed by this: they count `\\n` in the original bytes."""

from __future__ import annotations

import re

from . import native

__all__ = ["ANSI_BYTES", "TIMESTAMP", "clean_start", "clean_text", "display_text", "segments",
           "strip_ansi_bytes"]

# The escape sequences terminals and `tput` emit (ECMA-48): CSI (colours, cursor moves; any parameter bytes
# 0-?, so private modes like `ESC[?25l` and `ESC[>4m` too), OSC (titles, hyperlinks, ended by BEL or ST), DCS/
# SOS/PM/APC strings ended by ST, nF sequences with intermediate bytes (`ESC ( B`, which `tput sgr0` emits to
# reset the character set; `ESC # 8`, `ESC % G`), and the two-byte Fp/Fe/Fs ones (`ESC 7`, `ESC =`, `ESC M`,
# `ESC c`). None of them can span a newline, so line numbers stay valid.
ANSI_BYTES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[PX^_][^\x1b\n]*\x1b\\"
                        rb"|[ -/]+[0-~]|[0-~])")
_ANSI = re.compile(ANSI_BYTES.pattern.decode())
# The runner's prefix on every line of a GitHub Actions job log: ISO-8601 with 7 fractional digits and `Z`.
# `gh run view --log` puts `JOB<TAB>STEP<TAB>` before it (and each step's first line keeps the file's BOM).
TIMESTAMP = re.compile(r"^\ufeff?(?:[^\t]*\t[^\t]*\t\ufeff?(?=\d{4}-))?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")

_MAX_LINE = 4000  # characters kept of one line for matching and display; minified output lines can be huge


def strip_ansi_bytes(data: bytes) -> bytes:
    """`data` with ANSI sequences removed; newlines untouched, so line numbers stay valid. One pass in C over the
    whole piece (per-escape Python costs several times more on coloured Maven logs, where about one line in three
    carries escapes): splitting at the sequences and joining the rest gives what `sub` gives, a fifth faster. The C
    form (ci/native.py) gives the same bytes five times faster again, and lets the interpreter lock go meanwhile."""
    if native.NATIVE is not None:
        return native.NATIVE.strip_ansi(data)  # type: ignore[no-any-return]
    if b"\x1b" not in data:
        return data
    return b"".join(ANSI_BYTES.split(data))


def clean_text(raw: bytes | str) -> str:
    """One line as text: decoded leniently, without the timestamp prefix and ANSI codes, `\\r`s kept. The C form
    (`clean_line`, ci/native.py) tells most single lines' text from their bytes; this reads the rest."""
    if isinstance(raw, bytes):
        c = native.NATIVE
        if c is not None and b"\n" not in raw:
            told: str | None = c.clean_line(raw, 0)
            if told is not None:
                return told
        text = raw.decode("utf-8", "replace")
    else:
        text = raw
    if len(text) > _MAX_LINE:
        text = text[:_MAX_LINE]
    text = text.rstrip("\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    # The runner's prefix is fixed-width: check it by hand (most lines have it); the regex handles the rest.
    if len(text) >= 28 and text[4] == "-" and text[10] == "T" and text[27] == "Z" and text[:4].isdigit():
        return text[29:] if text[28:29] == " " else text[28:]
    if text[:4].isdigit() or "\t" in text[:300] or text.startswith("\ufeff"):
        return TIMESTAMP.sub("", text, count=1)
    return text


def clean_start(raw: bytes) -> int | None:
    """Where `clean_text(raw)` starts in the bytes (what follows is the cleaned text as far as a marker's ASCII
    goes), told without decoding the line, or None when only `clean_text` can tell: an escape code or a tab in the
    line (`gh run view --log` puts job and step before the timestamp), or a start that is neither the runner's
    fixed-width timestamp nor an ASCII character other than a digit (a BOM, or what the timestamp pattern might
    take away)."""
    c = native.NATIVE
    if c is not None:
        return c.clean_start(raw)  # type: ignore[no-any-return]
    if b"\x1b" in raw or b"\t" in raw:
        return None
    head = raw[:29]
    # The runner's prefix, checked as `clean_text` does (an ASCII head: its characters are its bytes).
    if len(head) == 29 and head.isascii() and head[4] == 45 and head[10] == 84 and head[27] == 90 \
            and head[:4].isdigit():
        return 29 if head[28] == 32 else 28
    first = raw[:1]
    if first.isascii() and not first.isdigit():
        return 0
    return None


def segments(clean: str) -> list[str]:
    """The `\\r`-separated pieces of a cleaned line that hold text. A terminal shows only the last one, but tools
    that end lines with a bare `\\r` (javac under Maven, some Jenkins steps) put real messages in every piece,
    so a trigger is tried on each."""
    if "\r" not in clean:
        return [clean]
    if clean.endswith("\r"):
        # A CRLF line ending (a log saved on Windows): the line is what precedes it, blank or indented as it is.
        clean = clean[:-1]
        if "\r" not in clean:
            return [clean]
    parts = [p for p in clean.split("\r") if p.strip()]
    return parts or [""]


def display_text(clean: str) -> str:
    """What to show for a line: the terminal's view (text after the last `\\r`), or, when the `\\r`s separate a
    few distinct messages rather than a progress bar, those messages joined."""
    if "\r" not in clean:  # one segment (almost every line): no list, no call
        return clean.rstrip()
    parts = segments(clean)
    if len(parts) == 1:
        return parts[0].rstrip()
    if len(parts) <= 4:
        return " | ".join(p.strip() for p in parts)
    return parts[-1].rstrip()
