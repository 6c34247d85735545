"""From the text a user gives (``--state``, ``RECONCILER_STATE``, ``site.state``) to records.

* ``postgresql://…`` or ``postgres://…``: a PostgreSQL database, in libpq's URL form, with one
  query parameter of ours, ``schema=NAME`` (default ``reconciler``), taken out before libpq
  sees the URL. Anything libpq accepts works (``sslmode``, ``host=/socket/dir``, a service…).
* ``file:///path``, or a plain path: a directory; a relative path is taken from ``base_dir``
  (the manifest's directory), so a command means the same wherever it is run from.

Anything else is refused: a location the tool half understood would put records where no
other runner finds them. Each kind of backend is one entry of ``BACKENDS`` (its URL schemes,
how its location is read and how its records are opened): a new backend is a new entry, and
the manifest's rules, the CLI's help and every message name the schemes from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from reconciler.errors import ConfigError
from reconciler.passwords import masked, unencoded_password, without_password
from reconciler.state.backend import DEFAULT_LEASE_SECONDS, RecordStore, StateLocation
from reconciler.state.leases import check_lease_seconds

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class Backend:
    """One kind of place the records can live."""

    kind: str  # StateLocation.kind
    schemes: tuple[str, ...]  # URL schemes naming it; the first is the one written
    example: str  # how a user writes one, for hints and help
    parse: Callable[[str, Path], StateLocation]  # the text (with its scheme), the base dir
    open: Callable[[StateLocation, str, float], RecordStore]  # location, site, lease seconds

    def is_written_as(self, text: str) -> bool:
        return text.lower().startswith(tuple(f"{scheme}://" for scheme in self.schemes))


def parse_location(text: str, *, base_dir: Path) -> StateLocation:
    """Where the records live; ``ConfigError`` for anything not clearly one of the two."""
    text = text.strip()
    if not text:
        raise ConfigError("The state location is empty.", hint=_HINT)
    scheme = _SCHEME.match(text)
    kind = scheme.group(1).lower() if scheme else ""
    backend = BY_SCHEME.get(kind)
    if backend is not None:
        return backend.parse(text, base_dir)
    if scheme and len(kind) > 1:  # one letter: a Windows drive, which is a path
        raise ConfigError(
            f"The state location {without_password(text)!r} has an unknown scheme {kind!r}.",
            hint=_HINT,
        )
    return _directory_location(text, base_dir)


def _directory_location(path_text: str, base_dir: Path) -> StateLocation:
    path = Path(path_text).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    resolved = str(path.resolve())
    return StateLocation("directory", resolved, resolved)


def _file_url_path(text: str) -> str:
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        raise ConfigError(
            f"The state location {text!r} is not a valid URL ({exc}).", hint=_HINT
        ) from None
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise ConfigError(
            f"The state location {text!r} is not a local file URL.",
            hint="Write a directory as file:///absolute/path, or as a plain path.",
        )
    return unquote(parts.path)


def _postgres_location(text: str, base_dir: Path) -> StateLocation:
    if unencoded_password(text):
        raise ConfigError(
            f"The password in the state location {masked(text)!r} holds a /, ?, # or @ that "
            "is not percent-encoded, so the URL would be read as another host or database.",
            hint="Leave the password out of the URL and set PGPASSWORD (or ~/.pgpass), or "
            "percent-encode it (/ is %2F, ? is %3F, # is %23, @ is %40).",
        )
    try:
        parts = urlsplit(text)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as exc:  # "[::1": an unclosed IPv6 bracket
        raise ConfigError(
            f"The state location {masked(text)!r} is not a valid URL ({exc}).",
            hint=_HINT,
        ) from None
    schemas = [value for name, value in query if name == "schema"]
    schema = schemas[-1] if schemas else "reconciler"
    if not _SCHEMA_NAME.match(schema):
        raise ConfigError(
            f"The schema name {schema!r} in the state location is not a plain identifier.",
            hint="Use letters, digits and _ (at most 63, not starting with a digit).",
        )
    libpq_query = urlencode([(name, value) for name, value in query if name != "schema"])
    target = _url(parts.scheme, parts.netloc, parts.path, libpq_query)
    display = without_password(target)
    shown = f"{display}{'&' if '?' in display else '?'}schema={schema}"
    return StateLocation("postgresql", target, shown, schema=schema)


def _url(scheme: str, netloc: str, path: str, query: str) -> str:
    """A URL that keeps ``//`` before an empty host (``urlunsplit`` drops it, and libpq
    would then not read ``postgresql:/db`` as a URL)."""
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def open_records(
    location: StateLocation, site: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
) -> RecordStore:
    """The records of ``site`` at ``location``; nothing is opened or created until used."""
    check_lease_seconds(lease_seconds)
    return BY_KIND[location.kind].open(location, site, lease_seconds)


def _open_postgres(location: StateLocation, site: str, lease_seconds: float) -> RecordStore:
    from reconciler.state.postgres import PostgresRecords  # psycopg only when needed

    return PostgresRecords(location, site, lease_seconds=lease_seconds)


def _open_directory(location: StateLocation, site: str, lease_seconds: float) -> RecordStore:
    from reconciler.state.directory import DirectoryRecords

    return DirectoryRecords(Path(location.target), site, lease_seconds=lease_seconds)


def canonical_scheme(text: str) -> str:
    """``text`` with its scheme written the one way (``postgres://`` as ``postgresql://``),
    so that two spellings of one location compare equal."""
    scheme = _SCHEME.match(text)
    backend = BY_SCHEME.get(scheme.group(1).lower()) if scheme else None
    if scheme is None or backend is None:
        return text
    return backend.schemes[0] + text[scheme.end() :]


BACKENDS: tuple[Backend, ...] = (
    Backend(
        "postgresql",
        ("postgresql", "postgres"),
        "a PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE?schema=NAME)",
        _postgres_location,
        _open_postgres,
    ),
    Backend(
        "directory",
        ("file",),
        "a directory (a path or file:///path)",
        lambda text, base_dir: _directory_location(_file_url_path(text), base_dir),
        _open_directory,
    ),
)
BY_SCHEME = {scheme: backend for backend in BACKENDS for scheme in backend.schemes}
BY_KIND = {backend.kind: backend for backend in BACKENDS}
_HINT = "Give " + " or ".join(reversed([backend.example for backend in BACKENDS])) + "."
