"""The expired entries left in a manifest: reported by ``validate``, removed by ``expire``.

An entry past its ``expires:`` date grants nothing any more -- the plan removes its access
(``core/expiry.py``) -- but left in the files it misleads a reader and is reported by
``validate`` until someone takes it out. ``reconciler expire`` does, and changes nothing
else: each entry goes as ``review/yaml_edit.py`` removes a list item, its line or its comma,
comments and formatting kept, the result checked by parsing it again. An expired account
takes every reference to it with it (a reference by username or e-mail address expires with
the account). A list that cannot be edited in place (shared through a YAML anchor) is named
for a person to edit.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from reconciler.core.expiry import Grant, as_of
from reconciler.findings import Finding
from reconciler.model import DesiredSite
from reconciler.review.yaml_edit import EditRefused, remove_items

_ITEM = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]$")


def expired_entries(desired: DesiredSite, day: date) -> list[Grant]:
    """The entries past their date on ``day``, once each (a team's entry is its workspace's
    and its group's), in the order written."""
    seen: dict[tuple[str, str], Grant] = {}
    for grant in as_of(desired, day).expired:
        seen.setdefault((grant.source.file, grant.source.path), grant)
    return sorted(seen.values(), key=lambda g: (g.source.file, g.source.line or 0, g.source.path))


def expiry_findings(desired: DesiredSite, day: date, command: str) -> list[Finding]:
    """A warning for each expired entry, naming ``command``: the one that removes them."""
    return [
        Finding.warning(
            f"{grant.ended()}: the entry grants nothing any more",
            grant.source,
            f"remove the expired entries from the files: {command}",
        )
        for grant in expired_entries(desired, day)
    ]


@dataclass
class Tidying:
    """What ``expire`` does: each file's new text, the entries removed, those it could not."""

    files: dict[str, str] = field(default_factory=dict)
    removed: list[Grant] = field(default_factory=list)
    refused: list[tuple[Grant, str]] = field(default_factory=list)


def tidy(desired: DesiredSite, day: date) -> Tidying:
    """The manifest's files without their expired entries (nothing is written here)."""
    by_list: dict[tuple[str, str], dict[int, Grant]] = defaultdict(dict)
    for grant in expired_entries(desired, day):
        found = _ITEM.match(grant.source.path)
        assert found is not None, grant.source  # every entry is an item of a list
        by_list[(grant.source.file, found["list"])][int(found["index"])] = grant
    done = Tidying()
    texts: dict[str, str] = {}
    for (file, list_path), items in sorted(by_list.items()):
        text = texts.get(file)
        if text is None:
            text = texts[file] = Path(file).read_text(encoding="utf-8")
        try:
            texts[file] = remove_items(text, list_path, set(items))
        except EditRefused as exc:
            done.refused += [(grant, str(exc)) for grant in items.values()]
            continue
        done.files[file] = texts[file]
        done.removed += items.values()
    return done
