"""The two ways a manifest file is built agree.

A plain document is built straight from the parser's events (``source._Reader``); any other
is composed into nodes and built from them (``source._Builder``). Here plain documents are
read both ways and must give the same values, positions, findings and taints -- and the
limits of ``compose`` must stop both at the same place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.manifest import compose, source

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(ROOT.glob("examples/**/*.yaml")) + sorted(ROOT.glob("tests/cases/manifest/*.yaml"))

PLAIN = {
    "every scalar kind": (
        "version: 1\n"
        "workspaces:\n"
        "- name: Finance\n"
        "  root_access: off\n"
        "  users: [alice, 'bob', \"1042\", 1042, 01042, 0o17, 0x1F, 1_000, 1:20, +5, 1.5, .inf,\n"
        "          .NaN, ~, null, '', =, 2001-01-01, yes, !!str 017, !!int '12', ! 13]\n"
        "  permissions: {upload_files: true, download_files: TRUE}\n"
    ),
    "refused values": (
        "version: 1\n"
        "workspaces:\n"
        "- name: !!int x\n"
        "  users: [!!float nope, !!bool maybe, !custom a, !!binary aGk=, " + "9" * 70 + "]\n"
    ),
    "keys given twice and password keys": (
        "version: 1\n"
        "version: 2\n"
        "users:\n"
        "- {username: a, email: a@b, password: hunter2, phone: 00417, phone_ext: '12'}\n"
        "- {username: b, email: b@b, email: c@b, api_secret: x}\n"
        "1: one\n"
        "yes: true\n"
    ),
    "block scalars and flow": (
        "version: 1\n"
        "groups:\n"
        "- name: g\n"
        "  members:\n"
        "  - |\n"
        "    text\n"
        "  - >-\n"
        "    folded\n"
        "  - {a: [b, {c: d}]}\n"
        "  - []\n"
        "  - {}\n"
    ),
    "nested to the limit": "version: 1\na: " + "[" * 63 + "]" * 63 + "\n",
}

NOT_PLAIN = {
    "an anchor": "version: 1\na: &x 1\n",
    "an alias": "version: 1\na: &x [1]\nb: *x\n",
    "a merge key": "version: 1\nw: {<<: {a: 1}, b: 2}\n",
    "a tag on a list": "version: 1\nw: !!omap [a: 1]\n",
    "a mapping tag on a list": "version: 1\nw: !!map [a]\n",
    "a key that is a list": "version: 1\n? [a]\n: 1\n",
    "a list under a password key": "version: 1\npassword: [a]\n",
    "a top level that is a list": "[1, 2]\n",
}


def _read(path: Path, *, nodes: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """What ``read_document`` gives, in a form that compares by value."""
    with monkeypatch.context() as patch:
        if nodes:
            patch.setattr(source._Reader, "document", _decline)
        document, findings = source.read_document(path, path.name)
    if document is None:
        return None, findings
    fields = (document.data, document.positions, document.odd_numbers, document.refused)
    return repr(fields), document.tainted, findings


def _decline(self: Any) -> Any:
    raise source._NeedsNodes


def _streamed(text: str, tmp_path: Path) -> bool:
    """True when the reader builds ``text`` itself rather than leaving it to the nodes."""
    builder = source._Builder("m.yaml")
    loader = compose.Loader(text)
    try:
        source._Reader(loader, builder).document()
    except source._NeedsNodes:
        return False
    finally:
        loader.dispose()
    return True


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_a_plain_document_reads_as_its_nodes_do(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(PLAIN[name], encoding="utf-8")
    assert _streamed(PLAIN[name], tmp_path)
    streamed = _read(path, nodes=False, monkeypatch=monkeypatch)
    assert streamed == _read(path, nodes=True, monkeypatch=monkeypatch)


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_example_and_case_files_read_alike(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    streamed = _read(path, nodes=False, monkeypatch=monkeypatch)
    assert streamed == _read(path, nodes=True, monkeypatch=monkeypatch)


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_documents_that_are_not_plain_go_to_the_nodes(name: str, tmp_path: Path) -> None:
    assert not _streamed(NOT_PLAIN[name], tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\na: " + "[" * 64 + "]" * 64 + "\n",
        "version: 1\na: " + "{b: " * 64 + "1" + "}" * 64 + "\n",
        "version: 1\nusers: [" + ", ".join(["x"] * 2_000) + "]\n",
        "version: 1\na: 1\n---\nb: 2\n",
    ],
    ids=["deep-lists", "deep-mappings", "too-many-values", "two-documents"],
)
def test_the_limits_stop_both_alike(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compose, "MAX_VALUES", 1_000)
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    streamed = _read(path, nodes=False, monkeypatch=monkeypatch)
    assert streamed[0] is None and len(streamed[1]) == 1
    assert streamed == _read(path, nodes=True, monkeypatch=monkeypatch)
