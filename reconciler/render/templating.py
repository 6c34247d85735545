"""HTML and Markdown reports written through Jinja2 templates that escape every value they print.

A report's words are its template's (``render/templates/*.j2``, shipped with the package); the
names in it come from the manifest and the site, and a template prints each with ``{{ value }}``.
Escaping is the environment's, not the template author's: no ``{{ }}`` can print a value raw.

* HTML (``autoescape``): every value is written as text -- ``<``, ``&`` and quotes as entities
  -- with its control and bidi characters shown as escapes (``visible``), as the text report
  shows them.
* Markdown: every value goes through ``markdown_text`` (``render/escape.py``), so it can open
  no comment, tag, link, image, emphasis or table cell. The filters ``code_span``,
  ``code_block`` and ``marker_value`` write a value in another of ``render/escape.py``'s forms.

In both, ``Markup`` is what is printed as it is: a template's macros make it, the filters make
it, and Python code hands a template the tool's own markup only through ``trusted`` (each call
says why the text is safe). In a Markdown template, build a value in Python rather than with
``~`` beside a ``Markup``: Jinja2 would join them with HTML escaping, leaving ``*`` or ``|``
active. Jinja2 is imported when a template is first used, so the commands
that write neither format never load it; each environment is built once per process.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from reconciler.render.escape import code_block, code_span, markdown_text, marker_value, visible

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

TEMPLATES = "templates"
"""The templates' directory in this package (``reconciler/render/templates``)."""


def render_html(template: str, **values: Any) -> str:
    """The HTML template ``template`` filled with ``values``, each escaped as HTML text."""
    return _html_environment().get_template(template).render(values)


def render_markdown(template: str, **values: Any) -> str:
    """The Markdown template ``template`` filled with ``values``, each escaped as Markdown."""
    return _markdown_environment().get_template(template).render(values)


def markdown_macros(template: str) -> Any:
    """The macros of a Markdown template, to call from Python: each returns ``Markup``
    (Markdown already escaped), for a renderer that assembles its output from pieces (the plan
    comment, packed into parts)."""
    return _markdown_environment().get_template(template).module


def trusted(text: str) -> Markup:
    """``text``, the tool's own markup, printed by a template as it is. The one way Python
    code hands a template markup; a caller passes only words of the tool, never a name."""
    from markupsafe import Markup

    return Markup(text)


def _environment(**options: Any) -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("reconciler.render", TEMPLATES),
        undefined=jinja2.StrictUndefined,  # a misspelt value is an error, never an empty cell
        auto_reload=False,  # package data: never changes while the process runs
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=True,
        **options,
    )


@functools.cache
def _html_environment() -> jinja2.Environment:
    from markupsafe import Markup

    def shown(value: Any) -> Any:
        return value if isinstance(value, Markup) else visible(str(value))

    return _environment(finalize=shown)


@functools.cache
def _markdown_environment() -> jinja2.Environment:
    """``autoescape`` keeps macros' and filters' output (``Markup``) as it is; ``finalize``
    escapes every other value as Markdown text before autoescape sees it."""
    from markupsafe import Markup

    def shown(value: Any) -> Markup:
        return value if isinstance(value, Markup) else Markup(markdown_text(str(value)))

    def block(lines: Iterable[str], info: str = "") -> Markup:
        return Markup(code_block(list(lines), info))

    env = _environment(finalize=shown)
    env.filters.update(
        code_span=lambda text: Markup(code_span(str(text))),
        code_block=block,
        marker_value=lambda text: Markup(marker_value(str(text))),
    )
    return env
