"""The command tree as click holds it: every command's path, the command at a path, its help.

Shared by the tests that check what the tool and its documents say about its commands (help,
hints, the README's command table).
"""

from __future__ import annotations

from collections.abc import Iterator

import click

import reconciler.cli.commands  # noqa: F401  (registers the sub-commands)
from reconciler.cli import cli


def commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command and group under ``group``."""
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        assert command is not None
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def command_at(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


def help_text(path: tuple[str, ...]) -> str:
    command = command_at(path)
    with click.Context(command, info_name=" ".join(["reconciler", *path])) as ctx:
        return command.get_help(ctx)
