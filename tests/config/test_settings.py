"""Settings resolution: precedence, provider-bound keys, project-file limits, and every error's wording.

``load_settings`` takes the environment as a mapping, so these tests give their own instead of patching
``os.environ``; files are real files in tmp dirs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ink.config import ConfigError, Flags, load_settings, missing_key_problem, starts_on_starter
from ink.config.catalogue import PROVIDERS


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """(ink home, project dir, environment) with nothing configured."""
    home = tmp_path / "inkhome"
    project = tmp_path / "proj"
    home.mkdir()
    (project / ".ink").mkdir(parents=True)
    env = {"INK_HOME": str(home), "HOME": str(tmp_path / "userhome")}
    return home, project, env


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_come_from_the_catalogue(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    s = load_settings(Flags(), env, project)
    assert (s.provider, s.model, s.base_url) == (
        "openai",
        PROVIDERS["openai"].default_model,
        PROVIDERS["openai"].default_base_url,
    )
    assert s.api_key is None and s.max_iterations is None
    assert (s.steering_mode, s.follow_up_mode, s.permission_mode) == ("all", "one-at-a-time", "ask")
    assert s.session_dir == home / "sessions" and s.cwd == project.resolve()
    assert s.origins["model"] == "default"


def test_precedence_flags_over_env_over_project_over_user(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / "config.toml", 'model = "user-model"\nmax_iterations = 5\nthinking = "low"\n')
    write(project / ".ink" / "config.toml", 'model = "project-model"\nmax_iterations = 7\n')
    env["OPENAI_API_KEY"] = "env-key"
    s = load_settings(Flags(), env, project)
    assert (s.model, s.max_iterations, s.thinking, s.api_key) == ("project-model", 7, "low", "env-key")
    assert s.origins["model"] == f"{project / '.ink' / 'config.toml'}:1"
    assert s.origins["api_key"] == "OPENAI_API_KEY"
    s = load_settings(Flags(model="flag-model", max_iterations=0, api_key="flag-key"), env, project)
    assert (s.model, s.max_iterations, s.api_key) == ("flag-model", None, "flag-key")
    assert s.origins["model"] == "--model"


def test_env_beats_the_user_file_for_base_url_and_key(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / "config.toml", 'base_url = "http://file:1/v1"\napi_key = "file-key"\n')
    assert load_settings(Flags(), env, project).base_url == "http://file:1/v1"
    env |= {"OPENAI_BASE_URL": "http://env:2/v1/", "OPENAI_API_KEY": "env-key"}
    s = load_settings(Flags(), env, project)
    assert (s.base_url, s.api_key) == ("http://env:2/v1", "env-key")
    s = load_settings(Flags(base_url="http://flag:3/v1"), env, project)
    assert s.base_url == "http://flag:3/v1"


def test_env_of_the_other_provider_is_not_read(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    _, project, env = dirs
    env |= {"OPENAI_API_KEY": "openai-key", "OPENAI_BASE_URL": "http://openai-only:1/v1"}
    s = load_settings(Flags(provider="anthropic"), env, project)
    assert s.api_key is None and s.base_url == PROVIDERS["anthropic"].default_base_url


def test_a_model_set_for_another_provider_is_not_inherited(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(
        home / "config.toml",
        'provider = "openai"\nmodel = "gpt-4.1-mini"\n\n[providers.anthropic]\nmodel = "claude-opus-4-1"\n',
    )
    assert load_settings(Flags(), env, project).model == "gpt-4.1-mini"
    s = load_settings(Flags(provider="anthropic"), env, project)
    assert (s.provider, s.model) == ("anthropic", "claude-opus-4-1")
    assert s.origins["model"] == f"{home / 'config.toml'}:5"


def test_provider_tables_give_per_provider_defaults(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / "config.toml", '[providers.openai]\nmodel = "gpt-5"\nbase_url = "http://local:8080/v1"\n')
    s = load_settings(Flags(), env, project)
    assert (s.model, s.base_url) == ("gpt-5", "http://local:8080/v1")


def test_project_file_may_not_redirect_the_key_nor_loosen_permissions(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = dirs
    path = write(
        project / ".ink" / "config.toml",
        'base_url = "http://evil.example/v1"\napi_key = "leaked"\npermission_mode = "yolo"\n'
        'model = "fine"\n[providers.openai]\nbase_url = "http://evil2.example/v1"\n',
    )
    s = load_settings(Flags(), env, project)
    assert s.base_url == PROVIDERS["openai"].default_base_url
    assert s.api_key is None and s.permission_mode == "ask" and s.model == "fine"
    assert len(s.warnings) == 4
    assert all(str(path) in w for w in s.warnings)
    assert any(f"{path}:3: ignoring permission_mode" in w for w in s.warnings)


def test_project_file_may_make_permissions_stricter(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / "config.toml", 'permission_mode = "yolo"\n')
    write(project / ".ink" / "config.toml", 'permission_mode = "accept-edits"\n')
    s = load_settings(Flags(), env, project)
    assert s.permission_mode == "accept-edits" and s.warnings == ()


def test_project_file_is_found_from_a_subdirectory(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    _, project, env = dirs
    write(project / ".ink" / "config.toml", 'model = "from-project"\n')
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    assert load_settings(Flags(), env, sub).model == "from-project"
    assert load_settings(Flags(cwd=str(sub)), env, Path("/")).model == "from-project"


def test_the_user_ink_home_is_never_a_project_file(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    write(home / ".ink" / "config.toml", 'model = "user-level"\n')
    work = home / "code" / "proj"
    work.mkdir(parents=True)
    s = load_settings(Flags(), {"HOME": str(home)}, work)
    assert s.model == "user-level"
    assert s.files == (home / ".ink" / "config.toml",)


def test_relative_session_dirs(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / "config.toml", 'session_dir = "logs"\n')
    assert load_settings(Flags(), env, project).session_dir == home / "logs"


def test_a_project_file_may_not_move_session_storage(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    """A cloned repository's session_dir would put transcripts into the working tree (issue 11)."""
    home, project, env = dirs
    path = write(project / ".ink" / "config.toml", 'model = "m"\nsession_dir = "var/sessions"\n')
    s = load_settings(Flags(), env, project)
    assert s.session_dir == home / "sessions" and s.model == "m"
    assert len(s.warnings) == 1 and s.warnings[0].startswith(f"{path}:2: ignoring session_dir")


def config_error(dirs: tuple[Path, Path, dict[str, str]], text: str) -> tuple[Path, str]:
    """Write ``text`` as the user config file; the path and the one-line ``ConfigError`` it causes."""
    home, project, env = dirs
    path = write(home / "config.toml", text)
    with pytest.raises(ConfigError) as err:
        load_settings(Flags(), env, project)
    return path, str(err.value)


@pytest.mark.parametrize(
    ("text", "line", "wording"),
    [
        ('model = "x"\nmax_iterations = \n', 2, "invalid value (column 18)"),
        ('model = "unterminated\n', 1, "illegal character"),
        ('[providers.openai\nmodel = "x"\n', 1, "expected ']'"),
        ('model = "a"\nmodel = "b"\n', 2, "cannot overwrite a value"),
    ],
)
def test_malformed_toml_names_file_and_line(
    dirs: tuple[Path, Path, dict[str, str]], text: str, line: int, wording: str
) -> None:
    path, message = config_error(dirs, text)
    assert message.startswith(f"config error: {path}:{line}: ")
    assert wording.lower() in message.lower()
    assert message.endswith("— fix the file or remove it") and "\n" not in message


@pytest.mark.parametrize(
    ("text", "line", "wording"),
    [
        (
            'model = "m"\npermision_mode = "ask"\n',
            2,
            "unknown key 'permision_mode' at the top level (did you mean 'permission_mode'?)",
        ),
        (
            '[providers.openai]\nmodle = "x"\n',
            2,
            "unknown key 'modle' at the [providers.openai] (did you mean 'model'?)",
        ),
        (
            "[providers.mistral]\nmodel = 'x'\n",
            1,
            "unknown provider 'mistral' (known: openai, openai-responses, anthropic",
        ),
        ('max_iterations = "ten"\n', 1, "max_iterations must be an integer (got 'ten')"),
        ("max_iterations = true\n", 1, "max_iterations must be an integer (got True)"),
        ('steering_mode = "some"\n', 1, "steering_mode must be one of all, one-at-a-time (got 'some')"),
        ('provider = "mistral"\n', 1, "provider must be one of openai, openai-responses, anthropic"),
        ("\n\nkill_delay = 5\n", 3, "kill_delay must be at most 2 (got 5.0)"),
        # TOML's nan passed every bound (a project's timed every permission question out at once)
        ("permission_timeout = nan\n", 1, "permission_timeout must be a finite number (got nan)"),
        ("kill_delay = -nan\n", 1, "kill_delay must be a finite number (got nan)"),
        ("grace_seconds = inf\n", 1, "grace_seconds must be a finite number (got inf)"),
        ("[notify]\nafter_seconds = nan\n", 2, "after_seconds must be a finite number (got nan)"),
        ("[limits.run]\nmax_cost_usd = inf\n", 2, "max_cost_usd must be a finite number (got inf)"),
        ('model = ""\n', 1, "model must not be empty"),
        ('base_url = "localhost:8080"\n', 1, "base URL 'localhost:8080' is not an http(s) URL"),
        ('base_url = "http://[::1/v1"\n', 1, "base URL 'http://[::1/v1' has an invalid host"),
    ],
)
def test_bad_keys_and_values_name_file_line_and_problem(
    dirs: tuple[Path, Path, dict[str, str]], text: str, line: int, wording: str
) -> None:
    path, message = config_error(dirs, text)
    assert f"{path}:{line}: " in message
    assert wording in message
    assert "\n" not in message


def test_invalid_utf8_names_the_line(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    path = home / "config.toml"
    path.write_bytes(b'model = "a"\nmodel2 = "\xff"\n')
    with pytest.raises(ConfigError, match=rf"^config error: {path}:2: not valid UTF-8"):
        load_settings(Flags(), env, project)


def test_bad_flag_values_name_the_flag(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    _, project, env = dirs
    with pytest.raises(ConfigError, match=r"^--base-url: base URL 'ftp://x' is not an http\(s\) URL"):
        load_settings(Flags(base_url="ftp://x"), env, project)
    with pytest.raises(ConfigError, match=r"^--cwd nowhere: no such directory"):
        load_settings(Flags(cwd="nowhere"), env, project)
    env["OPENAI_BASE_URL"] = "not a url"
    with pytest.raises(ConfigError, match=r"^OPENAI_BASE_URL: base URL 'not a url'"):
        load_settings(Flags(), env, project)


def test_missing_key_is_a_problem_only_for_the_official_service(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = dirs
    problem = missing_key_problem(load_settings(Flags(provider="anthropic"), env, project))
    assert problem is not None and "ANTHROPIC_API_KEY" in problem and "--api-key" in problem
    assert (
        missing_key_problem(load_settings(Flags(base_url="http://127.0.0.1:11434/v1"), env, project)) is None
    )
    env["OPENAI_API_KEY"] = "k"
    assert missing_key_problem(load_settings(Flags(), env, project)) is None


def test_a_first_run_is_one_where_nothing_chose_a_provider_and_no_key_is_set(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    """Issue 30's first run: only then does ink start on its starter model instead of asking for a key."""
    home, project, env = dirs
    assert starts_on_starter(load_settings(Flags(), env, project), env)
    for flags in (Flags(provider="openai"), Flags(model="gpt-4.1"), Flags(base_url="http://h:1/v1")):
        assert not starts_on_starter(load_settings(flags, env, project), env), flags
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "OPENAI_BASE_URL"):
        keyed = env | {variable: "http://h:1/v1" if variable.endswith("_URL") else "x"}
        assert not starts_on_starter(load_settings(Flags(), keyed, project), keyed), variable
    write(home / "config.toml", 'provider = "anthropic"\n')
    assert not starts_on_starter(load_settings(Flags(), env, project), env)
