"""The apply lock: one apply at a time per state, naming the holder when taken."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.engine.lock import ApplyLock
from reconciler.errors import StateError


def test_a_held_lock_is_refused_naming_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "apply.lock"
    with ApplyLock(path, "apply site.yaml"):
        assert path.stat().st_mode & 0o777 == 0o600
        with pytest.raises(StateError) as refused:
            ApplyLock(path, "apply other.yaml").__enter__()
    message = str(refused.value)
    assert f"process {os.getpid()} on {socket.gethostname()}" in message
    assert "(apply site.yaml)" in message
    assert not path.exists()  # released on exit


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    path = tmp_path / "apply.lock"
    holder = {"pid": int(dead.stdout), "host": socket.gethostname(), "started": "x"}
    path.write_text(json.dumps(holder))
    with ApplyLock(path, "apply") as lock:
        assert lock.took_over_from is not None and str(holder["pid"]) in lock.took_over_from
