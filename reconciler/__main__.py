"""The ``reconciler`` command as installed (the console script's ``run``; ``python -m
reconciler`` too): ``cli.main``, started for less (issue 47). Library users and the tests call
``cli.main`` without it.

**The methods of its classes, compiled once per machine.** ``@dataclass`` writes each class's
``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and, for a frozen class,
``__setattr__`` and ``__delattr__`` as Python source, and compiles it when the class is made:
a plan's start-up makes some 170 dataclasses (its own and its libraries'), and compiling
their methods was about three quarters of making them -- a sixth of the start-up's CPU. The
source depends on nothing but the class (its fields, their defaults' names, the options), so
its compiled code is kept, as Python keeps ``__pycache__``, in the user's cache directory
(``environment.cache_dir()``), in one file a Python version, *keyed by a digest of the source
itself* (BLAKE2b, 128 bits): a class that changes writes another source, which is compiled
and kept anew, and a stale entry is never used. ``dataclasses`` calls
``exec(source, globals, locals)`` by its global name; ``install`` gives that module an
``exec`` that compiles each source only when the cache lacks it and then runs the code
exactly as ``exec`` would have (the same globals and locals). Where a Python makes its
classes otherwise, nothing is found to cache and nothing changes; a cache that cannot be read
or written, or that is not the user's alone (another could put code in it), is only slower.

Each source is compiled as ``exec`` compiles it, inheriting no ``__future__`` flag of this
module (else ``__init__``'s annotations would become strings naming dataclasses' locals).
A file that reached ``MAX_ENTRIES`` is written again with only the entries this run used.

**The code cattrs generates, likewise.** cattrs writes a function to turn each class into
data and back, and compiles its source with ``compile(source, filename, mode)`` by its
global name: some 90 sources and 20 ms of a 200-team onboarding's CPU (and ``typing``, each
annotation: 500 more, 8 ms). ``install`` gives those modules (``COMPILERS``) a ``compile``
that takes the code from the same cache, keyed by a digest of the source, its file name,
its mode and the ``__future__`` flags the module's own call would have passed on; the code
returned is the code ``compile`` would have made.

**Regular expressions, likewise.** Python compiles each pattern a module or library makes at
import (PyYAML's reader, aiohttp's cookies, the tool's own names) in Python, every run:
some 130 patterns and 30-35 ms of a plan's start-up. Only those are kept: patterns that a
module's or a class's body asks for, the program's own text. A pattern a function makes may
be made of data -- the scrubber's holds the API secret -- and never reaches the cache. What
that compilation makes -- the pattern's program for the C matcher, a list of integers, with
its flags and groups -- is kept like code, keyed by the pattern and its flags, and handed to
the matcher as ``re._compiler.compile`` hands it: the compiled pattern is equal to the one
made without the cache (``Pattern`` objects compare their programs). Python's ``re``
internals are this Python's own, so the cache is used only where they are those this was
written against (``_regex_cache_fits``: Python 3.11 to 3.13); elsewhere patterns compile as
ever.

**The heap is not torn down at exit.** Once ``cli.main`` has decided the exit code and
everything Python does on leaving has been done -- the threads joined, every exit handler
run, stdout and stderr flushed -- the process ends with ``os._exit``. What that skips is
Python taking its own heap apart, object by object: the modules, the classes and functions
start-up built, the caches. After a 200-team onboarding that took some 30 ms of CPU (of a
2.5 s apply). Nothing the tool writes waits for it: every file is written within a ``with``
block, every connection closed by its own. ``_leave_as_is`` is registered only when no exit
handler came before it (a coverage hook, say), so it always runs last; when ``main`` leaves
without a numeric exit code, or stdout cannot be flushed (a closed pipe), Python ends the
process as ever, and says so itself.
"""

from __future__ import annotations
import __future__

import atexit
import dataclasses
import gc
import hashlib
import importlib
import inspect
import marshal
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Any

from reconciler.environment import cache_dir, private_file

_sre: Any = importlib.import_module("_sre")  # the C matcher ``re`` hands programs to

MAX_ENTRIES = 4_000
"""Some four versions of the tool's classes (a plan makes about 1,000 sources): past this,
the file is written anew with what one run used rather than grow with every upgrade."""

PATTERNS_WORTH_SAVING = 0.005
"""Seconds of compiling new patterns worth writing the file for (writing it takes 2-4 ms)."""

_FILENAME = "<string>"  # the name exec gives a source it compiles: tracebacks read the same

COMPILERS = ("cattrs.gen", "cattrs.gen.typeddicts", "typing")
"""The modules that compile source by calling ``compile``: cattrs the functions it writes,
``typing`` each annotation written as text (``from __future__ import annotations``) that a
class's type hints are read from, some 500 a run. Not attrs: the ``__hash__`` it writes
holds a number drawn anew in every process, so its sources would never be found again."""

Compile = Callable[..., CodeType]
RegexCompile = Callable[..., "re.Pattern[Any]"]
_REGEX_COMPILE: RegexCompile = re._compiler.compile  # type: ignore[attr-defined]


class ClassCode:
    """What is compiled once per machine -- dataclasses' methods, cattrs' functions,
    annotations, patterns' programs -- by a digest of its source; ``learnt`` says
    whether any was compiled since the file was read, ``used`` what this run took, and
    ``patterns_learnt`` the seconds spent compiling patterns the file lacked.

    The file keeps each code object marshalled on its own, and one is unmarshalled only when
    a run uses it: the file also holds earlier versions' classes (up to ``MAX_ENTRIES``),
    and unmarshalling them all cost 14 ms for 2,100 entries, against some 1,100 used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.code: dict[bytes, Any] = _read(path)  # bytes: not yet unmarshalled
        self.learnt = False
        self.patterns_learnt = 0.0
        self.used: set[bytes] = set()

    def exec(
        self,
        source: str | bytes | CodeType,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        /,
    ) -> None:
        """``exec(source, globals, locals)``, a source's compiled code taken from the cache."""
        if isinstance(source, str):
            text = source
            source = self._code(
                digest(text), lambda: compile(text, _FILENAME, "exec", dont_inherit=True)
            )
        exec(source, globals, locals)

    def compiler(self, module: ModuleType) -> Compile:
        """``compile`` for ``module``'s calls, its code taken from the cache: the module's
        ``__future__`` flags passed on, as the built-in passes on its caller's."""
        inherited = _future_flags(module)

        def compile_cached(
            source: Any,
            filename: str,
            mode: str,
            flags: int = 0,
            dont_inherit: bool = False,
            optimize: int = -1,
        ) -> CodeType:
            flags |= 0 if dont_inherit else inherited
            if not isinstance(source, str) or optimize != -1:
                made: CodeType = compile(source, filename, mode, flags, True, optimize)
                return made
            return self._code(
                digest(f"{mode}\0{flags}\0{filename}\0{source}"),
                lambda: compile(source, filename, mode, flags, True),
            )

        return compile_cached

    def regex_compiler(self, original: RegexCompile) -> RegexCompile:
        """``re._compiler.compile`` with each pattern's program taken from the cache."""

        def compile_regex(pattern: Any, flags: int = 0) -> re.Pattern[Any]:
            if not isinstance(pattern, str | bytes) or flags & re.DEBUG or _asked_by_a_function():
                return original(pattern, flags)
            key = digest(f"regex\0{flags}\0{pattern!r}")
            started = time.perf_counter()
            parts, made = self._kept(key, lambda: _regex_parts(pattern, flags), _is_regex_parts)
            if made:
                self.patterns_learnt += time.perf_counter() - started
            return _sre.compile(pattern, *parts)  # type: ignore[no-any-return]

        return compile_regex

    def _code(self, key: bytes, make: Callable[[], CodeType]) -> CodeType:
        """The code kept under ``key`` (unmarshalled now if need be), else ``make()``, kept."""
        code, made = self._kept(key, make, lambda found: isinstance(found, CodeType))
        self.learnt = self.learnt or made
        return code  # type: ignore[no-any-return]

    def _kept(
        self, key: bytes, make: Callable[[], Any], valid: Callable[[Any], bool]
    ) -> tuple[Any, bool]:
        """What is kept under ``key`` (unmarshalled now if need be, and ``valid``), else
        ``make()``, kept; and whether it was made now."""
        self.used.add(key)
        found = self.code.get(key)
        if isinstance(found, bytes):
            found = _unmarshalled(found)
        made = found is None or not valid(found)
        if made:
            found = make()
        self.code[key] = found
        return found, made

    def save(self) -> None:
        """Write what was learnt, whole or not at all (another run may be writing it); not
        for patterns alone that took less to compile than writing the file takes: a few
        modules build a pattern from a set, whose order, and so whose text, changes with
        every process (the standard library's e-mail header parser: 4 patterns, 0.4 ms), and
        would otherwise have the file written again on every run."""
        if not self.learnt and self.patterns_learnt < PATTERNS_WORTH_SAVING:
            return
        kept = {
            key: code if isinstance(code, bytes) else marshal.dumps(code)
            for key, code in self.code.items()
            if len(self.code) <= MAX_ENTRIES or key in self.used
        }
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.path.parent, delete=False) as partial:
                partial.write(marshal.dumps(kept))
        except (OSError, ValueError):
            return
        try:
            os.replace(partial.name, self.path)
        except OSError:
            Path(partial.name).unlink(missing_ok=True)
        self.learnt = False
        self.patterns_learnt = 0.0


def digest(source: str) -> bytes:
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def cache_path() -> Path:
    """The cache file of this Python (marshal's format and code objects are its own)."""
    version = hashlib.sha256(sys.version.encode()).hexdigest()[:16]
    return cache_dir() / f"class-code-{sys.implementation.cache_tag}-{version}.bin"


def install(path: Path | None = None) -> ClassCode:
    """Make dataclasses compile through the cache from now on; the cache, to ``save``."""
    cache = ClassCode(path or cache_path())
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    for name in COMPILERS:
        module = _imported(name)
        if module is not None:
            module.compile = cache.compiler(module)  # type: ignore[attr-defined]
    if _regex_cache_fits():
        re._compiler.compile = cache.regex_compiler(_REGEX_COMPILE)  # type: ignore[attr-defined]
    return cache


def uninstall() -> None:
    """Make dataclasses and cattrs compile every source, ``re`` every pattern, again
    (``install`` undone)."""
    vars(dataclasses).pop("exec", None)
    # Not asked of ``_regex_cache_fits``: once installed, ``re._compiler.compile`` is the
    # cache's own, which that check would not recognise.
    re._compiler.compile = _REGEX_COMPILE  # type: ignore[attr-defined]
    for name in COMPILERS:
        if (module := sys.modules.get(name)) is not None:
            vars(module).pop("compile", None)


def _imported(name: str) -> ModuleType | None:
    """The module, or None where it is not there (one that no longer calls ``compile`` never
    reads the name it is given: nothing changes)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _future_flags(module: ModuleType) -> int:
    """The compiler flags of the ``from __future__ import`` statements ``module`` made."""
    flags = 0
    for name in __future__.all_feature_names:
        feature = getattr(__future__, name)
        if vars(module).get(name) is feature:
            flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _read(path: Path) -> dict[bytes, bytes]:
    """The file's entries, each still marshalled; none from a file that is not the user's
    alone, is damaged, or is of the earlier layout (code objects unmarshalled together)."""
    if not private_file(path):
        return {}
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict) or len(loaded) > MAX_ENTRIES:
        return {}
    return {
        key: code
        for key, code in loaded.items()
        if isinstance(key, bytes) and isinstance(code, bytes)
    }


def _unmarshalled(data: bytes) -> Any:
    """What an entry holds; None for a damaged one (made again)."""
    try:
        return marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None


RegexParts = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


def _regex_parts(pattern: str | bytes, flags: int) -> RegexParts:
    """What ``re._compiler.compile`` (Python 3.11-3.13) hands the C matcher for ``pattern``
    after parsing and compiling it in Python: the flags, the program, the groups."""
    parsed = re._parser.parse(pattern, flags)  # type: ignore[attr-defined]
    code = re._compiler._code(parsed, flags)  # type: ignore[attr-defined]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        flags | parsed.state.flags,
        [int(op) for op in code],  # its opcodes are int subclasses marshal refuses
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


def _asked_by_a_function() -> bool:
    """Whether the code that asked ``re`` for a pattern is a function's, not a module's or a
    class's body: those run as they are imported, and their patterns are the program's own
    text; a function's may be made of data -- the scrubber's holds the API secret and its
    signing key, a ``--target``'s is a user's glob -- and is never written to the cache."""
    # past ``compile_regex``: ``re``'s own frames, then the caller's
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and str(frame.f_globals.get("__name__")).partition(".")[0] == "re":
        frame = frame.f_back
    return frame is None or bool(frame.f_code.co_flags & inspect.CO_OPTIMIZED)


def _is_regex_parts(found: Any) -> bool:
    return (
        isinstance(found, tuple)
        and len(found) == 5
        and isinstance(found[0], int)
        and isinstance(found[1], list)
        and isinstance(found[2], int)
        and isinstance(found[3], dict)
        and isinstance(found[4], tuple)
    )


def _regex_cache_fits() -> bool:
    """Whether this Python's ``re`` compiles as ``_regex_parts`` expects (3.11 to 3.13)."""
    compiler = getattr(re, "_compiler", None)
    names = getattr(getattr(compiler, "compile", None), "__code__", None)
    return (
        sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
        and names is not None
        and {"_code", "_sre", "parse"} <= set(names.co_names)
    )


def run() -> None:
    """``cli.main`` with the class-code cache, saved whatever way ``main`` leaves; the
    process then ends without tearing its heap down (``_leave_as_is``). The garbage
    collector is off while the modules load (``cli.main`` says why, and turns it on)."""
    gc.disable()
    if getattr(atexit, "_ncallbacks", lambda: 1)() == 0:  # none before it: it runs last
        atexit.register(_leave_as_is)
    cache = install()
    try:
        from reconciler.cli import main

        main()
    except SystemExit as leaving:
        _EXIT_CODE[:] = [leaving.code]
        raise
    finally:
        cache.save()


_EXIT_CODE: list[object] = []  # what ``cli.main`` left with (``SystemExit.code``)


def _leave_as_is() -> None:
    """The last exit handler: end the process with ``cli.main``'s exit code now (the module
    docstring says why), once the standard streams are flushed. Otherwise -- no exit code
    from ``main``, one that is not a number, a stream that cannot be flushed -- return, and
    Python ends the process as it always does."""
    if not _EXIT_CODE:
        return
    code = 0 if _EXIT_CODE[0] is None else _EXIT_CODE[0]
    if not isinstance(code, int) or isinstance(code, bool):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # no stream (None), or a closed one
        return
    os._exit(code)


if __name__ == "__main__":
    run()
