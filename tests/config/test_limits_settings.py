"""``[limits.session]``, ``[limits.run]`` and ``--max-cost``/``--max-tokens``/``--max-time`` (R45): checked
like every other key, located on error; the flags set the session's limits and win (0: no limit); a
project may only make a limit stricter than the user's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ink.config import ConfigError, Flags, load_settings
from ink.config.limits import Limits
from tests.config.test_notify_settings import _setup


def test_no_limits_by_default(tmp_path: Path) -> None:
    repo, env = _setup(tmp_path)
    limits = load_settings(Flags(), env, repo).limits
    assert not limits and not limits.cost_limited


def test_the_user_sets_session_and_run_limits_and_the_flags_win(tmp_path: Path) -> None:
    user = "[limits.session]\nmax_cost_usd = 5\nmax_tokens = 2_000_000\n\n[limits.run]\nmax_seconds = 600\n"
    repo, env = _setup(tmp_path, user)
    limits = load_settings(Flags(), env, repo).limits
    assert limits.session == Limits(max_cost_usd=5.0, max_tokens=2_000_000)
    assert limits.run == Limits(max_seconds=600.0)
    assert limits.origins["session.max_cost_usd"].endswith("config.toml:2")
    flagged = load_settings(Flags(max_cost=0.5, max_total_tokens=0, max_time=30), env, repo).limits
    assert flagged.session == Limits(max_cost_usd=0.5, max_seconds=30.0)  # 0 lifts the file's limit
    assert flagged.cost_origin() == "--max-cost"


def test_a_project_may_only_make_a_limit_stricter(tmp_path: Path) -> None:
    user = "[limits.session]\nmax_cost_usd = 5\nmax_tokens = 1000\n"
    project = "[limits.session]\nmax_cost_usd = 50\nmax_tokens = 500\nmax_seconds = 60\n"
    project += "[limits.run]\nmax_tokens = 0\n"
    repo, env = _setup(tmp_path, user, project)
    settings = load_settings(Flags(), env, repo)
    assert settings.limits.session == Limits(max_cost_usd=5.0, max_tokens=500, max_seconds=60.0)
    assert settings.limits.run == Limits()
    [warning] = [w for w in settings.warnings if "limits" in w]
    assert "ignoring limits.session.max_cost_usd = 50" in warning and "stricter than yours (5)" in warning


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[limits]\nmax_cost_usd = 5\n", "[limits] holds the tables [limits.session] and [limits.run]"),
        ("[limits.week]\nmax_cost_usd = 5\n", "(got 'week')"),
        ("[limits.run]\nmax_dollars = 5\n", "unknown key 'max_dollars' in [limits.run]"),
        ("[limits.run]\nmax_cost_usd = -1\n", "max_cost_usd must be at least 0"),
        ('[limits.session]\nmax_tokens = "lots"\n', "max_tokens must be an integer"),
        ("[limits.session]\nmax_tokens = 1.5\n", "max_tokens must be an integer"),
        ('limits = "none"\n', "limits must hold tables like [limits.session]"),
    ],
)
def test_bad_limits_are_config_errors_with_their_line(tmp_path: Path, text: str, problem: str) -> None:
    repo, env = _setup(tmp_path, user=text)
    with pytest.raises(ConfigError, match=re.escape(problem)) as error:
        load_settings(Flags(), env, repo)
    assert "config.toml:" in str(error.value)
