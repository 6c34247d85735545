"""The apply journal: intent written before each write, the result after it.

If apply is killed half-way, the journal says which writes certainly happened (their result
is there) and which may have (an intent without a result). ``recover`` folds the first into
the records and keeps the second as *pending*, to be settled against a fresh read of the site
before anything is planned again (see ``pending.settle``). Lines are flushed and fsynced one
by one, so even SIGKILL loses nothing that reached the site.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from reconciler.engine.plan import Action
from reconciler.engine.recording import record_result
from reconciler.engine.state import SiteState, StateStore, private_directory


class Journal:
    """An append-only JSON-lines file; one instance per apply."""

    def __init__(self, path: Path) -> None:
        private_directory(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._handle: IO[str] = os.fdopen(fd, "a", encoding="utf-8")
        self.path = path

    def write(self, event: str, action: Action, **details: Any) -> None:
        line = json.dumps({"event": event, "action": action.to_data(), **details})
        self._handle.write(line + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def recover(store: StateStore, state: SiteState) -> int:
    """Fold a journal left by an interrupted apply into ``state``; returns writes folded.

    Writes whose outcome the journal does not know join ``state.pending``. The journal file
    is left in place: the caller saves the state first and then removes it with ``discard``.
    """
    try:
        lines = store.journal_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    outcome: dict[str, str] = {}
    actions: dict[str, Action] = {}
    folded = 0
    for line in lines:
        try:
            entry = json.loads(line)
            action = Action.from_data(entry["action"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by the crash: its write never started
        actions[action.id] = action
        outcome[action.id] = entry["event"]
        if entry["event"] == "done":
            record_result(state, action, entry.get("result", {}))
            folded += 1
    for action_id, event in outcome.items():
        if event in ("intent", "unknown"):
            state.pending.append(actions[action_id].to_data())
    return folded


def discard(store: StateStore) -> None:
    store.journal_file.unlink(missing_ok=True)
