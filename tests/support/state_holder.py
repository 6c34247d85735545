"""Another runner, as a real process: takes a site's lock and does what the test says.

    python -m tests.support.state_holder LOCATION SITE LEASE_SECONDS

reads commands on standard input, one a line, and answers each with one line:

* ``lock`` -> ``locked TOKEN`` or ``refused MESSAGE``
* ``save EXPECTED_VERSION`` -> ``saved VERSION`` or ``error CLASS MESSAGE``
* ``append`` -> ``appended`` or ``error CLASS MESSAGE``
* ``release`` -> ``released``

    python -m tests.support.state_holder --race GO_FILE LOCATION SITE HOLD_SECONDS

connects, prints ``ready``, waits for ``GO_FILE`` to exist, tries the lock once, prints
``locked`` or ``refused``, and holds a lock it got for ``HOLD_SECONDS``: several started at
once must give exactly one ``locked``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.logs import configure_logging
from reconciler.state.backend import Holder, Lease, LockHeld, SaveInfo
from reconciler.state.locate import open_records, parse_location


def _say(line: str) -> None:
    print(line, flush=True)


def race(go: Path, location: str, site: str, hold: float) -> None:
    records = open_records(parse_location(location, base_dir=Path.cwd()), site)
    records.load()  # connect (and create the schema) before the start, not during the race
    _say("ready")
    deadline = time.monotonic() + 120  # never outlive a test that gave up on the race
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("no go within 120 s")
        time.sleep(0.001)
    try:
        lease = records.lock(Holder.current("race"))
    except LockHeld:
        _say("refused")
        return
    _say("locked")
    time.sleep(hold)
    lease.release()


def serve(location: str, site: str, lease_seconds: float) -> None:
    records = open_records(
        parse_location(location, base_dir=Path.cwd()), site, lease_seconds=lease_seconds
    )
    lease: Lease | None = None
    for line in sys.stdin:
        command, *args = line.split()
        try:
            if command == "lock":
                lease = records.lock(Holder.current("apply site/ (holder)"))
                _say(f"locked {lease.token}")
            elif command == "save" and lease is not None:
                data = {"site": site, "by": "holder"}
                version = records.save(
                    data, expected_version=int(args[0]), info=SaveInfo("holder", "x"), lease=lease
                )
                _say(f"saved {version}")
            elif command == "append" and lease is not None:
                records.journal_append(lease, {"event": "intent", "by": "holder"})
                _say("appended")
            elif command == "release" and lease is not None:
                lease.release()
                _say("released")
            else:
                _say(f"unknown {command}")
        except LockHeld as exc:
            _say(f"refused {exc}")
        except ReconcilerError as exc:
            _say(f"error {type(exc).__name__} {exc}")


if __name__ == "__main__":
    configure_logging("console", verbosity=0)  # warnings to stderr: stdout carries answers
    if sys.argv[1] == "--race":
        race(Path(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]))
    else:
        serve(sys.argv[1], sys.argv[2], float(sys.argv[3]))
