"""One answer, two encodings: the JSON and the XML forms of the reference, built from one tree.

Handlers return a tree of dicts, scalars and the three node types below; the encoders decide
the form. Lists need a node type because the two encodings differ in ways the reference
spells out: ``userInfo.workspaces`` wraps each JSON entry as ``{"workspace": {...}}`` while
``workspaceList.workspaces`` does not; XML always names each item element. ID lists are
comma strings in both forms (``"4561,4567"``), except ``workspaceAdd.workspaceId``, a JSON
list of integers whose XML form the reference does not show (the sandbox writes ``12,13``).
A null is the text ``null`` in XML (as in the ``user_info`` sample) unless it is ``EMPTY_NULL``,
which the ``usersLocationAccess`` samples print as an empty element (``<organization/>``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from xml.sax.saxutils import escape

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
JSON_MEDIA_TYPE = "application/json"
XML_MEDIA_TYPE = "application/xml; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Listing:
    """A list of entries: XML ``<item>`` elements; JSON entries, wrapped as ``{item: ...}``
    when ``wrap_json`` (as the reference shows for ``userInfo`` and ``workspaceInfo``)."""

    item: str
    entries: Sequence[Any]
    wrap_json: bool = False


@dataclass(frozen=True, slots=True)
class CommaIds:
    """An ID list the published samples show as ``4561,4567``: a string in JSON and XML."""

    ids: Sequence[int]


@dataclass(frozen=True, slots=True)
class IdList:
    """A list of integer IDs in JSON; a comma-separated text in XML (a sandbox decision)."""

    ids: Sequence[int]


class _EmptyNull:
    """The type of ``EMPTY_NULL``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EMPTY_NULL"


EMPTY_NULL = _EmptyNull()
"""A null that is ``null`` in JSON and an empty element in XML."""


def format_time(timestamp: int) -> str:
    """``created``/``modified`` as the site writes them: ``11/21/26 at 10:40 pm UTC``."""
    return _format_minute(timestamp // 60)


@lru_cache(maxsize=4096)
def _format_minute(minute: int) -> str:
    """Cached by the minute, all the text shows: a ``user_list`` page writes 100 of these,
    mostly the same few (formatting each took a third of the page's CPU)."""
    moment = datetime.fromtimestamp(minute * 60, UTC)
    return f"{moment:%m/%d/%y} at {moment:%I:%M} {'am' if moment.hour < 12 else 'pm'} UTC"


def flag(value: bool | int) -> int:
    """A 0/1 API flag (from a bool, or a 0/1 column read as it is stored)."""
    return 1 if value else 0


# ---- JSON ------------------------------------------------------------------------------


def _json_default(node: object) -> object:
    if node is EMPTY_NULL:
        return None
    if isinstance(node, Listing):
        if node.wrap_json:
            return [{node.item: entry} for entry in node.entries]
        return list(node.entries)
    if isinstance(node, CommaIds):
        return ",".join(map(str, node.ids))
    if isinstance(node, IdList):
        return list(node.ids)
    raise TypeError(f"cannot encode {type(node).__name__}")


def encode_json(root: str, tree: Any, *, php: bool = False) -> bytes:
    """``{root: tree}`` as compact UTF-8 JSON; ``php``: as PHP's ``json_encode`` writes it by
    default, every ``/`` escaped as ``\\/`` and every non-ASCII character as ``\\uXXXX``."""
    text = json.dumps({root: tree}, default=_json_default, ensure_ascii=php)
    if php:
        text = text.replace("/", "\\/")  # outside strings JSON has no "/", so this is safe
    return text.encode()


# ---- XML -------------------------------------------------------------------------------


def _xml_text(value: object) -> str:
    if value is EMPTY_NULL:
        return ""
    if value is None:
        return "null"  # the reference: "In XML a null can appear as the literal text null"
    if isinstance(value, bool):
        return str(int(value))
    return escape(str(value))


def _xml_element(tag: str, node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        if not node:
            out.append(f"<{tag}/>")
            return
        out.append(f"<{tag}>")
        for key, child in node.items():
            _xml_element(key, child, out)
        out.append(f"</{tag}>")
    elif isinstance(node, Listing):
        if not node.entries:
            out.append(f"<{tag}/>")  # the reference: an empty list is an empty element
            return
        out.append(f"<{tag}>")
        for entry in node.entries:
            _xml_element(node.item, entry, out)
        out.append(f"</{tag}>")
    elif isinstance(node, CommaIds | IdList):
        text = ",".join(map(str, node.ids))
        out.append(f"<{tag}>{text}</{tag}>" if text else f"<{tag}/>")
    else:
        text = _xml_text(node)
        out.append(f"<{tag}>{text}</{tag}>" if text else f"<{tag}/>")


def encode_xml(root: str, tree: Any) -> bytes:
    """``tree`` as an XML document whose root element is ``root``."""
    out = [XML_DECLARATION]
    _xml_element(root, tree, out)
    return "".join(out).encode()


# ---- both ------------------------------------------------------------------------------


def encode(root: str, tree: Any, *, xml: bool, php_json: bool = False) -> tuple[bytes, str]:
    """The body and media type of an answer in the requested form."""
    if xml:
        return encode_xml(root, tree), XML_MEDIA_TYPE
    return encode_json(root, tree, php=php_json), JSON_MEDIA_TYPE


def error_tree(title: str, message: str) -> dict[str, str]:
    """The documented error shape: ``{"error": {"title", "message"}}`` / ``<error>...``."""
    return {"title": title, "message": message}
