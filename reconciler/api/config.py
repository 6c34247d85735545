"""Where the client talks to and with which credentials, gathered and checked once.

Precedence of the site URL: ``--site`` > ``RECONCILER_SITE_URL`` > the manifest's
``site_url`` > the credentials file's ``site_url``. Credentials: ``RECONCILER_API_KEY`` and
``RECONCILER_API_SECRET``, each falling back to a YAML credentials file (``--credentials`` or
``RECONCILER_CREDENTIALS_FILE``) that must not be readable by group or others -- the secret is
as good as a password. The old ``SITE_*`` names are still read (``reconciler.environment``).

Plain ``http://`` is refused unless the host is loopback: the API key travels in every request
and the site's own docs say it answers plain HTTP with an error. The secret lives in a
:class:`Secret`, whose ``repr``/``str`` are masked so it cannot leak through a log line, a
traceback or the repr of the config.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import ssl
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml

from reconciler import environment
from reconciler.environment import API_KEY, API_SECRET, CREDENTIALS_FILE, SITE_URL
from reconciler.errors import ConfigError

MASK = "****"


class Secret:
    """A string that never shows itself: ``str``/``repr`` are masked; ``reveal()`` is explicit."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{MASK}')"

    def __str__(self) -> str:
        return MASK

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, len(self._value)))


def mask_key(key: str) -> str:
    """Enough of an API key to tell keys apart in a log, never enough to use it."""
    if key.startswith(MASK) or "…" in key:
        return key  # already masked: masking twice would hide which key it was
    if len(key) >= 12:
        return f"{key[:4]}…{key[-4:]}"
    if len(key) >= 8:
        return MASK + key[-4:]
    return MASK


DEFAULT_TIMEOUT = 60.0
"""Seconds one call may take in all: every attempt with its whole answer, and the waits between
them (not the wait for a concurrency slot). A site dripping a byte every 10 s ends here."""

DEFAULT_MAX_ANSWER_BYTES = 32 * 2**20
"""The most bytes of one answer, counted after decompression while it streams in. The largest
real answers (a page of 50 users, a site's workspace list) are far smaller; a gzip bomb or an
endless body is cut off here instead of filling memory."""

DEFAULT_MAX_USER_PAGES = 1000
"""The most ``user_list`` pages read when the site reported no user count (50,000 users).
With a count, the cap is derived from it (see ``SiteClient.user_list``)."""


@dataclass(frozen=True)
class ClientConfig:
    """Everything ``SiteClient`` needs; validated on construction.

    ``site_note`` is a line for the user when the site URL came from somewhere they might not
    expect (``RECONCILER_SITE_URL`` overriding a different ``site.url`` of the manifest);
    ``None`` else.
    """

    site_url: str
    api_key: str
    api_secret: Secret
    response_format: Literal["json", "xml"] = "json"
    concurrency: int = 8
    rate_limit: float | None = None  # requests a second, shared by all calls
    timeout: float = DEFAULT_TIMEOUT  # seconds a call may take in all, retries included
    read_attempts: int = 5  # total tries of a call, the first included
    backoff_base: float = 0.5  # seconds; the cap of the n-th retry's wait is base * 2**(n-1)
    backoff_max: float = 30.0
    max_retry_after: float = 120.0  # a longer Retry-After is reported, not waited out
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    max_user_pages: int = DEFAULT_MAX_USER_PAGES
    ca_file: str | None = None  # PEM authorities to trust instead of the system's (https only)
    site_note: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "site_url", check_site_url(self.site_url))
        if not self.api_key:
            raise ConfigError("The API key is empty.", hint=_CREDENTIALS_HINT)
        if self.response_format not in ("json", "xml"):
            raise ConfigError(f"Unknown response format {self.response_format!r}: use json or xml.")
        _require(self.concurrency >= 1, "--concurrency must be at least 1.")
        _require(self.rate_limit is None or self.rate_limit > 0, "--rate-limit must be above 0.")
        _require(self.timeout > 0, "--timeout must be above 0 seconds.")
        _require(self.read_attempts >= 1, "read_attempts must be at least 1.")
        _require(
            min(self.backoff_base, self.backoff_max, self.max_retry_after) >= 0, "negative wait"
        )
        _require(self.max_answer_bytes >= 1, "max_answer_bytes must be at least 1.")
        _require(self.max_user_pages >= 1, "max_user_pages must be at least 1.")
        if self.ca_file is not None:
            check_ca_file(self.ca_file)

    @property
    def masked_key(self) -> str:
        return mask_key(self.api_key)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


_CREDENTIALS_HINT = (
    "Set RECONCILER_API_KEY and RECONCILER_API_SECRET, or give a credentials file (--credentials "
    "or RECONCILER_CREDENTIALS_FILE) holding api_key: and api_secret:, readable only by you "
    "(chmod 600)."
)


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1``: the only hosts plain HTTP may reach."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_URL_HINT = "Give the site's address, e.g. --site https://acme.example.net"
_DEFAULT_PORTS = {"https": 443, "http": 80}


def check_site_url(url: str) -> str:
    """The one normal form of a site's identity; refuses what would leak, mislead or fail.

    Scheme and host lowercased, the scheme's default port dropped, no trailing ``/`` (nor a
    pasted ``/api``), the path kept: ``https://h/a`` and ``https://h/b`` are different sites.
    The tool's records are keyed by this form, so every spelling of one site finds them.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        raise ConfigError(
            f"The site URL {url!r} is malformed (an IPv6 address needs both '[' and ']').",
            hint=_URL_HINT,
        ) from None
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(
            "The site URL must not carry credentials, a query or a fragment.",
            hint="Give only scheme, host and path; credentials go in RECONCILER_API_KEY/SECRET.",
        )
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        raise ConfigError(f"The site URL {url!r} is not an http(s) URL.", hint=_URL_HINT)
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ConfigError(
            f"The site URL {url!r} has an invalid port: a port is a number from 1 to 65535.",
            hint=_URL_HINT,
        )
    if scheme == "http" and not is_loopback(host):
        raise ConfigError(
            f"Refusing plain http:// for {host}: the API key would travel unencrypted.",
            hint="Use the site's https:// address (plain http is accepted for loopback only).",
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = parts.path.rstrip("/")
    if path.endswith("/api"):  # a user pasted the API's address: the client adds /api itself
        path = path[: -len("/api")]
    return f"{scheme}://{netloc}{path}"


def check_ca_file(path: str) -> ssl.SSLContext:
    """A verifying TLS context that trusts the authorities in the PEM file ``path`` (and only
    them): a sandbox's own authority, or a company's. ``ConfigError`` if it is not usable."""
    try:
        return ssl.create_default_context(cafile=path)
    except FileNotFoundError:
        raise ConfigError(f"The CA file {path} does not exist.", hint=_CA_FILE_HINT) from None
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise ConfigError(
            f"The CA file {path} holds no usable certificate: {exc}.", hint=_CA_FILE_HINT
        ) from None


_CA_FILE_HINT = (
    "Give --ca-file (or RECONCILER_CA_FILE) a PEM file of certificate authorities, such as the "
    "ca.pem that 'reconciler sandbox serve --tls' writes."
)


def load_client_config(
    site: str | None,
    manifest_site_url: str | None,
    credentials_file: str | None,
    env: Mapping[str, str],
    **overrides: Any,
) -> ClientConfig:
    """Gather the site URL and credentials by precedence; ``None`` overrides are ignored."""
    file_path = credentials_file or environment.read(env, CREDENTIALS_FILE)
    key, secret = environment.read(env, API_KEY), environment.read(env, API_SECRET)
    from_file: Mapping[str, str] = {}
    if file_path and not (key and secret):
        from_file = read_credentials_file(file_path)
    key = key or from_file.get("api_key")
    secret = secret or from_file.get("api_secret")
    url = site or environment.read(env, SITE_URL) or manifest_site_url or from_file.get("site_url")
    missing = [
        text
        for text, value in (
            ("the site URL (--site or RECONCILER_SITE_URL, or site.url in the manifest)", url),
            ("the API key (RECONCILER_API_KEY or api_key in the credentials file)", key),
            (
                "the API secret (RECONCILER_API_SECRET or api_secret in the credentials file)",
                secret,
            ),
        )
        if not value
    ]
    if missing or url is None or key is None or secret is None:
        raise ConfigError("Missing " + "; ".join(missing) + ".", hint=_CREDENTIALS_HINT)
    options = {name: value for name, value in overrides.items() if value is not None}
    config = ClientConfig(site_url=url, api_key=key, api_secret=Secret(secret), **options)
    chosen_by = "--site" if site else environment.source(env, SITE_URL)
    if chosen_by and manifest_site_url:
        note = _override_note(chosen_by, config.site_url, manifest_site_url)
        config = replace(config, site_note=note)
    return config


def _override_note(chosen_by: str, url: str, manifest_url: str) -> str | None:
    """One line saying that ``chosen_by`` overrides a *different* site of the manifest."""
    try:
        declared = check_site_url(manifest_url)
    except ConfigError:  # not repeated: it may be malformed in a way that shows a secret
        return f"Using {chosen_by} {url} instead of the manifest's site.url"
    if declared == url:
        return None
    return f"Using {chosen_by} {url} (the manifest's site.url is {declared})"


def read_credentials_file(path: str) -> dict[str, str]:
    """``api_key``, ``api_secret`` and optionally ``site_url`` from a private YAML file."""
    try:
        mode = os.stat(path).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(
                f"The credentials file {path} can be read by others (mode {stat.filemode(mode)}).",
                hint=f"Run: chmod 600 {path}",
            )
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except OSError as exc:
        raise ConfigError(f"Cannot read the credentials file {path}: {exc.strerror}.") from None
    except yaml.YAMLError:
        raise ConfigError(f"The credentials file {path} is not valid YAML.") from None
    fields = ("api_key", "api_secret", "site_url")
    if not isinstance(data, dict) or not all(isinstance(data.get(f, ""), str) for f in fields):
        raise ConfigError(
            f"The credentials file {path} must be a mapping of text values.",
            hint="Write it as lines 'api_key: ...' and 'api_secret: ...' (optionally "
            "'site_url: ...'); quote a value that YAML would read as a number.",
        )
    return {name: data[name] for name in fields if data.get(name)}
