"""Signing a GET request as site-api-notes.md §Signing describes, independently of the client.

The benchmarks' own HTTP callers (the sandbox load test, the sequential baseline) sign with
this small helper rather than ``reconciler.api.signing``: they stand for what someone writes
by hand from the documentation, and a second implementation also cross-checks the first.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from urllib.parse import quote, urlencode


def signed_get_url(
    base_url: str,
    method: str,
    params: Mapping[str, object],
    api_key: str,
    api_secret: str,
    now: float | None = None,
) -> str:
    """The URL of a signed GET: sorted, encoded parameters, then ``&signature=`` last.

    The HMAC key is the hex SHA-1 of the secret; the message is the full URL as sent.
    """
    full = {
        **{name: str(value) for name, value in params.items()},
        "api_key": api_key,
        "timestamp": str(int(time.time() if now is None else now)),
    }
    query = urlencode(sorted(full.items()), quote_via=quote, safe="")
    url = f"{base_url}/api/{method}?{query}"
    key = hashlib.sha1(api_secret.encode()).hexdigest().encode()
    return f"{url}&signature={hmac.new(key, url.encode(), hashlib.sha256).hexdigest()}"
