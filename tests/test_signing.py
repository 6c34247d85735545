"""Signing, byte for byte, against the message the public documentation gives."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.api.signing import Signer, encode_params, sign_get_url, sign_post, signing_key

BASE = "https://acme.example.net"
DOC_GET_MESSAGE = "https://acme.example.net/api/user_info?api_key=K&timestamp=1700000000&user_id=42"
DOC_GET_SIGNATURE = "fcdf6d0a5ec60d223a2046149ec051d6ef3b0ecffd5083b25e554a08c7d46b65"
DOC_POST_SIGNATURE = "13525e9a459208d7b1c442ff883e517dfc64357ed005912ede49016c3af7a6f1"


def test_signing_key_is_the_hex_sha1_of_the_secret_not_the_secret() -> None:
    assert signing_key("S") == b"02aa629c8b16cd17a44f3a0efec2feed43937642"
    assert signing_key("S") != b"S"


def test_get_url_is_the_documented_message_with_the_signature_last() -> None:
    url = sign_get_url(BASE, "user_info", {"user_id": "42"}, "K", "S", 1700000000)
    assert url == f"{DOC_GET_MESSAGE}&signature={DOC_GET_SIGNATURE}"


def test_get_signature_is_hmac_sha256_of_the_unsigned_url() -> None:
    url = sign_get_url(BASE + "/", "user_info", {"user_id": "42"}, "K", "S", 1700000000)
    unsigned, signature = url.rsplit("&signature=", 1)
    expected = hmac.new(signing_key("S"), unsigned.encode(), hashlib.sha256).hexdigest()
    assert (unsigned, signature) == (DOC_GET_MESSAGE, expected)


def test_get_parameters_are_sorted_by_name_whatever_the_order_given() -> None:
    params = {"type": "nonAdminsOnly", "path": "/", "current_page": "2"}
    url = sign_get_url(BASE, "users_location_access", params, "K", "S", 1)
    names = [name for name, _ in parse_qsl(urlsplit(url).query)]
    assert names == ["api_key", "current_page", "path", "timestamp", "type", "signature"]


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("/", "%2F"),
        ("/Team A_workspace/", "%2FTeam%20A_workspace%2F"),
        ("a+b&c=d", "a%2Bb%26c%3Dd"),
        ("ü", "%C3%BC"),
        ("safe-_.~", "safe-_.~"),
    ],
)
def test_values_are_percent_encoded_with_slash_as_2F(value: str, encoded: str) -> None:
    assert encode_params({"path": value}) == f"path={encoded}"


def test_post_signs_the_method_url_alone_and_sends_everything_in_the_body() -> None:
    url, body = sign_post(BASE, "workspace_add", {"name": "A,B", "root_access": "1"}, "K", "S", 7)
    assert url == "https://acme.example.net/api/workspace_add"
    assert body == f"api_key=K&name=A%2CB&root_access=1&timestamp=7&signature={DOC_POST_SIGNATURE}"
    assert dict(parse_qsl(body))["name"] == "A,B"


def test_the_xml_variant_signs_the_url_that_is_sent() -> None:
    url = sign_get_url(BASE, "user_info.xml", {"user_id": "42"}, "K", "S", 1700000000)
    unsigned, signature = url.rsplit("&signature=", 1)
    assert unsigned.startswith("https://acme.example.net/api/user_info.xml?")
    assert signature == hmac.new(signing_key("S"), unsigned.encode(), hashlib.sha256).hexdigest()


def test_a_signature_parameter_from_the_caller_is_refused() -> None:
    with pytest.raises(ValueError, match="signature"):
        sign_get_url(BASE, "user_info", {"signature": "x"}, "K", "S", 1)


@given(st.dictionaries(st.text(min_size=1), st.text(), max_size=4))
def test_every_name_and_value_is_encoded_as_quote_with_nothing_safe(
    params: dict[str, str],
) -> None:
    """The values left unquoted (plain ASCII letters and digits) are exactly those ``quote``
    leaves as they are: a value that needs encoding is never sent as it is."""
    expected = "&".join(
        f"{quote(name, safe='')}={quote(value, safe='')}" for name, value in sorted(params.items())
    )
    assert encode_params(params) == expected


class _CountingSigner(Signer):
    """A ``Signer`` that counts the HMACs it computes (the only seam: ``_signature``)."""

    def __init__(self, base_url: str, key: str, secret: str) -> None:
        super().__init__(base_url, key, secret)
        self.made = 0

    def _signature(self, message: str) -> str:
        self.made += 1
        return super()._signature(message)


def test_one_signer_signs_every_call_as_the_documentation_does_and_a_post_url_once() -> None:
    """A client signs hundreds of writes of one method: the signed message (the URL alone) is
    the same for all of them, so its HMAC is made once; every GET, and every POST body, is
    still signed exactly as a fresh signer signs it."""
    signer = _CountingSigner(BASE, "K", "S")
    for n in range(5):
        for method in ("workspace_add", "user_group_add"):
            params = {"name": f"team {n}", "root_access": "1"}
            assert signer.post(method, params, 7 + n) == sign_post(
                BASE, method, params, "K", "S", 7 + n
            )
    assert signer.made == 2  # one per method URL, not one per call
    for n in range(3):
        url = signer.get_url("user_info", {"user_id": str(n)}, 1700000000 + n)
        assert url == sign_get_url(BASE, "user_info", {"user_id": str(n)}, "K", "S", 1700000000 + n)
    assert signer.get_url("user_info", {"user_id": "42"}, 1700000000).endswith(
        f"&signature={DOC_GET_SIGNATURE}"
    )
    assert signer.made == 6
