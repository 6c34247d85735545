"""The schema's generated check, compiled once per machine rather than once per run.

``fastjsonschema`` turns the schema into some 260 KB of Python source, and compiling that
costs every command that reads a manifest about 25 ms, a tenth of its start-up. The compiled
code is kept, as Python keeps ``__pycache__``, in the user's cache directory
(``$XDG_CACHE_HOME/site-reconciler``, else ``~/.cache/site-reconciler``, mode 700), under a
name made from the schema, fastjsonschema's version and Python's: a change of any of them
makes a new one. A cache that cannot be read or written is only slower: the code is compiled
as before.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

from reconciler.environment import cache_dir, private_file

_FUNCTION = re.compile(r"^def (\w+)\(", re.MULTILINE)


def generated_check(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """fastjsonschema's validator of ``schema`` (raises ``JsonSchemaException`` when invalid)."""
    import fastjsonschema

    key = hashlib.sha256(
        json.dumps(schema, sort_keys=True).encode() + fastjsonschema.VERSION.encode()
    )
    key.update(sys.version.encode())
    path = cache_dir() / f"schema-check-{key.hexdigest()[:32]}.bin"
    cached = _read(path)
    if cached is not None:
        code, name = cached
    else:
        source = fastjsonschema.compile_to_code(schema, use_default=False)
        functions = _FUNCTION.findall(source)
        if len(functions) != 1:  # not the one self-contained function expected: no cache
            return fastjsonschema.compile(schema, use_default=False)
        code, name = compile(source, "<site schema check>", "exec"), functions[0]
        _write(path, code, name)
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    check: Callable[[Any], Any] = namespace[name]
    return check


def _read(path: Path) -> tuple[CodeType, str] | None:
    if not private_file(path):
        return None
    try:
        name, _, body = path.read_bytes().partition(b"\n")
        code = marshal.loads(body)
        return (code, name.decode("ascii")) if isinstance(code, CodeType) else None
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _write(path: Path, code: CodeType, name: str) -> None:
    """Written whole or not at all (another run may be writing the same file)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as partial:
            partial.write(name.encode("ascii") + b"\n" + marshal.dumps(code))
    except OSError:
        return
    try:
        os.replace(partial.name, path)
    except OSError:
        Path(partial.name).unlink(missing_ok=True)
