"""A fingerprint's masks are tried only on a text holding one of each mask's words (`_MASK_WORDS`): every match of
a mask holds one (the locator's coverage check), so the masked message is the one every mask gives."""

from __future__ import annotations

import re
from pathlib import Path

from repopilot.ci import fingerprint as fp
from tests.ci.test_locator import _covered

ROOT = Path(__file__).resolve().parents[2]


def _every_mask(text: str) -> str:
    """normalise_message as first written: every mask, in order, on every text."""
    for pattern, replacement in fp._MASKS:
        text = pattern.sub(replacement, text)
    text = fp._workspace_paths(text)
    text = fp._NUMBER.sub("<n>", text)
    return fp._SPACE.sub(" ", text).strip()


def test_every_match_of_a_mask_holds_one_of_its_words() -> None:
    from re import _parser  # type: ignore[attr-defined]

    assert len(fp._MASK_WORDS) == len(fp._MASKS)
    for (pattern, _), words in zip(fp._MASKS, fp._MASK_WORDS, strict=True):
        assert pattern.flags & re.IGNORECASE
        if words is not None:
            assert all(w == w.lower() for w in words)
            assert _covered(_parser.parse(pattern.pattern, pattern.flags), words, True), pattern.pattern
    workspace = re.compile(r"(?<![\w.])(?:/|[a-z]:[\\/])[^\s:'\"),\]]+", re.IGNORECASE)  # _workspace_paths'
    assert _covered(_parser.parse(workspace.pattern, workspace.flags), fp._WORKSPACE_WORDS, True)


def test_the_masked_message_is_the_one_every_mask_gives() -> None:
    lines = [line for d in ("examples", "tests/ci/rule_logs") for log in sorted((ROOT / d).glob("*.log"))
             for line in log.read_text(errors="replace").splitlines()]
    lines += ["2024-01-02T03:04:05.123Z failed at 12:30:45", "Mon, Jan 12 build",
              "id 123e4567-e89b-12d3-a456-426614174000", "at 0xDEADBEEF", "commit a1b2c3d4e5 and ABCDEF0123",
              "sha256:0123456789abcdef", "/tmp/pytest-of-x/pytest-3/a.txt", "/private/var/folders/ab/cd/T/x.log",
              r"C:\Users\me\AppData\Local\Temp\x.txt", "Seed=42 random_seed 7", "with seed 9",
              "PID: 77 port=8080 host:5432/db", "took 1.5s in 30 ms", "/home/runner/work/a/a/src/x.py:3",
              "D:\\a\\r\\r\\x.cs(3,4)", "\u00dcn\u00efcode /tmp/\u017feed 0x1 \u212aILLED 12:00:01",
              "nothing to mask here"]
    assert len(lines) > 1000
    for text in lines:
        assert fp.normalise_message(text) == _every_mask(text), text
    tests = [t for t in lines if t][:300]
    for test in tests:
        expected = test.strip()
        for pattern, replacement in fp._MASKS[3:9]:
            expected = pattern.sub(replacement, expected)
        assert fp.normalise_test(test) == expected, test
