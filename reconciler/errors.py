"""Errors a user sees, and the exit code each one ends the command with.

Every failure the tool expects ends as one ``ReconcilerError``: the CLI prints its message
(and hint) as one plain paragraph and exits with its ``exit_code``. Anything else is a bug.

Exit codes (also in README and ``reconciler --help``):

* 0 success; for ``plan --detailed-exitcode`` and ``drift``: nothing to change
* 1 error: invalid manifest, bad credentials, unreachable site, refused call, ...
* 2 ``plan --detailed-exitcode`` / ``drift``: there are changes
* 3 refused for safety: unsafe or stale plan, no approval, plan already applied, a deletion
  refused by the check made as it was to run
* 4 the records are locked by another command, still at ``--lock-timeout``: retry later
* 130 interrupted (Ctrl-C)
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CHANGES = 2
EXIT_REFUSED = 3
EXIT_LOCKED = 4  # another runner holds the lock: nothing was done, CI may retry
EXIT_INTERRUPTED = 130  # the shell's code for a command ended by Ctrl-C (128 + SIGINT)


class ReconcilerError(Exception):
    """A failure the user can act on. ``hint`` says what to do about it."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class ConfigError(ReconcilerError):
    """The command line, environment or credentials file is wrong or incomplete."""


class ManifestError(ReconcilerError):
    """The manifest is invalid; the findings were printed before this was raised."""


class StateError(ReconcilerError):
    """The state directory cannot be read, written or locked."""


class RefusedForSafety(ReconcilerError):
    """The tool will not go on because going on could destroy or surprise (exit code 3)."""

    exit_code = EXIT_REFUSED


class Interrupted(ReconcilerError):
    """A person pressed Ctrl-C; the message says what was done and what was not."""

    exit_code = EXIT_INTERRUPTED
