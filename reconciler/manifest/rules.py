"""The site API's rules that a schema cannot express, checked on the joined manifest.

Each rule exists because breaking it makes a plan fail or never converge: two names the site
treats as one, a name the site would strip or that hides invisible characters, a permission
set the site would silently change (batch flags force their base flag on), an override the API
rejects, two users with one login. Values with a schema error are skipped (see
``Entry.usable``): the schema finding already covers them, and a second finding about the
same mistake would only confuse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path

from reconciler.errors import ConfigError
from reconciler.findings import Finding, place
from reconciler.identity import group_key, name_key, path_key, workspace_key
from reconciler.manifest.merge import Entry, GroupDecl, MergedManifest, WorkspaceDecl
from reconciler.manifest.names import (
    group_name_problem,
    pattern_problem,
    text_problem,
    workspace_name_problem,
)
from reconciler.manifest.ownership import check_ownership
from reconciler.manifest.paths import child
from reconciler.manifest.references import UserReferences
from reconciler.manifest.users import check_users
from reconciler.passwords import holds_password, masked
from reconciler.spec import IMPLIED_BY, workspace_path
from reconciler.state.locate import BACKENDS, parse_location


def check_rules(manifest: MergedManifest, references: UserReferences) -> list[Finding]:
    """Every rule's findings, in rule order. The user references were read and checked once,
    for the normalisation too (``references.py``): their findings come in their rule's place,
    before the policy's (findings on one line and column keep this order)."""
    findings: list[Finding] = []
    for rule in _RULES:
        findings.extend(rule(manifest))
    findings.extend(references.findings)
    for rule in _LAST_RULES:
        findings.extend(rule(manifest))
    return findings


# --- names --------------------------------------------------------------------------------

NAME_HINT = (
    "write the name as the site will store it: 1-40 visible characters, no comma, no "
    "whitespace at either end, no control or invisible characters"
)


def _name_texts(manifest: MergedManifest) -> Iterator[Finding]:
    """Each name the site would refuse, strip or mistake for another, once per entry."""
    kinds = (
        (manifest.workspaces, "workspace", workspace_name_problem),
        (manifest.groups, "group", group_name_problem),
        (manifest.teams, "team", workspace_name_problem),  # a team's name is a workspace's too
    )
    for entries, kind, problem_of in kinds:
        for entry in entries:
            name = entry.get("name", str)
            problem = None if name is None else problem_of(name)
            if problem is not None:
                yield Finding.error(
                    f"the {kind} name {name!r} {problem}", entry.source("name"), NAME_HINT
                )


SAME_NAME = "are compared as the site compares them: without regard to case or width"


def _workspace_names(manifest: MergedManifest) -> Iterator[Finding]:
    """Names are compared as the site compares them (``reconciler.identity``); paths collide
    when spaces become ``_``."""
    by_name: dict[str, WorkspaceDecl] = {}
    by_path: dict[str, WorkspaceDecl] = {}
    for decl in manifest.workspace_decls():
        name = decl.name
        if name is None:
            continue
        first = by_name.setdefault(workspace_key(name), decl)
        if first is not decl:
            yield _same_name(decl, first, f"workspace names {SAME_NAME}")
            continue
        path = workspace_path(name)
        first = by_path.setdefault(path_key(path), decl)
        if first is not decl:
            here = decl.entry.source("name")
            yield Finding.error(
                f"{decl.describe()} gets the site path {path}, as does {first.describe()} "
                f"({place(first.entry.source('name'), here)})",
                here,
                "rename one of them: the site turns spaces into underscores, so both names "
                "map to the same workspace path",
            )


def _group_names(manifest: MergedManifest) -> Iterator[Finding]:
    by_name: dict[str, GroupDecl] = {}
    for decl in manifest.group_decls():
        name = decl.name
        if name is None:
            continue
        first = by_name.setdefault(group_key(name), decl)
        if first is not decl and not (first.team and decl.team):  # two teams: reported above
            yield _same_name(decl, first, f"group names {SAME_NAME}")


def _same_name(
    decl: WorkspaceDecl | GroupDecl, first: WorkspaceDecl | GroupDecl, why: str
) -> Finding:
    here = decl.entry.source("name")
    return Finding.error(
        f"{decl.describe()} has the same name as {first.describe()} "
        f"({place(first.entry.source('name'), here)})",
        here,
        f"give each its own name ({why})",
    )


def _previously(manifest: MergedManifest) -> Iterator[Finding]:
    """An old name (``previously``) is no longer declared and belongs to one entry only:
    otherwise the records could move to two objects, or away from one still declared."""
    kinds = (
        (manifest.workspaces, "workspace", "name", [d.name for d in manifest.workspace_decls()]),
        (manifest.groups, "group", "name", [d.name for d in manifest.group_decls()]),
        (manifest.users, "user", "username", [e.get("username", str) for e in manifest.users]),
    )
    for entries, kind, key, names in kinds:
        declared = {name_key(kind, n) for n in names if n is not None}
        claimed: dict[str, str] = {}
        for entry in entries:
            name = entry.get(key, str)
            if name is None or not entry.usable("previously"):
                continue
            for index, old in entry.items("previously"):
                where = entry.document.source(f"{child(entry.path, 'previously')}[{index}]")
                folded = name_key(kind, str(old))
                if folded in declared:
                    yield Finding.error(
                        f'{kind} "{name}" says it was previously "{old}", but the manifest '
                        f'still declares a {kind} "{old}"',
                        where,
                        "remove one of them: a rename leaves the old name behind",
                    )
                elif claimed.setdefault(folded, name) != name:
                    yield Finding.error(
                        f'{kind}s "{claimed[folded]}" and "{name}" both say they were '
                        f'previously "{old}"',
                        where,
                        "one object was renamed to one new name: keep `previously` on one",
                    )


# --- overrides ----------------------------------------------------------------------------


def _overrides(manifest: MergedManifest) -> Iterator[Finding]:
    """Check each permission block as the site will see it: merged over the defaults block.

    The defaults block is checked once, on its own, when some workspace inherits it unchanged;
    a defaults block that every workspace extends is judged only by the merged results.
    """
    defaults = manifest.defaults
    if defaults is not None and defaults.broken("permissions"):
        return  # merging over a broken block would report phantom problems
    base = defaults.get("permissions", dict) if defaults is not None else None
    decls = manifest.workspace_decls()
    heirs = [decl for decl in decls if "permissions" not in decl.settings.value]
    if defaults is not None and base is not None and heirs:
        yield from _permission_block(defaults, base, base, _inherited_by(heirs))
    for decl in decls:
        own = decl.settings.get("permissions", dict)
        if own is not None:
            yield from _permission_block(decl.settings, {**(base or {}), **own}, own)


def _inherited_by(heirs: list[WorkspaceDecl]) -> str:
    more = f" and {len(heirs) - 1} more" if len(heirs) > 1 else ""
    return f" (inherited by {heirs[0].describe()}{more})"


def _permission_block(
    entry: Entry, flags: dict[str, bool], own: dict[str, bool], context: str = ""
) -> Iterator[Finding]:
    """Findings for one merged block; ``own`` holds the flags written at ``entry``."""
    block = entry.source("permissions")
    if not any(flags.values()):
        yield Finding.error(
            f"the permission override turns no permission on{context}",
            block,
            "turn at least one permission on (the API requires it), or write "
            "`permissions: null` for no override",
        )
        return
    for batch, base in IMPLIED_BY.items():
        if flags.get(batch) and not flags.get(base):
            inherited = "" if batch in own else " (from defaults)"
            yield Finding.error(
                f"`{batch}` is on{inherited} but `{base}` is off{context}",
                entry.source(f"permissions.{batch}") if batch in own else block,
                f"add `{base}: true`: the site turns it on whenever `{batch}` is on, so the "
                "site could never match the manifest",
            )


# --- site ---------------------------------------------------------------------------------


def _site(manifest: MergedManifest) -> Iterator[Finding]:
    """No credentials in a committed file; ``state`` is a PostgreSQL URL or a path."""
    site = manifest.sections.get("site")
    if site is None:
        return
    url = site.get("url", str)
    if url is not None and holds_password(url):
        yield Finding.error(
            f"`url` {masked(url)!r} holds a password",
            site.source("url"),
            "give only the site's address: the API key and secret go in RECONCILER_API_KEY "
            "and RECONCILER_API_SECRET or a --credentials file",
        )
    state = site.get("state", str)
    if state is None:
        return
    problem = _state_problem(state)
    if problem is not None:
        what, hint = problem
        yield Finding.error(f"`state` {masked(state)!r} {what}", site.source("state"), hint)


def _state_problem(state: str) -> tuple[str, str] | None:
    """(what, what to do) when ``state`` cannot name where the records live."""
    if holds_password(state):
        return (
            "holds a password, and this file is committed",
            "remove the password from the URL, and change it if the file was shared: "
            "PostgreSQL reads it from PGPASSWORD, ~/.pgpass or a service file",
        )
    if "://" in state and not any(backend.is_written_as(state) for backend in BACKENDS):
        schemes = ", ".join(f"{s}://" for backend in BACKENDS for s in backend.schemes)
        return (
            f"is a URL of a kind the tool cannot keep records in (it knows {schemes})",
            "write " + " or ".join(backend.example for backend in BACKENDS),
        )
    if "://" in state:
        try:
            parse_location(state, base_dir=Path("."))  # the parser every command uses
        except ConfigError as exc:
            return "is not a state location the tool can use: " + exc.message, exc.hint or ""
    problem = text_problem(state)
    if problem is not None:
        return problem, "write the URL or path exactly, with nothing around it"
    return None


# --- policy -------------------------------------------------------------------------------


def _policy(manifest: MergedManifest) -> Iterator[Finding]:
    policy = manifest.sections.get("policy")
    if policy is None:
        return
    for key in ("max_delete_fraction", "max_member_removal_fraction", "max_user_removal_fraction"):
        value = policy.get(key, float)
        if value is not None and math.isnan(value):
            yield Finding.error(
                f"`{key}` is not a number", policy.source(key), "write a share from 0 to 1"
            )
    for key in ("protect", "protect_users"):
        for index, pattern in policy.items(key):
            problem = (
                pattern_problem(pattern, usernames=key == "protect_users")
                if isinstance(pattern, str)
                else None
            )
            if problem is not None:
                yield Finding.error(
                    f"the {key} pattern {pattern!r} {problem}",
                    policy.source(f"{key}[{index}]"),
                    "write the pattern with plain visible characters and nothing around it: a "
                    "pattern that matches nothing protects nothing",
                )
            elif isinstance(pattern, str) and _unclosed_bracket(pattern) is not None:
                yield Finding.error(
                    f"the {key} pattern {pattern!r} has a `[` without its `]`",
                    policy.source(f"{key}[{index}]"),
                    "close the bracket, or write `[[]` for a literal `[`",
                )
    for index, reviewer in policy.items("reviewers"):
        problem = text_problem(reviewer) if isinstance(reviewer, str) else None
        if problem is not None:
            yield Finding.error(
                f"the reviewer {reviewer!r} {problem}",
                policy.source(f"reviewers[{index}]"),
                "write the reviewer's username, e-mail address or user ID exactly, with "
                "nothing around it",
            )


def _unclosed_bracket(pattern: str) -> int | None:
    """Index of a ``[`` that opens a class ``fnmatch`` would never close, else None."""
    index = 0
    while index < len(pattern):
        if pattern[index] == "[":
            end = index + 1
            if pattern[end : end + 1] == "!":
                end += 1
            if pattern[end : end + 1] == "]":  # a leading ] belongs to the class
                end += 1
            end = pattern.find("]", end)
            if end < 0:
                return index
            index = end
        index += 1
    return None


_RULES: tuple[Callable[[MergedManifest], Iterator[Finding]], ...] = (
    _site,
    check_users,
    _name_texts,
    _workspace_names,
    _group_names,
    _previously,
    _overrides,
    check_ownership,
)
_LAST_RULES: tuple[Callable[[MergedManifest], Iterator[Finding]], ...] = (_policy,)
