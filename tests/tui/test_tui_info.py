"""/cost, /status, /config, /permissions and /init in the real TUI (issue 30, discoverability): what a
session spent per model (sub-agents included, unknown prices said so), what it runs on, where each
setting and each permission rule comes from (a remembered one removed from its file), and the model
writing AGENTS.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal


def shown(ink: InkTerminal) -> str:
    return "\n".join(ink.scrollback())


def test_cost_counts_each_model_and_the_sub_agents_and_says_an_unknown_price(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    def answer(request: Any) -> Reply:
        if not request.system.startswith("You are ink"):  # the sub-agent
            return say("Found it.")
        if not request.tool_results():
            task = {"description": "look", "prompt": "look around", "agent": "general"}
            return Reply([tool_call("task", task, id="t1")])
        return say("Done looking.")

    fake_server.responder = answer
    ink = start_ink()
    ink.type_line("look around")
    ink.wait_text("Done looking.")
    ink.wait_text("○ idle")
    ink.type_line("/cost")
    ink.wait_printed("Cost of this session (model calls since ink started, per model):")
    ink.wait_for(lambda: "of which sub-agents" in shown(ink), what="the sub-agents' share")
    text = shown(ink)
    assert "gpt-4.1  3 calls · 30 in · 15 out · $" in text  # two of the main agent's, one sub-agent's
    assert "of which sub-agents  1 call · 10 in · 5 out · $" in text
    assert "total" in text and "price unknown" not in text
    ink.type_line("/model no-such-priced-model")
    ink.wait_text("model: no-such-priced-model")
    fake_server.responder = None
    fake_server.script(say("unpriced"))
    ink.type_line("again")
    ink.wait_text("unpriced")
    ink.wait_text("○ idle")
    ink.type_line("/cost")
    ink.wait_for(
        lambda: "no-such-priced-model  1 call · 10 in · 5 out · price unknown" in shown(ink), what=""
    )
    ink.wait_for(lambda: "(some calls' prices are unknown)" in shown(ink), what="a lower bound, not $0")


def test_status_names_model_modes_session_and_context(start_ink: StartInk) -> None:
    ink = start_ink()
    ink.type_line("/status")
    ink.wait_printed("Status:")
    ink.wait_for(lambda: "context" in shown(ink) and "tokens" in shown(ink), what="the context use")
    text = shown(ink)
    assert "model            gpt-4.1 (openai, http://127.0.0.1:" in text
    assert "permission mode  yolo" in text
    assert "sandbox" in text and "MCP servers      none configured" in text
    assert ".jsonl" in text  # the session's file
    assert "compacted by itself above" in text


def test_config_says_where_each_setting_came_from(start_ink: StartInk, tmp_path: Path) -> None:
    ink = start_ink(config="max_iterations = 50\n")
    ink.type_line("/config")
    ink.wait_printed("Files read:")
    text = shown(ink)
    assert "max_iterations      50  ←" in text and "toml:1" in text  # the file's path may wrap
    assert "permission_mode     yolo  ← --permission-mode" in text
    assert "api_key             set (hidden)  ← --api-key" in text
    assert "steering_mode       all  ← default" in text
    assert "k" not in [word for line in text.splitlines() for word in line.split()]  # the key itself


def test_permissions_lists_each_rule_where_it_lives_and_removes_a_remembered_one(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path
) -> None:
    config = '[permissions]\nallow = ["bash(git status)"]\ndeny = ["bash(git push *)"]\n'
    fake_server.script(Reply([tool_call("bash", {"command": "pytest -q nothing"}, id="c1")]), say("Ran."))
    ink = start_ink("--allow", "read", config=config, permission_mode="ask")
    ink.type_line("run the tests")
    ink.answer("a")  # always: remembered for this project
    ink.wait_text("Ran.")
    ink.wait_text("○ idle")
    [remembered] = list((tmp_path / "inkhome").rglob("permissions.toml"))
    assert "bash(pytest *)" in remembered.read_text()
    ink.type_line("/permissions")
    ink.wait_printed("Permission mode: ask (shift+tab switches it). Rules, deny first (a deny always wins):")
    ink.wait_for(lambda: "4. allow bash(pytest *)" in shown(ink), what="the remembered rule")
    text = shown(ink)
    assert "1. deny bash(git push *)" in text and "user config" in text
    assert "2. allow read" in text and "flag --allow" in text
    assert "3. allow bash(git status)" in text
    assert "answered 'always' in this session" in text
    ink.type_line("/permissions remove 1")
    ink.wait_text("deny bash(git push *) stays")
    ink.type_line("/permissions remove 4")
    ink.wait_text("allow bash(pytest *): removed from")
    assert "bash(pytest" not in remembered.read_text()
    ink.type_line("/permissions remove 3")
    ink.wait_printed(
        "allow bash(git status): not applied for the rest of this session; it is still in", whole_line=False
    )


def test_init_asks_the_model_to_write_agents_md_and_to_improve_one_that_exists(
    fake_server: FakeModelServer, start_ink: StartInk, project: Path
) -> None:
    fake_server.script(say("Wrote it."), say("Improved it."))
    ink = start_ink()
    ink.type_line("/init")
    ink.wait_text("Wrote it.")
    ink.wait_printed("› /init")  # as typed, not the prompt
    [prompt] = fake_server.requests[0].user_texts()
    assert "write AGENTS.md at its root" in prompt and "exact commands" in prompt
    (project / "AGENTS.md").write_text("# notes\n")
    ink.type_line("/init")
    ink.wait_text("Improved it.")
    assert "improve the AGENTS.md at its root: read it first" in fake_server.requests[1].user_texts()[-1]
