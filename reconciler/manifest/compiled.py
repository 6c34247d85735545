"""The manifest's JSON Schema compiled once into plain Python closures that answer one
question: is this document valid?

Why: jsonschema walks its validator objects for every value, which costs about 0.2 s on a
1,000-workspace manifest (half of loading it), and its import another 0.1 s. A valid
manifest -- the one every pipeline plans with -- needs no more than "valid", so
``schema.check_schema`` asks this first and asks jsonschema only about a document this
check does not pass, whose errors it then explains.

So the one promise is: *valid* here means jsonschema finds no error. Saying *not valid*
wrongly would only cost time (jsonschema then finds nothing), so a value of a Python type
the loader never produces is simply not valid here. Each keyword the schema uses is
compiled with jsonschema's Draft 2020-12 meaning: a keyword applies to values of its own
type only, ``true`` is not ``1``, ``1.0`` is an integer, NaN is not below a minimum. Any
other keyword is refused when compiling (``UnsupportedSchema``), so the schema cannot gain a
rule that this check would silently skip. ``tests/test_manifest_schema_compiled.py`` holds
the verdicts to jsonschema's on generated documents.

Each (sub)schema becomes one check per Python type the loader produces, chosen by the
value's exact type: the keywords that cannot apply to that type cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import reduce
from re import compile as regex
from typing import Any

Check = Callable[[Any], bool]
"""True when a value satisfies the (sub)schema it was compiled from."""

ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "$schema", "$id"}
)
"""Keywords that say something about a value without constraining it."""

_OBJECT_KEYWORDS = frozenset({"properties", "additionalProperties", "required"})
_KEYWORDS = _OBJECT_KEYWORDS | {
    "type",
    "const",
    "items",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
}

_JSON_TYPES: dict[type, tuple[str, ...]] = {
    type(None): ("null",),
    bool: ("boolean",),
    int: ("integer", "number"),
    float: ("number",),  # and "integer" when it has no fraction (see _float_type)
    str: ("string",),
    list: ("array",),
    dict: ("object",),
}
"""The Python types the YAML loader builds values of, and the JSON types each may be."""


class UnsupportedSchema(ValueError):
    """The schema uses a keyword (or a form of one) that this compiler does not know."""


def compile_schema(schema: Any) -> Check:
    """The check of ``schema``, a schema without ``$ref`` (``schema._inline`` removes them)."""
    if schema is True or schema is False:
        verdict: bool = schema
        return lambda value: verdict
    if not isinstance(schema, Mapping):
        raise UnsupportedSchema(f"a schema must be a mapping or a boolean, not {schema!r}")
    unknown = set(schema) - ANNOTATIONS - _KEYWORDS
    if unknown:
        raise UnsupportedSchema(f"keywords the compiled check does not know: {sorted(unknown)}")
    by_type = {kind: _check_of_type(schema, kind) for kind in _JSON_TYPES}

    def check(value: Any) -> bool:
        test = by_type.get(type(value))
        return test is not None and test(value)

    return check


def _check_of_type(schema: Mapping[str, Any], kind: type) -> Check:
    """The check of ``schema`` for values of exactly the Python type ``kind``."""
    allowed = _allowed_types(schema)
    tests: list[Check] = []
    if allowed is not None:
        if kind is float and "number" not in allowed and "integer" in allowed:
            tests.append(lambda value: value.is_integer())
        elif not allowed & set(_JSON_TYPES[kind]):
            return lambda value: False
    if "const" in schema:
        tests.append(_const(schema["const"]))
    if kind is str:
        tests += _string_tests(schema)
    elif kind in (int, float):
        tests += _number_tests(schema)
    elif kind is list and "items" in schema:
        tests.append(_items(schema["items"]))
    elif kind is dict and _OBJECT_KEYWORDS & set(schema):
        tests.append(_object(schema))
    return _all_of(tests)


def _allowed_types(schema: Mapping[str, Any]) -> set[str] | None:
    """The JSON types ``type`` allows, or None when the schema has no ``type``."""
    if "type" not in schema:
        return None
    names = schema["type"]
    allowed = {names} if isinstance(names, str) else set(names)
    unknown = allowed - {name for names in _JSON_TYPES.values() for name in names}
    if unknown:
        raise UnsupportedSchema(f"unknown type(s) {sorted(unknown)}")
    return allowed


def _all_of(tests: list[Check]) -> Check:
    if not tests:
        return lambda value: True
    return reduce(lambda first, then: lambda value: first(value) and then(value), tests)


# --- keywords, each for the one type it applies to ------------------------------------------


def _string_tests(schema: Mapping[str, Any]) -> list[Check]:
    tests: list[Check] = []
    if "minLength" in schema:
        shortest: int = schema["minLength"]
        tests.append(lambda value: len(value) >= shortest)
    if "maxLength" in schema:
        longest: int = schema["maxLength"]
        tests.append(lambda value: len(value) <= longest)
    if "pattern" in schema:
        search = regex(schema["pattern"]).search
        tests.append(lambda value: search(value) is not None)
    return tests


def _number_tests(schema: Mapping[str, Any]) -> list[Check]:
    """``minimum`` and ``maximum`` as jsonschema words them (``not <``: NaN passes)."""
    tests: list[Check] = []
    if "minimum" in schema:
        low: float = schema["minimum"]
        tests.append(lambda value: not value < low)
    if "maximum" in schema:
        high: float = schema["maximum"]
        tests.append(lambda value: not value > high)
    return tests


def _items(items: Any) -> Check:
    test = compile_schema(items)
    return lambda value: all(map(test, value))


def _object(schema: Mapping[str, Any]) -> Check:
    """``properties``, ``additionalProperties`` and ``required`` in one pass over the keys."""
    checks = {key: compile_schema(sub) for key, sub in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    others: Check | None = None if extra is True else compile_schema(extra)

    def check(value: dict[Any, Any]) -> bool:
        for key in required:
            if key not in value:
                return False
        for key, item in value.items():
            test = checks.get(key, others)
            if test is not None and not test(item):
                return False
        return True

    return check


def _const(wanted: Any) -> Check:
    """jsonschema's equality for a scalar: ``true`` is not ``1``, ``1.0`` is ``1``."""
    if isinstance(wanted, (list, dict)):
        raise UnsupportedSchema("a const that is a list or a mapping")
    if isinstance(wanted, bool) or wanted is None:
        return lambda value: value is wanted
    if isinstance(wanted, str):
        return lambda value: value == wanted
    return lambda value: type(value) in (int, float) and value == wanted
