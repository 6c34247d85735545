"""The name rules as pure functions: what the manifest's rules and the engine's export share."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reconciler.manifest.names import (
    email_problem,
    group_name_problem,
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
    ],
)
def test_name_rules(check: Check, text: str, problem: str | None) -> None:
    found = check(text)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found
