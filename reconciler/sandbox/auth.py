"""Request signing as the public documentation describes it, checked over the bytes received.

The HMAC key is the lowercase hex SHA-1 of the API secret (the 40 hex characters as key
bytes); the signature is the lowercase hex HMAC-SHA256 of a message:

* GET: the URL as received -- scheme, the Host header, the raw path and the raw query string,
  without the trailing ``&signature=...``. Parameters must be sorted by name.
* POST (and DELETE, signed alike): the method URL alone (scheme://host/path); the parameters
  travel in a form-encoded body.

``signature`` is always the last parameter. Nothing is re-encoded before checking: a client
that signs exactly what it sends passes, one that signs something else fails, as on the site.
Secrets never appear in a message or a log; the store keeps only the derived signing key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from itertools import pairwise
from urllib.parse import parse_qsl, quote

from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.rows import UserRow
from reconciler.sandbox.store import Store

AUTH_FAILED = "Authentication Failed"
INVALID_REQUEST = "Invalid Request"
FILEGENIUS_AUTH_CODE = "auth_code"
"""Refused, not ignored like other unknown parameters: a client that sends it expects to act
as another user, and ignoring it would run the call as the key's own user instead."""
_TIMESTAMP = re.compile(r"-?[0-9]{1,12}")
_SIGNATURE_SUFFIX = b"&signature="
_SIGNING_HINT = (
    "Sign the exact URL sent (GET: scheme, host, path and the sorted query without the "
    "signature) or the method URL alone (POST) with HMAC-SHA256, keyed by the lowercase hex "
    "SHA-1 of the API secret, and send the lowercase hex digest as the last parameter."
)


def signing_key(api_secret: str) -> str:
    """The HMAC key derived from an API secret (stored instead of the secret)."""
    return hashlib.sha1(api_secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Incoming:
    """The parts of a request that signing covers, exactly as they arrived."""

    verb: str
    scheme: str
    host: bytes
    raw_path: bytes
    query: bytes
    body: bytes
    content_type: str


def authenticate(
    request: Incoming, store: Store, now: int, window: int, *, strict_signing: bool = False
) -> tuple[UserRow, dict[str, str]]:
    """The calling user and the call's parameters, or the ``ApiError`` the site would answer.

    ``strict_signing``: a GET's signature is checked over the site's own encoding of the
    parameters it read (as a PHP site rebuilding the URL with ``rawurlencode`` would), not over
    the bytes received -- so a client encoding a space as ``+`` or hex in lower case fails even
    when it signed exactly what it sent.
    """
    pairs, signed = _parameters(request)
    if strict_signing and request.verb == "GET":
        signed = _site_encoded(request, pairs)
    names = [name for name, _ in pairs]
    absent = [name for name in ("api_key", "timestamp", "signature") if name not in names]
    if absent:
        raise ApiError(
            401,
            f"The request carries no {' and no '.join(absent)}. Every call must carry api_key, "
            "timestamp and signature, with signature the last parameter.",
            title=AUTH_FAILED,
        )
    _check_structure(request.verb, names)
    if FILEGENIUS_AUTH_CODE in names:
        raise ApiError(
            400,
            "auth_code belongs to the sign-in of older FileGenius sites (user_auth), which this "
            "site does not offer: every call acts as the user of its api_key, signed with "
            "timestamp and signature. Remove auth_code.",
            title=INVALID_REQUEST,
        )
    params = dict(pairs)
    given = params.pop("signature")
    timestamp = params["timestamp"]
    if not _TIMESTAMP.fullmatch(timestamp):
        raise ApiError(
            401,
            f"timestamp must be the current Unix time in whole seconds; got {timestamp!r}.",
            title=AUTH_FAILED,
        )
    found = store.credentials(params["api_key"])
    if found is None or not found[1]:
        raise ApiError(
            401,
            "The api_key is not known to this site. Check that the key belongs to this site "
            "and to an existing user.",
            title=AUTH_FAILED,
        )
    caller, key = found
    expected = hmac.new(key.encode(), signed, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), given.encode()):
        raise ApiError(
            401, "The signature does not match the request. " + _SIGNING_HINT, title=AUTH_FAILED
        )
    skew = int(timestamp) - now
    if abs(skew) > window:
        direction = "ahead of" if skew > 0 else "behind"
        raise ApiError(
            401,
            f"The timestamp is {abs(skew)} seconds {direction} the site's clock (at most "
            f"{window} are accepted). Check the clock of the calling machine and send the "
            "current Unix time.",
            title=AUTH_FAILED,
        )
    if not caller.active:
        raise ApiError(401, "The user of this api_key is deactivated.", title=AUTH_FAILED)
    return caller, params


def _parameters(request: Incoming) -> tuple[list[tuple[str, str]], bytes]:
    """The parameters in the order received, and the message their signature must cover."""
    base = request.scheme.encode() + b"://" + request.host + request.raw_path
    if request.verb == "GET":
        raw = request.query
        cut = raw.rfind(_SIGNATURE_SUFFIX)
        signed = base + b"?" + raw[:cut] if cut >= 0 else base + (b"?" + raw if raw else b"")
    else:
        if request.query:
            raise ApiError(
                400,
                f"{request.verb} parameters travel in a form-encoded request body, not in the URL.",
                title=INVALID_REQUEST,
            )
        raw = request.body
        if raw and request.content_type.split(";")[0].strip().lower() != (
            "application/x-www-form-urlencoded"
        ):
            raise ApiError(
                400,
                f"{request.verb} parameters must be sent as a form-encoded body "
                "(Content-Type: application/x-www-form-urlencoded).",
                title=INVALID_REQUEST,
            )
        signed = base
    try:
        pairs = parse_qsl(
            raw.decode("ascii"),
            keep_blank_values=True,
            strict_parsing=bool(raw),
            encoding="utf-8",
            errors="strict",
        )
    except (UnicodeDecodeError, ValueError):
        raise ApiError(
            400,
            "The parameters are not valid URL-encoded text (name=value pairs joined by &, "
            "with every non-ASCII character percent-encoded).",
            title=INVALID_REQUEST,
        ) from None
    return pairs, signed


def _site_encoded(request: Incoming, pairs: list[tuple[str, str]]) -> bytes:
    """The GET message as the site would rebuild it: RFC 3986 encoding, signature left out."""
    base = request.scheme.encode() + b"://" + request.host + request.raw_path
    query = "&".join(
        f"{quote(name, safe='')}={quote(value, safe='')}"
        for name, value in pairs
        if name != "signature"
    )
    return base + b"?" + query.encode("ascii")


def _check_structure(verb: str, names: list[str]) -> None:
    """Signature last, no parameter twice, and for GET the documented alphabetical order."""
    if names[-1] != "signature":
        raise ApiError(400, "signature must be the last parameter.", title=INVALID_REQUEST)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ApiError(
                400, f"The parameter {name} appears more than once.", title=INVALID_REQUEST
            )
        seen.add(name)
    if verb == "GET":
        ordered = names[:-1]
        for before, after in pairwise(ordered):
            if after < before:
                raise ApiError(
                    400,
                    "GET parameters must be in alphabetical order by name, with signature "
                    f"last: {after!r} must come before {before!r}.",
                    title=INVALID_REQUEST,
                )
