"""Output formats are registries by name: a command's --format choices, default and help
come from its report's ``Formats``, and every registered format renders."""

from __future__ import annotations

from typing import Any

import click
import pytest

import reconciler.cli.commands  # noqa: F401 - registers every command
from reconciler.cli import cli
from reconciler.render.access import ACCESS_FORMATS
from reconciler.render.drift import DRIFT_FORMATS
from reconciler.render.formats import Format, Formats, View
from reconciler.render.plans import PLAN_FORMATS
from reconciler.render.records_diff import RECORDS_DIFF_FORMATS
from reconciler.render.validation import VALIDATION_FORMATS


def format_option(*path: str) -> click.Option:
    command: Any = cli
    for name in path:
        command = command.commands[name]
    return next(p for p in command.params if p.name == "fmt")


@pytest.mark.parametrize(
    ("path", "formats"),
    [
        (("plan",), PLAN_FORMATS),
        (("drift",), DRIFT_FORMATS),
        (("validate",), VALIDATION_FORMATS),
        (("state", "diff"), RECORDS_DIFF_FORMATS),
        (("access",), ACCESS_FORMATS),
    ],
)
def test_each_commands_formats_are_its_reports_registry(
    path: tuple[str, ...], formats: Formats[Any]
) -> None:
    option = format_option(*path)
    assert isinstance(option.type, click.Choice)
    assert list(option.type.choices) == formats.names
    assert option.default == formats.default == "text"
    assert option.help == formats.help()


def test_a_format_added_to_a_registry_is_offered_and_rendered() -> None:
    formats: Formats[str] = Formats(
        Format("text", "people", lambda report, view: report),
        Format("shout", "the hard of hearing", lambda report, view: report.upper()),
    )
    assert formats.names == ["text", "shout"]
    assert "shout for the hard of hearing" in formats.help()
    assert formats.render("drift", "shout", View()) == "DRIFT"
    with pytest.raises(ValueError, match="no 'yaml' format; known: text, shout"):
        formats.render("drift", "yaml")
