"""The name rules as pure functions: what the manifest's rules and the engine's export share."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reconciler.manifest.names import (
    email_problem,
    group_name_problem,
    pattern_problem,
    reference_problem,
    username_problem,
    workspace_name_problem,
)

Check = Callable[[str], str | None]


@pytest.mark.parametrize(
    ("check", "text", "problem"),
    [
        (workspace_name_problem, "Finance", None),
        (workspace_name_problem, "Research & Development 2024", None),
        (workspace_name_problem, "Ünïcödé Ωmega 財務", None),
        (workspace_name_problem, "x" * 40, None),
        (workspace_name_problem, "x" * 41, "is 41 characters long; at most 40 are allowed"),
        (workspace_name_problem, "Sales, EMEA", "contains a comma"),
        (workspace_name_problem, "", "is empty"),
        (workspace_name_problem, " \t\u3000", "has no visible character"),
        (workspace_name_problem, "Finance ", "ends with whitespace, which the site strips"),
        (workspace_name_problem, "\u00a0Finance", "starts with whitespace"),
        (workspace_name_problem, "Fin\x00ance", "character U+0000,"),
        (workspace_name_problem, "Fin\tance", "character U+0009,"),
        (workspace_name_problem, "Fin\u200bance", "U+200B (ZERO WIDTH SPACE)"),
        (workspace_name_problem, "Fin\u202eance", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        (workspace_name_problem, "Fin\u2029ance", "U+2029 (PARAGRAPH SEPARATOR)"),
        (workspace_name_problem, "Fin\ufeffance", "U+FEFF (ZERO WIDTH NO-BREAK SPACE)"),
        (group_name_problem, "finance-team", None),
        (group_name_problem, "a,b", "contains a comma"),
        (group_name_problem, "team\u2066", "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
        (username_problem, "alice", None),
        (username_problem, "a.b-c_d@acme.example", None),
        (username_problem, "bob smith", "contains ' '; a username holds only letters, digits"),
        (username_problem, "jörg!", "contains '!', 'ö';"),
        (username_problem, "svc,backup", "contains ','"),
        (username_problem, "alice ", "ends with whitespace"),
        (username_problem, "", "is empty"),
        (email_problem, "alice@acme.example", None),
        (email_problem, "alice", "is not an e-mail address"),
        (email_problem, "a@b@c", "is not an e-mail address"),
        (email_problem, "a b@c", "is not an e-mail address"),
        (email_problem, "alice@acme.example\u200b", "U+200B"),
        (reference_problem, "bob@acme.example", None),
        (reference_problem, "1042", None),
        (reference_problem, "any text at all", None),
        (reference_problem, "\u200balice", "U+200B"),
        (reference_problem, "alice\n", "ends with whitespace"),
        (pattern_problem, "admin*", None),
        (pattern_problem, "[!a-z]*-keep?", None),
        (pattern_problem, "Отдел-IT*", None),  # one script a word: a real name
        (pattern_problem, "財務*", None),
        (pattern_problem, "Ünïcödé Ωμέγα*", None),
        (pattern_problem, "Ωmega*", "mixes Greek and Latin letters in 'Ωmega'"),
        (pattern_problem, "svc-* ", "ends with whitespace"),
        (pattern_problem, "\tsvc-*", "starts with whitespace"),
        (pattern_problem, "svc-*\u200c", "U+200C (ZERO WIDTH NON-JOINER)"),
        (pattern_problem, "svc\u2060-*", "U+2060 (WORD JOINER)"),
        (pattern_problem, "svc-\u202e*", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        # compatibility forms are their plain letters to the site: they match (identity)
        (pattern_problem, "\uff53\uff56\uff43-*", None),
        (pattern_problem, "svc-\uff2beep", None),
        (pattern_problem, "svc\u00a0*", None),
        (pattern_problem, "\ufb01nance*", None),
        (pattern_problem, "\U0001d41admin*", None),
        (pattern_problem, "svc-\u0430dmin*", "mixes Cyrillic and Latin letters in '\u0430dmin'"),
        (pattern_problem, "r\u03bfot*", "U+03BF (GREEK SMALL LETTER OMICRON)"),
    ],
)
def test_name_rules(check: Check, text: str, problem: str | None) -> None:
    found = check(text)
    if problem is None:
        assert found is None, found
    else:
        assert found is not None and problem in found, found


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("svc-*", None),
        ("svc-\u0430*", "mixes Cyrillic and Latin letters in 'svc-\u0430*'"),
        ("\u043e-*", None),  # one script only: judged by the site's own rules, not here
    ],
)
def test_a_username_pattern_is_one_word(pattern: str, problem: str | None) -> None:
    """A username is one word: ``svc-`` then Cyrillic U+0430 mixes scripts, though a
    workspace name's ``Отдел-IT`` does not."""
    found = pattern_problem(pattern, usernames=True)
    assert (found is None) if problem is None else (problem in (found or "")), found
    assert pattern_problem("Отдел-IT*") is None
