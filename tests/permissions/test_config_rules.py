"""Rules in config files and flags: the TOML shape, errors with file:line, what a project file may add,
``permission_timeout``, and the secrets the settings collect for redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink.config import ConfigError, Flags, load_settings


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home, project = tmp_path / "inkhome", tmp_path / "proj"
    home.mkdir()
    (project / ".ink").mkdir(parents=True)
    return home, project, {"INK_HOME": str(home), "HOME": str(tmp_path / "userhome")}


def test_rules_come_from_flags_the_user_file_and_the_projects_denies(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = dirs
    (home / "config.toml").write_text(
        '[permissions]\nallow = [\n  "bash(npm test)",\n  "Edit(src/**)",\n]\ndeny = ["bash(git push *)"]\n'
    )
    project_file = project / ".ink" / "config.toml"
    project_file.write_text('[permissions]\nallow = ["bash"]\ndeny = ["read(.env)"]\n')
    s = load_settings(Flags(allow=("bash(make)",), deny=("write(/etc/**)",)), env, project)
    assert [(r.effect, r.text, r.where) for r in s.permission_rules] == [
        ("allow", "bash(make)", "--allow"),
        ("deny", "write(/etc/**)", "--deny"),
        ("deny", "read(.env)", f"{project_file}:3"),
        ("allow", "bash(npm test)", f"{home / 'config.toml'}:3"),
        ("allow", "edit(src/**)", f"{home / 'config.toml'}:4"),  # tool names are case-insensitive
        ("deny", "bash(git push *)", f"{home / 'config.toml'}:6"),
    ]
    [warning] = s.warnings  # the project's allow rule would let the repository decide what runs unasked
    assert warning.startswith(f"{project_file}:2: ignoring allow rule 'bash'")
    assert "$INK_HOME/config.toml" in warning and "--allow 'bash'" in warning


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[permissions]\nallow = "bash"\n', ":2: permissions.allow must be a list of rules"),
        ("[permissions]\nallow = [1]\n", ":2: a permission rule must be a string"),
        (
            '[permissions]\nallow = ["bash(npm test"]\n',
            ":2: permission rule 'bash(npm test' is not of the form",
        ),
        (
            '[permissions]\nallow = [\n  "ls",\n  "bash()",\n]\n',
            ":4: permission rule 'bash()' has an empty pattern",
        ),
        ('[permissions]\nalow = ["bash"]\n', ":2: unknown key 'alow' in [permissions]"),
        ('permissions = ["bash"]\n', ":1: permissions must be a table"),
    ],
)
def test_a_malformed_rule_is_a_config_error_naming_file_and_line(
    dirs: tuple[Path, Path, dict[str, str]], text: str, problem: str
) -> None:
    home, project, env = dirs
    path = home / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(Flags(), env, project)
    assert f"{path}{problem}" in str(caught.value)


def test_a_malformed_flag_rule_names_the_flag(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    _home, project, env = dirs
    with pytest.raises(ConfigError, match=r"^--deny: permission rule 'bash\(' is not of the form"):
        load_settings(Flags(deny=("bash(",)), env, project)


def test_permission_timeout(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    assert load_settings(Flags(), env, project).permission_timeout == 300.0
    (home / "config.toml").write_text("permission_timeout = 0\n")
    assert load_settings(Flags(), env, project).permission_timeout == 0.0
    (home / "config.toml").write_text("permission_timeout = -1\n")
    with pytest.raises(ConfigError, match="permission_timeout must be at least 0"):
        load_settings(Flags(), env, project)


def test_the_settings_know_every_secret_and_never_show_the_key(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = dirs
    (home / "config.toml").write_text('[providers.anthropic]\napi_key = "sk-ant-from-user-file"\n')
    env |= {"OPENAI_API_KEY": "sk-openai-from-env", "ANTHROPIC_API_KEY": "sk-anthropic-env"}
    s = load_settings(Flags(base_url="http://127.0.0.1:9/v1"), env, project)
    assert set(s.secrets) == {"sk-openai-from-env", "sk-anthropic-env", "sk-ant-from-user-file"}
    assert "sk-openai-from-env" not in repr(s)  # a debug print of the settings shows no key
    assert s.api_key == "sk-openai-from-env"
