"""The methods dataclasses writes, and the functions cattrs writes, compiled once per machine
(``reconciler.__main__``): a class made from the cache is the class made without it, a class
that changed is compiled anew, and a damaged or missing cache costs only time."""

from __future__ import annotations

import dataclasses
import marshal
import re
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler import __main__ as classcode
from reconciler.__main__ import ClassCode


@pytest.fixture(autouse=True)
def _uninstalled() -> Iterator[None]:
    yield
    classcode.uninstall()


def make_class(cache: ClassCode | None, *, with_default: bool = True) -> type[Any]:
    """A frozen, slotted dataclass with a default (the shape the tool's records have)."""
    classcode.uninstall()
    if cache is not None:
        dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {"__annotations__": {"id": "int", "name": "str"}}
    if with_default:
        namespace["name"] = "nobody"
    made = dataclasses.dataclass(frozen=True, slots=True)(type("Person", (), namespace))
    classcode.uninstall()
    return made


def behaviour(cls: type[Any]) -> tuple[object, ...]:
    one, same, other = cls(1, "ann"), cls(1, "ann"), cls(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.id = 3
    return (repr(one), one == same, one == other, hash(one) == hash(same), other.name)


def test_a_class_made_from_the_cache_behaves_as_one_made_without(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "class-code.bin"
    learning = ClassCode(path)
    expected = behaviour(make_class(None))
    assert behaviour(make_class(learning)) == expected
    assert learning.learnt
    learning.save()
    assert path.stat().st_mode & 0o077 == 0 and path.parent.stat().st_mode & 0o077 == 0
    read_back = ClassCode(path)
    assert behaviour(make_class(read_back)) == expected
    assert not read_back.learnt  # every method came from the file: nothing was compiled


def test_a_class_that_changed_is_compiled_anew(tmp_path: Path) -> None:
    path = tmp_path / "class-code.bin"
    first = ClassCode(path)
    make_class(first, with_default=True)
    first.save()
    again = ClassCode(path)
    changed = make_class(again, with_default=False)
    assert again.learnt
    with pytest.raises(TypeError):
        changed(1)  # the new __init__, not the cached one with its default
    assert changed(1, "bo").name == "bo"


@pytest.mark.parametrize("content", [b"", b"not marshal at all", b"\xe9" * 40])
def test_a_damaged_cache_is_read_as_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "class-code.bin"
    path.write_bytes(content)
    cache = ClassCode(path)
    assert behaviour(make_class(cache)) == behaviour(make_class(None))
    assert cache.learnt


def test_an_unwritable_cache_costs_only_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the directory would be")
    cache = ClassCode(blocked / "class-code.bin")
    assert behaviour(make_class(cache)) == behaviour(make_class(None))
    cache.save()  # nothing raised
    assert blocked.read_text() == "a file where the directory would be"


def test_install_routes_each_compiler_through_the_cache_until_uninstalled(tmp_path: Path) -> None:
    """dataclasses, cattrs, ``typing`` and ``re`` each compile as before once uninstalled."""
    regex_compile = re._compiler.compile  # type: ignore[attr-defined]
    cache = classcode.install(tmp_path / "class-code.bin")

    @dataclasses.dataclass(frozen=True)
    class Made:
        id: int

    assert cache.learnt and Made(1) == Made(1)
    assert re._compiler.compile is not regex_compile  # type: ignore[attr-defined]
    classcode.uninstall()
    assert "exec" not in vars(dataclasses)
    assert re._compiler.compile is regex_compile  # type: ignore[attr-defined]
    assert not any("compile" in vars(sys.modules[name]) for name in classcode.COMPILERS)


def test_a_cached_init_keeps_the_annotations_of_one_made_without(tmp_path: Path) -> None:
    """``get_type_hints`` of a cached ``__init__`` (cattrs, inspect read it) resolves as ever."""
    path = tmp_path / "class-code.bin"
    learning = ClassCode(path)
    made_now = make_class(learning)
    learning.save()
    read_back = make_class(ClassCode(path))
    expected = typing.get_type_hints(make_class(None).__init__)
    assert expected == {"id": int, "name": str, "return": type(None)}
    assert typing.get_type_hints(made_now.__init__) == expected
    assert typing.get_type_hints(read_back.__init__) == expected


def test_a_full_cache_is_written_anew_with_what_one_run_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of old versions' sources does not stop the cache from learning the new ones."""
    monkeypatch.setattr(classcode, "MAX_ENTRIES", 20)
    path = tmp_path / "class-code.bin"
    old = {bytes([n]) * 16: marshal.dumps(compile("pass", "<string>", "exec")) for n in range(20)}
    path.write_bytes(marshal.dumps(old))
    path.chmod(0o600)
    learning = ClassCode(path)
    make_class(learning)
    learning.save()
    again = ClassCode(path)
    make_class(again)
    assert not again.learnt  # this run's methods were kept
    assert not set(old) & set(again.code)  # the old versions' were dropped


def test_a_cache_file_others_may_write_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "class-code.bin"
    learning = ClassCode(path)
    make_class(learning)
    learning.save()
    path.chmod(0o666)
    shared = ClassCode(path)
    assert shared.code == {}
    assert behaviour(make_class(shared)) == behaviour(make_class(None)) and shared.learnt


def test_a_cache_of_the_earlier_layout_is_read_as_empty(tmp_path: Path) -> None:
    """Earlier files held code objects, not each one marshalled: compiled anew, kept anew."""
    path = tmp_path / "class-code.bin"
    learning = ClassCode(path)
    make_class(learning)
    earlier = {key: marshal.loads(code) for key, code in _entries(learning).items()}
    path.write_bytes(marshal.dumps(earlier))
    path.chmod(0o600)
    again = ClassCode(path)
    assert again.code == {}
    assert behaviour(make_class(again)) == behaviour(make_class(None)) and again.learnt


def test_a_damaged_entry_is_compiled_anew(tmp_path: Path) -> None:
    path = tmp_path / "class-code.bin"
    learning = ClassCode(path)
    make_class(learning)
    learning.save()
    damaged = {key: b"\xe9 not code" for key in marshal.loads(path.read_bytes())}
    path.write_bytes(marshal.dumps(damaged))
    again = ClassCode(path)
    assert behaviour(make_class(again)) == behaviour(make_class(None)) and again.learnt


def _entries(cache: ClassCode) -> dict[bytes, bytes]:
    cache.save()
    entries: dict[bytes, bytes] = marshal.loads(cache.path.read_bytes())
    return entries


def test_cattrs_generated_code_comes_from_the_cache_once_kept(tmp_path: Path) -> None:
    """cattrs compiles a function for each class it turns into data: kept like a class's
    methods, and the function made from the cache turns the class into the same data."""
    import cattrs

    def unstructured(cache_path: Path) -> tuple[object, ClassCode]:
        item = make_class(None)(7, "ann")
        cache = classcode.install(cache_path)
        try:
            return cattrs.Converter().unstructure(item), cache
        finally:
            classcode.uninstall()

    path = tmp_path / "class-code.bin"
    first, learning = unstructured(path)
    assert first == {"id": 7, "name": "ann"} and learning.learnt
    learning.save()
    again, reading = unstructured(path)
    assert again == first
    assert not reading.learnt  # the converter's function came from the file


def test_generated_code_is_compiled_with_the_generators_future_flags(tmp_path: Path) -> None:
    """cattrs' modules say ``from __future__ import annotations``, which the built-in
    ``compile`` passes on to what they compile: the cached compile passes it on too."""
    import __future__

    import cattrs.gen

    compile_there = ClassCode(tmp_path / "class-code.bin").compiler(cattrs.gen)
    code = compile_there("def f(x: undefined) -> None: pass", "<generated>", "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    assert namespace["f"].__annotations__ == {"x": "undefined", "return": "None"}
    assert code.co_flags & __future__.annotations.compiler_flag


PATTERNS: list[tuple[str | bytes, int]] = [
    (r"^(?P<name>[a-z]+)-(?P<number>\d{2,4})$", 0),
    (r"(?i)caf\u00e9s? (?=open)|(?<!not )closed", 0),
    (r"[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]", 0),
    (r"  (\w+)  # a word\n  \s*=\s*  (.*)  # its value", re.VERBOSE),
    (rb"^[\x00-\x7f]+(?:\r\n)?", re.ASCII),
    (r"(a)|(b)(?(2)c|d)", re.IGNORECASE | re.MULTILINE | re.DOTALL),
]


def _compiled_as_a_module_does(patterns: list[tuple[str | bytes, int]]) -> list[re.Pattern[Any]]:
    """The patterns compiled by a module's body (the code the cache serves), not a function's."""
    namespace: dict[str, Any] = {"re": re, "PATTERNS": patterns, "COMPILED": []}
    module_body = "for pattern, flags in PATTERNS:\n    COMPILED.append(re.compile(pattern, flags))"
    exec(compile(module_body, "<a module>", "exec"), namespace)
    compiled: list[re.Pattern[Any]] = namespace["COMPILED"]
    return compiled


def _compiled_each(cache: ClassCode | None) -> list[re.Pattern[Any]]:
    """``PATTERNS`` compiled afresh (``re``'s own memo of patterns emptied first)."""
    re.purge()
    if cache is not None:
        re._compiler.compile = cache.regex_compiler(classcode._REGEX_COMPILE)  # type: ignore[attr-defined]
    try:
        return _compiled_as_a_module_does(PATTERNS)
    finally:
        re._compiler.compile = classcode._REGEX_COMPILE  # type: ignore[attr-defined]
        re.purge()


@pytest.fixture
def _every_pattern_worth_saving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Six patterns compile in about a millisecond: below what a run writes the file for."""
    monkeypatch.setattr(classcode, "PATTERNS_WORTH_SAVING", 0.0)


@pytest.mark.usefixtures("_every_pattern_worth_saving")
def test_a_pattern_from_the_cache_is_the_pattern_compiled_without(tmp_path: Path) -> None:
    """Patterns compare their programs, flags and text: equal means the same matcher."""
    path = tmp_path / "class-code.bin"
    expected = _compiled_each(None)
    learning = ClassCode(path)
    assert _compiled_each(learning) == expected and learning.patterns_learnt > 0
    learning.save()
    read_back = ClassCode(path)
    from_file = _compiled_each(read_back)
    assert from_file == expected and read_back.patterns_learnt == 0
    assert [p.groupindex for p in from_file] == [p.groupindex for p in expected]
    assert from_file[0].match("ann-2024").group("number") == "2024"  # type: ignore[union-attr]


@pytest.mark.usefixtures("_every_pattern_worth_saving")
def test_a_damaged_pattern_entry_is_compiled_anew(tmp_path: Path) -> None:
    path = tmp_path / "class-code.bin"
    learning = ClassCode(path)
    _compiled_each(learning)
    entries = _entries(learning)
    damaged = {key: marshal.dumps((1, "not a program")) for key in entries}
    path.write_bytes(marshal.dumps(damaged))
    again = ClassCode(path)
    assert _compiled_each(again) == _compiled_each(None) and again.patterns_learnt > 0


class _SteppingClock:
    """A clock that moves ``step`` seconds each time it is read: a compile takes exactly one
    step, however busy the machine under the test is."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_a_run_that_learnt_only_a_few_quick_patterns_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pattern built from a set has another text in every process: learning it alone is
    not worth writing the file again on every run."""
    monkeypatch.setattr(classcode, "time", _SteppingClock(0.0001))
    path = tmp_path / "class-code.bin"
    learning = ClassCode(path)
    make_class(learning)
    learning.save()
    written = path.read_bytes()
    again = ClassCode(path)
    make_class(again)
    re.purge()
    re._compiler.compile = again.regex_compiler(classcode._REGEX_COMPILE)  # type: ignore[attr-defined]
    try:
        _compiled_as_a_module_does([(r"[^ ;,]+", 0)])  # as the header parser's: its order varies
    finally:
        re._compiler.compile = classcode._REGEX_COMPILE  # type: ignore[attr-defined]
    assert 0 < again.patterns_learnt < classcode.PATTERNS_WORTH_SAVING and not again.learnt
    again.save()
    assert path.read_bytes() == written


def test_annotations_written_as_text_resolve_as_ever_through_the_cache(tmp_path: Path) -> None:
    """``typing`` compiles each annotation kept as text before evaluating it."""
    path = tmp_path / "class-code.bin"

    def hints(cache: ClassCode) -> dict[str, Any]:
        typing.compile = cache.compiler(typing)  # type: ignore[attr-defined]
        try:
            namespace: dict[str, Any] = {
                "__annotations__": {"ids": "list[int]", "at": "str | None"}
            }
            return typing.get_type_hints(type("Row", (), namespace))
        finally:
            vars(typing).pop("compile", None)

    learning = ClassCode(path)
    assert hints(learning) == {"ids": list[int], "at": str | None} and learning.learnt
    learning.save()
    read_back = ClassCode(path)
    assert hints(read_back) == {"ids": list[int], "at": str | None} and not read_back.learnt


def test_a_pattern_a_function_makes_never_reaches_the_cache(tmp_path: Path) -> None:
    """The scrubber's pattern is made of the API secret and its signing key: it is compiled
    as ever, and nothing of it is kept or written."""
    from reconciler.api.config import Secret
    from reconciler.api.scrub import Scrubber

    path = tmp_path / "class-code.bin"
    cache = ClassCode(path)
    re.purge()
    re._compiler.compile = cache.regex_compiler(classcode._REGEX_COMPILE)  # type: ignore[attr-defined]
    try:
        scrubber = Scrubber("key-for-the-test-0001", Secret("a-secret-no-file-may-hold-0042"))
        masked = scrubber.text("sent a-secret-no-file-may-hold-0042 along")
    finally:
        re._compiler.compile = classcode._REGEX_COMPILE  # type: ignore[attr-defined]
        re.purge()
    assert "a-secret-no-file-may-hold-0042" not in masked
    assert not cache.learnt and cache.code == {}
    cache.save()
    assert not path.exists()
