"""What every kind shares: a fact known or not, a field that changes, and a spec's fields.

A kind's *spec* is one frozen dataclass of the settings the manifest declares for an object
of that kind (``WorkspaceSpec``, ``UserSpec``). The rest of the tool handles specs through
the accessors here -- their field names and values -- so that a new setting is written in
its kind's module, the schema and the API mapping, and nowhere else. The site's one fold of
names, which each kind's ``name_key`` applies, is here too.

``spread`` keeps the documents that predate the specs: a record, an action or a plan that
now holds a spec as one value is written and read with the spec's fields in its own place,
as before, and its callers may still name those fields when they build or read one.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, Literal, TypeVar

from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from reconciler import codec

T = TypeVar("T")
H = TypeVar("H", bound=type[Any])

Origin = Literal["created", "adopted"]
"""How an object came to be managed by the tool."""

Basis = Literal["observed", "recorded"]
"""How a fact was learnt: read on the site, or taken from the tool's records."""


@dataclass(frozen=True, slots=True)
class Known(Generic[T]):
    """A fact the tool created or read. Where a field is ``None`` instead, it is unknown."""

    value: T


FieldValue = bool | int | str | tuple[str, ...] | None
"""A field's value as reports show it: a flag, a name, names or flags in order, or ``None``
(an override that is off)."""


class Nothing(enum.Enum):
    """No value on this side of a change: before a create, after a delete. Not ``None``,
    which is a value (an override that is off)."""

    NOTHING = "nothing"


NOTHING: Final = Nothing.NOTHING
Side = FieldValue | Literal[Nothing.NOTHING]
"""One side of a field's change: its value, or nothing (the object is not there)."""


def field_value(value: object) -> FieldValue:
    """``value`` as a change holds it: a set of names or flags sorted, a sequence kept in its
    order. ``TypeError`` for what no field holds (a plan file edited by hand)."""
    if isinstance(value, frozenset | set):
        value = sorted(value)
    if isinstance(value, list | tuple):
        if all(isinstance(item, str) for item in value):
            return tuple(value)
    elif value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"expected a field's value, not {value!r:.40}")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of an object: what is there before and what the manifest wants after."""

    field: str  # the name of a field of the kind's spec, or of its members
    before: Side = NOTHING
    after: Side = NOTHING
    basis: Basis | None = None  # how ``before`` was learnt; None: where it does not matter

    @classmethod
    def differing(cls, field: str, before: object, after: object, basis: Basis) -> FieldChange:
        """A field that differs: what the site (or the records) has, what the manifest wants,
        each as a change holds it (``field_value``)."""
        return cls(field, field_value(before), field_value(after), basis)

    @property
    def joining(self) -> tuple[str, ...]:
        """Of a members field: who is in it after and not before."""
        return _only_in(self.after, self.before)

    @property
    def leaving(self) -> tuple[str, ...]:
        """Of a members field: who is in it before and not after."""
        return _only_in(self.before, self.after)


def _only_in(side: Side, other: Side) -> tuple[str, ...]:
    if not isinstance(side, tuple):
        return ()
    others = set(other) if isinstance(other, tuple) else set()
    return tuple(name for name in side if name not in others)


# --- names --------------------------------------------------------------------------------

_DOTLESS = str.maketrans({"\u0131": "i"})  # the Turkish dotless i
_DOT_ABOVE = "i\u0307"  # what full case folding makes of a capital dotted İ


@functools.lru_cache(maxsize=1 << 16)
def fold(text: str) -> str:
    """``text`` as the site compares it: stripped, compatibility forms and case folded."""
    if text.isascii():
        return text.strip().lower()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return folded.translate(_DOTLESS).replace(_DOT_ABOVE, "i").strip()


# --- specs --------------------------------------------------------------------------------


def field_names(spec: type[Any]) -> tuple[str, ...]:
    """The fields of a spec type, in declaration order (the order documents write them); read
    once per type, as ``values`` asks for every workspace of a manifest."""
    names = _FIELD_NAMES.get(spec)
    if names is None:
        names = _FIELD_NAMES[spec] = tuple(f.name for f in dataclasses.fields(spec))
    return names


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def values(spec: Any) -> dict[str, Any]:
    """A spec's fields and values, in order (shallow: overrides stay frozensets)."""
    return {name: getattr(spec, name) for name in field_names(type(spec))}


def spread(
    spec: type[Any], into: str, *, among: str | None = None, at: int = 0, **on_disk: str
) -> Callable[[H], H]:
    """Class decorator: the holder's field ``into`` (a ``spec``) reads and is written as if the
    spec's fields were the holder's own.

    * On disk the spec's fields stand where ``into`` is; ``among`` (a later field of the holder)
      is written among them at position ``at``, as documents always had it.
    * The holder can be built with the spec's fields as keywords, and each one reads as an
      attribute: the shape callers knew before the spec existed.
    ``on_disk`` renames fields in documents, as ``codec.rename`` does.
    """
    names = field_names(spec)

    def decorate(cls: H) -> H:
        built = cls.__init__

        @functools.wraps(built)  # its signature stays the dataclass's: the spec as one value
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            given = {name: kwargs.pop(name) for name in names if name in kwargs}
            if given:  # on top of the spec given too (``dataclasses.replace`` gives both)
                base = kwargs.get(into)
                kwargs[into] = dataclasses.replace(base, **given) if base else spec(**given)
            built(self, *args, **kwargs)

        cls.__init__ = __init__
        for name in names:
            setattr(cls, name, property(_reader(into, name)))
        _spread_codec(cls, spec, into, among, at, on_disk)
        return cls

    return decorate


def _reader(into: str, name: str) -> Callable[[Any], Any]:
    return lambda holder: getattr(getattr(holder, into), name)


def _spread_codec(
    cls: type[Any],
    spec: type[Any],
    into: str,
    among: str | None,
    at: int,
    on_disk: Mapping[str, str],
) -> None:
    names = field_names(spec)
    among_key = on_disk.get(among, among) if among is not None else None
    overrides: dict[str, Any] = {name: override(rename=disk) for name, disk in on_disk.items()}

    def writer(_: Any, converter: Any) -> Callable[[Any], dict[str, Any]]:
        inner = make_dict_unstructure_fn(cls, converter, **overrides)

        def write(holder: Any) -> dict[str, Any]:
            flat: dict[str, Any] = {}
            data = inner(holder)
            for key, value in data.items():
                if key == into:
                    nested = list(value.items())
                    if among_key is not None and among_key in data:
                        nested.insert(at, (among_key, data[among_key]))
                    flat.update(nested)
                elif key != among_key:
                    flat[key] = value
            return flat

        return write

    def reader(_: Any, converter: Any) -> Callable[[Any, Any], Any]:
        inner = make_dict_structure_fn(
            cls, converter, _cattrs_detailed_validation=True, **overrides
        )

        def read(data: Any, kind: Any) -> Any:
            if isinstance(data, Mapping):
                nested = {name: data[name] for name in names if name in data}
                data = {key: value for key, value in data.items() if key not in names}
                data[into] = nested
            return inner(data, kind)

        return read

    codec.converter.register_unstructure_hook_factory(lambda t: t is cls, writer)
    codec.converter.register_structure_hook_factory(lambda t: t is cls, reader)
