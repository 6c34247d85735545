"""Allow ``python -m reconciler``."""

from reconciler.cli import main

main()
