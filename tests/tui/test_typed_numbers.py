"""Numbers typed into commands, and read from the environment, by ``str.isdecimal``: ``isdigit`` also
takes "²" and "①", which ``int()`` refuses, so ``/agents ²`` or ``COLORFGBG=15;²`` raised ValueError
where they should have been answered as not a number."""

from __future__ import annotations

import pytest

from ink.frontends.tui.agentcontrol import agents_command
from ink.frontends.tui.subagents import SubAgentLines
from ink.frontends.tui.theme import colorfgbg_shade

NOT_NUMBERS = ["²", "①", "1²"]


class NoAgents:
    def abort(self, agent_id: str) -> bool:
        return False

    def steer(self, agent_id: str, text: str) -> bool:
        return False

    def pause(self, agent_id: str) -> bool | None:
        return None

    def resume(self, agent_id: str) -> bool | None:
        return None


@pytest.mark.parametrize("word", NOT_NUMBERS)
def test_colorfgbg_that_is_not_a_number_gives_no_shade(word: str) -> None:
    assert colorfgbg_shade(f"15;{word}") is None
    assert colorfgbg_shade("0;15") == "light"


@pytest.mark.parametrize("args", [*NOT_NUMBERS, *(f"stop {w}" for w in NOT_NUMBERS)])
def test_agents_with_a_word_that_is_not_a_number_is_answered(args: str) -> None:
    block = agents_command(SubAgentLines(lambda: 0.0, lambda name, _args: name), NoAgents(), args)
    assert block.kind == "error"
