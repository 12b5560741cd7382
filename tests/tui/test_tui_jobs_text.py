"""A job's end as the TUI prints it: what its processes call themselves is theirs to choose (a job can
rename itself, or run as a program named with escape sequences), so all of it is printed sanitized."""

from __future__ import annotations

from ink.frontends.tui.jobs import ended_block
from ink.tools.jobs.types import JobEnd
from ink.tools.processes import Survivor

TITLE = "\x1b]0;owned\x07"  # would set the terminal's title


def test_a_survivors_command_reaches_the_screen_without_its_escape_sequences() -> None:
    survivor = Survivor(pid=42, command=f"sleep{TITLE} 99", reason="")
    block = ended_block(JobEnd("job-1", None, "SIGKILL", "killed", f"run{TITLE}", 1500, (survivor,)))
    assert "\x1b" not in block.text and "\x07" not in block.text
    assert "process 42 (sleep 99) could not be stopped" in block.text
    assert block.kind == "warning"
