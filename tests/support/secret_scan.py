"""Search files and texts for the sandbox's secrets and for request signatures.

What must never appear in the tool's output, logs, plan or state files: the API secrets of the
sandbox's users, their SHA-1 hex digests (the HMAC keys) and any request signature (64 hex
digits after ``signature=``). Seed files hold the secrets on purpose (they *define* the
site's users; a seed is a YAML file with a top-level ``users:``, whatever its name) and the
sandbox's own database holds the HMAC keys (it *is* the site): both are the site's side, not
the tool's output, and are left out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SANDBOX_SECRETS = ("sandbox-admin-secret", "sandbox-viewer-secret")
FORBIDDEN: tuple[bytes, ...] = tuple(
    value.encode()
    for secret in SANDBOX_SECRETS
    for value in (secret, hashlib.sha1(secret.encode()).hexdigest())
)
SIGNATURE = re.compile(rb"signature(?:=|%3D|\"?\s*:\s*\"?)[0-9a-f]{64}", re.IGNORECASE)
SITE_DATABASE = re.compile(r"\.(db|sqlite3?)(-wal|-shm|-journal)?$", re.IGNORECASE)
SEED_USERS = re.compile(rb"^users:", re.MULTILINE)
"""A top-level ``users:`` list: a seed's, never a manifest's (manifests have no such key)."""


def is_site_side(path: Path) -> bool:
    """A seed (it defines the users and their secrets) or the sandbox's database."""
    if SITE_DATABASE.search(path.name):
        return True
    return path.suffix in (".yaml", ".yml") and bool(SEED_USERS.search(path.read_bytes()))


def leaks_in(data: bytes) -> list[str]:
    """What of the forbidden values ``data`` holds (the value itself is not repeated)."""
    found = [f"forbidden value #{i}" for i, value in enumerate(FORBIDDEN) if value in data]
    if SIGNATURE.search(data):
        found.append("a request signature")
    return found


@dataclass
class ScanReport:
    files: int = 0
    texts: int = 0
    kinds: set[str] = field(default_factory=set)  # plan, state, journal, log, ...
    leaks: list[str] = field(default_factory=list)

    def scan_file(self, path: Path) -> None:
        if not path.is_file() or path.is_symlink() or is_site_side(path):
            return
        self.files += 1
        self.kinds.add(_kind(path))
        self.leaks += [f"{path}: {leak}" for leak in leaks_in(path.read_bytes())]

    def scan_tree(self, root: Path) -> ScanReport:
        for path in sorted(root.rglob("*")):
            self.scan_file(path)
        return self

    def scan_texts(self, texts: Iterable[str], origin: str) -> ScanReport:
        for index, text in enumerate(texts):
            self.texts += 1
            self.leaks += [f"{origin} #{index}: {leak}" for leak in leaks_in(text.encode())]
        return self


def _kind(path: Path) -> str:
    if path.name == "state.json" or path.parent.name == "versions":
        return "state"
    if path.name.startswith("journal"):
        return "journal"
    if path.name in ("apply.lock", "lease.json"):
        return "lock"
    if path.suffix == ".log":
        return "log"
    if path.suffix == ".json":
        return "plan or report"
    return path.suffix.lstrip(".") or "other"
