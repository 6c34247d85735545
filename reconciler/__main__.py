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

The process ends as any Python does: leaving with ``os._exit`` to skip the teardown was
tried and dropped, as a large plan's teardown measured 0.02 s of CPU (of 1.5 s), not worth
skipping ``atexit`` handlers, finalizers and the flush of any file left open.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any

from reconciler.environment import cache_dir, private_file

MAX_ENTRIES = 4_000
"""Some four versions of the tool's classes (a plan makes about 1,000 sources): past this,
the file is written anew with what one run used rather than grow with every upgrade."""

_FILENAME = "<string>"  # the name exec gives a source it compiles: tracebacks read the same


class ClassCode:
    """The compiled methods of dataclasses, by their source's digest; ``learnt`` says
    whether any was compiled since the file was read, ``used`` what this run took."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.code: dict[bytes, CodeType] = _read(path)
        self.learnt = False
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
            key = digest(source)
            self.used.add(key)
            code = self.code.get(key)
            if code is None:
                code = self.code[key] = compile(source, _FILENAME, "exec", dont_inherit=True)
                self.learnt = True
            source = code
        exec(source, globals, locals)

    def save(self) -> None:
        """Write what was learnt, whole or not at all (another run may be writing it)."""
        if not self.learnt:
            return
        kept = self.code
        if len(kept) > MAX_ENTRIES:
            kept = {key: code for key, code in kept.items() if key in self.used}
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
        if isinstance(key, bytes) and isinstance(code, CodeType)
    }


def run() -> None:
    """``cli.main`` with the class-code cache, saved whatever way ``main`` leaves."""
    cache = install()
    try:
        from reconciler.cli import main

        main()
    finally:
        cache.save()


if __name__ == "__main__":
    run()
