"""Claude Code's files as a hostile repository writes them (issue 27, R39): whatever JSON
``.claude/settings.json``, ``.claude/settings.local.json`` and ``.mcp.json`` hold, reading them never
raises, every hook it yields has a finite timeout within ink's bound, and every server a checked table.
JSON's ``NaN`` (which Python reads) as a hook's timeout passed the "<= 0" check and timed every call out
at once."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ink.config.claude import load_claude_setup
from ink.config.hooks import MAX_TIMEOUT

NUMBERS = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 0, -1, 1e-300, 1e300, 30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=12))
RULES = st.lists(st.one_of(st.text(max_size=20), SCALARS), max_size=4)
TABLE = st.dictionaries(st.text(max_size=4), SCALARS, max_size=2)
HOOK = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["command", "prompt"]), "command": st.sampled_from(["x", " "])},
        optional={"timeout": NUMBERS},
    ),
    SCALARS,
)
MATCHERS = st.sampled_from(["Bash", "Edit|Write", "(a|b)*c", "[", "*"])
GROUP = st.one_of(
    st.fixed_dictionaries(
        {"hooks": st.lists(HOOK, min_size=1, max_size=3)},
        optional={"matcher": st.one_of(MATCHERS, SCALARS)},
    ),
    SCALARS,
)
GROUPS = st.dictionaries(
    st.sampled_from(["PreToolUse", "PostToolUse", "Stop", "Notification", "x"]),
    st.lists(GROUP, min_size=1, max_size=3),
    min_size=1,
)
SETTINGS = st.fixed_dictionaries(
    {"hooks": st.one_of(GROUPS, SCALARS)},
    optional={
        "permissions": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "deny": st.one_of(RULES, SCALARS),
                    "allow": st.lists(st.text(max_size=12), max_size=2),
                    "ask": SCALARS,
                },
            ),
            SCALARS,
        ),
    },
)
SERVER = st.dictionaries(
    st.sampled_from(["command", "args", "env", "cwd", "url", "headers", "type"]),
    st.one_of(SCALARS, st.lists(SCALARS, max_size=3), TABLE),
    max_size=5,
)
MCP = st.fixed_dictionaries(
    {}, optional={"mcpServers": st.one_of(st.dictionaries(st.text(max_size=8), SERVER, max_size=3), SCALARS)}
)


def dump(value: Any) -> str:
    return json.dumps(value, allow_nan=True)  # NaN and Infinity as Python writes and reads them


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(project=SETTINGS, local=SETTINGS, mine=SETTINGS, mcp=MCP)
def test_whatever_claude_files_hold_reading_them_never_raises_and_timeouts_are_bounded(
    project: Any, local: Any, mine: Any, mcp: Any
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work, home = root / "repo", root / "home"
        (work / ".git").mkdir(parents=True)
        (work / ".claude").mkdir()
        (home / ".claude").mkdir(parents=True)
        (work / ".claude" / "settings.json").write_text(dump(project))
        (work / ".claude" / "settings.local.json").write_text(dump(local))
        (work / ".mcp.json").write_text(dump(mcp))
        (home / ".claude" / "settings.json").write_text(dump(mine))
        warnings: list[str] = []
        setup = load_claude_setup(work, root / "inkhome", home, warnings)
        for hook in (*setup.user_hooks, *setup.project_hooks):
            assert math.isfinite(hook.timeout) and 0 < hook.timeout <= MAX_TIMEOUT, hook
            assert hook.command.strip()
        assert all(server.origin == "project" for server in setup.servers)
        assert all(isinstance(w, str) and w for w in warnings)


def test_a_nan_timeout_is_the_default_one(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    (work / ".claude").mkdir(parents=True)
    (work / ".git").mkdir()
    hook = {"type": "command", "command": "exit 2", "timeout": float("nan")}
    text = dump({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    assert "NaN" in text
    (work / ".claude" / "settings.json").write_text(text)
    setup = load_claude_setup(work, tmp_path / "inkhome", None, [])
    assert [h.timeout for h in setup.project_hooks] == [60.0]
