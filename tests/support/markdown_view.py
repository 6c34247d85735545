"""A Markdown comment or report as a code host renders it (CommonMark with tables and
strike-through, HTML passed through, by markdown-it-py): the HTML it lets through, and what a
reader sees. Shared by the tests that feed hostile names to the Markdown renderers."""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class Rendered(HTMLParser):
    """What a reader of the rendered comment sees: its text, its bold and its tags."""

    def __init__(self, markdown: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.strong: list[str] = []
        self.tags: list[str] = []
        self.feed(PARSER.render(markdown))
        self.close()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.tags and self.tags[-1] == "strong":
            self.strong.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        self.tags.append("/" + tag)

    @property
    def visible(self) -> str:
        return "".join(self.text)


def tokens(markdown: str) -> list[Token]:
    """Every token of ``markdown``, the inline ones (links, images, HTML) included."""
    found = []
    for token in PARSER.parse(markdown):
        found += [token, *(token.children or ())]
    return found


def raw_html(markdown: str) -> list[str]:
    """Every piece of HTML the Markdown passes through as HTML (blocks and inline)."""
    found = []
    for token in tokens(markdown):
        if token.type == "html_block":
            found += [line for line in token.content.splitlines() if line]
        elif token.type == "html_inline":
            found.append(token.content)
    return found
