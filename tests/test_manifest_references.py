"""The user references read list by list, at once, are what the item-by-item walk reads.

``references.read_references`` makes a list that holds nothing to report (no odd text, no
user twice) into references in one go, and walks any other item by item, where findings are
made. Forcing the walk everywhere must give the same references and the same findings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.manifest import references
from reconciler.manifest.merge import MergedManifest, merge
from reconciler.manifest.schema import check_schema
from reconciler.manifest.source import read_document


def _merged(tmp_path: Path, texts: list[str]) -> MergedManifest:
    documents = []
    for number, text in enumerate(texts):
        path = tmp_path / f"part{number}.yaml"
        path.write_text(text, encoding="utf-8")
        document, _ = read_document(path, path.name)
        assert document is not None
        check_schema(document)
        documents.append(document)
    merged, _ = merge(documents, all_read=True)
    return merged


def _both_ways(merged: MergedManifest, monkeypatch: pytest.MonkeyPatch) -> None:
    at_once = references.read_references(merged)
    with monkeypatch.context() as patched:
        patched.setattr(references._CleanTexts, "refs", lambda *_: None)
        walked = references.read_references(merged)
    assert at_once.lists == walked.lists
    assert [f.render() for f in at_once.findings] == [f.render() for f in walked.findings]


CASES = [
    "workspaces:\n- name: A\n  users: [alice, zed, carol@acme.example]\n"
    "groups:\n- name: G\n  members: [bob, Bob, ' dave', 1042, '1042']\n"
    "teams:\n- name: T\n  members: [erin, erin]\n",
    "workspaces:\n- name: A\n  users: [alice, 01042, frank]\n- name: B\n  users: [x, y]\n",
    "workspaces:\n- name: A\n  users: [alice, {not: a reference}, bob]\n- name: B\n  users: 7\n"
    "- name: C\n  users: [ALICE, alice]\n- name: D\n  users: ['zero\u200bwidth', gina]\n",
    "workspaces:\n- name: A\n  users: &u [hank, ivan]\n- name: B\n  users: *u\n",
    "workspaces:\n- name: A\n  users: [judy]\n  users: [kim, kim]\n",
]


@pytest.mark.parametrize("text", CASES)
def test_lists_read_at_once_are_those_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    _both_ways(_merged(tmp_path, ["version: 1\n" + text]), monkeypatch)


def test_most_lists_are_read_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    merged = _merged(tmp_path, ["version: 1\n" + CASES[0], CASES[1]])
    walked: list[Any] = []
    read = references._read_list

    def walk(*args: Any) -> Any:
        walked.append(f"{args[0].document.file}: {args[2]}")
        return read(*args)

    monkeypatch.setattr(references, "_read_list", walk)
    references.read_references(merged)
    # part0's workspace holds nothing to report; part1 has a number YAML read otherwise;
    # "bob" and "Bob" are left to the walk wherever they are
    assert walked == [
        "part1.yaml: workspaces[0].users",
        "part1.yaml: workspaces[1].users",
        "part0.yaml: groups[0].members",
        "part0.yaml: teams[0].members",
    ]


POOL = [
    "alice", "Alice", "ALICE", "bob", " bob", "bob ", "carol@acme.example",
    "Carol@Acme.example", "dave\u200b", "", "  ", "1042", 1042, 7,
    "\uff46\uff55\uff4c\uff4c", "full",
]  # fmt: skip
reference_lists = st.lists(st.sampled_from(POOL), max_size=6)


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(reference_lists, min_size=1, max_size=4),
    st.lists(reference_lists, max_size=3),
    st.lists(reference_lists, max_size=2),
)
def test_generated_lists_read_at_once_are_those_walked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workspaces: list[list[Any]],
    groups: list[list[Any]],
    teams: list[list[Any]],
) -> None:
    manifest = {
        "version": 1,
        "workspaces": [{"name": f"W{n}", "users": refs} for n, refs in enumerate(workspaces)],
        "groups": [{"name": f"G{n}", "members": refs} for n, refs in enumerate(groups)],
        "teams": [{"name": f"T{n}", "members": refs} for n, refs in enumerate(teams)],
    }
    text = yaml.safe_dump(manifest, allow_unicode=True)
    _both_ways(_merged(tmp_path, [text]), monkeypatch)
