"""One codec for the model: how every typed value becomes JSON data and comes back.

The desired site (a saved plan's snapshot), the records, plan files and their actions are
frozen dataclasses. ``to_data`` and ``from_data`` turn them into JSON-able data and back by
their type hints (``cattrs``), so a new field is written and read without code here: only
a field whose name on disk differs from its name in Python says so (``rename``), and the few
shapes that are not plain fields register a hook next to their type.

Reading is strict, because what is read may be damaged or edited by hand: ``7`` is a number
and ``"7"``, ``true`` or ``7.5`` are not; a string is a string. Sets are written sorted and
every sequence as a list, so equal values give equal documents (plan checksums rely on it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence, Set
from datetime import date
from typing import Any, TypeVar

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

T = TypeVar("T")

converter = cattrs.Converter(
    unstruct_collection_overrides={Set: sorted, Sequence: list, tuple: list},
    detailed_validation=True,
)


class DecodeError(ValueError):
    """Data that does not describe the type asked for; the message says where and why."""


def to_data(value: Any, kind: Any = None) -> Any:
    """``value`` as JSON-able data (dicts, lists, strings, numbers, booleans, None)."""
    return converter.unstructure(value, kind) if kind is not None else converter.unstructure(value)


def from_data(data: Any, kind: type[T] | Any) -> T:
    """The ``kind`` value ``data`` describes; ``DecodeError`` naming the first problems."""
    try:
        return converter.structure(data, kind)  # type: ignore[no-any-return]
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise DecodeError(_explain(exc)) from None


def rename(cls: type[Any], *, omit_defaults: bool = False, **on_disk: str) -> None:
    """Write and read ``cls`` with some fields under other names on disk (``field="name"``);
    with ``omit_defaults``, fields equal to their default are left out of the document."""
    overrides: dict[str, Any] = {name: override(rename=disk) for name, disk in on_disk.items()}
    converter.register_unstructure_hook(
        cls,
        make_dict_unstructure_fn(
            cls, converter, _cattrs_omit_if_default=omit_defaults, **overrides
        ),
    )
    converter.register_structure_hook(
        cls,
        make_dict_structure_fn(cls, converter, _cattrs_detailed_validation=True, **overrides),
    )


def written_without_defaults(cls: type[Any], *fields: str) -> None:
    """``cls`` written without ``fields`` where they hold their default: documents written
    before the fields existed (saved plans, records) stay byte for byte the same. Made by a
    factory, so each converter -- and each copy of one -- writes the other fields with its
    own hooks (a saved plan writes a ``Source`` as a list, ``validate --show`` as text)."""
    omitted: dict[str, Any] = {name: override(omit_if_default=True) for name in fields}

    def made(kind: Any, made_by: cattrs.Converter) -> Callable[[Any], dict[str, Any]]:
        return make_dict_unstructure_fn(kind, made_by, **omitted)

    converter.register_unstructure_hook_factory(lambda kind: kind is cls, made)


def hook(
    kind: Any, write: Callable[[Any], Any], read: Callable[[Any], Any], *, exact: bool = False
) -> None:
    """Write and read ``kind`` by hand: for a shape that is not a dataclass's plain fields.
    ``exact``: only where ``kind`` itself is the declared type, not for its subclasses (whose
    own fields the codec still writes: a write action's ``to_data`` uses them)."""
    if exact:
        converter.register_unstructure_hook_func(lambda declared: declared is kind, write)
        converter.register_structure_hook_func(
            lambda declared: declared is kind, lambda data, _: read(data)
        )
        return
    converter.register_unstructure_hook(kind, write)
    converter.register_structure_hook(kind, lambda data, _: read(data))


def _explain(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        problems = [_where(p) for p in cattrs.transform_error(exc, format_exception=_say)]
        shown = "; ".join(problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        return (shown + more)[:400]
    return (str(exc).strip("'\"") or type(exc).__name__)[:400]


def _say(exc: BaseException, _: Any) -> str:
    if isinstance(exc, KeyError):
        return "a required field is missing"
    return (str(exc) or type(exc).__name__)[:200]


def _where(problem: str) -> str:
    """``"expected a number @ $.workspaces['A'].id"`` as ``... at workspaces['A'].id``."""
    message, _, path = problem.rpartition(" @ ")
    path = path.removeprefix("$").removeprefix(".")
    return f"{message} at {path}" if path else message


# --- strict primitives --------------------------------------------------------------------


def _integer(value: Any, _: Any) -> int:
    """A whole number: JSON ``7`` or ``7.0``; never ``true``, ``"7"``, ``7.5`` or ``1e999``."""
    if type(value) is int:  # nearly every one: a large site's records hold some 20,000
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a whole number, not {value!r:.40}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"expected a whole number, not {value!r:.40}")
    return int(value)


def _number(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, not {value!r:.40}")
    return float(value)


def _text(value: Any, _: Any) -> str:
    if type(value) is str:
        return value
    if not isinstance(value, str):
        raise TypeError(f"expected a string, not {value!r:.40}")
    return value


def _flag(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, not {value!r:.40}")
    return value


def _day(value: Any, _: Any) -> date:
    """A day, written ``YYYY-MM-DD`` (an expiry: ``reconciler.clock``)."""
    if not isinstance(value, str) or len(value) != 10:
        raise TypeError(f"expected a date YYYY-MM-DD, not {value!r:.40}")
    return date.fromisoformat(value)


converter.register_structure_hook(int, _integer)
converter.register_structure_hook(date, _day)
converter.register_unstructure_hook(date, date.isoformat)
converter.register_structure_hook(float, _number)
converter.register_structure_hook(str, _text)
converter.register_structure_hook(bool, _flag)
