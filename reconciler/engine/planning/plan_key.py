"""Which key seals saved plans: one a reader of the records cannot use.

A plan file is sealed with an HMAC (``plan_file``). Whoever holds the key can make a plan
that ``apply`` accepts, so the key must be held only by those allowed to *propose* changes:

* ``RECONCILER_PLAN_KEY``: a secret of at least 32 characters that the CI's secret store
  gives to the plan and apply jobs only. The sealing key is derived from it and bound to the
  site (a plan sealed for one site never verifies for another). Nothing of it is stored in
  the records, so read access to the records (a reporting role, a backup) cannot forge.
* Without it, the key kept with the records (created on first use), only where no reader
  of the records can read it: the PostgreSQL backend checks, before it stores or reads one,
  that no role but the writers can read its table (``state/postgres_keys.py``), and both
  backends discard a key a reader could have copied.

Checking a plan never creates a key: a plan for records that have none is refused. In CI
(``CI`` set), sealing or checking a plan needs ``RECONCILER_PLAN_KEY`` (``required_secret``):
a secret missing from the CI's settings must not quietly fall back to the records' key.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from reconciler.environment import CI, in_ci
from reconciler.errors import ConfigError
from reconciler.state.backend import RecordStore

PLAN_KEY_VARIABLE = "RECONCILER_PLAN_KEY"
MIN_SECRET_LENGTH = 32
MAKE_ONE = (
    "Make one with `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'` (or "
    "`openssl rand -base64 48`), keep it in the CI's secret store, and give it to the plan and "
    "apply jobs only."
)


class PlanSecret:
    """``RECONCILER_PLAN_KEY``; never shown (``repr`` and ``str`` are masked)."""

    def __init__(self, text: str) -> None:
        if problem := weakness(text):
            raise ConfigError(f"{PLAN_KEY_VARIABLE} {problem}.", hint=MAKE_ONE)
        self._text = text

    def __repr__(self) -> str:
        return "PlanSecret(***)"

    __str__ = __repr__

    def key_for(self, site: str) -> bytes:
        """The sealing key of ``site``: another site's plans never verify here."""
        message = b"site-reconciler plan key v1\0" + site.encode("utf-8")
        return hmac.new(self._text.encode("utf-8"), message, hashlib.sha256).digest()

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> PlanSecret | None:
        text = env.get(PLAN_KEY_VARIABLE)
        return cls(text) if text else None


def weakness(text: str) -> str | None:
    """Why ``text`` cannot be a plan key (None: it can). Length alone let 32 spaces seal
    plans (issue 32): a blank key, or one character repeated, is no secret at all."""
    if not text.strip():
        return "is blank" if not text else f"is only whitespace ({len(text)} characters)"
    if len(set(text)) == 1:
        return f"is one character repeated {len(text)} times"
    if len(text) < MIN_SECRET_LENGTH:
        return f"is {len(text)} characters long; a plan key needs at least {MIN_SECRET_LENGTH}"
    return None


def required_secret(env: Mapping[str, str]) -> PlanSecret | None:
    """``RECONCILER_PLAN_KEY`` for a command that seals or checks a saved plan. In CI it
    must be given: without it, plans would be sealed with the key kept in the records, which
    every reader of the records holds."""
    secret = PlanSecret.from_environment(env)
    if secret is None and in_ci(env):
        state = "empty" if PLAN_KEY_VARIABLE in env else "not set"
        raise ConfigError(
            f"{PLAN_KEY_VARIABLE} is {state}, and {CI} is set: in a pipeline, saved plans are "
            f"sealed and checked with {PLAN_KEY_VARIABLE}, never with the key kept in the "
            "records.",
            hint=f"Give the plan and apply jobs {PLAN_KEY_VARIABLE} from the CI's secret "
            f"store (at least {MIN_SECRET_LENGTH} characters). {MAKE_ONE}",
        )
    return secret


def sealing_key(store: RecordStore, secret: PlanSecret | None, *, create: bool) -> bytes | None:
    """The key plans of ``store``'s site are sealed with (None: the records have none)."""
    if secret is not None:
        return secret.key_for(store.site)
    return store.plan_key(create=create)
