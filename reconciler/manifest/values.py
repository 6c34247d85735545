"""Plain values built from a manifest's YAML nodes, each path indexed to where it was written.

PyYAML's loaders throw positions away, so values are built here from the node tree
(``compose``), and the build is strict where PyYAML is lenient: a key given twice is an error
rather than a silent overwrite, a tag that is not plain data is refused rather than
constructed, and a password key is refused wherever it is written, its value dropped on the
spot. Reading the file and turning its problems into findings is ``source.py``'s job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from reconciler.findings import Finding
from reconciler.manifest.compose import STR_TAG, Collection, Node, Position, Scalar
from reconciler.manifest.credentials import is_password_key
from reconciler.manifest.paths import child
from reconciler.model import Source

TAG = "tag:yaml.org,2002:"
_MERGE_TAG = TAG + "merge"
_INT_TAG = TAG + "int"
_NUMBER_TAGS = frozenset({_INT_TAG, TAG + "float"})
_COLLECTION_TAGS = frozenset({TAG + "seq", TAG + "map"})
_CONSTRUCTOR = SafeConstructor()  # its scalar converters know YAML's int/float/bool spellings


def _converter(construct: Callable[[ScalarNode], Any]) -> Callable[[str], Any]:
    """One of PyYAML's converters, which read the text of a PyYAML node, for a text."""
    return lambda text: construct(ScalarNode("", text))


_SCALARS: dict[str, Callable[[str], Any]] = {
    TAG + "null": lambda text: None,
    TAG + "bool": lambda text: SafeConstructor.bool_values[text.lower()],  # construct_yaml_bool
    TAG + "int": _converter(_CONSTRUCTOR.construct_yaml_int),
    TAG + "float": _converter(_CONSTRUCTOR.construct_yaml_float),
    STR_TAG: lambda text: text,
    TAG + "timestamp": lambda text: text,  # a date-like name stays the text written
    TAG + "value": lambda text: text,  # a lone "=" is text, not YAML 1.1's value key
}
_MAX_NUMBER_TEXT = 64  # longer digit strings are refused before Python converts them

ListPlaces = list[Position]
"""Where each item of a list was written, in order, kept by list path: a reader of every item
(``references.py``) looks none of them up. ``positions`` holds them too when the node tree
built the list; a plain text of a list built from events (``stream.py``) is only here."""


class ValueBuilder:
    """Builds plain values from nodes, filling the position index on the way."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.positions: dict[str, Position] = {"": (1, 1)}
        self.lists: dict[str, ListPlaces] = {}
        self.odd_numbers: dict[str, str] = {}
        self.refused: set[str] = set()
        self.findings: list[Finding] = []

    def error(self, message: str, where: Position, path: str, hint: str) -> None:
        line, column = where
        self.findings.append(Finding.error(message, Source(self.file, line, column, path), hint))

    def refuse(self, message: str, where: Position, path: str, hint: str) -> None:
        """Report a value that cannot be used; it becomes null, and the schema stays quiet
        about that null so that one mistake makes one finding."""
        self.error(message, where, path, hint)
        self.refused.add(path)

    def build(self, node: Node, path: str) -> Any:
        if isinstance(node, Scalar):
            if node.tag == STR_TAG:  # most values: nothing to convert
                return node.value
            return self.scalar(node, path)
        if node.tag not in _COLLECTION_TAGS:
            return self.unsupported_tag(node, path)
        if node.mapping:
            return self.mapping(node, path)
        return self.sequence(node, path)

    def sequence(self, node: Collection, path: str) -> list[Any]:
        """A list; its plain texts (user references, mostly) are taken without a call."""
        items: list[Any] = []
        places: ListPlaces = []
        positions, build, append = self.positions, self.build, items.append
        for index, item in enumerate(node.items):
            item_path = f"{path}[{index}]"
            positions[item_path] = item.position
            places.append(item.position)
            if type(item) is Scalar and item.tag == STR_TAG:
                append(item.value)
            else:
                append(build(item, item_path))
        self.lists[path] = places
        return items

    def mapping(self, node: Collection, path: str) -> dict[str, Any]:
        """A mapping; ``<<: *alias`` merges are applied below keys written here."""
        result: dict[str, Any] = {}
        for merged in reversed(self.merge_sources(node, path)):  # the first merge wins
            result.update(self.mapping(merged, path))
        first_seen: dict[str, Position] = {}
        for key_node, value_node in node.pairs():
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.key(key_node, path)
            if key is None:
                continue
            key_path = child(path, key)
            if key in first_seen:
                self.given_twice(key, key_node.position, first_seen[key], key_path)
            first_seen[key] = key_node.position
            self.positions[key_path] = key_node.position
            if is_password_key(key):
                self.refuse_password(key, key_node.position, key_path)
                result[key] = None  # the password itself is never kept
                continue
            result[key] = self.build(value_node, key_path)
        return result

    def given_twice(self, key: str, where: Position, first: Position, path: str) -> None:
        self.error(
            f"the key `{key}` is given twice in this mapping (first on line {first[0]})",
            where,
            path,
            "keep one of them: YAML would silently use the last",
        )

    def refuse_password(self, key: str, where: Position, path: str) -> None:
        self.refuse(
            f"`{key}` is not allowed: site-reconciler never reads, sends or stores a password",
            where,
            path,
            "remove it, and change that password if this file was shared. Without one the "
            "site e-mails a new user their login; PostgreSQL reads PGPASSWORD, ~/.pgpass or "
            "a service file",
        )

    def merge_sources(self, node: Collection, path: str) -> list[Collection]:
        sources: list[Collection] = []
        for key_node, value_node in node.pairs():
            if key_node.tag != _MERGE_TAG:
                continue
            values = (
                value_node.items
                if isinstance(value_node, Collection) and not value_node.mapping
                else [value_node]
            )
            for value in values:
                if isinstance(value, Collection) and value.mapping:
                    sources.append(value)
                else:
                    self.error(
                        "`<<` merges only mappings",
                        value.position,
                        path,
                        "follow `<<:` with an alias of a mapping, e.g. `<<: *standard`",
                    )
        return sources

    def key(self, node: Node, path: str) -> str | None:
        if isinstance(node, Scalar):
            return node.value  # `1:` or `yes:` stay the text written
        self.error(
            "a mapping key is a list or a mapping",
            node.position,
            path,
            "keys are plain words such as `name` or `users`",
        )
        return None

    def scalar(self, node: Scalar, path: str) -> Any:
        convert = _SCALARS.get(node.tag)
        if convert is None:
            return self.unsupported_tag(node, path)
        if node.tag in _NUMBER_TAGS and len(node.value) > _MAX_NUMBER_TEXT:
            self.refuse(
                "the number is too long", node.position, path, "write a number of a few digits"
            )
            return None
        try:
            value = convert(node.value)
        except (ValueError, KeyError, yaml.YAMLError):
            self.refuse(
                f"{node.value!r} cannot be read as {_short_tag(node.tag)}",
                node.position,
                path,
                "remove the explicit tag or fix the value",
            )
            return None
        if node.tag == _INT_TAG and node.value != str(value):
            self.odd_numbers[path] = node.value  # e.g. 01042, which YAML 1.1 reads as octal
        return value

    def unsupported_tag(self, node: Node, path: str) -> None:
        self.refuse(
            f"the YAML tag {_short_tag(node.tag)} is not supported",
            node.position,
            path,
            "a manifest holds plain text, numbers, true/false, lists and mappings; remove the tag",
        )


def _short_tag(tag: str) -> str:
    """``!!int`` rather than ``tag:yaml.org,2002:int``, as the user wrote it."""
    return "!!" + tag.removeprefix(TAG) if tag.startswith(TAG) else tag
