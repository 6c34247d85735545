"""Hostile input ends quickly in a finding: never a traceback, a crash, a hang or a bomb."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from reconciler.manifest import ManifestResult, compose, load_manifest, schema
from reconciler.manifest.source import MAX_FILE_BYTES
from tests.support.hostile_yaml import billion_laughs


def _load_bytes(tmp_path: Path, data: bytes) -> tuple[ManifestResult, float]:
    path = tmp_path / "hostile.yaml"
    path.write_bytes(data)
    started = time.thread_time()  # CPU time: a busy machine does not stretch it
    result = load_manifest([path])
    return result, time.thread_time() - started


def _only_error(result: ManifestResult) -> str:
    (finding,) = result.findings
    assert finding.severity == "error" and result.desired is None
    return finding.render()


def test_a_billion_laughs_is_refused_at_once(tmp_path: Path) -> None:
    result, seconds = _load_bytes(tmp_path, billion_laughs().encode())
    assert "aliases expand the document to more than 100,000 extra values" in _only_error(result)
    assert seconds < 1.0


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("version: 1\nworkspaces: " + "[" * 100 + "]" * 100 + "\n", 2),
        ("version: 1\nworkspaces:\n" + "- " * 100 + "x\n", 3),
        ("".join(" " * level + "a:\n" for level in range(100)) + " " * 100 + "b\n", 65),
    ],
    ids=["flow", "block-sequence", "block-mapping"],
)
def test_nesting_deeper_than_64_levels_is_refused(tmp_path: Path, text: str, line: int) -> None:
    result, _ = _load_bytes(tmp_path, text.encode())
    rendered = _only_error(result)
    assert "nested more than 64 levels deep" in rendered
    assert result.findings[0].source.line == line


def test_a_million_brackets_do_not_crash_the_interpreter(tmp_path: Path) -> None:
    """libyaml's own composer recurses on the C stack and segfaults on this."""
    result, seconds = _load_bytes(tmp_path, b"[" * 1_000_000)
    assert "nested more than 64 levels deep" in _only_error(result)
    assert seconds < 2.0


def test_an_alias_may_not_nest_past_the_limit(tmp_path: Path) -> None:
    deep, wrap = "[" * 40 + "]" * 40, 25
    text = f"version: 1\na: &deep {deep}\nb: {'[' * wrap}*deep{']' * wrap}\n"
    result, _ = _load_bytes(tmp_path, text.encode())
    assert "the alias *deep nests the document more than 64 levels deep" in _only_error(result)


@pytest.mark.parametrize(
    "text", ["version: 1\nworkspaces: &w [*w]\n", "version: 1\nworkspaces: [*nowhere]\n"]
)
def test_recursive_and_undefined_aliases_are_refused(tmp_path: Path, text: str) -> None:
    result, _ = _load_bytes(tmp_path, text.encode())
    assert "refers to no anchor" in _only_error(result)


def test_invalid_utf8_names_the_byte_and_its_place(tmp_path: Path) -> None:
    result, _ = _load_bytes(tmp_path, b"version: 1\nworkspaces:\n  - name: Caf\xe9\n")
    rendered = _only_error(result)
    assert rendered.startswith(f"{tmp_path / 'hostile.yaml'}:3:14: error: the file is not UTF-8")
    assert "byte 0xe9 at offset 36" in rendered


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    result, _ = _load_bytes(tmp_path, b"\xef\xbb\xbfversion: 1\n")
    assert result.ok and result.findings == []


def test_a_file_over_20_mib_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(21 * 1024 * 1024)  # sparse: no need to write 21 MiB
    assert path.stat().st_size > MAX_FILE_BYTES
    started = time.thread_time()
    result = load_manifest([path])
    assert "the file is 21.0 MiB; manifests are limited to 20 MiB" in _only_error(result)
    assert time.thread_time() - started < 1.0  # CPU time: not read, let alone parsed


def test_a_file_with_too_many_values_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compose, "MAX_VALUES", 1_000)
    result, _ = _load_bytes(tmp_path, ("version: 1\nworkspaces: [" + "a, " * 2_000 + "]").encode())
    assert "the file holds more than 1,000 values" in _only_error(result)


def test_schema_errors_are_capped_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "MAX_SCHEMA_FINDINGS", 10)
    result, _ = _load_bytes(tmp_path, ("version: 1\nworkspaces: [" + "a, " * 50 + "]").encode())
    assert len(result.findings) == 11
    assert "more than 10 schema errors" in result.findings[0].message  # sorted: line 1


def test_a_fifo_is_refused_rather_than_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert "is not a regular file" in _only_error(load_manifest([fifo]))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'version: 1\nsite: {url: "\x01"}\n', "the character U+0001 is not allowed in YAML"),
        (b"version: 1\n? [a, b]\n: 1\n", "a mapping key is a list or a mapping"),
        (b"version: 1\nworkspaces:\n  - {name: A, <<: [1]}\n", "`<<` merges only mappings"),
        (b"version: 1\nworkspaces: [!!int abc]\n", "'abc' cannot be read as !!int"),
        (b"version: 1\nworkspaces: [{name: !custom x}]\n", "the YAML tag !custom is not supported"),
        (b"version: 1\nworkspaces: [{users: [" + b"9" * 5000 + b"], name: A}]\n", "too long"),
        (b"--- !foo\nversion: 1\n", "the YAML tag !foo is not supported"),
        (b"--- !!set\n? a\n", "the YAML tag !!set is not supported"),
        (b"---\n...\n", "the file is empty"),
        (b"\x00", "the character U+0000 is not allowed in YAML"),
        (b"- [", "YAML syntax error"),
    ],
)
def test_strange_yaml_is_one_clear_error(tmp_path: Path, data: bytes, message: str) -> None:
    result, _ = _load_bytes(tmp_path, data)
    assert message in _only_error(result)
