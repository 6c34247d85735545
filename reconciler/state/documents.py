"""Reading and writing the JSON documents every backend stores, the same way everywhere.

A records document that cannot be trusted must stop the command with a clear message, not a
``TypeError`` three modules later: ``null``, a list, text that is not JSON, a number JSON
allows but Python turns into infinity (``1e999``) or ``NaN``, a nesting too deep to parse.
Both backends parse through ``parse_document`` so they refuse exactly the same things.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from reconciler.errors import StateError

DAMAGED_HINT = (
    "Restore an older version from the records' history, or a backup; "
    "do not edit the records by hand."
)


class _NotPlainJson(ValueError):
    """A value JSON parsers accept but the records must never hold (infinities, NaN)."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotPlainJson(f"the number {text[:20]} is too large")
    return value


def _no_constant(name: str) -> float:
    raise _NotPlainJson(f"{name} is not a JSON number")


def parse_json(text: str | bytes) -> Any:
    """Strict JSON: no ``NaN``/``Infinity`` and no number that overflows to infinity.

    Raises ``ValueError`` (including ``json.JSONDecodeError``) for anything else than plain
    JSON, and for nesting too deep for the parser.
    """
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError as exc:
        raise ValueError("the document is nested too deeply") from exc


def parse_document(text: str | bytes, where: str) -> dict[str, Any]:
    """The JSON object stored at ``where`` (a path or a table row, for the message)."""
    try:
        value = parse_json(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateError(f"The records at {where} are damaged: {exc}.", hint=DAMAGED_HINT) from exc
    if not isinstance(value, dict):
        raise StateError(
            f"The records at {where} are damaged: a JSON object was expected, "
            f"found {type(value).__name__ if value is not None else 'null'}.",
            hint=DAMAGED_HINT,
        )
    return value


def dump_document(data: Any) -> str:
    """Compact JSON of ``data``; ``StateError`` when it holds what JSON cannot (NaN, sets)."""
    try:
        return json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise StateError(
            f"The records cannot be stored: {exc}.",
            hint="This is a bug in the tool: please report it with the command you ran.",
        ) from exc


def check_site(data: dict[str, Any], site: str, where: str) -> dict[str, Any]:
    """``data`` when it belongs to ``site``: records of another site are never used.
    ``where`` completes "The records …": ``at /path``, ``given to save``."""
    recorded = data.get("site")
    if recorded != site:
        raise StateError(
            f"The records {where} belong to {recorded!r}, not to {site!r}: they are not used.",
            hint="Point the tool at the records of this site (--state), or check the site URL.",
        )
    return data


def utc_stamp(moment: datetime | None = None) -> str:
    """ISO 8601 UTC with microseconds (``2026-11-23T14:53:50.123456Z``): sortable as text."""
    moment = datetime.now(UTC) if moment is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_stamp(text: str) -> datetime:
    """The moment a ``utc_stamp`` (or any ISO 8601 text with a zone) names."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# --- every string, even one jsonb or UTF-8 cannot hold --------------------------

JSONB_MARK = "\ufdd0"
"""A Unicode noncharacter (never in text people type) that opens an escaped string."""


def _unstorable(char: str) -> bool:
    """NUL and lone surrogates: jsonb refuses both (``\\u0000``, an unpaired ``\\ud800``)."""
    code = ord(char)
    return code == 0 or 0xD800 <= code <= 0xDFFF


def _escape_text(text: str) -> str:
    if not (text.startswith(JSONB_MARK) or any(_unstorable(c) for c in text)):
        return text
    out = [JSONB_MARK]
    for char in text:
        if char == JSONB_MARK:
            out.append(JSONB_MARK * 2)
        elif _unstorable(char):
            out.append(f"{JSONB_MARK}u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def _unescape_text(text: str) -> str:
    if not text.startswith(JSONB_MARK):
        return text
    out: list[str] = []
    rest, index = text[1:], 0
    while index < len(rest):
        char = rest[index]
        if char != JSONB_MARK:
            out.append(char)
            index += 1
        elif rest[index + 1 : index + 2] == JSONB_MARK:
            out.append(JSONB_MARK)
            index += 2
        else:  # MARK u XXXX
            out.append(chr(int(rest[index + 2 : index + 6], 16)))
            index += 6
    return "".join(out)


def _walk(value: Any, text: Any) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(str(k)): _walk(v, text) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, text) for v in value]
    return value


_MAY_NEED_ESCAPES = re.compile("[\ufdd0\ud800-\udfff]|\\\\u0000")
"""In compact JSON as ``dump_document`` writes it (``ensure_ascii=False``): the mark and any
surrogate as themselves, a NUL as the escape ``\\u0000``. Text without any of them holds no
string that ``_escape_text`` would change; a match may be text that only looks alike (a
backslash before ``u0000``), and then every string is looked at, as always."""

_MAY_HOLD_ESCAPED = re.compile("\ufdd0|\\\\u[fF][dD][dD]0")
"""The mark, as itself or as a JSON escape: text without it holds no escaped string."""
_MAY_HOLD_ESCAPED_BYTES = re.compile(JSONB_MARK.encode() + rb"|\\u[fF][dD][dD]0")
"""The same in UTF-8 bytes, as the directory backend reads them: not decoded a second time."""


def dump_stored(data: Any) -> str:
    """``dump_document`` as both backends store it: a site username with a NUL or a lone
    surrogate (whatever the site answered) is stored reversibly, where PostgreSQL's jsonb and
    UTF-8 files would refuse it and fail every save.

    Nearly every document holds no such string: then the compact JSON is already the stored
    text, and a large site's records are not walked string by string on every save."""
    text = dump_document(data)
    if _MAY_NEED_ESCAPES.search(text) is None:
        return text
    return dump_document(_walk(data, _escape_text))


def parse_stored(text: str | bytes, where: str) -> dict[str, Any]:
    """``parse_document`` of what ``dump_stored`` stored, with every string as it was."""
    document = parse_document(text, where)
    found = (
        _MAY_HOLD_ESCAPED_BYTES.search(text)
        if isinstance(text, bytes)
        else _MAY_HOLD_ESCAPED.search(text)
    )
    if found is None:
        return document
    result: dict[str, Any] = _walk(document, _unescape_text)
    return result
