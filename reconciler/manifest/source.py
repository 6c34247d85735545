"""Read one manifest file into plain values that remember where each value was written.

Every later check reports ``file:line:column`` and a path such as ``workspaces[3].permissions``;
PyYAML's loaders throw positions away, so values are built here from the node tree and each
path is indexed to the line and column of its key (or list item). Building values ourselves
also makes the loader strict where PyYAML is lenient: a key given twice is an error rather
than a silent overwrite, a tag that is not plain data is refused rather than constructed, and
a password key is refused wherever it is written, its value dropped on the spot.

A plain document (no anchors, aliases, tags or merges: nearly every manifest) is built
straight from libyaml's events (``stream.py``). Any other is composed into nodes by the
guarded composer (``compose``: libyaml's own would recurse on the C stack and crash on deep
nesting) and built into values by ``ValueBuilder`` (``values.py``; paths are ``paths.py``'s).

Input is treated as hostile: a size limit, strict UTF-8, no FIFOs, and the nesting and alias
limits of ``compose``. Every problem becomes a ``Finding``; nothing here raises.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reconciler.findings import Finding
from reconciler.manifest.compose import (
    MAX_DEPTH,
    OFFSETS_IN_BYTES,
    Collection,
    ComposeError,
    Node,
    Position,
    Scalar,
    compose,
    position_of,
)
from reconciler.manifest.paths import parent
from reconciler.manifest.stream import build_plain
from reconciler.manifest.values import TAG, ListPlaces, ValueBuilder
from reconciler.model import Source

MAX_FILE_BYTES = 20 * 1024 * 1024
"""A manifest of 1,000 workspaces is about 250 KiB; anything past 20 MiB is a mistake."""


@dataclass(slots=True)
class Document:
    """One manifest file: its values, where each was written, and which parts are broken."""

    file: str  # as the user named it, so messages match what they typed
    data: dict[str, Any]
    positions: dict[str, Position]  # path -> 1-based (line, column)
    odd_numbers: dict[str, str] = field(default_factory=dict)  # path -> text, e.g. "01042"
    refused: set[str] = field(default_factory=set)  # values the loader replaced by null
    tainted: set[str] = field(default_factory=set)  # paths at or above a schema error
    lists: dict[str, ListPlaces] = field(default_factory=dict)  # list path -> where its items are

    def source(self, path: str) -> Source:
        """Where ``path`` was written; a missing key points at its nearest written parent."""
        position = self.position(path)
        probe = path
        while position is None and probe:
            probe = parent(probe)
            position = self.position(probe)
        line, column = position or (1, 1)
        return Source(self.file, line, column, path)

    def position(self, path: str) -> Position | None:
        """Where the key or list item at ``path`` was written, if it was."""
        position = self.positions.get(path)
        if position is None and path.endswith("]"):
            cut = path.rfind("[")
            places = self.lists.get(path[:cut])
            index = path[cut + 1 : -1]
            if places is not None and index.isascii() and index.isdigit():
                number = int(index)
                if number < len(places) and str(number) == index:
                    position = places[number]
        return position

    def taint(self, path: str) -> None:
        """Mark ``path`` and its parents as holding a schema error."""
        while path not in self.tainted:
            self.tainted.add(path)
            if not path:
                return
            path = parent(path)

    def usable(self, path: str) -> bool:
        """True when no schema error lies at or under ``path``, so rules may trust its shape."""
        return path not in self.tainted


def _fail(
    file: str, message: str, hint: str, line: int | None = None, col: int | None = None
) -> tuple[None, list[Finding]]:
    return None, [Finding.error(message, Source(file, line, col), hint)]


def _read_bytes(path: Path, file: str) -> tuple[bytes | None, list[Finding]]:
    """The file's bytes, refusing what is not a regular file or is too large."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return _fail(file, "is not a regular file", "give a manifest file or a directory")
        if info.st_size > MAX_FILE_BYTES:
            return _fail(
                file,
                f"the file is {info.st_size / 2**20:.1f} MiB; manifests are limited to "
                f"{MAX_FILE_BYTES // 2**20} MiB",
                "split the manifest into several files in a directory",
            )
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _fail(file, f"cannot be read: {exc.strerror or exc}", "check the path and access")
    if len(data) > MAX_FILE_BYTES:  # it grew while we looked
        return _fail(file, f"the file is larger than {MAX_FILE_BYTES // 2**20} MiB", "split it")
    return data, []


def _line_column(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    return raw.count(b"\n", 0, offset) + 1, column


def _decode(data: bytes, file: str) -> tuple[str | None, list[Finding]]:
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError as exc:
        return _fail(
            file,
            f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            "cannot be decoded",
            "save the file as UTF-8",
            *_line_column(data, exc.start),
        )


def _yaml_error(exc: yaml.YAMLError, text: str, file: str) -> Finding:
    """A syntax error in the shape of every other finding."""
    hint = "fix the YAML syntax here (indentation, quotes, a missing `:` or bracket)"
    if isinstance(exc, yaml.MarkedYAMLError) and "maximum nesting depth" in str(exc.problem):
        # libyaml >= 0.2.6 (PyYAML 6.0.3+) stops at its own limit before the composer's
        return Finding.error(
            f"the document is nested more than {MAX_DEPTH} levels deep",
            Source(file, *position_of(exc.problem_mark)) if exc.problem_mark else Source(file),
            "a manifest needs only a few levels; check the indentation and brackets",
        )
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        detail = f" {exc.context}" if exc.context else ""
        if exc.context_mark is not None and exc.context_mark.line != exc.problem_mark.line:
            detail += f" that starts on line {exc.context_mark.line + 1}"
        message = f"YAML syntax error: {exc.problem}{detail}"
        return Finding.error(message, Source(file, *position_of(exc.problem_mark)), hint)
    if isinstance(exc, yaml.reader.ReaderError):
        # libyaml counts bytes, PyYAML's own reader counts characters
        offset = exc.position if OFFSETS_IN_BYTES else len(text[: exc.position].encode("utf-8"))
        line, column = _line_column(text.encode("utf-8"), offset)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        message = f"the character U+{code:04X} is not allowed in YAML ({exc.reason})"
        return Finding.error(message, Source(file, line, column), "remove it")
    return Finding.error(f"YAML error: {exc}", Source(file), hint)


def _build(text: str, file: str) -> tuple[Any, ValueBuilder | None, list[Finding]]:
    """The values of ``text`` and the builder that made them, or the findings that stop it.

    A plain document is built straight from its events (``stream.py``); any other is
    composed into nodes first."""
    try:
        plain = build_plain(text, file)
        if plain is not None:
            return plain[0], plain[1], []
        root = compose(text)
    except ComposeError as exc:
        line, column = (None, None) if exc.mark is None else position_of(exc.mark)
        return None, None, [Finding.error(exc.message, Source(file, line, column), exc.hint)]
    except yaml.YAMLError as exc:
        return None, None, [_yaml_error(exc, text, file)]
    root, findings = _root(root, file)
    if root is None:
        return None, None, findings
    builder = ValueBuilder(file)
    return builder.build(root, ""), builder, []


def _root(root: Node | None, file: str) -> tuple[Node | None, list[Finding]]:
    """``root`` when it is a mapping, else the finding that says what it is."""
    if root is None or (isinstance(root, Scalar) and root.tag == TAG + "null"):
        return _fail(file, "the file is empty", "start it with `version: 1`", 1, 1)
    if not (isinstance(root, Collection) and root.mapping):
        kind = "a list" if isinstance(root, Collection) else "a single value"
        return _fail(
            file,
            f"the top level is {kind}, not a mapping",
            "a manifest is a mapping of keys such as `version: 1`, `workspaces:` and `groups:`",
            *root.position,
        )
    return root, []


def read_document(path: Path, file: str) -> tuple[Document | None, list[Finding]]:
    """Read, decode, parse and build one file; ``file`` is the name used in findings."""
    data, findings = _read_bytes(path, file)
    if data is None:
        return None, findings
    text, findings = _decode(data, file)
    if text is None:
        return None, findings
    values, builder, findings = _build(text, file)
    if builder is None:
        return None, findings
    if not isinstance(values, dict):  # the root carried a tag the builder refused
        return None, builder.findings
    document = Document(
        file, values, builder.positions, builder.odd_numbers, builder.refused, lists=builder.lists
    )
    for refused in builder.refused:
        document.taint(refused)
    return document, builder.findings
