"""The fastjsonschema check says *valid* exactly when jsonschema finds no error.

``check_schema`` skips jsonschema for a document the compiled check passes, so a wrong
*valid* would let a manifest error through unreported. Its verdicts are compared with
jsonschema's (on the schema as shipped, ``$ref`` and all) on the manifest cases, on tricky
values one at a time, and on documents generated from the schema itself: mostly fitting,
each node sometimes replaced by a value of another type or an edge of its own.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from reconciler.manifest.schema import _inline, check_schema, is_valid, site_schema
from reconciler.manifest.source import read_document

SCHEMA = site_schema()
JSONSCHEMA = Draft202012Validator(SCHEMA)
COMPILED = is_valid()
CASES = Path(__file__).parent / "cases" / "manifest"
EXAMPLES = Path(__file__).parents[1] / "examples"


def _ends_a_line(value: Any) -> bool:
    """A string anywhere in ``value`` that ends with a newline."""
    if isinstance(value, str):
        return value.endswith("\n")
    if isinstance(value, dict):
        return any(_ends_a_line(k) or _ends_a_line(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_ends_a_line(v) for v in value)
    return False


def agree(document: Any) -> None:
    """The same verdict, but for one documented difference that is never a wrong *valid*: a
    pattern's ``$`` matches before a final newline in jsonschema (Python's ``re``), at the
    very end only in the generated code (as ECMA-262 says). Such a string is then explained
    by jsonschema, finds no schema error, and the name rules refuse its trailing newline."""
    expected = JSONSCHEMA.is_valid(document)
    verdict = COMPILED(document)
    if verdict is not expected:
        assert expected and not verdict and _ends_a_line(document), list(
            JSONSCHEMA.iter_errors(document)
        )[:3]


def workspace(**values: Any) -> dict[str, Any]:
    return {"version": 1, "workspaces": [{"name": "Finance", "users": ["alice"], **values}]}


@pytest.mark.parametrize(
    "document",
    [
        {"version": 1},
        {"version": True},  # true is not 1
        {"version": 1.0},  # 1.0 is 1
        {"version": "1"},
        {"version": 2},
        {"version": None},
        {"version": 1, "extra": 1},
        {"version": 1, "site": {"url": "https://acme.example.net"}},
        {"version": 1, "site": {"url": "ftp://acme"}},
        {"version": 1, "site": {"state": ""}},
        {"version": 1, "policy": {"max_delete_fraction": math.nan}},  # NaN is not < 0
        {"version": 1, "policy": {"max_delete_fraction": math.inf}},
        {"version": 1, "policy": {"max_delete_fraction": 1}},
        {"version": 1, "policy": {"max_delete_fraction": True}},  # a boolean is no number
        {"version": 1, "policy": {"max_deletes": 2.0}},  # an integer, without a fraction
        {"version": 1, "policy": {"max_deletes": 2.5}},
        {"version": 1, "policy": {"max_deletes": -1}},
        {"version": 1, "policy": {"protect": ["", "a*"]}},
        {"version": 1, "users": [{"username": "u", "email": "e", "phone": "0041"}]},
        {"version": 1, "users": [{"username": "u", "email": "e", "phone": 41}]},
        {"version": 1, "users": [{"username": "u", "email": "e", "phone": "+41"}]},
        {"version": 1, "users": [{"username": "u"}]},  # email is required
        workspace(),
        workspace(name="a" * 40),
        workspace(name="a" * 41),
        workspace(name="a,b"),
        workspace(name=""),
        workspace(users=[0]),
        workspace(users=[7, "bob"]),
        workspace(users=[" "]),
        workspace(users=[True]),
        workspace(users=[7.0]),
        workspace(users=[{"user": "bob", "expires": "2026-12-31"}]),
        workspace(users=[{"user": 1042, "expires": "2026-12-31"}, "alice"]),
        workspace(users=[{"user": "bob"}]),  # expires is required
        workspace(users=[{"user": "bob", "expires": "31.12.2026"}]),
        workspace(users=[{"user": " ", "expires": "2026-12-31"}]),
        workspace(users=[{"user": "bob", "expires": "2026-12-31", "role": "x"}]),
        workspace(users=[{}]),
        {"version": 1, "users": [{"username": "u", "email": "e", "expires": "2026-12-31"}]},
        {"version": 1, "users": [{"username": "u", "email": "e", "expires": 20261231}]},
        {"version": 1, "policy": {"expiry_notice_days": 0}},
        {"version": 1, "policy": {"expiry_notice_days": 400}},
        workspace(permissions=None),
        workspace(permissions={"upload_files": True}),
        workspace(permissions={"upload_files": "yes"}),
        workspace(permissions={"upload": True}),
        workspace(root_access=1),
        [],
        "version: 1",
        None,
    ],
)
def test_tricky_values_get_jsonschemas_verdict(document: Any) -> None:
    agree(document)


def _manifest_files() -> list[Path]:
    return sorted(
        [*CASES.rglob("*.yaml"), *CASES.rglob("*.yml"), *EXAMPLES.rglob("*.yaml")],
        key=str,
    )


@pytest.mark.parametrize("path", _manifest_files(), ids=lambda path: path.name)
def test_manifest_files_get_jsonschemas_verdict(path: Path) -> None:
    document, _ = read_document(path, path.name)
    if document is not None:
        agree(document.data)


def test_a_valid_manifest_has_no_schema_findings() -> None:
    document, findings = read_document(EXAMPLES / "site.yaml", "site.yaml")
    assert document is not None and not findings
    assert COMPILED(document.data)
    assert check_schema(document) == []


def test_an_invalid_manifest_is_still_explained_by_jsonschema(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_text("version: 1\nworkspaces:\n  - name: Finance\n    root_access: 'yes'\n")
    document, _ = read_document(path, "site.yaml")
    assert document is not None
    [finding] = check_schema(document)
    assert finding.source.path == "workspaces[0].root_access"
    assert "true or false" in finding.message


# --- generated documents --------------------------------------------------------------------
# A valid document is generated from the schema, then one place in it is changed: a value
# replaced by an odd one, a key added or removed, an item added. Most changes break it, some
# do not (an extra `name` key that is a valid name...); jsonschema decides which.

ODD_TEXT = ["", " ", "\t", "a,b", "x" * 40, "x" * 41, "0041", "+41", "12a", "ftp://a", "ü"]
odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=3),
    st.sampled_from([math.nan, math.inf, -0.5, 0.5, 1.0, 2.0, 1.5]),
    st.sampled_from(ODD_TEXT),
    st.text(max_size=5),
    st.just([]),
    st.just({}),
    st.just({"other": 1}),
)


def fitting(schema: Any) -> st.SearchStrategy[Any]:
    """Values valid under ``schema`` (an inlined one)."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "if" in schema:  # a list entry: a mapping (then) or a reference (else)
        return st.one_of(fitting(schema["then"]), fitting(schema["else"]))
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    options: list[st.SearchStrategy[Any]] = []
    if "object" in kinds:
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        options.append(
            st.fixed_dictionaries(
                {key: fitting(properties[key]) for key in required},
                optional={k: fitting(v) for k, v in properties.items() if k not in required},
            )
        )
    if "array" in kinds:
        options.append(
            st.lists(fitting(schema["items"]), min_size=schema.get("minItems", 0), max_size=3)
        )
    if "string" in kinds:
        pattern = schema.get("pattern")
        text = st.from_regex(pattern) if pattern else st.text(max_size=8)
        shortest, longest = schema.get("minLength", 0), schema.get("maxLength", math.inf)
        options.append(text.filter(lambda value: shortest <= len(value) <= longest))
    if "integer" in kinds or "number" in kinds:
        low, high = schema.get("minimum"), schema.get("maximum")
        options.append(st.integers(min_value=low, max_value=high))
        if "number" in kinds:
            options.append(st.floats(min_value=low, max_value=high, allow_nan=False))
    if "boolean" in kinds:
        options.append(st.booleans())
    if "null" in kinds:
        options.append(st.none())
    return st.one_of(*options)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value in a document (keys and indexes), the document's own first."""
    places = [path]
    if isinstance(value, (dict, list)):
        for key, item in value.items() if isinstance(value, dict) else enumerate(value):
            places += _places(item, (*path, key))
    return places


def _changed(document: Any, path: tuple[Any, ...], change: str, odd: Any) -> Any:
    """``document`` (a fresh copy) with one change at ``path``."""
    document = copy.deepcopy(document)
    *above, last = path or (None,)
    holder = document
    for key in above:
        holder = holder[key]
    target = holder[last] if path else document
    if change == "extend" and isinstance(target, dict):
        target[odd if isinstance(odd, str) else "other"] = odd
    elif change == "extend" and isinstance(target, list):
        target.append(odd)
    elif change == "drop" and isinstance(target, dict) and target:
        del target[next(iter(target))]
    elif path:
        holder[last] = odd
    else:
        document = odd
    return document


GENERATED = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
INLINED = _inline(SCHEMA, SCHEMA["$defs"])


@pytest.mark.slow
@GENERATED
@given(fitting(INLINED))
def test_generated_valid_documents_are_valid(document: Any) -> None:
    assert JSONSCHEMA.is_valid(document)
    agree(document)


@pytest.mark.slow
@GENERATED
@given(st.data())
def test_generated_documents_changed_in_one_place_get_jsonschemas_verdict(
    data: st.DataObject,
) -> None:
    document = data.draw(fitting(INLINED))
    path = data.draw(st.sampled_from(_places(document)))
    change = data.draw(st.sampled_from(["replace", "extend", "drop"]))
    agree(_changed(document, path, change, data.draw(odd_values)))


def test_a_valid_manifest_of_plain_references_raises_nothing_inside_the_check() -> None:
    """Counted, not timed: the generated code formats an error message (``locals()``) each
    time it raises, and it raised one for every plain user reference while the schema's
    ``if: {type: object}`` told a time-limited entry from a reference (0.7 s of CPU on a
    large site's manifest). Every entry here is a valid plain reference: nothing is raised."""
    import sys

    document = {
        "version": 1,
        "workspaces": [
            {"name": f"W{i}", "users": ["alice", "bob@acme.example", 1042]} for i in range(50)
        ],
        "groups": [{"name": "crew", "members": ["alice", "bob"]}],
    }
    formatted = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal formatted
        if event == "c_call" and arg is locals:
            formatted += 1

    sys.setprofile(count)
    try:
        verdict = COMPILED(document)
    finally:
        sys.setprofile(None)
    assert verdict and JSONSCHEMA.is_valid(document)
    assert formatted == 0
