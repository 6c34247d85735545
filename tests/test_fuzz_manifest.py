"""Bad manifests, fuzzed: whatever the file holds, the command ends with a clear message and
exit code 0 or 1 -- never a traceback, an "Internal error", a hang or a bomb.

``test_manifest_hostile.py`` holds the hand-made hostile cases against ``load_manifest``;
here they go through the commands (``validate`` and ``plan``, the entry point in-process),
and hypothesis generates the rest: the example
manifest mutated byte by byte and value by value, random YAML-ish text and random bytes.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reconciler
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.figures import tally
from tests.support.hostile_yaml import billion_laughs
from tests.support.loopback import EXAMPLE_SITE

EXAMPLE = EXAMPLE_SITE.read_bytes()
PACKAGE = Path(reconciler.__file__).parent
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def assert_clean_ending(result: CliOutcome) -> None:
    """Exit 0 or 1 with a message of the tool's own, never a crash."""
    assert result.exit_code in (0, 1), result
    for crash in ("Traceback", "Internal error"):
        assert crash not in result.output, result.output
    if result.exit_code == 1:
        assert "error" in result.output.lower(), result.output


# --- generators ---------------------------------------------------------------------------

YAML_SYMBOLS = ":-?[]{},&*!|>'\"%@`#\n\t "
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)


values = st.recursive(scalars, _containers, max_leaves=12)


@st.composite
def byte_mutations(draw: st.DrawFn) -> bytes:
    """The example manifest with a few bytes flipped, cut, inserted or lines shuffled."""
    data = bytearray(EXAMPLE)
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        match draw(st.sampled_from(["flip", "cut", "insert", "symbol", "truncate"])):
            case "flip":
                data[at] = draw(st.integers(min_value=0, max_value=255))
            case "cut":
                del data[at : at + draw(st.integers(min_value=1, max_value=40))]
            case "insert":
                data[at:at] = draw(st.binary(min_size=1, max_size=12))
            case "symbol":
                data[at:at] = draw(st.sampled_from(YAML_SYMBOLS)).encode()
            case "truncate":
                del data[at:]
        if not data:
            break
    return bytes(data)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += _paths(child, (*prefix, index))
    return found


@st.composite
def value_mutations(draw: st.DrawFn) -> bytes:
    """The example manifest, parsed, with values replaced, removed or added at random."""
    document = yaml.safe_load(EXAMPLE)
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        path = draw(st.sampled_from(_paths(document)))
        if not path:
            document = draw(values)
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(values)
        elif action == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=12))] = draw(values)
        else:
            parent.append(draw(values))
        if not isinstance(document, dict | list):
            break
    return yaml.safe_dump(document, allow_unicode=True).encode()


yaml_like_text = st.text(
    alphabet=st.sampled_from(list(YAML_SYMBOLS) + list("abc019 ")), max_size=300
)


FUZZED: dict[str, st.SearchStrategy[bytes]] = {
    "byte mutations of the example": byte_mutations(),
    "value mutations of the example": value_mutations(),
    "random YAML-like text": yaml_like_text.map(str.encode),
    "random bytes": st.binary(max_size=400),
    "random values as YAML": values.map(lambda v: yaml.safe_dump(v).encode()),
}


def fuzz_command(
    strategy: st.SearchStrategy[bytes], directory: Path, examples: int, *command: str
) -> dict[str, int]:
    """Run ``reconciler COMMAND FILE`` on ``examples`` generated files; count the endings."""
    endings: dict[str, int] = {"exit 0": 0, "exit 1": 0}

    @settings(FUZZ, max_examples=examples)
    @given(data=strategy)
    def check(data: bytes) -> None:
        path = directory / "fuzzed.yaml"
        path.write_bytes(data)
        result = run_reconciler(command[0], str(path), *command[1:])
        assert_clean_ending(result)
        if command[0] == "plan" and "is invalid" in result.stderr:
            assert "nothing was read from the site" in result.stderr
        endings[f"exit {result.exit_code}"] += 1

    check()
    return endings


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(FUZZED))
def test_fuzzed_manifests_end_cleanly_in_validate(
    kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    endings = fuzz_command(FUZZED[kind], tmp_path_factory.mktemp("fuzz"), 150, "validate")
    assert endings["exit 1"] > 0  # the generator does produce invalid manifests
    tally("fuzzed manifests (validate)", endings)


@pytest.mark.slow
def test_fuzzed_manifests_end_cleanly_in_plan(tmp_path: Path) -> None:
    """Through ``plan --sandbox``: an invalid manifest reads nothing, a valid one is planned
    (or its unknown users reported) against the embedded sandbox."""
    sandbox = ("--sandbox", "--state-dir", str(tmp_path / "state"))
    endings = fuzz_command(value_mutations(), tmp_path, 40, "plan", *sandbox)
    assert endings["exit 0"] > 0 and endings["exit 1"] > 0
    tally("fuzzed manifests (plan)", endings)


@pytest.mark.soak
@pytest.mark.parametrize("kind", sorted(FUZZED))
def test_soak_fuzzed_manifests_end_cleanly(kind: str, tmp_path: Path) -> None:
    tally("fuzzed manifests (soak)", fuzz_command(FUZZED[kind], tmp_path, 5000, "validate"))


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    """A tag that a full YAML loader would run as code is refused, and nothing runs."""
    witness = tmp_path / "ran"
    text = f'version: 1\nworkspaces: !!python/object/apply:os.system ["touch {witness}"]\n'
    (tmp_path / "tagged.yaml").write_text(text)
    result = run_reconciler("validate", str(tmp_path / "tagged.yaml"))
    assert result.exit_code == 1
    assert "the YAML tag !!python/object/apply:os.system is not supported" in result.stdout
    assert not witness.exists()


UNSAFE_YAML = {"Loader", "FullLoader", "UnsafeLoader", "CLoader", "CFullLoader", "CUnsafeLoader",
               "full_load", "full_load_all", "unsafe_load", "unsafe_load_all"}  # fmt: skip
YAML_LOADS = ("yaml.load", "yaml.load_all")


def test_no_code_loads_yaml_unsafely() -> None:
    """Everywhere in the package: no unsafe loader is named, and ``yaml.load`` always gets
    an explicit ``Loader=`` (the modules that do pick ``SafeLoader`` or ``CSafeLoader``)."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "yaml":
                problems += [f"{where}: yaml.{node.attr}"] if node.attr in UNSAFE_YAML else []
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in YAML_LOADS:
                loader = any(keyword.arg == "Loader" for keyword in node.keywords)
                problems += [] if loader else [f"{where}: {ast.unparse(node)}"]
    assert problems == []


# --- the hostile ones, through the commands --------------------------------------------------


def _huge(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(21 * 1024 * 1024)  # sparse: 21 MiB without writing them


HOSTILE: dict[str, tuple[Callable[[Path], object], str]] = {
    "billion laughs": (
        lambda p: p.write_text(billion_laughs()),
        "aliases expand the document to more than 100,000 extra values",
    ),
    "a million brackets": (
        lambda p: p.write_bytes(b"version: 1\nworkspaces: " + b"[" * 1_000_000),
        "nested more than 64 levels deep",
    ),
    "huge file": (_huge, "manifests are limited to 20 MiB"),
    "not UTF-8": (
        lambda p: p.write_bytes(b"version: 1\nworkspaces:\n  - name: Caf\xe9\n"),
        "the file is not UTF-8",
    ),
    "binary junk": (lambda p: p.write_bytes(random.Random(7).randbytes(4096)), "error"),
}


@pytest.mark.parametrize("command", ["validate", "plan"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_manifests_end_with_one_clear_error(
    case: str, command: str, tmp_path: Path
) -> None:
    write, message = HOSTILE[case]
    write(tmp_path / "hostile.yaml")
    extra = ["--sandbox", "--state-dir", str(tmp_path / "state")] if command == "plan" else []
    result = run_reconciler(command, "hostile.yaml", *extra, cwd=tmp_path)
    assert result.exit_code == 1
    assert_clean_ending(result)
    assert message in result.output
    if command == "plan":
        assert "nothing was read from the site" in result.stderr
        assert not (tmp_path / "state").exists()  # not even the embedded sandbox was opened
    tally("hostile manifests", runs=1)
