"""Fuzzed answers from the site: whatever a site (or a proxy in front of it) sends back, each
of the client's 16 methods returns its record or raises a ``SiteError`` -- a
``ProtocolError`` for a read and ``OutcomeUnknown`` for a write when the answer cannot be
read, or a documented ``SiteRefusal`` when the body has the error shape or the status is
429/5xx -- and never any other exception, quickly.

``test_decode.py`` fuzzes the pure decoders; here every body goes through the whole client
(``SiteClient`` over an ``httpx.MockTransport`` that plays the network): random JSON, random
XML with and without DTDs and entity bombs, real sandbox answers cut short, and real answers
with values of the wrong type.
"""

from __future__ import annotations

import ast
import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reconciler
from reconciler.api import answers
from reconciler.api.answers import WorkspaceSettings
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.errors import OutcomeUnknown, ProtocolError, SiteRefusal
from reconciler.sandbox.app import create_app
from reconciler.sandbox.transport import SandboxTransport
from tests.support.figures import tally
from tests.support.loopback import ADMIN_KEY, ADMIN_SECRET
from tests.support.sandbox_site import example_seed

Call = Callable[[SiteClient], Awaitable[object]]
CALLS: dict[str, Call] = {
    "user_info": lambda c: c.user_info(1001),
    "user_list": lambda c: c.user_list(),
    "users_location_access": lambda c: c.users_location_access("/"),
    "user_permissions_location": lambda c: c.user_permissions_location("/"),
    "workspace_list": lambda c: c.workspace_list(),
    "workspace_info": lambda c: c.workspace_info(1),
    "add_to_workspace": lambda c: c.add_to_workspace(1002, [1]),
    "remove_from_workspace": lambda c: c.remove_from_workspace(1002, [1]),
    "user_group_add": lambda c: c.user_group_add("fuzz", [1001]),
    "add_to_user_group": lambda c: c.add_to_user_group(1002, [2]),
    "remove_from_user_group": lambda c: c.remove_from_user_group(1002, [2]),
    "user_group_delete": lambda c: c.user_group_delete(2),
    "workspace_add": lambda c: c.workspace_add(["Fuzz"], WorkspaceSettings()),
    "workspace_delete": lambda c: c.workspace_delete(2),
}
"""One call of each method, in an order that succeeds on a fresh example sandbox."""
USER_CALLS: dict[str, Call] = {
    "user_add": lambda c: c.user_add(answers.NewUser("fuzz", "f@x.example", "F", "Uzz")),
    "user_delete": lambda c: c.user_delete(1003),
}
"""The user methods, which the sandbox does not emulate: fuzzed, not recorded."""
WRITES = frozenset(list(CALLS)[6:]) | set(USER_CALLS)
RECORDS: dict[str, type | tuple[type, ...]] = {
    "user_info": answers.UserInfo,
    "user_list": list,
    "users_location_access": list,
    "user_permissions_location": answers.LocationPermissions,
    "workspace_list": list,
    "workspace_info": answers.WorkspaceInfo,
    "user_group_add": answers.GroupCreated,
    "workspace_add": list,
    "workspace_delete": int,
    "user_group_delete": int,
    "user_add": int,
    "user_delete": int,
}
SUCCESS_KEYS = (
    "userInfo", "userList", "usersLocationAccess", "userPermissionsLocation", "workspaceList",
    "workspaceInfo", "workspaceAdd", "workspaceDelete", "userGroupAdd", "userGroupDeleted",
    "addToUserGroup", "removeFromUserGroup", "addToWorkspace", "removeFromWorkspace",
)  # fmt: skip
FIELDS = (
    "id", "username", "email", "admin", "uType", "workspaces", "users", "user", "workspace",
    "userId", "workspaceId", "userGroupId", "userGroupIds", "userWorkspaceIds",
    "userGroupMembers", "workspaceName", "workspacePath", "name", "path", "totalWorkspaces",
    "workspaceOverridePermissions", "uploadFiles", "title", "message",
)  # fmt: skip
STATUSES = (200, 200, 200, 201, 302, 400, 401, 404, 418, 429, 500, 502, 503, 504)
FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- the client against a scripted network ------------------------------------------------


async def _no_wait(seconds: float) -> None:
    return None


async def answer(method: str, status: int, body: bytes) -> str:
    """Call ``method`` through a client whose every request gets ``status`` and ``body``;
    what came of it, after checking that it is one of the allowed endings."""
    transport = httpx.MockTransport(lambda request: httpx.Response(status, content=body))
    config = ClientConfig("https://fuzz.example", ADMIN_KEY, Secret(ADMIN_SECRET))
    async with SiteClient(config, transport=transport, sleep=_no_wait) as client:
        try:
            value = await {**CALLS, **USER_CALLS}[method](client)
        except ProtocolError:
            assert method not in WRITES  # an unreadable answer to a write: outcome unknown
            return "unreadable"
        except OutcomeUnknown:
            assert method in WRITES
            return "unreadable"
        except SiteRefusal:
            assert _has_error_shape(body) or status == 429 or status >= 500, body[:200]
            return "refusal"
    assert isinstance(value, RECORDS.get(method, answers.MembershipAnswer)), value
    return "decoded"


def _has_error_shape(body: bytes) -> bool:
    text = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<"):
        return b"<error" in text[:200]
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and "error" in document


Case = tuple[str, int, bytes]  # method, HTTP status, body


def fuzz(cases: st.SearchStrategy[Case], examples: int = 250) -> Counter[str]:
    """Send ``examples`` generated answers through the client; how each call ended."""
    outcomes: Counter[str] = Counter()

    @settings(FUZZ, max_examples=examples)
    @given(case=cases)
    def one(case: Case) -> None:
        started = time.thread_time()  # CPU: a busy machine's waits are not the client's work
        outcomes[asyncio.run(answer(*case))] += 1
        assert time.thread_time() - started < 2.0

    one()
    tally("fuzzed API responses", outcomes)
    return outcomes


# --- real answers, to cut and to corrupt --------------------------------------------------


class Recorder(httpx.AsyncBaseTransport):
    """Passes requests to the sandbox and keeps each method's answer body."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.bodies: dict[str, bytes] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.bodies[request.url.path.rsplit("/", 1)[-1]] = body
        return httpx.Response(response.status_code, headers=response.headers, content=body)


async def _real_answers(response_format: str) -> dict[str, bytes]:
    app = create_app(seed=example_seed())
    recorder = Recorder(SandboxTransport(app))
    config = ClientConfig(
        "https://sandbox.example",
        ADMIN_KEY,
        Secret(ADMIN_SECRET),
        response_format=response_format,  # type: ignore[arg-type]
    )
    async with SiteClient(config, transport=recorder) as client:
        for call in CALLS.values():
            await call(client)
    app.sandbox.store.close()
    return recorder.bodies


REAL: list[tuple[str, bytes]] = [
    (path.removesuffix(".xml"), body)
    for response_format in ("json", "xml")
    for path, body in asyncio.run(_real_answers(response_format)).items()
]


def test_the_real_answers_decode() -> None:
    """The corpus the corruptions start from: every method, both formats, all decodable."""
    assert sorted({method for method, _ in REAL}) == sorted(CALLS) and len(REAL) == 28
    for method, body in REAL:
        assert asyncio.run(answer(method, 200, body)) == "decoded"


# --- generated bodies ---------------------------------------------------------------------


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(FIELDS) | st.text(max_size=6)
    return st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=5)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    _json_containers,
    max_leaves=25,
)


@st.composite
def json_bodies(draw: st.DrawFn) -> bytes:
    key = draw(st.sampled_from(SUCCESS_KEYS) | st.just("error") | st.text(max_size=8))
    value = draw(json_values)
    document = draw(st.sampled_from([{key: value}, value]))  # the key, or anything at all
    return json.dumps(document).encode()


xml_tag = st.sampled_from(SUCCESS_KEYS + FIELDS + ("error", "workspaceList"))
xml_text = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=12).map(
    lambda t: t.replace("&", "&amp;").replace("<", "&lt;")
)


def _xml_parents(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(xml_tag, st.lists(inner, max_size=4)).map(
        lambda t: f"<{t[0]}>{''.join(t[1])}</{t[0]}>"
    )


xml_elements = st.recursive(
    st.tuples(xml_tag, xml_text).map(lambda t: f"<{t[0]}>{t[1]}</{t[0]}>"),
    _xml_parents,
    max_leaves=20,
)
HOSTILE_DTDS = (
    "",
    '<?xml version="1.0"?>',
    '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
    '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE r SYSTEM "http://127.0.0.1:9/evil.dtd">',
    '<!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd"> %p;]>',
)


@st.composite
def xml_bodies(draw: st.DrawFn) -> bytes:
    prologue = draw(st.sampled_from(HOSTILE_DTDS))
    root = draw(xml_elements)
    if "ENTITY" in prologue and draw(st.booleans()):
        root = root.replace("</", "&d;</", 1)  # use the entity, or the reference
    return (prologue + root).encode()


@st.composite
def truncated_bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    method, body = draw(st.sampled_from(REAL))
    return method, body[: draw(st.integers(min_value=0, max_value=max(0, len(body) - 1)))]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to the scalars and the empty containers of a JSON document."""
    if not node and isinstance(node, Mapping | list):
        return [path]
    if isinstance(node, Mapping):
        return [p for key, child in node.items() for p in _leaves(child, (*path, key))]
    if isinstance(node, list):
        return [p for index, child in enumerate(node) for p in _leaves(child, (*path, index))]
    return [path]


@st.composite
def wrongly_typed_bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    """A real JSON answer with one to three of its values swapped for another type's."""
    method, body = draw(st.sampled_from([(m, b) for m, b in REAL if b.startswith(b"{")]))
    document = json.loads(body)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(_leaves(document)))
        if not path:
            break
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        replacement = draw(json_values)
        if type(replacement) is not type(parent[path[-1]]):
            parent[path[-1]] = replacement
    return method, json.dumps(document).encode()


methods = st.sampled_from(sorted({*CALLS, *USER_CALLS}))
statuses = st.sampled_from(STATUSES)


@pytest.mark.slow
def test_random_json_bodies_end_in_a_record_or_a_site_error() -> None:
    outcomes = fuzz(st.tuples(methods, statuses, json_bodies()))
    assert outcomes["unreadable"] and outcomes["refusal"]


@pytest.mark.slow
def test_random_xml_bodies_and_entity_bombs_end_in_a_record_or_a_site_error() -> None:
    outcomes = fuzz(st.tuples(methods, statuses, xml_bodies()))
    assert outcomes["unreadable"] and outcomes["refusal"]


def test_real_answers_cut_short_end_in_a_protocol_error() -> None:
    outcomes = fuzz(truncated_bodies().map(lambda case: (case[0], 200, case[1])))
    assert set(outcomes) == {"unreadable"}, outcomes


@pytest.mark.slow
def test_real_answers_with_values_of_the_wrong_type_end_in_a_record_or_protocol_error() -> None:
    outcomes = fuzz(wrongly_typed_bodies().map(lambda case: (case[0], 200, case[1])))
    assert outcomes["unreadable"] and outcomes["decoded"]  # some types are tolerated
    assert set(outcomes) <= {"unreadable", "decoded", "refusal"}, outcomes


@pytest.mark.parametrize("method", sorted({*CALLS, *USER_CALLS}))
def test_an_entity_bomb_is_refused_at_once_by_every_method(method: str) -> None:
    bomb = HOSTILE_DTDS[2] + "<r>&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;</r>"
    started = time.thread_time()
    assert asyncio.run(answer(method, 200, bomb.encode())) == "unreadable"
    assert time.thread_time() - started < 1.0


SAFE_XML_NAMES = {"Element", "SubElement", "ParseError", "tostring", "escape", "quoteattr"}


def test_no_code_parses_xml_without_defusedxml() -> None:
    """Everywhere in the package, XML is parsed by defusedxml only: from the standard
    library's XML modules nothing but building, serialising and error names is imported."""
    problems = []
    for path in sorted(Path(reconciler.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                problems += [f"{path.name}: import {a.name}" for a in node.names if "xml" in a.name]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                ("xml", "lxml")
            ):
                unsafe = {a.name for a in node.names} - SAFE_XML_NAMES
                problems += [f"{path.name}: from {node.module} import {n}" for n in sorted(unsafe)]
    assert problems == []


@pytest.mark.soak
def test_soak_fuzzed_answers() -> None:
    for cases in (json_bodies(), xml_bodies()):
        fuzz(st.tuples(methods, statuses, cases), examples=5000)
    fuzz(truncated_bodies().map(lambda case: (case[0], 200, case[1])), examples=5000)
    fuzz(wrongly_typed_bodies().map(lambda case: (case[0], 200, case[1])), examples=5000)
