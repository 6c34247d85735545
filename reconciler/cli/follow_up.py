"""Commands the tool tells a person to run next, written so that they run as printed.

"Apply exactly this plan with: reconciler apply plan.json" is only useful if it works: after
``plan --sandbox`` it needs ``--sandbox``, after ``plan --state URL`` the same records, and a
path with a space needs quotes. So the line repeats the options given on this command line
that the next command also takes, except those the next step does not want (``--replace``
lives in the saved plan) and display preferences.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

import click
from click.core import ParameterSource

from reconciler.passwords import without_password

NOT_CARRIED = frozenset(
    {"replace", "force", "assume_no_groups", "verbose", "log_format", "no_color", "fmt"}
)
"""Options a follow-up never repeats: the plan carries the first three, the rest are taste."""

IN_THE_PLAN = frozenset({"targets", "excludes", "changed"})
"""What a saved plan carries besides: ``apply PLAN.json`` refuses ``--target``/``--exclude``
(the plan's own scope is all it applies), so the line after ``plan -o`` never repeats them."""


def next_command(command: str, arguments: Iterable[str | Path], *, saved_plan: bool = False) -> str:
    """``reconciler COMMAND ARGUMENTS [options given here that COMMAND takes]``, shell-quoted;
    ``saved_plan``: COMMAND applies a saved plan, which carries its scope."""
    ctx = click.get_current_context()
    root = ctx.find_root()
    group = root.command
    assert isinstance(group, click.Group)
    target = group.get_command(root, command)
    assert target is not None, command
    accepted = {param.name for param in target.params if isinstance(param, click.Option)}
    words = ["reconciler", command, *(str(argument) for argument in arguments)]
    for param in ctx.command.params:
        name = param.name
        if not isinstance(param, click.Option) or name is None:
            continue
        if name in NOT_CARRIED or name not in accepted or (saved_plan and name in IN_THE_PLAN):
            continue
        if ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue  # a default, or an environment variable the next command sees too
        words += _option_words(param, ctx.params[name])
    return " ".join(shlex.quote(word) for word in words)


def _option_words(option: click.Option, value: object) -> list[str]:
    """The option as it was given, with any password left out: a follow-up line is printed
    into CI logs and terminals (libpq finds the password in ``PGPASSWORD`` or ``~/.pgpass``)."""
    flag = max(option.opts, key=len)  # the long form reads better than -o
    if option.is_flag:
        return [flag] if value else []
    values: Sequence[object] = value if isinstance(value, tuple) else (value,)
    return [
        word for item in values if item is not None for word in (flag, without_password(str(item)))
    ]
