"""One pull-request comment, updated (issue 23, item 2): the Markdown plan's marker, its
numbered parts when it is too long for one comment, and ``reconciler show PLAN.json``.

The renderings of the golden plan (one part, and split) are compared with reviewed files in
``tests/test_render_golden.py``; here, a plan far over the limit, and the real command
against the sandbox on loopback.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from reconciler.engine.planning.plan import Plan
from reconciler.errors import EXIT_CHANGES, EXIT_OK, EXIT_REFUSED
from reconciler.render.markdown import MAX_PART_CHARS, markdown_parts
from tests.support.loopback import EXAMPLE_SEED, EXAMPLE_SITE, LoopbackSite, loopback_site
from tests.support.plan_cases import plan_case
from tests.support.readme import code_block, copy_examples, run

MARKER = re.compile(r"^<!-- site-reconciler:plan site=(\S+) records=(\w+) part=(\d+)/(\d+) -->$")


def big_plan(workspaces: int) -> Plan:
    """A plan creating ``workspaces`` workspaces, each with a few users: long."""
    return plan_case(
        {
            "desired": {
                "workspaces": [
                    {"name": f"Project {n:04d}", "users": ["alice", "bob"]}
                    for n in range(workspaces)
                ]
            },
            "live": {"workspaces": [{"id": 5, "name": "Handmade"}]},
        }
    )


def markers(parts: list[str]) -> list[tuple[str, ...]]:
    found = []
    for part in parts:
        match = MARKER.match(part.splitlines()[0])
        assert match, part.splitlines()[0]
        found.append(match.groups())
    return found


def test_a_plan_over_the_comment_limit_comes_in_numbered_parts_with_nothing_lost() -> None:
    plan = big_plan(1000)
    whole = "".join(markdown_parts(plan, limit=10**9))
    assert len(whole) > 2 * MAX_PART_CHARS  # one comment could not hold it
    parts = markdown_parts(plan)
    assert len(parts) >= 3
    assert all(len(part) <= MAX_PART_CHARS for part in parts), [len(p) for p in parts]
    total = str(len(parts))
    assert [m[2:] for m in markers(parts)] == [(str(n), total) for n in range(1, len(parts) + 1)]
    assert len({m[:2] for m in markers(parts)}) == 1  # one site, one records: one job's comments
    assert "**Plan: 1000 to create" in parts[0]  # the summary first
    assert f"this is part 1 of {total}" in parts[0]
    for part in parts:
        assert part.count("```") % 2 == 0  # every fence closed in its own comment
        assert part.count("<details>") == part.count("</details>")
    # every line of the details is in exactly one part, in order
    body = re.compile(r"```diff\n(.*?)```", re.DOTALL)
    split = "".join(chunk for part in parts for chunk in body.findall(part))
    assert split == "".join(body.findall(whole))
    for n in (0, 999):
        assert sum(f'workspace "Project {n:04d}"' in part for part in parts) == 1


def test_a_plan_that_fits_is_one_part_carrying_the_marker() -> None:
    parts = markdown_parts(big_plan(3))
    assert len(parts) == 1
    assert markers(parts) == [("https://acme.example.net", "none", "1", "1")]


def write_big_manifest(site: LoopbackSite, workspaces: int) -> None:
    site.write_manifest(
        "big.yaml",
        {
            "version": 1,
            "workspaces": [
                {"name": f"Project {n:04d}", "users": ["alice", "bob"]} for n in range(workspaces)
            ],
            "policy": {"prune": False},
        },
    )


def test_comment_files_are_written_by_part_and_stale_parts_removed(site: LoopbackSite) -> None:
    write_big_manifest(site, 500)
    big = site.run("plan", "big.yaml", "--format", "markdown", "--comment-dir", "comments")
    assert big.returncode == EXIT_OK, big.stderr
    files = sorted((site.workdir / "comments").iterdir())
    texts = [path.read_text(encoding="utf-8") for path in files]
    assert len(files) >= 2 and [p.name for p in files][:2] == ["comment-1.md", "comment-2.md"]
    assert all(len(text) <= MAX_PART_CHARS for text in texts)
    assert "".join(texts) == big.stdout  # stdout: the same parts, each after its marker
    first = markers(texts)[0]

    small = site.run("plan", "site.yaml", "--comment-dir", "comments", "--no-color")
    assert small.returncode == EXIT_OK, small.stderr
    assert "site-reconciler will make these changes" in small.stdout  # text on stdout
    left = sorted(p.name for p in (site.workdir / "comments").iterdir())
    assert left == ["comment-1.md"]  # the parts of the longer plan are gone
    again = markers([(site.workdir / "comments" / "comment-1.md").read_text()])[0]
    assert again[:2] == first[:2]  # the same marker: the job edits its comment
    assert again[2:] == ("1", "1")


def test_show_prints_a_saved_plan_again_in_every_format_without_the_site(
    tmp_path: Path,
) -> None:
    printed: dict[str, str] = {}
    with loopback_site(tmp_path, EXAMPLE_SEED) as site:
        site.write_manifest("site.yaml", EXAMPLE_SITE.read_text(encoding="utf-8"))
        for fmt in ("text", "json", "markdown"):
            out = f"plan-{fmt}.json" if fmt != "text" else "plan.json"
            made = site.run("plan", "site.yaml", "--format", fmt, "-o", out, "--no-color")
            assert made.returncode == EXIT_OK, made.stderr
            printed[fmt] = made.stdout
    # the server is gone: show reads the file and the records, never the site
    for fmt in ("json", "markdown"):
        shown = site.run("show", f"plan-{fmt}.json", "site.yaml", "--format", fmt)
        assert shown.returncode == EXIT_OK, shown.stderr
        assert shown.stdout == printed[fmt]
    text = site.run("show", "plan.json", "site.yaml", "--no-color")
    assert text.returncode == EXIT_OK, text.stderr
    assert printed["text"].startswith(text.stdout)  # plan adds the "Saved the plan" line
    assert json.loads(printed["json"])["summary"]["create"] == 14


def test_show_refuses_an_edited_plan_or_other_records(site: LoopbackSite) -> None:
    made = site.run("plan", "site.yaml", "-o", "plan.json")
    assert made.returncode == EXIT_OK, made.stderr
    path = site.workdir / "plan.json"
    data: dict[str, Any] = json.loads(path.read_text())
    data["actions"][0]["summary"] = "nothing to see here"
    (site.workdir / "edited.json").write_text(json.dumps(data))
    edited = site.run("show", "edited.json", "site.yaml")
    assert edited.returncode == EXIT_REFUSED
    assert edited.stdout == "" and "changed after it was saved" in edited.stderr
    elsewhere = site.run("show", "plan.json", "site.yaml", "--state-dir", "other-records")
    assert elsewhere.returncode == EXIT_REFUSED and elsewhere.stdout == ""
    assert not (site.workdir / "other-records").exists()  # nothing made for an untrusted plan


def test_the_readmes_pipeline_outputs_run_as_written(tmp_path: Path) -> None:
    """README, "In a pipeline": each line, in order, as written (the first starts the sandbox
    afresh, so the block runs after the tour too)."""
    work = copy_examples(tmp_path)
    lines = code_block("## In a pipeline")
    assert [shlex.split(line)[1] for line in lines] == ["sandbox", "plan", "show", "apply", "drift"]
    codes = []
    for line in lines:
        words, out = shlex.split(line), None
        if ">" in words:
            words, out = words[: words.index(">")], words[words.index(">") + 1]
        result = run(words, work)
        codes.append(result.returncode)
        if out:
            (work / out).write_text(result.stdout, encoding="utf-8")
        if words[1] == "show":
            comment = (work / "comments" / "comment-1.md").read_text(encoding="utf-8")
            assert result.stdout == comment  # the saved plan, shown again, is the comment
    assert codes == [EXIT_OK, EXIT_OK, EXIT_OK, EXIT_CHANGES, EXIT_OK]  # applied: 2; then in sync
    assert json.loads((work / "apply.json").read_text())["counts"]["done"] == 14
