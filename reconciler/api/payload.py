"""A successful answer's payload, and reading its fields as the API writes them.

The boundary (``reconciler.api.boundary``) wraps the payload it found in a :class:`Payload`;
the decoders (``reconciler.api.decode``) read it field by field through :class:`Fields`,
which tolerates every published quirk (integers as strings, ID lists as a comma string, a
list or a single integer, entries wrapped or not) and turns what still cannot be read into a
``ProtocolError`` naming the method and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar

from reconciler import spec
from reconciler.api.errors import protocol_error

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Payload:
    """The value under a method's success key, and what a decoder needs around it.

    ``key`` is the key the value was found under (messages name it); ``params`` are the
    request's parameters, credentials excluded, so a decoder can check the answer against
    what was asked.
    """

    value: object
    method: str
    key: str
    params: Mapping[str, str] = field(default_factory=dict)

    def fields(self) -> Fields:
        """The value as one object (the usual shape of an answer)."""
        return Fields(self.value, method=self.method, where=self.key)

    def entries(
        self,
        value: object,
        where: str,
        wrapper: str,
        read: Callable[[Fields], T],
        plain: Callable[[dict[str, Any]], T | None] | None = None,
    ) -> tuple[T, ...]:
        """``value`` (part of this payload) as a list of entries, each read by ``read``
        (``plain``: see ``read_entries``)."""
        return read_entries(value, f"{self.key}{where}", wrapper, read, self.method, plain)


# --- reading fields -----------------------------------------------------------------------


class Fields:
    """One object of an answer, read with the tolerance the notes ask for.

    Every failure names the method and where in the answer it happened, so a ``ProtocolError``
    points at the field rather than at a ``KeyError`` deep in a decoder.
    """

    __slots__ = ("_data", "_index", "_where", "method")

    def __init__(
        self,
        value: object,
        *,
        method: str,
        where: str,
        wrapper: str | None = None,
        index: int | None = None,
    ):
        if wrapper is not None and _is_mapping(value) and len(value) == 1:
            value = value.get(wrapper, value)  # JSON wraps entries: {"workspace": {...}}
        self._where, self._index = where, index
        self.method = method
        if not _is_mapping(value):
            raise protocol_error(method, f"{self.where} as {_kind(value)} instead of an object")
        self._data: Mapping[str, Any] = value

    @property
    def where(self) -> str:
        """The place in the answer, for messages; built only when a message needs it."""
        return self._where if self._index is None else f"{self._where}[{self._index}]"

    def get(self, key: str) -> Any:
        return self._data.get(key)

    def _read(self, key: str, convert: Callable[[object], T | None], expected: str) -> T:
        result = convert(self._data.get(key))
        if result is None:
            value = self._data.get(key)
            got = "nothing" if value is None else f"{_kind(value)} {str(value)[:40]!r}"
            where = f"{self.where}.{key}"
            raise protocol_error(self.method, f"{where} as {got} where {expected} was expected")
        return result

    # Each reader first takes the spelling nearly every answer uses (an int, a non-empty
    # text) as it is: a 1,000-workspace read decodes some 25,000 fields.

    def integer(self, key: str) -> int:
        value = self._data.get(key)
        if type(value) is int:
            return value
        return self._read(key, to_int, "an integer")

    def id_list(self, key: str) -> tuple[int, ...]:
        return self._read(key, to_id_list, "a list of IDs")

    def text(self, key: str, *fallbacks: str) -> str:
        """A required text; the first of ``key`` and ``fallbacks`` that is present."""
        value = self._data.get(key)
        if type(value) is str and value:
            return value
        for name in (key, *fallbacks):
            if self._data.get(name) not in (None, ""):
                return self._read(name, _to_text, "a text")
        return self._read(key, _to_text, "a text")

    def optional_text(self, key: str) -> str | None:
        """A text; ``None`` when missing, null or empty."""
        value = self._data.get(key)
        if type(value) is str:
            return value or None
        return None if value is None else self._read(key, _to_text, "a text")

    def flag(self, key: str) -> bool | None:
        """A 0/1 flag; ``None`` when missing or null (admins get null permission flags)."""
        value = self._data.get(key)
        if type(value) is int and 0 <= value <= 1:
            return value == 1
        return None if value in (None, "") else self._read(key, to_flag, "0 or 1")

    def entries(
        self,
        key: str,
        wrapper: str,
        read: Callable[[Fields], T],
        plain: Callable[[dict[str, Any]], T | None] | None = None,
    ) -> tuple[T, ...]:
        """A list of sub-objects; missing, null or empty means none (``read_entries``)."""
        return read_entries(
            self._data.get(key), f"{self.where}.{key}", wrapper, read, self.method, plain
        )

    def flags_on(self, flags: tuple[spec.Flag, ...]) -> frozenset[str]:
        """Manifest keys of the flags reported as 1."""
        return frozenset(flag.key for flag in flags if self.flag(flag.field))


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, the usual ``dict`` tested first: the ABC's own check
    costs more than reading an entry (a large read decodes some 25,000)."""
    return type(value) is dict or isinstance(value, Mapping)


def read_entries(
    value: object,
    where: str,
    wrapper: str,
    read: Callable[[Fields], T],
    method: str,
    plain: Callable[[dict[str, Any]], T | None] | None = None,
) -> tuple[T, ...]:
    """Each entry of a list read by ``read``; missing, null or empty means no entries.

    ``plain``, when given, reads an entry written the way nearly every answer writes it (an
    object of ints and texts, wrapped in ``{wrapper: ...}`` or not, as ``Fields`` unwraps it)
    without a ``Fields``, or says None, and ``read`` reads it: a large read has some 25,000
    entries. It must read what ``read`` reads.
    """
    if value is None or value == "" or value == {}:
        return ()
    if isinstance(value, Mapping):  # a single entry where a list was expected
        value = [value]
    if not isinstance(value, list):
        raise protocol_error(method, f"{where} as {_kind(value)} instead of a list")
    if plain is None:
        return tuple(
            read(Fields(entry, method=method, where=where, wrapper=wrapper, index=index))
            for index, entry in enumerate(value)
        )
    entries: list[T] = []
    for index, entry in enumerate(value):
        inner = entry.get(wrapper, entry) if type(entry) is dict and len(entry) == 1 else entry
        read_plainly = plain(inner) if type(inner) is dict else None
        entries.append(
            read(Fields(entry, method=method, where=where, wrapper=wrapper, index=index))
            if read_plainly is None
            else read_plainly
        )
    return tuple(entries)


def plain_text(value: object) -> bool:
    """Whether ``value`` is a text or nothing: what ``Fields.optional_text`` takes as it is."""
    return value is None or type(value) is str


def plain_flag(value: object) -> bool:
    """Whether ``value`` is 0, 1 or nothing: what ``Fields.flag`` takes as it is."""
    return value is None or (type(value) is int and 0 <= value <= 1)


def flag_of(value: int | None) -> bool | None:
    """A plain flag's reading (``plain_flag``): 1 is True, 0 False, nothing None."""
    return None if value is None else value == 1


_MAX_ID_DIGITS = 18  # beyond any ID; also keeps int() away from its 4,300-digit limit


def to_int(value: object) -> int | None:
    """An integer given as int or digit string; ``None`` for anything else (bools included)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) <= _MAX_ID_DIGITS:
            return int(text)
    return None


def to_flag(value: object) -> bool | None:
    """0/1 in any of the spellings seen (int, string, bool); ``None`` when it is none of them."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, int | str) else ""
    return {"1": True, "0": False, "true": True, "false": False}.get(text)


def to_id_list(value: object) -> tuple[int, ...] | None:
    """IDs from ``"4561,4567"``, ``[4561, "4567"]``, ``4561`` or nothing; ``None`` if unreadable."""
    if value is None or value == "":
        return ()
    if isinstance(value, Mapping) and len(value) == 1:  # XML: <ids><id>1</id><id>2</id></ids>
        return to_id_list(next(iter(value.values())))
    if isinstance(value, str):
        parts: list[object] = [
            part for part in value.split(spec.NAME_LIST_SEPARATOR) if part.strip()
        ]
    elif isinstance(value, list):
        parts = list(value)
    else:
        parts = [value]
    ids = [to_int(part) for part in parts]
    return None if any(number is None for number in ids) else tuple(n for n in ids if n is not None)


def _to_text(value: object) -> str | None:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
