"""Which project file applies: the search stops at the repository root or the home directory, and a file
another user owns or can write is ignored with a warning (issue 11, docs/security.md). Real files, real
modes, and (when the tests run as root) a real chown to another uid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ink.config import Flags, load_settings
from ink.config.project import untrusted_because

OTHER_UID = 4242


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644)
    return path


def env_for(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "inkhome").mkdir(exist_ok=True)
    return {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path / "users" / "me")}


def test_a_file_above_the_repository_root_does_not_apply(tmp_path: Path) -> None:
    write(tmp_path / "shared" / ".ink" / "config.toml", 'model = "planted"\nmax_tokens = 5\n')
    repo = tmp_path / "shared" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    s = load_settings(Flags(), env_for(tmp_path), repo / "src")
    assert s.model != "planted" and s.max_tokens != 5 and s.files == ()


def test_the_repository_roots_own_file_applies(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    path = write(repo / ".ink" / "config.toml", 'model = "ours"\n')
    s = load_settings(Flags(), env_for(tmp_path), repo / "src")
    assert s.model == "ours" and s.files == (path,)


def test_a_file_above_the_home_directory_does_not_apply(tmp_path: Path) -> None:
    """/tmp/.ink or /home/.ink written by somebody else must not steer a project in your home."""
    write(tmp_path / "users" / ".ink" / "config.toml", 'model = "planted"\n')
    work = tmp_path / "users" / "me" / "code"
    work.mkdir(parents=True)
    assert load_settings(Flags(), env_for(tmp_path), work).model != "planted"


@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666])
def test_a_file_others_can_write_is_ignored_with_a_warning(tmp_path: Path, mode: int) -> None:
    project = tmp_path / "proj"
    path = write(project / ".ink" / "config.toml", 'model = "planted"\n')
    path.chmod(mode)
    s = load_settings(Flags(), env_for(tmp_path), project)
    assert s.model != "planted" and s.files == ()
    assert len(s.warnings) == 1
    assert s.warnings[0].startswith(f"{path}: ignoring this project config: it is writable by")
    assert f"{mode:04o}" in s.warnings[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_file_owned_by_another_user_is_ignored_with_a_warning(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    path = write(project / ".ink" / "config.toml", 'model = "planted"\nsession_dir = "x"\n')
    os.chown(path, OTHER_UID, OTHER_UID)
    s = load_settings(Flags(), env_for(tmp_path), project)
    assert s.model != "planted" and s.session_dir == tmp_path / "inkhome" / "sessions"
    assert s.warnings == (
        f"{path}: ignoring this project config: it is owned by another user (uid {OTHER_UID}); anybody who "
        "can change it would choose settings for your runs (fix its owner or mode if it is yours)",
    )


def test_ownership_rule_for_a_non_root_user(tmp_path: Path) -> None:
    """As a plain user: own files and root's are trusted, anybody else's are not."""
    path = write(tmp_path / "f", "")
    status = path.stat()
    assert untrusted_because(status, uid=status.st_uid) is None
    other = status.st_uid + 1
    assert untrusted_because(status, uid=other) == (
        None if status.st_uid == 0 else f"it is owned by another user (uid {status.st_uid})"
    )


def test_a_malformed_trusted_file_is_still_an_error(tmp_path: Path) -> None:
    from ink.config import ConfigError

    project = tmp_path / "proj"
    write(project / ".ink" / "config.toml", "model = \n")
    with pytest.raises(ConfigError, match=r"config\.toml:1:"):
        load_settings(Flags(), env_for(tmp_path), project)
