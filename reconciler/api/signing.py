"""Request signing, exactly as the site's public documentation describes it.

Pure functions, so the one part of the client that must be byte-exact can be table-tested
without a network. The HMAC key is the lowercase hex SHA-1 of the API secret; the signature is
the lowercase hex HMAC-SHA256 of:

* GET: the full URL as sent, parameters sorted by name and percent-encoded (``/`` as ``%2F``),
  without the signature, which is then appended as the last parameter;
* POST: the method's URL alone; every parameter, signature included, travels in a
  form-encoded body.

The secret and the signature are returned to the caller only: nothing here logs.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from urllib.parse import quote

API_PREFIX = "/api/"


def method_url(base_url: str, method_path: str) -> str:
    """``{base_url}/api/<method_path>``; ``method_path`` may carry ``.xml``."""
    return base_url.rstrip("/") + API_PREFIX + method_path


def signing_key(secret: str) -> bytes:
    """The HMAC key: the hex SHA-1 digest of the secret, as ASCII bytes (never the secret)."""
    return hashlib.sha1(secret.encode("utf-8")).hexdigest().encode("ascii")


def signature(message: str, secret: str) -> str:
    """Lowercase hex HMAC-SHA256 of ``message`` keyed with :func:`signing_key`."""
    return hmac.new(signing_key(secret), message.encode("utf-8"), hashlib.sha256).hexdigest()


def _quoted(value: str) -> str:
    """``value`` percent-encoded with nothing kept but letters, digits and ``_.-~``; most
    values (IDs, page numbers) are plain ASCII letters and digits and are returned as they
    are without asking ``quote`` (a large read signs some 1,100 calls)."""
    return value if value.isascii() and value.isalnum() else quote(value, safe="")


def encode_params(params: Mapping[str, str]) -> str:
    """Sorted ``name=value`` pairs, every reserved character percent-encoded (``/`` too).

    ``quote(..., safe='')`` rather than ``urlencode``: the site signs ``%20`` and ``%2F``, and
    a ``+`` for a space would change the signed text.
    """
    return "&".join(f"{_quoted(name)}={_quoted(value)}" for name, value in sorted(params.items()))


def _with_credentials(params: Mapping[str, str], key: str, timestamp: int) -> dict[str, str]:
    if "signature" in params:
        raise ValueError("'signature' is added by the signer, not passed as a parameter")
    return {**params, "api_key": key, "timestamp": str(timestamp)}


class Signer:
    """Signs one client's calls: the HMAC key is derived from the secret once, not per call.

    Holds the key (never the secret): whoever holds it can sign, like the secret itself, so
    it lives where the secret does, in the client, and is never logged.

    No call signs with ``hmac.digest``: that one-shot function lets go of the interpreter
    lock, and an apply's journal thread takes it meanwhile, so each signature waited for the
    thread (some 0.1 ms a call, on the event loop). A keyed ``hmac.HMAC`` made once is copied
    instead, which keeps the lock. A POST signs its URL alone, the same for every call of one
    method: its signature is kept, by URL, and made once.
    """

    __slots__ = ("_base_url", "_key", "_keyed", "_post_signatures")

    def __init__(self, base_url: str, key: str, secret: str) -> None:
        self._base_url, self._key = base_url, key
        self._keyed = hmac.new(signing_key(secret), digestmod=hashlib.sha256)
        self._post_signatures: dict[str, str] = {}

    def _signature(self, message: str) -> str:
        mac = self._keyed.copy()
        mac.update(message.encode("utf-8"))
        return mac.hexdigest()

    def get_url(self, method_path: str, params: Mapping[str, str], timestamp: int) -> str:
        """The complete URL of a signed GET: sorted, encoded query with the signature last."""
        unsigned = (
            method_url(self._base_url, method_path)
            + "?"
            + encode_params(_with_credentials(params, self._key, timestamp))
        )
        return f"{unsigned}&signature={self._signature(unsigned)}"

    def post(self, method_path: str, params: Mapping[str, str], timestamp: int) -> tuple[str, str]:
        """The URL and form-encoded body of a signed POST; the signed message is the URL."""
        url = method_url(self._base_url, method_path)
        body = encode_params(_with_credentials(params, self._key, timestamp))
        signed = self._post_signatures.get(url)
        if signed is None:
            signed = self._post_signatures[url] = self._signature(url)
        return url, f"{body}&signature={signed}"


def sign_get_url(
    base_url: str,
    method_path: str,
    params: Mapping[str, str],
    key: str,
    secret: str,
    timestamp: int,
) -> str:
    """The complete URL of a signed GET: sorted, encoded query with the signature last."""
    return Signer(base_url, key, secret).get_url(method_path, params, timestamp)


def sign_post(
    base_url: str,
    method_path: str,
    params: Mapping[str, str],
    key: str,
    secret: str,
    timestamp: int,
) -> tuple[str, str]:
    """The URL and form-encoded body of a signed POST; the signed message is the URL alone."""
    return Signer(base_url, key, secret).post(method_path, params, timestamp)
