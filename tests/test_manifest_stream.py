"""A plain document built straight from its events is what the node tree builds, exactly.

``stream.build_plain`` builds most manifests without composing nodes; ``compose`` and
``ValueBuilder`` build the rest. Both must give the same values, positions, list places,
odd numbers and findings, in the same order, and fail with the same error at the same place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.manifest import compose
from reconciler.manifest.compose import ComposeError
from reconciler.manifest.paths import child
from reconciler.manifest.source import Document, _root
from reconciler.manifest.stream import build_plain
from reconciler.manifest.values import ValueBuilder

REPO = Path(__file__).resolve().parents[1]
MANIFESTS = sorted(
    [REPO / "examples" / "site.yaml", *(REPO / "tests" / "cases" / "manifest").rglob("*.yaml")]
)


def _outcome(values: Any, builder: ValueBuilder) -> tuple[Any, ...]:
    """What a document built of ``values`` shows: the values, where each key and item of them
    was written (``Document.position``; only the node tree keeps the place of an item that a
    key given twice replaced), the lists' places, odd numbers and findings."""
    document = Document("site.yaml", values, builder.positions, lists=builder.lists)
    places = {path: document.position(path) for path in _paths(values, "")}
    findings = [finding.render() for finding in builder.findings]
    keys = {path: place for path, place in builder.positions.items() if not path.endswith("]")}
    return (repr(values), places, keys, builder.lists, builder.odd_numbers, findings)


def _paths(value: Any, path: str) -> list[str]:
    """Every path in ``value``: its keys' and its items', nested ones included."""
    if isinstance(value, dict):
        pairs = [(child(path, key), item) for key, item in value.items()]
    elif isinstance(value, list):
        pairs = [(child(path, index), item) for index, item in enumerate(value)]
    else:
        return []
    return [found for here, item in pairs for found in [here, *_paths(item, here)]]


def _from_nodes(text: str) -> tuple[Any, ...]:
    """What the node tree builds of ``text``, or the error composing it raised."""
    try:
        root = compose.compose(text)
    except (ComposeError, yaml.YAMLError) as exc:
        return ("error", type(exc), str(exc))
    mapping, findings = _root(root, "site.yaml")
    assert mapping is not None, findings
    builder = ValueBuilder("site.yaml")
    return _outcome(builder.build(mapping, ""), builder)


def _from_events(text: str) -> tuple[Any, ...] | None:
    """What ``build_plain`` builds of ``text`` (None: it leaves it to the node tree)."""
    try:
        built = build_plain(text, "site.yaml")
    except (ComposeError, yaml.YAMLError) as exc:
        return ("error", type(exc), str(exc))
    return None if built is None else _outcome(*built)


def _same(text: str) -> bool:
    """True when ``build_plain`` built ``text`` (rather than leaving it), as the nodes do."""
    built = _from_events(text)
    if built is not None:
        assert built == _from_nodes(text)
    return built is not None


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda path: path.name)
def test_every_example_and_case_builds_as_from_the_nodes(path: Path) -> None:
    _same(path.read_text("utf-8"))


def test_most_manifests_are_built_from_their_events() -> None:
    built = [path.name for path in MANIFESTS if _same(path.read_text("utf-8"))]
    assert "site.yaml" in built
    assert len(built) > len(MANIFESTS) * 3 // 4, built


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\nworkspaces:\n  - name: A\n    users: [alice, 01042, 1043, '1044']\n",
        "a: 1\na: [x]\nb: {c: yes, d: ~, e: 0x1F, f: 1e3, g: .nan, h: 2024-01-31, i: =}\n",
        "a:\n  - - x\n    - {y: [z, [w]]}\n  - []\n  - {}\nb: 0" + "7" * 70 + "\n",
        '? a\n: 1\n\'b\': "2"\n"": empty key\nc: !\n',
        "top: [\n  one,\n  two ]\nkey with spaces: value\n",
    ],
    ids=["references", "scalars-and-duplicate-keys", "nesting", "quoted-keys", "flow"],
)
def test_plain_documents_build_as_from_the_nodes(text: str) -> None:
    assert _same(text) != ("!" in text)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1]\nb: *x\n",
        "a: &x 1\n",
        "base: &b {x: 1}\nc:\n  <<: *b\n",
        "a: !!str 1\n",
        "a: !custom [1]\n",
        "? [a, b]\n: c\n",
        "user:\n  password: hunter2\n",
        "a: [x, y]\n'a[1]': z\n",
        "- a\n- b\n",
        "just text\n",
        "",
        "# only a comment\n",
    ],
)
def test_what_only_the_nodes_build_is_left_to_them(text: str) -> None:
    assert build_plain(text, "site.yaml") is None


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 80 + "]" * 80 + "\n",
        "".join(" " * level + "a:\n" for level in range(80)) + " " * 80 + "b\n",
        "a: 1\n---\nb: 2\n",
        "a: [1, 2\nb: 3\n",
        "a: 1\n b: 2\n",
        "a: \x07\n",
    ],
    ids=["deep-flow", "deep-block", "two-documents", "unclosed", "indentation", "control"],
)
def test_errors_are_those_of_the_nodes(text: str) -> None:
    built = _from_events(text)
    assert built is not None and built[0] == "error"
    assert built == _from_nodes(text)


def test_too_many_values_stops_at_the_same_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compose, "MAX_VALUES", 50)
    text = "a: [" + ", ".join(str(n) for n in range(60)) + "]\n"
    built = _from_events(text)
    assert built is not None and "more than 50 values" in built[2]
    assert built == _from_nodes(text)


# --- generated documents -------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
words = st.sampled_from(
    ["yes", "No", "on", "~", "null", "0o17", "017", "0x1f", "1_000", "-1", "1.5e3", ".inf",
     "2024-01-31", "=", "<<", "user00042", "", " padded ", "a: b", "#x", "[x]", "- x"]
)  # fmt: skip
scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts | words
documents = st.dictionaries(
    texts | words,
    st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(texts | words, inner, max_size=4)
        ),
        max_leaves=15,
    ),
    max_size=5,
)
GENERATED = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@GENERATED
@given(documents, st.sampled_from([None, True, False]))
def test_generated_documents_build_as_from_the_nodes(data: dict[Any, Any], flow: Any) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    _same(text)


@GENERATED
@given(st.lists(st.tuples(words | texts, words | texts), min_size=1, max_size=6))
def test_generated_keys_written_twice_build_as_from_the_nodes(
    pairs: list[tuple[str, str]],
) -> None:
    lines = [f"{yaml.safe_dump(key).split(chr(10))[0]}: {value!r}" for key, value in pairs]
    text = "\n".join(lines + lines[:2]) + "\n"
    _same(text)
