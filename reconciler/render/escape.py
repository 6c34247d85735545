"""Text from the manifest and the site, made safe to show: the one place reports escape it.

Names are written by people (the manifest) and by the site (objects made by hand), and reports
put them before other people: on a terminal, in a pull-request comment a pipeline edits. A name
must never act on what shows it:

* on a terminal, a control character (ESC, a carriage return) or a bidi control would move the
  cursor, recolour or reorder what follows; ``visible`` writes each as an escape (``\\x1b``);
* in Markdown, ``<!--`` would open an HTML comment that hides the rest of the plan, a backtick
  would end the code that holds it, ``|`` would split a table cell, and a line of the tool's
  own marker would pass for another comment's: ``markdown_text`` shows every character as
  itself (HTML entities, backslash escapes), ``code_fence`` and ``code_span`` pick delimiters no
  text can close, and ``marker_value`` keeps the marker line the tool's alone;
* in a chat message, ``<!channel>`` would notify everyone: ``slack_text``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from urllib.parse import quote

from reconciler.manifest.names import INVISIBLE_CATEGORIES

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MARKDOWN = re.compile(r"[\\`*_\[\]<>&|~#!]")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_BACKTICKS = re.compile(r"`+")


def _escape(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def visible(text: str) -> str:
    """``text`` with every control or invisible character (Unicode Cc, Cf, Zl, Zp: newline,
    ESC, zero-width and bidi controls) written as an escape such as ``\\n`` or ``\\u202e``."""
    if text.isprintable():  # the fast, common answer
        return text
    return "".join(
        _escape(char) if unicodedata.category(char) in INVISIBLE_CATEGORIES else char
        for char in text
    )


def markdown_text(text: str) -> str:
    """``text`` for Markdown outside code, shown exactly as written and doing nothing: ``<``,
    ``>`` and ``&`` as HTML entities (no comment, tag or autolink can open), the characters
    that make code, emphasis, links, tables and strike-through backslash-escaped."""
    return _MARKDOWN.sub(
        lambda found: _ENTITIES.get(found.group(), "\\" + found.group()), visible(text)
    )


def slack_text(text: str) -> str:
    """``text`` for a Slack-compatible message (mrkdwn): one line, whose ``<``, ``>`` and
    ``&`` are entities, so a name can neither start a line of its own nor make a link or a
    mention such as ``<!channel>``."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _longest_backticks(texts: Iterable[str]) -> int:
    return max((len(run) for text in texts for run in _BACKTICKS.findall(text)), default=0)


def code_fence(lines: Iterable[str]) -> str:
    """The fence for a code block of ``lines``: longer than any run of backticks in them, so
    no line can close the block early (three backticks when none has any)."""
    return "`" * max(3, _longest_backticks(lines) + 1)


def code_block(lines: Sequence[str], info: str = "") -> str:
    """``lines`` as a fenced code block of ``info`` (``text``, ``diff``), each shown as written
    (``visible``) behind a fence none of them can close."""
    shown = [visible(line) for line in lines]
    fence = code_fence(shown)
    return "\n".join([fence + info, *shown, fence])


def code_span(text: str) -> str:
    """``text`` as inline code that no backtick in it can end."""
    shown = visible(text)
    ticks = "`" * (_longest_backticks([shown]) + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def marker_value(text: str) -> str:
    """``text`` as a value of the comment marker (``site=URL``): percent-encoded outside the
    characters of a plain URL, so it can neither end the HTML comment (``-->``) nor add a field
    (`` part=``); a plain ``https://host/path`` is written as it is."""
    return quote(text, safe=":/@[]._~-+,;=$'()*")
