"""Check a document against ``schemas/site.schema.json`` and explain each error plainly.

The schema is the one contract for the manifest's shape, shared with editors (which read its
titles and descriptions). jsonschema's own messages are written for schema authors ("'yes' is
not of type 'boolean'"); users get a sentence about their value and what to write instead,
at the line of the offending key. Each error also taints its path in the document so that
the API rules skip values whose shape is already known to be wrong.

A document is first put to the schema compiled by ``fastjsonschema`` into Python code, once per
process, which only says valid or not (a 1,000-workspace manifest in milliseconds, where
jsonschema's walk takes a fifth of a second); jsonschema, imported then, explains the errors of
an invalid one. ``tests/test_manifest_schema_compiled.py`` holds the two to the same verdicts.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any

from reconciler.findings import Finding
from reconciler.manifest.compiled_check import generated_check
from reconciler.manifest.paths import child, format_path
from reconciler.manifest.source import Document
from reconciler.passwords import masked

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError

SCHEMA_FILE = "site.schema.json"

MAX_SCHEMA_FINDINGS = 1_000
"""Per file. Past this a file is not a manifest with mistakes but something else entirely,
and listing a million errors helps nobody."""

_TYPE_WORDS = {
    "boolean": "true or false",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "object": "a mapping (key: value lines)",
    "array": "a list",
    "null": "null",
}
_TYPE_HINTS = {
    "boolean": "write true or false, without quotes",
    "array": "write a list: [a, b] or one `- item` per line",
    "object": "write `key: value` lines indented under it",
    "string": "put the value in quotes",
}
_PATTERN_SENTENCES = {
    "\\S": ("has no visible character", "write a username, an e-mail address or a user ID"),
    "^[^,]*$": ("contains a comma", "remove the comma: the API splits names on commas"),
    "^https?://[^\\s/?#]+[^\\s]*$": (
        "is not an http(s) address",
        "write the site's address, e.g. https://acme.example.net",
    ),
    "^(@[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*|[^@\\s]+@[^@\\s]+)$": (
        "is not an owner",
        "write a forge handle (@user, @org/team) or an e-mail address, as CODEOWNERS names owners",
    ),
    "^(?!/)(?!(.*/)?\\.\\.(/|$))[^\\s\\[\\]!#\\\\]+$": (
        "is not a file glob CODEOWNERS can hold",
        "write a path under the manifest directory (no leading / and no ..), with *, ? or "
        "** and no spaces, brackets, !, # or backslashes",
    ),
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}$": (
        "is not a date",
        "write the day as YYYY-MM-DD, e.g. 2026-12-31",
    ),
    "^[0-9]+$": (
        "is not digits only",
        "write only digits, in quotes, without spaces, dashes or + (+41 79 123 45 67 is "
        "'0041791234567')",
    ),
}

Problem = tuple[str, str, str]
"""(path in the document, message, hint) of one schema error."""

Explainer = Callable[["ValidationError"], Iterator[Problem]]


@functools.cache
def site_schema() -> dict[str, Any]:
    """The schema, read from the package (``reconciler/schemas`` links to ``schemas/``)."""
    text = resources.files("reconciler").joinpath("schemas", SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _inlined_schema() -> dict[str, Any]:
    """The schema with every ``$ref`` replaced by its target.

    The schema has no recursion, and following 17,000 references in a 1,000-workspace
    manifest costs jsonschema more than the checks themselves.
    """
    schema = site_schema()
    inlined: dict[str, Any] = _inline(schema, schema.get("$defs", {}))
    return inlined


Check = Callable[[Any], bool]
"""True when a document satisfies the schema."""


@functools.cache
def is_valid() -> Check:
    """The schema as generated Python code (``fastjsonschema``), made at first use."""
    import fastjsonschema

    # use_default=False: checking must never write the schema's defaults into the document;
    # the code is compiled once per machine (``compiled_check``)
    validate = generated_check(_without_type_switches(_inlined_schema()))

    def check(document: Any) -> bool:
        try:
            validate(document)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return check


@functools.cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # only for a document with errors

    return Draft202012Validator(_inlined_schema())


def _without_type_switches(schema: Any) -> Any:
    """``schema`` with each ``if: {type: object}, then: T, else: E`` -- T for an object, E
    for anything else, E never an object -- written as ``anyOf: [E, T]``: the same verdict.

    The generated code tests an ``if`` by raising and catching its error, each raise
    formatting a message from ``locals()``: a manifest's 30,000 plain user references (each
    a string, so each failing ``if: {type: object}``) cost 0.7 s of CPU so. ``anyOf`` tries
    E first and stops at the first that fits: a plain reference raises nothing.
    """
    if isinstance(schema, list):
        return [_without_type_switches(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    rewritten = {key: _without_type_switches(value) for key, value in schema.items()}
    test, then, otherwise = (rewritten.get(k) for k in ("if", "then", "else"))
    if (
        test == {"type": "object"}
        and isinstance(then, dict)
        and then.get("type") == "object"
        and isinstance(otherwise, dict)
        and "object" not in _types(otherwise)
        and "anyOf" not in rewritten
    ):
        for key in ("if", "then", "else"):
            del rewritten[key]
        rewritten["anyOf"] = [otherwise, then]
    return rewritten


def _types(schema: dict[str, Any]) -> set[str]:
    """The types ``schema`` admits by its ``type`` keyword (every type when it has none)."""
    declared = schema.get("type", ["array", "boolean", "null", "number", "object", "string"])
    return {declared} if isinstance(declared, str) else set(declared)


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return [_inline(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    inlined = {key: _inline(value, defs) for key, value in schema.items() if key != "$defs"}
    reference = inlined.pop("$ref", None)
    if reference is None:
        return inlined
    target = _inline(defs[reference.removeprefix("#/$defs/")], defs)
    return {**target, **inlined}  # keywords beside $ref (title, description) win


def check_schema(document: Document) -> list[Finding]:
    """Every schema error of ``document``, each at its place; taints the broken paths."""
    if is_valid()(document.data):
        return []
    findings: list[Finding] = []
    reported = set(document.refused)  # the loader already reported these
    for error in _validator().iter_errors(document.data):
        if len(findings) >= MAX_SCHEMA_FINDINGS:
            findings.append(_too_many(document))
            break
        for path, message, hint in _EXPLAINERS.get(str(error.validator), _fallback)(error):
            if path in reported and error.validator != "required":
                continue  # one problem per value: '' is both empty and blank
            reported.add(path)
            document.taint(path)
            findings.append(Finding.error(message, document.source(path), hint))
    return findings


def _too_many(document: Document) -> Finding:
    return Finding.error(
        f"more than {MAX_SCHEMA_FINDINGS:,} schema errors; the rest are not listed",
        document.source(""),
        "is this a site manifest? Fix the errors above and validate again",
    )


def _subject(error: ValidationError) -> str:
    """The name a message uses for the value in error: its key, or the title of a list
    entry's schema (``the protect pattern``)."""
    path, schema = _path(error), error.schema
    if not path:
        return "the manifest"
    if path.endswith("]") and isinstance(schema, dict) and "title" in schema:
        return f"the {str(schema['title']).lower()}"
    return f"`{path[path.rfind('.') + 1 :]}`"


def _describe(value: Any) -> str:
    """A value as a sentence fragment: ``the text 'yes'``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        shown = masked(value)  # before cutting it short, which could hide a password's end
        shown = shown if len(shown) <= 50 else shown[:47] + "..."
        return f"the text {shown!r}"
    return "a list" if isinstance(value, list) else "a mapping"


def _path(error: ValidationError) -> str:
    return format_path(error.absolute_path)


def _unknown_keys(error: ValidationError) -> Iterator[Problem]:
    path = _path(error)
    allowed = list(error.schema.get("properties", {}))
    for key in error.instance:
        if key in allowed:
            continue
        guess = difflib.get_close_matches(key, allowed, n=1)
        hint = f"did you mean `{guess[0]}`? " if guess else ""
        hint += f"Allowed here: {', '.join(allowed)}."
        where = "at the top level" if not path else f"in {_subject(error)}"
        yield (child(path, key), f"unknown key `{key}` {where}", hint)


def _wrong_type(error: ValidationError) -> Iterator[Problem]:
    path = _path(error)
    wanted = error.validator_value
    expected = [str(name) for name in (wanted if isinstance(wanted, list) else [wanted])]
    words = " or ".join(_TYPE_WORDS.get(name, name) for name in expected)
    message = f"{_subject(error)} must be {words}, not {_describe(error.instance)}"
    yield (path, message, _TYPE_HINTS.get(expected[0], ""))


def _missing(error: ValidationError) -> Iterator[Problem]:
    path = _path(error)
    properties = error.schema.get("properties", {})
    for key in error.validator_value:
        if key not in error.instance:
            meaning = str(properties.get(key, {}).get("description", "")).rstrip(".")
            hint = f"add `{key}:`" + (f" ({meaning[:1].lower()}{meaning[1:]})" if meaning else "")
            yield (path, f"`{key}` is missing", hint)


def _not_constant(error: ValidationError) -> Iterator[Problem]:
    path, wanted = _path(error), json.dumps(error.validator_value)
    message = f"{_subject(error)} must be {wanted}, not {_describe(error.instance)}"
    yield (path, message, f"write `{path.rsplit('.', 1)[-1]}: {wanted}`")


def _length(error: ValidationError) -> Iterator[Problem]:
    path, limit = _path(error), error.validator_value
    if error.validator == "maxLength":
        message = f"{_subject(error)} is {len(error.instance)} characters long"
        yield (path, f"{message}; at most {limit} are allowed", "shorten it")
    else:
        yield (path, f"{_subject(error)} is empty", "give it a value or remove it")


def _pattern(error: ValidationError) -> Iterator[Problem]:
    path = _path(error)
    problem, hint = _PATTERN_SENTENCES.get(
        str(error.validator_value), (f"does not match the pattern {error.validator_value}", "")
    )
    yield (path, f"{_subject(error)} {masked(error.instance)!r} {problem}", hint)


def _range(error: ValidationError) -> Iterator[Problem]:
    path = _path(error)
    bound = "at least" if error.validator == "minimum" else "at most"
    message = f"{_subject(error)} must be {bound} {error.validator_value}, not {error.instance}"

    low, high = error.schema.get("minimum"), error.schema.get("maximum")
    if low is not None and high is not None:
        hint = f"write a number from {low} to {high}"
    else:
        hint = f"write a number of {bound} {error.validator_value}"
    yield (path, message, hint)


def _no_alternative(error: ValidationError) -> Iterator[Problem]:
    path = _path(error)
    title = str(error.schema.get("title", "value")).lower()
    message = f"{_describe(error.instance)} is not a valid {title}"
    meaning = str(error.schema.get("description", ""))
    yield (path, message, f"expected {meaning[:1].lower()}{meaning[1:]}" if meaning else "")


def _not_one_of(error: ValidationError) -> Iterator[Problem]:
    allowed = ", ".join(str(value) for value in error.validator_value)
    message = f"{_subject(error)} is {_describe(error.instance)}, which is not one of {allowed}"
    yield (_path(error), message, f"write one of {allowed}")


def _too_few(error: ValidationError) -> Iterator[Problem]:
    yield (_path(error), f"{_subject(error)} is empty", "give at least one")


def _fallback(error: ValidationError) -> Iterator[Problem]:
    yield (_path(error), error.message, "")


_EXPLAINERS: dict[str, Explainer] = {
    "additionalProperties": _unknown_keys,
    "type": _wrong_type,
    "required": _missing,
    "const": _not_constant,
    "minLength": _length,
    "maxLength": _length,
    "pattern": _pattern,
    "minimum": _range,
    "maximum": _range,
    "anyOf": _no_alternative,
    "oneOf": _no_alternative,
    "enum": _not_one_of,
    "minItems": _too_few,
}
