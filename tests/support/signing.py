"""Request signing written straight from ``site-api-notes.md``, independent of any client.

The sandbox's contract tests sign with this, so a bug shared by the client and the sandbox
cannot make both agree on something the real site would refuse.

* key: the lowercase hex SHA-1 of the API secret, its 40 characters used as the key bytes;
* signature: lowercase hex HMAC-SHA256 of the message;
* GET message: the full URL with the parameters sorted by name and URL-encoded (``/`` as
  ``%2F``), without the signature, which is then appended as ``&signature=<hex>``;
* POST message: the method URL alone; every parameter, signature last, in a form body.
  The authentication page covers PUT and DELETE alike, so a DELETE is signed and sent the
  same way (``signed_post``, sent with the other verb).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from urllib.parse import quote, urlencode


def hmac_key(api_secret: str) -> bytes:
    return hashlib.sha1(api_secret.encode("utf-8")).hexdigest().encode("ascii")


def sign(api_secret: str, message: str) -> str:
    return hmac.new(hmac_key(api_secret), message.encode("utf-8"), hashlib.sha256).hexdigest()


def _with_credentials(
    params: Mapping[str, object], api_key: str, timestamp: int | None
) -> dict[str, str]:
    full = {name: str(value) for name, value in params.items()}
    full["api_key"] = api_key
    full["timestamp"] = str(int(time.time()) if timestamp is None else timestamp)
    return full


def signed_get_url(
    base_url: str,
    method: str,
    params: Mapping[str, object],
    *,
    api_key: str,
    api_secret: str,
    timestamp: int | None = None,
) -> str:
    """The complete URL of a signed GET: sorted, URL-encoded query, signature last."""
    full = _with_credentials(params, api_key, timestamp)
    query = urlencode(sorted(full.items()), quote_via=quote, safe="")
    url = f"{base_url}/api/{method}?{query}"
    return f"{url}&signature={sign(api_secret, url)}"


def signed_post(
    base_url: str,
    method: str,
    params: Mapping[str, object],
    *,
    api_key: str,
    api_secret: str,
    timestamp: int | None = None,
) -> tuple[str, str]:
    """The URL and form-encoded body of a signed POST (the URL alone is signed)."""
    url = f"{base_url}/api/{method}"
    full = _with_credentials(params, api_key, timestamp)
    body = urlencode([*full.items(), ("signature", sign(api_secret, url))])
    return url, body
