"""Scrubbing what the site says: every spelling of a credential or a signature goes."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.api.config import Secret
from reconciler.api.scrub import Scrubber, has_hex_run, scrub_patterns
from reconciler.api.xmlcodec import load_document

KEY, SECRET = "sandbox-admin-key", "sandbox/admin secret"
SIGNATURE = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
SCRUBBER = Scrubber(KEY, Secret(SECRET))


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        (f"x?api_key=K&signature={SIGNATURE}&y=1", "x?api_key=****&signature=****&y=1"),
        (f'{{"signature": "{SIGNATURE}"}}', '{"signature": "****"}'),
        (f"SIGNATURE%3D{SIGNATURE}%26timestamp%3D1", "SIGNATURE%3D****%26timestamp%3D1"),
        ("api_secret: hunter2, next", "api_secret: ****, next"),
        ("user_add?password=Winter2026!&x=1", "user_add?password=****&x=1"),  # a site's echo
        ('{"password": "Winter2026!"}', '{"password": "****"}'),
        (f"a bare {SIGNATURE.upper()} in text", "a bare **** in text"),
        (f"{SIGNATURE}{SIGNATURE[:10]}", "****"),  # one run, however long
        ("an id 4567 and a hash deadbeef", "an id 4567 and a hash deadbeef"),
        ("Workspace Add Failed: too many Alpha", "Workspace Add Failed: too many Alpha"),
    ],
)
def test_scrub_patterns(text: str, scrubbed: str) -> None:
    assert scrub_patterns(text) == scrubbed
    assert SCRUBBER.text(text) == scrubbed


@pytest.mark.parametrize(
    "text",
    [
        f"key {KEY} secret {SECRET}",
        "key sandbox-admin-key secret sandbox%2Fadmin%20secret",
        f"hmac {hashlib.sha1(SECRET.encode()).hexdigest()}",
    ],
)
def test_the_clients_own_credentials_go_in_any_spelling(text: str) -> None:
    scrubbed = SCRUBBER.text(text)
    assert SECRET not in scrubbed and "admin%20secret" not in scrubbed
    assert KEY not in scrubbed and hashlib.sha1(SECRET.encode()).hexdigest() not in scrubbed
    assert "sand…-key" in scrubbed or scrubbed == "hmac ****"


def test_a_document_is_scrubbed_in_keys_and_values_at_any_depth() -> None:
    document = {"a": [{"b": f"signature={SIGNATURE}"}], f"key {KEY}": 1, "n": None}
    assert SCRUBBER.document(document) == {
        "a": [{"b": "signature=****"}],
        "key sand…-key": 1,
        "n": None,
    }


def test_a_clean_document_is_returned_as_it_is() -> None:
    document = {"workspaceList": {"workspaces": [{"id": 1, "workspaceName": "Team A"}]}}
    assert SCRUBBER.document(document) is document


ECHOED_BODIES = [
    # (what the site sent, what must not survive in the parsed answer)
    (f'{{"e": "signature={SIGNATURE}"}}'.encode(), SIGNATURE),
    (b'{"e": "\\u0073ignature=abc123 x"}', "abc123"),  # a name spelled by escapes
    (f'{{"e": "key \\u0073{KEY[1:]}"}}'.encode(), KEY),  # a known value spelled by escapes
    (f'{{"e": "{SIGNATURE[:-1]}\\u0030"}}'.encode(), SIGNATURE[:-1]),  # a hex run completed
    ('{"e": "api_\u212aey=abc123 x"}'.encode(), "abc123"),  # a Kelvin sign lowercases to k
    (f'{{"e": "signature={SIGNATURE}"}}'.encode("utf-16"), SIGNATURE),
    (b"<a><e>&#x73;ignature=abc123 x</e></a>", "abc123"),
]


@pytest.mark.parametrize(("body", "secret"), ECHOED_BODIES)
def test_an_answer_is_scrubbed_whatever_its_bytes_look_like(body: bytes, secret: str) -> None:
    """The search of the raw bytes lets only plainly clean answers skip the walk."""
    document = load_document(body, method="workspace_list")
    assert secret in repr(document)
    scrubbed = SCRUBBER.document(document, body)
    assert secret not in repr(scrubbed)
    assert scrubbed == SCRUBBER.document(document)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.integers(60, 70).map(lambda n: (b"0123456789abcdefABCDEF" * 4)[:n]),
            st.integers(60, 70).map(lambda n: b"e" * n),
        ),
        max_size=6,
    )
)
def test_a_hex_run_is_found_exactly_where_the_pattern_finds_one(parts: list[bytes]) -> None:
    """The fast search (bytes mapped to digit or not) answers as the regular expression
    that defines a signature-shaped run: 64 hex digits or more, anywhere."""
    data = b"".join(parts)
    assert has_hex_run(data) == (re.search(rb"[0-9a-fA-F]{64,}", data) is not None)
