"""An unknown key in ``reconciler.toml`` names the nearest known one (issue 31 item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.cli.config_file import read_config
from reconciler.errors import ConfigError


@pytest.mark.parametrize(
    ("written", "meant"),
    [("concurency", "concurrency"), ("lock-timeout", "lock_timeout"), ("ratelimit", "rate_limit"),
     ("State", "state")],
)  # fmt: skip
def test_a_misspelt_setting_gets_a_did_you_mean(tmp_path: Path, written: str, meant: str) -> None:
    path = tmp_path / "reconciler.toml"
    path.write_text(f"{written} = 4\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        read_config(path)
    assert (
        f"Unknown setting {written!r} in {path}. Did you mean {meant!r}?" in refused.value.message
    )
    assert "Known settings: concurrency" in str(refused.value.hint)


def test_a_setting_like_no_other_gets_the_list_only(tmp_path: Path) -> None:
    path = tmp_path / "reconciler.toml"
    path.write_text("colour = 4\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        read_config(path)
    assert "Did you mean" not in refused.value.message
    assert "Known settings:" in str(refused.value.hint)
