"""The ``reconciler`` command as installed (the console script's ``run``; ``python -m
reconciler`` too): ``cli.main``, with a start-up and an exit that cost less than the
interpreter's own (issue 47). Library users and the tests call ``cli.main`` and get neither.

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
or written is only slower.

**No teardown.** Once ``main`` has returned -- its output written, its files closed, its locks
released, every one of them by a ``with`` that ``main`` has left -- the standard streams and
the log handlers are flushed and the process ends with ``os._exit``, with ``main``'s exit
code: the interpreter's teardown would free every object of a plan one by one (~0.1 s of
CPU for a large one) and run nothing the command still needs. Should flushing fail (the
reader of a pipe has gone), the interpreter exits as it would have, to report it as always.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any, NoReturn

from reconciler.environment import cache_dir

MAX_ENTRIES = 4_000
"""More than any version of the tool makes: a file past this (sources of many old versions
of the classes) is started afresh rather than loaded ever larger."""

_FILENAME = "<string>"  # the name exec gives a source it compiles: tracebacks read the same


class ClassCode:
    """The compiled methods of dataclasses, by their source's digest; ``learnt`` says
    whether any was compiled since the file was read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.code: dict[bytes, CodeType] = _read(path)
        self.learnt = False

    def exec(
        self,
        source: str | bytes | CodeType,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        /,
    ) -> None:
        """``exec(source, globals, locals)``, a source's compiled code taken from the cache."""
        if isinstance(source, str):
            key = digest(source)
            code = self.code.get(key)
            if code is None:
                code = self.code[key] = compile(source, _FILENAME, "exec")
                self.learnt = True
            source = code
        exec(source, globals, locals)

    def save(self) -> None:
        """Write what was learnt, whole or not at all (another run may be writing it)."""
        if not self.learnt or len(self.code) > MAX_ENTRIES:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.path.parent, delete=False) as partial:
                partial.write(marshal.dumps(self.code))
        except (OSError, ValueError):
            return
        try:
            os.replace(partial.name, self.path)
        except OSError:
            Path(partial.name).unlink(missing_ok=True)
        self.learnt = False


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
    return cache


def uninstall() -> None:
    """Make dataclasses compile every class again (``install`` undone)."""
    vars(dataclasses).pop("exec", None)


def _read(path: Path) -> dict[bytes, CodeType]:
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict) or len(loaded) > MAX_ENTRIES:
        return {}
    return {
        key: code
        for key, code in loaded.items()
        if isinstance(key, bytes) and isinstance(code, CodeType)
    }


def run() -> NoReturn:
    cache = install()
    from reconciler.cli import main

    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:  # main always exits; should it ever return, it succeeded
        code = 0
    cache.save()
    if code is None:
        code = 0
    if not isinstance(code, int):
        sys.exit(code)
    try:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    run()
