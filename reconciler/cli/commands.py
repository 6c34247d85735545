"""Import every sub-command module so that each registers itself on ``cli``."""

from reconciler.cli import validate  # noqa: F401
