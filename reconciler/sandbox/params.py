"""Reading method parameters strictly: every refusal is a 400 whose message names the parameter.

The reference gives types (IDs, comma lists of IDs, 0/1 flags) but no error texts; these
helpers keep the texts uniform across methods. Parameters a method does not know are ignored,
as web APIs commonly do.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from reconciler.sandbox.errors import ApiError
from reconciler.spec import NAME_LIST_SEPARATOR

_ID = re.compile(r"[0-9]{1,18}")


def required(params: Mapping[str, str], name: str) -> str:
    """The value of ``name``; absent or empty is a 400."""
    value = params.get(name, "")
    if value == "":
        raise ApiError(400, f"The parameter {name} is required.")
    return value


def required_text(params: Mapping[str, str], name: str) -> str:
    """The value of ``name`` without surrounding whitespace; absent or blank is a 400."""
    value = params.get(name, "").strip()
    if value == "":
        raise ApiError(400, f"The parameter {name} is required.")
    return value


def one_id(params: Mapping[str, str], name: str) -> int:
    """A required positive integer ID."""
    return _parse_id(required(params, name).strip(), name)


def id_list(params: Mapping[str, str], name: str, *, optional: bool = False) -> list[int]:
    """A comma-separated list of IDs, duplicates dropped, order kept; empty pieces are a 400."""
    text = params.get(name, "")
    if text.strip() == "":
        if optional:
            return []
        raise ApiError(400, f"The parameter {name} is required.")
    ids: dict[int, None] = {}
    for piece in text.split(NAME_LIST_SEPARATOR):
        piece = piece.strip()
        if not _ID.fullmatch(piece) or int(piece) == 0:
            raise ApiError(
                400, f"{name} must be a comma-separated list of IDs (whole numbers); got {text!r}."
            )
        ids[int(piece)] = None
    return list(ids)


def zero_or_one(params: Mapping[str, str], name: str, default: bool) -> bool:
    """A 0/1 flag with its documented default when absent."""
    value = params.get(name)
    if value is None or value == "":
        return default
    if value not in ("0", "1"):
        raise ApiError(400, f"{name} must be 0 or 1; got {value!r}.")
    return value == "1"


def choice(params: Mapping[str, str], name: str, allowed: Sequence[str], default: str) -> str:
    """A value from a fixed set, ``default`` when absent or empty."""
    value = params.get(name, "") or default
    if value not in allowed:
        raise ApiError(400, f"{name} must be one of {', '.join(allowed)}; got {value!r}.")
    return value


def has_control_characters(text: str) -> bool:
    """Control characters cannot be carried by XML 1.0, so names must not contain them."""
    if text.isprintable():  # the fast, common answer: no control character at all
        return False
    return any(unicodedata.category(char) == "Cc" for char in text)


def _parse_id(text: str, name: str) -> int:
    if not _ID.fullmatch(text) or int(text) == 0:
        raise ApiError(400, f"{name} must be an ID (a whole number above 0); got {text!r}.")
    return int(text)


def no_such(kind: str, ids: Sequence[int]) -> ApiError:
    """The 404 for unknown IDs, naming each of them."""
    if len(ids) == 1:
        return ApiError(404, f"There is no {kind} with ID {ids[0]}.", unknown_id=True)
    listed = ", ".join(map(str, ids))
    return ApiError(404, f"There is no {kind} with the IDs {listed}.", unknown_id=True)
