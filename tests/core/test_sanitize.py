"""The one sanitiser for shown text: each class of terminal control is shown, none acts; checked by the
characters themselves and by a terminal emulator (pyte) reading the output as a terminal would."""

from __future__ import annotations

import json
import sys
import unicodedata

import pyte
import pytest

from repopilot.core.sanitize import UNSAFE, describe, json_visible, unsafe_chars, visible

ESC = "\x1b"

# (what it is, the attack, what must be shown instead)
CLASSES = [
    ("CSI erase line + cursor to column 1", f"evil{ESC}[2K{ESC}[1Gok", "evil␛[2K␛[1Gok"),
    ("CSI cursor up", f"a{ESC}[1Ab", "a␛[1Ab"),
    ("OSC 52 clipboard", f"{ESC}]52;c;Y3VybCBldmlsfHNo{chr(7)}", "␛]52;c;Y3VybCBldmlsfHNo␇"),
    ("OSC 8 hyperlink", f"{ESC}]8;;https://evil.example{ESC}\\click{ESC}]8;;{ESC}\\",
     "␛]8;;https://evil.example␛\\click␛]8;;␛\\"),
    ("OSC 0/2 window title", f"{ESC}]0;pwned{chr(7)}{ESC}]2;pwned{ESC}\\", "␛]0;pwned␇␛]2;pwned␛\\"),
    ("C1 CSI (8-bit)", "a\x9b2Kb", "a⟨U+009B⟩2Kb"),
    ("C1 OSC (8-bit)", "a\x9d52;c;x\x9cb", "a⟨U+009D⟩52;c;x⟨U+009C⟩b"),
    ("bidi override (Trojan Source)", "if admin\u202e } \u2066{\u2069", "if admin⟨U+202E⟩ } ⟨U+2066⟩{⟨U+2069⟩"),
    ("zero-width", "ad\u200bmin\u200c\u200d\u2060\ufeff", "ad⟨U+200B⟩min⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩"),
    ("DEL", "abc\x7f", "abc␡"),
    ("backspace and carriage return overwrite", "rm -rf /\r# safe\x08", "rm -rf /␍# safe␈"),
    ("tag characters (ASCII smuggling)", "hi\U000e0041\U000e0042", "hi⟨U+E0041⟩⟨U+E0042⟩"),
]


@pytest.mark.parametrize(("name", "attack", "expected"), CLASSES, ids=[c[0] for c in CLASSES])
def test_each_class_of_control_is_shown_not_acted_on(name: str, attack: str, expected: str) -> None:
    shown = visible(attack)
    assert shown == expected
    assert UNSAFE.search(shown) is None
    assert visible(shown) == shown  # idempotent: sanitising twice changes nothing


@pytest.mark.parametrize(("name", "attack", "expected"), CLASSES, ids=[c[0] for c in CLASSES])
def test_a_terminal_shows_every_character_of_the_sanitised_text(name: str, attack: str, expected: str) -> None:
    screen = pyte.Screen(120, 3)
    stream = pyte.Stream(screen)
    stream.feed(visible(attack))
    assert screen.display[0].rstrip() == expected
    assert screen.title == "" and screen.cursor.y == 0


def test_without_the_sanitiser_the_terminal_hides_the_line() -> None:
    """The premise of the tests above: the raw attack really does hide text on a terminal."""
    screen = pyte.Screen(80, 3)
    pyte.Stream(screen).feed(f"import os;os.system('x'){ESC}[2K{ESC}[1G")
    assert "os.system" not in screen.display[0]


def test_tab_and_newline_are_kept_unless_one_line_is_asked_for() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("name\nfake line", newlines=False) == "name␊fake line"


def test_plain_text_passes_unchanged_and_uncopied() -> None:
    text = "déjà vu — 日本語 ✓ emoji 🎉 and `code` [bold]markup[/bold] \\x1b literal"
    assert visible(text) is text


def test_the_class_covers_every_control_and_format_character_of_this_python() -> None:
    missing = [f"U+{c:04X}" for c in range(sys.maxunicode + 1)
               if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
               and chr(c) not in "\t\n" and not UNSAFE.match(chr(c))]
    assert missing == []


def test_json_keeps_the_data_and_loses_the_raw_controls() -> None:
    data = {"line": "a\x9b2K\u202eb\x7f\U000e0041", "plain": "ü"}
    text = json_visible(json.dumps(data, ensure_ascii=False))
    assert UNSAFE.search(text) is None and "ü" in text
    assert json.loads(text) == data


def test_unsafe_chars_and_describe_name_them_without_the_character() -> None:
    assert unsafe_chars(f"x{ESC}\u202e\ty\n") == {ESC, "\u202e"}
    assert describe(ESC) == "U+001B (ESC)" and describe("\u202e") == "U+202E (RLO)"
    assert describe("\x01") == "U+0001"


def test_one_sanitiser_in_the_code() -> None:
    """Control characters are named in one module (plus the log reader, which strips ANSI colours to parse
    logs), and untrusted text meets rich markup only through `cli.console.shown`."""
    from pathlib import Path

    import repopilot

    root = Path(repopilot.__file__).parent
    sources = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    naming = {name for name, text in sources.items()
              if any(esc in text for esc in ("\\x1b", "\\x9b", "\\u202", "\\u200b", "\\x7f"))}
    assert naming == {"core/sanitize.py", "ci/lines.py"}, naming
    markup = {name for name, text in sources.items() if "rich.markup" in text}
    assert markup == {"cli/console.py"}, markup


def test_every_character_of_the_class_is_unprintable() -> None:
    # json_visible trusts a text `str.isprintable` passes (newlines aside) to hold none of the class.
    from repopilot.core.sanitize import UNSAFE, json_visible

    unsafe = [chr(c) for c in range(0x110000) if UNSAFE.match(chr(c))]
    assert len(unsafe) > 2000
    assert not any(ch.isprintable() for ch in unsafe)
    for ch in unsafe:
        text = '{\n "a": "x' + ch + 'y"\n}'
        assert json_visible(text) != text, hex(ord(ch))
    printable = '{\n "a": "caf\u00e9 \u2713 \u4e2d"\n}'
    assert json_visible(printable) is printable

