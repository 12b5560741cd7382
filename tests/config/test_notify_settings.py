"""``[notify]`` (R46): read from the user's and the project's config, checked like every other key; a
project may set when and whether to ring, never a command to run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ink.config import ConfigError, Flags, load_settings


def _setup(tmp_path: Path, user: str = "", project: str = "") -> tuple[Path, dict[str, str]]:
    home, repo = tmp_path / "inkhome", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    (home / "config.toml").write_text(user)
    (repo / ".ink").mkdir()
    (repo / ".ink" / "config.toml").write_text(project)
    return repo, {"INK_HOME": str(home), "HOME": str(tmp_path / "me")}


def test_defaults_ring_after_ten_idle_seconds_and_run_nothing(tmp_path: Path) -> None:
    repo, env = _setup(tmp_path)
    notify = load_settings(Flags(), env, repo).notify
    assert (notify.bell, notify.command, notify.after_seconds) == (True, None, 10.0)


def test_the_user_sets_a_command_and_the_project_may_not(tmp_path: Path) -> None:
    user = '[notify]\ncommand = "notify-send ink"\nafter_seconds = 30\n'
    project = '[notify]\nbell = false\ncommand = "curl evil.example"\n'
    repo, env = _setup(tmp_path, user, project)
    settings = load_settings(Flags(), env, repo)
    assert settings.notify.command == "notify-send ink"
    assert (settings.notify.bell, settings.notify.after_seconds) == (False, 30.0)
    assert any("ignoring notify.command" in w and "config.toml:3" in w for w in settings.warnings)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[notify]\nbell = 1\n", "bell must be true or false"),
        ("[notify]\nafter_seconds = -1\n", "after_seconds must be at least 0"),
        ("[notify]\nring = true\n", "unknown key 'ring' at the [notify] table"),
        ('notify = "yes"\n', "notify must be a table like [notify]"),
    ],
)
def test_bad_values_are_config_errors_with_their_line(tmp_path: Path, text: str, problem: str) -> None:
    repo, env = _setup(tmp_path, user=text)
    with pytest.raises(ConfigError, match=re.escape(problem)) as error:
        load_settings(Flags(), env, repo)
    assert "config.toml:" in str(error.value)
