"""Bodies of answers turned into Python structures: JSON as is, XML into the JSON shape.

The format is read from the body's first character, not the header (proxies relabel). The site
answers XML when ``.xml`` follows the method name, and some proxies only pass XML.
Converting to the JSON shape here means one set of decoders serves both formats:

* the root element becomes the single top-level key (``{"userInfo": {...}}``, ``{"error": ...}``);
* an element with children becomes a dict, except the known list containers
  (``workspaces > workspace``, ``users > user``, ``usersLocationAccess > user``, and a legacy
  ``workspaceList > workspace``), which become lists; a tag repeated inside a dict becomes a list;
* leaf text stays a string (the pure decoders convert numbers), the text ``null`` becomes
  ``None``, an empty leaf ``""`` and an empty list container ``[]``.

Parsing goes through defusedxml: a DTD, entity declarations (billion laughs) or external
references are refused with a ``ProtocolError``, as is nesting deeper than any API answer.
"""

from __future__ import annotations

import json
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from reconciler.api.errors import PROTOCOL_HINT, ProtocolError

LIST_CONTAINERS: dict[str, str] = {
    "workspaces": "workspace",
    "users": "user",
    "usersLocationAccess": "user",
    "userLocationAccess": "user",  # the FileGenius-era name of users_location_access
    "workspaceList": "workspace",  # the legacy bare-list form; the current form is a dict
}
"""Container tag → item tag of the lists the API answers with."""

MAX_DEPTH = 16
"""No API answer nests deeper than a few levels; deeper input is refused, not recursed."""


def load_document(content: bytes, *, method: str) -> dict[str, Any]:
    """Parse a body into a dict, JSON or XML by its first character."""
    text = content.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<"):
        return decode_xml(text, method=method)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
        raise _refused(method, "a body that is neither JSON nor XML") from exc
    if not isinstance(document, dict):
        raise _refused(method, f"a JSON {type(document).__name__} instead of an object")
    return document


def decode_xml(body: bytes | str, *, method: str) -> dict[str, Any]:
    """Parse an XML answer of ``method`` into ``{root tag: converted content}``."""
    try:
        root = fromstring(body, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise _refused(method, f"XML that is refused as unsafe ({type(exc).__name__})") from exc
    except (ParseError, ValueError, UnicodeError) as exc:
        raise _refused(method, "malformed XML") from exc
    return {root.tag: _convert(root, method, depth=0)}


def _refused(method: str, reason: str) -> ProtocolError:
    return ProtocolError(
        f"{method}: {reason} in the site's answer.", method=method, hint=PROTOCOL_HINT
    )


def _convert(element: Element, method: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise _refused(method, f"XML nested deeper than {MAX_DEPTH} levels")
    children = list(element)
    item_tag = LIST_CONTAINERS.get(element.tag)
    is_list = item_tag is not None and all(child.tag == item_tag for child in children)
    if is_list and (children or _text(element) in ("", None)):
        return [_convert(child, method, depth + 1) for child in children]
    if not children:
        return _text(element)
    return _convert_mapping(children, method, depth)


def _convert_mapping(children: list[Element], method: str, depth: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for child in children:
        value = _convert(child, method, depth + 1)
        if child.tag not in result:
            result[child.tag] = value
        elif isinstance(previous := result[child.tag], _Repeated):
            previous.append(value)
        else:
            result[child.tag] = _Repeated([previous, value])
    return {
        tag: list(value) if isinstance(value, _Repeated) else value for tag, value in result.items()
    }


class _Repeated(list[Any]):
    """Marks a list built from a repeated tag, so a value that is itself a list is not merged."""


def _text(element: Element) -> str | None:
    text = (element.text or "").strip()
    return None if text == "null" else text
