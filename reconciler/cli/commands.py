"""Import every sub-command module so that each registers itself on ``cli``."""

from reconciler.cli import apply, onboard, plan, sandbox, state, validate  # noqa: F401
