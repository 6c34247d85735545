"""Hostile names, e-mails and e-mail domains in every report format (issue 42, item 4).

A reviewer opens the access report in a browser, a Markdown viewer or a spreadsheet, and a
pipeline posts the plan and the drift report as pull-request comments. Usernames, people's
names, e-mail addresses (their domains are printed as the site's usual ones and in findings)
and workspace names are written by whoever can make them on the site, so each must show as
itself in every format and do nothing else: no HTML element, attribute or comment, no Markdown
link, image or tag, no spreadsheet formula, no template evaluated (``{{ 7*7 }}`` prints as
written), no control character reaching a terminal.

The site is the sandbox, seeded with such values; the reports are made by the command, with
``--since`` an earlier report so the comparison's lines carry them too. Carriage returns,
line feeds and tabs cannot come through the site (its API refuses control characters), so
they are put in a report read back from its JSON, and every format is made of that as well.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from reconciler.access.model import AccessReport
from reconciler.access.since import load_previous
from reconciler.errors import EXIT_CHANGES, EXIT_OK
from reconciler.render.access import ACCESS_FORMATS, CSV_COLUMNS, render_access
from reconciler.render.escape import visible
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.markdown_view import PARSER, Rendered, raw_html, tokens

ADMIN = {
    "id": 1, "username": "admin", "email": "admin@acme.example", "first_name": "Site",
    "last_name": "Admin", "admin": True, "api_key": "sandbox-admin-key",
    "api_secret": "sandbox-admin-secret",
}  # fmt: skip
HOSTILE_USERS = [
    {"id": 1101, "username": "<!--", "email": "a@<!--", "first_name": "<img src=x>",
     "last_name": "<script>alert(1)</script>"},
    {"id": 1102, "username": '=HYPERLINK("http://evil.example";"x")', "email": "=1+1@<!--",
     "first_name": "]]>", "last_name": "a|b"},
    {"id": 1103, "username": "x;=1+1", "email": "c@<img src=x>", "first_name": "``` `",
     "last_name": "{{ 7*7 }}"},
    {"id": 1104, "username": "{% if 1 %}yes{% endif %}", "email": "d@<img src=x>",
     "first_name": "\u202eevil\u202c", "last_name": "@SUM(1)"},
    {"id": 1105, "username": "`tick` |pipe|", "email": "e@<script>.example",
     "first_name": "+1", "last_name": "-2"},
]  # fmt: skip
"""Two people at each of two hostile domains (usual ones: more than a tenth of the site's
addresses) and one at a third (unusual: a finding names it and the usual ones)."""
PLAIN_USERS = [
    {"id": 1000 + n, "username": name, "email": f"{name}@acme.example"}
    for n, name in enumerate(("alice", "bob", "carol", "dave", "erin", "frank", "grace"), 1)
]
WORKSPACES = [
    {"name": "<!-- hidden", "users": [1101, 1102, "alice"]},
    {"name": "<img src=x> | ws", "users": [1103, 1104]},
    {"name": '=HYPERLINK("http://e.x";"y")', "users": [1105, 1101]},
    {"name": ";=1+1 {{ 7*7 }} {% raw %}", "users": [1102, "bob"]},
    {"name": "]]> ``` \u202eevil", "users": [1104, 1102]},
]
MANIFEST = {  # 1102 leaves two workspaces, 1103 joins one: the plan and --since name them
    "version": 1,
    "workspaces": [
        {"name": "<!-- hidden", "users": ["<!--", "alice", "x;=1+1"]},
        {"name": ";=1+1 {{ 7*7 }} {% raw %}", "users": ["bob"]},
    ],
}
HOSTILE_TEXTS = [
    *(user[key] for user in HOSTILE_USERS for key in ("username", "email")),
    *(f"{user['first_name']} {user['last_name']}" for user in HOSTILE_USERS),
    *(ws["name"] for ws in WORKSPACES),
    "<!--, <img src=x>, acme.example",  # the usual domains
    "e-mail domain <script>.example is not one of",  # the unusual one's finding
]
FORMULA = "=+-@\t\r"
SEPARATORS = ",;\t\r\n"
FORMULA_START = re.compile(rf"(?:^|[{SEPARATORS}])[ \"]*[{re.escape(FORMULA)}]")
"""A spreadsheet may take a cell for a formula when it, or a piece of it a spreadsheet splits
off (at a ``,``, ``;``, tab or line break), starts with one of these after spaces or quotes."""


def reconciler(work: Path, *args: str, exit_code: int = EXIT_OK) -> CliOutcome:
    outcome = run_reconciler(
        *args, "--sandbox", "--sandbox-seed", str(work / "seed.yaml"), cwd=work
    )
    assert outcome.exit_code == exit_code, outcome.output
    assert "Traceback" not in outcome.output
    return outcome


@dataclasses.dataclass(frozen=True)
class HostileRun:
    """What the commands wrote about the hostile site."""

    access: dict[str, str]  # format -> the report, with --since the report before apply
    report: AccessReport  # the JSON one, read back
    plan_markdown: str
    drift_markdown: str


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileRun:
    work = tmp_path_factory.mktemp("hostile")
    seed = {"users": [ADMIN, *HOSTILE_USERS, *PLAIN_USERS], "workspaces": WORKSPACES}
    (work / "seed.yaml").write_text(yaml.safe_dump(seed, allow_unicode=True), encoding="utf-8")
    (work / "site.yaml").write_text(yaml.safe_dump(MANIFEST), encoding="utf-8")
    reconciler(work, "access", "site.yaml", "--format", "json", "-o", "before.json")
    plan = reconciler(work, "plan", "site.yaml", "--format", "markdown").stdout
    drift = reconciler(
        work, "drift", "site.yaml", "--format", "markdown", exit_code=EXIT_CHANGES
    ).stdout
    reconciler(work, "apply", "site.yaml", "--auto-approve")
    access = {
        fmt: reconciler(
            work, "access", "site.yaml", "--since", "before.json", "--format", fmt
        ).stdout
        for fmt in ACCESS_FORMATS.names
    }
    return HostileRun(access, load_previous(access["json"], "after.json"), plan, drift)


def with_line_breaks(report: AccessReport) -> AccessReport:
    """``report`` with carriage returns, line feeds and tabs in names, e-mails and domains."""

    def workspace(name: str) -> str:
        return f"{name}\n=cmd|x"

    def email(address: str) -> str:
        return f"{address}\r\n;-1\t+2"

    return dataclasses.replace(
        report,
        usual_domains=(*report.usual_domains, "\r\n<!--\t"),
        workspaces=tuple(dataclasses.replace(w, name=workspace(w.name)) for w in report.workspaces),
        people=tuple(
            dataclasses.replace(p, name=f"{p.name}\r=1+1\n-2\t@3", email=email(p.email))
            for p in report.people
        ),
        entries=tuple(
            dataclasses.replace(e, email=email(e.email), workspace=workspace(e.workspace))
            for e in report.entries
        ),
    )


# --- what each format must hold ---------------------------------------------------------


def assert_terminal_safe(text: str) -> None:
    assert all(char == "\n" or char.isprintable() for char in text)


class HtmlParts(HTMLParser):
    """Every element, attribute, comment and declaration of an HTML page, and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.other: list[str] = []  # comments, processing instructions, odd declarations
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.other.append("comment " + data)

    def handle_pi(self, data: str) -> None:
        self.other.append("pi " + data)

    def handle_decl(self, decl: str) -> None:
        if decl != "DOCTYPE html":
            self.other.append("decl " + decl)

    def unknown_decl(self, data: str) -> None:
        self.other.append("unknown " + data)


HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "ul", "li",
             "strong", "table", "thead", "tbody", "tr", "th", "td", "script"}  # fmt: skip
HTML_CLASSES = {"sortable", "matrix", "note", "m", "a", "ma", "gained", "lost", "changed"}
TIP = re.compile(r"(member|administrator|member \+ administrator); permissions: [\w ,()+-]*")


def assert_html_is_the_templates_own(html: str, shown: list[str]) -> None:
    page = HtmlParts(html)
    assert set(page.tags) <= HTML_TAGS and page.other == []
    assert page.tags.count("script") == 1 and page.tags.count("style") == 1
    for name, value in page.attributes:
        assert name in {"lang", "charset", "http-equiv", "content", "class", "title"}, name
        if name == "class":
            assert all(c in HTML_CLASSES or c.startswith("finding-") for c in value.split())
        if name == "title":
            assert TIP.fullmatch(value or ""), value
    text = "".join(page.text)
    for value in shown:
        assert visible(value) in text, value


def assert_markdown_opens_nothing(
    markdown: str, own_html: re.Pattern[str], shown: list[str]
) -> None:
    """No HTML but the tool's own, no link or image, no ``<`` from a name outside code."""
    assert all(own_html.fullmatch(piece) for piece in raw_html(markdown)), raw_html(markdown)
    assert not {token.type for token in tokens(markdown)} & {"link_open", "image"}
    lines = markdown.split("\n")
    for token in PARSER.parse(markdown):
        if token.type == "fence" and token.map:  # code: shown as written, never markup
            lines[token.map[0] : token.map[1]] = [""] * (token.map[1] - token.map[0])
    assert "<" not in own_html.sub("", "\n".join(lines))
    seen = Rendered(markdown).visible
    for value in shown:
        assert visible(value) in seen, value


NO_HTML = re.compile("(?!)")
OWN_HTML = re.compile(
    r"<!-- site-reconciler:plan [^\n]*-->|<details><summary>[^<>]*</summary>|</details>"
)


def unneutralised(cell: str) -> str:
    """A cell as the report holds it: without the ``'`` written before a formula's start."""
    return re.sub(rf"'(?=[{re.escape(FORMULA)}])", "", cell)


def assert_csv_holds_values_and_no_formula(text: str, report: AccessReport) -> None:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == list(CSV_COLUMNS) and len(rows) == len(report.entries) + 1
    names = {p.id: p.name for p in report.people}
    expected = [(e.workspace, e.person, e.email, names[e.user_id]) for e in report.entries]
    at = [CSV_COLUMNS.index(c) for c in ("workspace", "person", "email", "name")]
    got = [tuple(unneutralised(row[i]) for i in at) for row in rows[1:]]
    assert got == expected
    for row in rows:
        for cell in row:
            assert not FORMULA_START.search(cell), cell
    for line in re.split("[\r\n]", text):  # as a spreadsheet that splits on any separator
        for separator in ",;\t":
            for piece in line.split(separator):
                assert not piece.lstrip(' "').startswith(tuple(FORMULA)), (separator, piece)


# --- the tests ----------------------------------------------------------------------------


def test_the_report_is_made_of_the_hostile_site(hostile: HostileRun) -> None:
    report = hostile.report
    assert report.usual_domains == ("<!--", "<img src=x>", "acme.example")
    assert {f.kind for f in report.findings} >= {"unusual_domain", "unmanaged_user"}
    assert report.since is not None and report.since.gained and report.since.lost


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_every_access_format_shows_hostile_values_as_written(hostile: HostileRun, fmt: str) -> None:
    text = hostile.access[fmt]
    shown = [*HOSTILE_TEXTS, "Since the report of"]
    if fmt == "text":
        assert_terminal_safe(text)
        assert all(visible(value) in text for value in shown)
    elif fmt == "markdown":
        assert_markdown_opens_nothing(text, NO_HTML, shown)
    elif fmt == "html":
        assert_html_is_the_templates_own(text, shown)
    elif fmt == "csv":
        assert_csv_holds_values_and_no_formula(text, hostile.report)
    else:
        assert json.loads(text)["usual_domains"] == ["<!--", "<img src=x>", "acme.example"]
        assert load_previous(text, "again.json") == hostile.report


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_line_breaks_and_tabs_in_names_stay_inert_in_every_format(
    hostile: HostileRun, fmt: str
) -> None:
    report = with_line_breaks(hostile.report)
    text = render_access(report, fmt)
    shown = [report.people[0].name, report.people[0].email, report.workspaces[0].name]
    if fmt == "text":
        assert_terminal_safe(text)
        assert all(visible(value) in text for value in shown)
    elif fmt == "markdown":
        assert_markdown_opens_nothing(text, NO_HTML, shown)
    elif fmt == "html":
        assert_html_is_the_templates_own(text, shown)
    elif fmt == "csv":
        assert_csv_holds_values_and_no_formula(text, report)
    else:
        assert load_previous(text, "again.json") == report


def test_the_plan_and_drift_comments_show_hostile_names_as_written(hostile: HostileRun) -> None:
    moved = [HOSTILE_USERS[1]["username"], HOSTILE_USERS[2]["username"]]
    for markdown in (hostile.plan_markdown, hostile.drift_markdown):
        assert_markdown_opens_nothing(markdown, OWN_HTML, [WORKSPACES[0]["name"], *moved])
    assert "Who gains or loses access" in hostile.plan_markdown


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("x;=1+1", "x;'=1+1"),
        ("a,+1", "a,'+1"),
        ("a\t-1", "a\t'-1"),
        ("a\n@SUM(1)", "a\n'@SUM(1)"),
        ("a\r\n=1", "a\r\n'=1"),
        ("\t=1", "'\t'=1"),
        ('x; "=1', "x; \"'=1"),
        ("Q3 - Legal", "Q3 - Legal"),
        ("a-b+c=d@e", "a-b+c=d@e"),
    ],
)
def test_a_csv_cell_is_neutralised_wherever_a_formula_could_start(
    hostile: HostileRun, value: str, written: str
) -> None:
    entry = dataclasses.replace(hostile.report.entries[0], person=value)
    report = dataclasses.replace(hostile.report, entries=(entry,))
    (header, row) = list(csv.reader(io.StringIO(render_access(report, "csv"), newline="")))
    assert row[header.index("person")] == written


def test_a_csv_cell_holding_a_separator_or_line_break_is_quoted(hostile: HostileRun) -> None:
    texts = ("a;b", "a\rb", "a\tb", "a,b", "a\nb")
    entries = tuple(
        dataclasses.replace(hostile.report.entries[0], person=text, workspace_id=-5)
        for text in texts
    )
    report = dataclasses.replace(hostile.report, entries=entries)
    lines = render_access(report, "csv").split("\n", 1)[1]
    for text in texts:
        assert f',-5,"{text}",' in lines  # the ID stays a number: neither quoted nor marked
