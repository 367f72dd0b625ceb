"""A pattern's words rule a line out only when the line is ASCII, lower-cased, and holds none of them."""

from repopilot.ci.words import ascii_lower, may_hold


def test_only_an_ascii_line_without_any_of_the_words_is_ruled_out() -> None:
    assert ascii_lower("Build FAILED") == "build failed"
    assert ascii_lower("Échec du build") is None  # lower() of non-ASCII need not be what `re` compares
    assert not may_hold(("error", "fail"), ascii_lower("all good here"))
    assert may_hold(("error", "fail"), ascii_lower("Build FAILED"))
    assert may_hold(("error",), ascii_lower("Échec du build"))  # not ASCII: the pattern is tried
    assert may_hold(None, ascii_lower("anything"))  # no words known: always tried
