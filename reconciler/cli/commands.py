"""Import every sub-command module, for tools that walk the whole command tree (the tests).

The console script does not need this: ``LazyCommands`` imports a command's module on use.
"""

from reconciler.cli import (  # noqa: F401
    access,
    apply,
    expire,
    onboard,
    plan,
    sandbox,
    state,
    validate,
)
