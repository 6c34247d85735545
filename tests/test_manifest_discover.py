"""Files that vanish from a manifest directory: never without a word.

With ``policy.prune`` on, a file that silently drops out of the manifest gets what it declared
deleted. These tests build real directories with real symbolic links in a temporary
directory: a broken or looping link is an error, a YAML name in another case is read, and a
hidden YAML file is skipped with a warning that names it.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

import reconciler.cli.commands  # noqa: F401  (registers the sub-commands)
from reconciler.cli import cli
from reconciler.findings import Finding
from reconciler.manifest import load_manifest

ALPHA = "version: 1\nworkspaces:\n  - name: Alpha\n"
BETA = "workspaces:\n  - name: Beta\n"


def _site(tmp_path: Path, files: dict[str, str]) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    for name, text in files.items():
        (site / name).write_text(text, encoding="utf-8")
    return site


def _findings(findings: list[Finding]) -> list[tuple[str, str, str]]:
    return [(f.severity, Path(f.source.file).name, f.message) for f in findings]


def test_the_reported_incident_is_now_invalid(tmp_path: Path) -> None:
    """A broken ``shared.yaml`` link and a ``beta.YAML``: validate said "valid (1 workspace)"."""
    site = _site(tmp_path, {"alpha.yaml": ALPHA, "beta.YAML": BETA})
    (site / "shared.yaml").symlink_to("../elsewhere/shared.yaml")
    result = CliRunner().invoke(cli, ["validate", str(site)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == (
        f"{site}/shared.yaml: error: is a broken symbolic link to ../elsewhere/shared.yaml (No "
        "such file or directory) — fix or remove the link: what the file declares is not part "
        "of the manifest without it"
    )
    assert lines[-1] == f"{site}: invalid (1 error)"


def test_a_yaml_name_in_another_case_is_read(tmp_path: Path) -> None:
    site = _site(tmp_path, {"alpha.yaml": ALPHA, "beta.YAML": BETA, "gamma.Yml": "groups: []\n"})
    result = load_manifest([site])
    assert result.findings == [] and result.desired is not None
    assert [w.name for w in result.desired.workspaces] == ["Alpha", "Beta"]
    assert [Path(file).name for file in result.desired.files] == [
        "alpha.yaml",
        "beta.YAML",
        "gamma.Yml",
    ]


def test_a_broken_link_is_an_error_and_the_rest_is_still_checked(tmp_path: Path) -> None:
    site = _site(tmp_path, {"alpha.yaml": ALPHA, "beta.yaml": "workspaces: [{name: 'x,y'}]\n"})
    (site / "shared.yml").symlink_to(tmp_path / "gone.yaml")
    result = load_manifest([site])
    assert result.desired is None
    assert [(severity, name) for severity, name, _ in _findings(result.findings)] == [
        ("error", "shared.yml"),  # what keeps a file out comes first
        ("error", "beta.yaml"),
    ]
    assert f"is a broken symbolic link to {tmp_path / 'gone.yaml'}" in result.findings[0].message


def test_a_link_loop_is_an_unreadable_file(tmp_path: Path) -> None:
    site = _site(tmp_path, {"alpha.yaml": ALPHA})
    os.symlink("loop-b.yaml", site / "loop-a.yaml")
    os.symlink("loop-a.yaml", site / "loop-b.yaml")
    result = load_manifest([site])
    assert result.desired is None
    assert _findings(result.findings) == [
        (
            "error",
            name,
            f"is a broken symbolic link to {target} (Too many levels of symbolic links)",
        )
        for name, target in (("loop-a.yaml", "loop-b.yaml"), ("loop-b.yaml", "loop-a.yaml"))
    ]


def test_a_working_link_is_read_like_a_file(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "beta.yaml").write_text(BETA, encoding="utf-8")
    site = _site(tmp_path, {"alpha.yaml": ALPHA})
    (site / "beta.yaml").symlink_to(tmp_path / "shared" / "beta.yaml")
    result = load_manifest([site])
    assert result.findings == [] and result.desired is not None
    assert [w.name for w in result.desired.workspaces] == ["Alpha", "Beta"]


def test_hidden_yaml_files_are_skipped_with_a_warning_naming_each(tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        {"alpha.yaml": ALPHA, ".beta.yaml.swp": "x", ".gamma.YML": "version: [", ".env": "x"},
    )
    (site / ".#alpha.yaml").symlink_to("root@host.1234:1700000000")  # an Emacs lock: dangling
    result = load_manifest([site])
    assert result.desired is not None and len(result.desired.workspaces) == 1
    assert _findings(result.findings) == [
        ("warning", name, "this hidden file is not read (an editor's backup or lock file?)")
        for name in (".#alpha.yaml", ".gamma.YML")
    ]
    assert result.findings[0].hint == (
        "to make it part of the manifest, rename it without the leading dot"
    )


def test_only_hidden_yaml_files_is_an_empty_directory(tmp_path: Path) -> None:
    site = _site(tmp_path, {".alpha.yaml": ALPHA})
    result = load_manifest([site])
    assert _findings(result.findings) == [
        (
            "warning",
            ".alpha.yaml",
            "this hidden file is not read (an editor's backup or lock file?)",
        ),
        ("error", "site", "the directory holds no *.yaml or *.yml files"),
    ]


def test_a_subdirectory_with_a_yaml_name_is_named_in_a_warning(tmp_path: Path) -> None:
    site = _site(tmp_path, {"alpha.yaml": ALPHA})
    (site / "old.yaml").mkdir()
    (site / "drafts").mkdir()
    result = load_manifest([site])
    assert result.desired is not None
    assert _findings(result.findings) == [
        (
            "warning",
            "old.yaml",
            "this directory is not read: subdirectories are not part of the manifest",
        )
    ]


def test_a_broken_link_given_as_the_path_says_so(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").symlink_to("nowhere.yaml")
    (finding,) = load_manifest([tmp_path / "site.yaml"]).findings
    assert finding.message.startswith("is a broken symbolic link to nowhere.yaml")
