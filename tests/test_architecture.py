"""The house as docs/architecture.md draws it: every module named there, no room too big, and
no import running in a circle (issue 35)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.loopback import REPO

PACKAGE = REPO / "reconciler"
MAX_LINES = 400
DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def test_every_module_is_named_in_the_architecture_document() -> None:
    unnamed = [
        path.relative_to(REPO).as_posix()
        for path in _modules().values()
        if path.name != "__init__.py" and f"`{path.relative_to(REPO).as_posix()}`" not in DOC
    ]
    assert unnamed == [], "docs/architecture.md names no row for these modules"


def test_no_module_is_over_400_lines() -> None:
    long = {
        path.relative_to(REPO).as_posix(): lines
        for path in _modules().values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _imports_at_load(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports at its top level, ``if TYPE_CHECKING`` included
    (a cycle of types is a cycle of meaning), not inside functions (deferred on purpose: what
    only one command needs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in tree.body:
        for sub in ast.walk(node) if isinstance(node, ast.If | ast.Try) else [node]:
            if isinstance(sub, ast.Import):
                found |= {alias.name for alias in sub.names}
            elif isinstance(sub, ast.ImportFrom):
                base = sub.module or ""
                if sub.level:
                    anchor = package.split(".")[: len(package.split(".")) - (sub.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                found.add(base)
                found |= {f"{base}.{alias.name}" for alias in sub.names}
    return {module for module in found if module in modules and module != name}


def test_no_import_cycle() -> None:
    modules = _modules()
    graph = {name: _imports_at_load(name, path, modules) for name, path in modules.items()}
    # a package's __init__ importing its own modules is how packages work, not a cycle
    for name in graph:
        graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def _names_in_code(path: Path) -> set[str]:
    """Every identifier and string constant of a module's code (docstrings and comments are
    not code): the names a new field would have to be added under."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found


def test_a_workspace_setting_and_a_user_field_are_written_in_at_most_5_modules() -> None:
    """Issue 35: adding a setting or a field touches the schema, the kind, the API mapping and
    the sandbox, not the whole package. ``root_access`` and ``first_name`` stand for them."""
    for field in ("root_access", "first_name"):
        naming = sorted(
            name
            for name, path in _modules().items()
            if not name.startswith("reconciler.sandbox") and field in _names_in_code(path)
        )
        assert len(naming) <= 5, (field, naming)


def test_each_kinds_own_rules_import_nothing_of_the_engine_the_api_or_the_manifest() -> None:
    """A kind's spec and field rules (its package's ``__init__``, and ``change``) sit below
    everything that uses them; only its comparison and plan steps are written against the
    engine's types."""
    modules = _modules()
    above = ("reconciler.engine", "reconciler.api", "reconciler.manifest", "reconciler.cli")
    for name in ("reconciler.kinds.workspace", "reconciler.kinds.group", "reconciler.kinds.user",
                 "reconciler.kinds.change"):  # fmt: skip
        imported = _imports_at_load(name, modules[name], modules)
        assert [m for m in sorted(imported) if m.startswith(above)] == [], name


KIND_PACKAGES = ("reconciler.kinds.workspace", "reconciler.kinds.group", "reconciler.kinds.user")


def test_no_engine_module_imports_a_kind_by_name() -> None:
    """Issue 43: the engine reaches the kinds only through the registry
    (``kinds/registry.py``), so a new kind is its package and one line there."""
    modules = _modules()
    naming = {
        name: sorted(
            m for m in _imports_at_load(name, path, modules) if m.startswith(KIND_PACKAGES)
        )
        for name, path in modules.items()
        if name.startswith("reconciler.engine")
    }
    assert {name: found for name, found in naming.items() if found} == {}


def test_no_kind_and_nothing_of_the_core_imports_the_engine() -> None:
    """What kinds are written against (``reconciler.core``) and the kinds themselves sit
    below the engine: a kind plans, compares, writes and says what it does to access with
    the core's types alone."""
    modules = _modules()
    below = ("reconciler.kinds", "reconciler.core")
    importing = {
        name: sorted(
            m for m in _imports_at_load(name, path, modules) if m.startswith("reconciler.engine")
        )
        for name, path in modules.items()
        if name.startswith(below)
    }
    assert {name: found for name, found in importing.items() if found} == {}


def test_the_engine_is_rooms_by_the_way_data_flows() -> None:
    """Issue 43: ``engine/`` is a few rooms (read, planning, apply, records) and the jobs that
    join them, not forty modules side by side."""
    engine = PACKAGE / "engine"
    direct = sorted(p.name for p in engine.glob("*.py"))
    rooms = sorted(p.name for p in engine.iterdir() if (p / "__init__.py").exists())
    assert len(direct) <= 12, direct
    assert rooms == ["apply", "planning", "read", "records"]


def test_no_two_public_classes_share_a_name() -> None:
    """Issue 43: a name means one thing. Parallel roles inside each kind's own package (its
    ``LiveView``) are the one exception."""
    seen: dict[str, list[str]] = {}
    for name, path in _modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen.setdefault(node.name, []).append(name)
    twice = {
        cls: where
        for cls, where in seen.items()
        if len(where) > 1 and not all(m.startswith("reconciler.kinds.") for m in where)
    }
    assert twice == {}


def test_the_module_index_is_each_modules_own_first_sentence() -> None:
    """docs/architecture.md's index is made from the docstrings, so it says what the code
    says (``RECONCILER_REGENERATE_GOLDEN=1`` writes it again after a docstring changes)."""
    from tests.support.golden import REGENERATE
    from tests.support.module_index import BEGIN, END, module_index

    path = REPO / "docs" / "architecture.md"
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    if REGENERATE:
        path.write_text(text[:start] + module_index() + text[end:], encoding="utf-8")
        text = path.read_text(encoding="utf-8")
        start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == module_index()


def test_the_engine_reaches_the_stored_records_only_through_the_backend_interface() -> None:
    """Never a directory, a file or a connection: ``state/backend.py`` (and the sentence
    ``state/leases.py`` says of who holds the lock)."""
    modules = _modules()
    allowed = {"reconciler.state", "reconciler.state.backend", "reconciler.state.leases"}
    reaching = {
        name: sorted(
            m
            for m in _imports_at_load(name, path, modules)
            if m.startswith("reconciler.state") and m not in allowed
        )
        for name, path in modules.items()
        if name.startswith(("reconciler.engine", "reconciler.core", "reconciler.kinds"))
    }
    assert {name: found for name, found in reaching.items() if found} == {}


def test_only_the_cli_imports_the_sandbox() -> None:
    modules = _modules()
    importing = sorted(
        name
        for name, path in modules.items()
        if not name.startswith(("reconciler.sandbox", "reconciler.cli"))
        and any(m.startswith("reconciler.sandbox") for m in _imports_at_load(name, path, modules))
    )
    assert importing == []
