"""The stored text of a document: every string comes back as it was, and the quick way (no
string needs an escape, which is nearly always) writes and reads exactly what looking at
every string does."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.state.documents import (
    JSONB_MARK,
    _escape_text,
    _unescape_text,
    _walk,
    dump_document,
    dump_stored,
    parse_document,
    parse_stored,
)

# Text a site may answer or a person may write, the awkward parts made likely: NUL, lone
# surrogates, the escape mark, backslashes and what only looks like an escape.
_AWKWARD = st.sampled_from(
    ["\x00", "\ud800", "\udfff", JSONB_MARK, "\\", "\\u0000", "u0000", "\\ufdd0"]
)
_TEXT = st.lists(st.one_of(st.text(max_size=4), _AWKWARD), max_size=4).map("".join)
_DOCUMENT = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12,
).map(lambda value: {"value": value})


@given(_DOCUMENT)
@settings(max_examples=300, deadline=None)
def test_the_stored_text_is_what_looking_at_every_string_writes(document: dict[str, Any]) -> None:
    assert dump_stored(document) == dump_document(_walk(document, _escape_text))


@given(_DOCUMENT)
@settings(max_examples=300, deadline=None)
def test_every_string_comes_back_as_it_was(document: dict[str, Any]) -> None:
    text = dump_stored(document)
    assert parse_stored(text, "test") == document
    assert parse_stored(text.encode("utf-8"), "test") == document
    assert parse_stored(text, "test") == _walk(parse_document(text, "test"), _unescape_text)


def test_a_stored_escape_written_as_a_json_escape_is_read_back() -> None:
    """The mark written as ``\\ufdd0`` (a JSON writer that escapes non-ASCII) is still the
    mark: the quick way must not take such text for plain text."""
    stored = dump_stored({"name": "da\x00ve"})
    escaped = stored.replace(JSONB_MARK, "\\uFDD0")
    assert JSONB_MARK not in escaped
    assert parse_stored(escaped, "test") == {"name": "da\x00ve"}
    assert parse_stored(escaped.encode(), "test") == {"name": "da\x00ve"}
