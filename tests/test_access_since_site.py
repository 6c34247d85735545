"""``access --since`` against the sandbox on loopback (issue 42).

The earlier files that are refused, each before any call to the site: another site's report
(its URL compared in normal form, so the same site written otherwise is not refused), a file
nested too deep or too large, as one error.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler.access.since import MAX_PREVIOUS_BYTES, MAX_PREVIOUS_DEPTH
from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.loopback import LoopbackSite


def keep_report(site: LoopbackSite, name: str = "q3.json", *scope: str) -> dict[str, Any]:
    """The review of today, kept as a reviewer keeps it."""
    result = site.run("access", *scope, "--format", "json", "-o", name)
    assert result.returncode == EXIT_OK, result.stderr
    data: dict[str, Any] = json.loads((site.workdir / name).read_text(encoding="utf-8"))
    return data


def since(site: LoopbackSite, *scope: str, previous: str = "q3.json") -> dict[str, Any]:
    """The ``since`` section of a report compared with ``previous``."""
    result = site.run("access", *scope, "--since", previous, "--format", "json")
    assert result.returncode == EXIT_OK, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)["since"]
    return found


def test_another_site_s_report_is_refused_before_any_call(site: LoopbackSite) -> None:
    data = keep_report(site)
    data["site"] = "https://other.example"
    (site.workdir / "other.json").write_text(json.dumps(data), encoding="utf-8")
    site.control("calls/reset", {})

    result = site.run("access", "--since", "other.json")
    assert result.returncode == EXIT_ERROR
    assert result.stderr.startswith("Error: other.json is a report of https://other.example, ")
    assert site.control("calls")["total"] == 0


def test_the_same_site_written_otherwise_is_the_same_site(site: LoopbackSite) -> None:
    data = keep_report(site)
    data["site"] = site.url.upper().replace("HTTPS", "https") + "/"
    assert data["site"] != site.url
    (site.workdir / "spelt.json").write_text(json.dumps(data), encoding="utf-8")
    found = since(site, previous="spelt.json")
    assert (found["gained"], found["lost"], found["changed"]) == ([], [], [])


def test_a_deeply_nested_or_oversized_file_is_one_error_before_any_call(
    site: LoopbackSite,
) -> None:
    deep = 100_000
    (site.workdir / "deep.json").write_text("[" * deep + "]" * deep, encoding="utf-8")
    with (site.workdir / "huge.json").open("wb") as huge:
        huge.truncate(MAX_PREVIOUS_BYTES + 1)  # sparse: nothing is written
    site.control("calls/reset", {})

    for name, says in (
        ("deep.json", f"deep.json is nested more than {MAX_PREVIOUS_DEPTH} levels deep"),
        ("huge.json", f"huge.json is larger than {MAX_PREVIOUS_BYTES // 2**20} MiB"),
    ):
        result = site.run("access", "--since", name)
        assert result.returncode == EXIT_ERROR, name
        assert result.stderr.startswith(f"Error: {says}"), result.stderr
        assert "Internal error" not in result.stderr
    assert site.control("calls")["total"] == 0
