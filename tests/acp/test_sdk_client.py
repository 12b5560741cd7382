"""``ink acp`` driven by the official ACP Python SDK's client (``agent-client-protocol``): every answer
and update is parsed by the SDK's own pydantic schema, so what a real client would drop or refuse
fails here. Covers what issue 27 found invisible to real clients: the model and the permission mode as
config options and session modes, and a session loaded by an id prefix."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import schema

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, call, say
from tests.jsonl_client import provider_args

WAIT = 60.0  # generous: a loaded machine


class Editor(acp.Client):
    """The editor's side: keeps every session update (already schema-parsed by the SDK) and answers
    permission questions with ``answer``."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()
        self.answer = "allow"

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        outcome = schema.AllowedOutcome(outcome="selected", option_id=self.answer)
        return schema.RequestPermissionResponse(outcome=outcome)

    async def wait_for(self, found: Callable[[str, Any], bool]) -> tuple[str, Any]:
        async with asyncio.timeout(WAIT):
            while True:
                for session_id, update in self.updates:
                    if found(session_id, update):
                        return session_id, update
                self.changed.clear()
                await self.changed.wait()


@asynccontextmanager
async def sdk_ink(
    server: FakeModelServer, project: Path, tmp_path: Path, *flags: str
) -> AsyncIterator[tuple[acp.ClientSideConnection, Editor]]:
    editor = Editor()
    args = ["-m", "ink", "acp", *provider_args(server, "openai", *flags)]
    async with acp.spawn_agent_process(editor, sys.executable, *args, env=ink_env(tmp_path), cwd=project) as (
        connection,
        process,
    ):
        await asyncio.wait_for(connection.initialize(protocol_version=1), WAIT)
        yield connection, editor
        process.stdin.close()  # type: ignore[union-attr]  # the end of input: ink settles and exits 0
        assert await asyncio.wait_for(process.wait(), WAIT) == 0


def _option(options: list[Any] | None, option_id: str) -> Any:
    assert options is not None, "configOptions missing from the answer"
    return next(o.root if hasattr(o, "root") else o for o in options if _id(o) == option_id)


def _id(option: Any) -> str:
    return str((option.root if hasattr(option, "root") else option).id)


async def test_config_options_offer_the_model_and_the_permission_mode(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("one"), say("two"))
    async with sdk_ink(fake_server, project, tmp_path) as (ink, _editor):
        created = await ink.new_session(cwd=str(project))
        model = _option(created.config_options, "model")
        assert model.category == "model" and model.current_value == "gpt-4.1"
        assert "gpt-4.1-mini" in [o.value for o in model.options]
        mode = _option(created.config_options, "mode")
        assert mode.category == "mode" and mode.current_value == "ask"
        assert [o.value for o in mode.options] == ["ask", "accept-edits", "yolo"]
        assert created.modes is not None and created.modes.current_mode_id == "ask"
        assert [m.id for m in created.modes.available_modes] == ["ask", "accept-edits", "yolo"]

        first = await ink.prompt(session_id=created.session_id, prompt=[acp.text_block("hi")])
        assert first.stop_reason == "end_turn"
        changed = await ink.set_config_option(
            config_id="model", session_id=created.session_id, value="gpt-4.1-mini"
        )
        assert _option(changed.config_options, "model").current_value == "gpt-4.1-mini"
        again = await ink.prompt(session_id=created.session_id, prompt=[acp.text_block("again")])
        assert again.stop_reason == "end_turn"
    assert [r.body["model"] for r in fake_server.requests] == ["gpt-4.1", "gpt-4.1-mini"]


async def test_a_mode_set_through_either_view_is_announced_through_the_other_and_judges_the_next_call(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo ran > ran.txt"}, id="c1"), say("done"))
    async with sdk_ink(fake_server, project, tmp_path) as (ink, editor):
        session = (await ink.new_session(cwd=str(project))).session_id
        await ink.set_session_mode(session_id=session, mode_id="yolo")
        _, update = await editor.wait_for(lambda s, u: isinstance(u, schema.ConfigOptionUpdate))
        assert _option(update.config_options, "mode").current_value == "yolo"
        editor.answer = "reject"  # yolo asks nothing: an answer would refuse the call
        done = await ink.prompt(session_id=session, prompt=[acp.text_block("run it")])
        assert done.stop_reason == "end_turn"
        assert (project / "ran.txt").read_text() == "ran\n"

        changed = await ink.set_config_option(config_id="mode", session_id=session, value="ask")
        assert _option(changed.config_options, "mode").current_value == "ask"
        _, current = await editor.wait_for(lambda s, u: isinstance(u, schema.CurrentModeUpdate))
        assert current.current_mode_id == "ask"


async def test_unknown_options_modes_and_values_are_invalid_params_and_change_nothing(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    refusals = [("colour", "red"), ("model", "no-such-model"), ("mode", "lax"), ("mode", True)]
    async with sdk_ink(fake_server, project, tmp_path) as (ink, _editor):
        session = (await ink.new_session(cwd=str(project))).session_id
        for config_id, value in refusals:
            with pytest.raises(acp.RequestError) as refused:
                await ink.set_config_option(config_id=config_id, session_id=session, value=value)
            assert refused.value.code == -32602
        with pytest.raises(acp.RequestError) as refused:
            await ink.set_session_mode(session_id=session, mode_id="plan")
        assert refused.value.code == -32602
        assert "ask, accept-edits, yolo" in str(refused.value)
        loaded = await ink.load_session(cwd=str(project), session_id=session)
        assert _option(loaded.config_options, "model").current_value == "gpt-4.1"
        assert loaded.modes is not None and loaded.modes.current_mode_id == "ask"


async def test_a_session_loaded_by_an_id_prefix_keeps_that_id(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("first"), say("second"))
    async with sdk_ink(fake_server, project, tmp_path) as (ink, _editor):
        session = (await ink.new_session(cwd=str(project))).session_id
        first = await ink.prompt(session_id=session, prompt=[acp.text_block("one")])
        assert first.stop_reason == "end_turn"
    prefix = session[:8]
    async with sdk_ink(fake_server, project, tmp_path) as (ink, editor):
        loaded = await ink.load_session(cwd=str(project), session_id=prefix)
        assert _option(loaded.config_options, "model").current_value == "gpt-4.1"
        replayed = {s for s, _ in editor.updates}
        assert editor.updates and replayed == {prefix}, "replayed under the id it was loaded by"
        mark = len(editor.updates)
        answer = await ink.prompt(session_id=prefix, prompt=[acp.text_block("two")])
        assert answer.stop_reason == "end_turn"
        assert {s for s, _ in editor.updates[mark:]} == {prefix}
        by_full_id = await ink.set_session_mode(session_id=session, mode_id="accept-edits")
        assert by_full_id is not None
    assert fake_server.user_texts()[-1] == ["one", "two"]


PLAN_1 = {"entries": [{"content": "read", "status": "in_progress"}, {"content": "fix", "status": "pending"}]}
PLAN_2 = {
    "entries": [{"content": "read", "status": "completed"}, {"content": "fix", "status": "in_progress"}],
    "explanation": "reading done",
}


async def test_plans_reach_the_editor_as_schema_plan_updates_and_come_back_on_load(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("plan", PLAN_1, id="p1"), call("plan", PLAN_2, id="p2"), say("planned"))
    async with sdk_ink(fake_server, project, tmp_path) as (ink, editor):
        session = (await ink.new_session(cwd=str(project))).session_id
        done = await ink.prompt(session_id=session, prompt=[acp.text_block("a task of steps")])
        assert done.stop_reason == "end_turn"
        plans = [u for _, u in editor.updates if isinstance(u, schema.AgentPlanUpdate)]
        assert [[(e.content, e.status, e.priority) for e in p.entries] for p in plans] == [
            [("read", "in_progress", "medium"), ("fix", "pending", "medium")],
            [("read", "completed", "medium"), ("fix", "in_progress", "medium")],
        ]
    async with sdk_ink(fake_server, project, tmp_path) as (ink, editor):
        await ink.load_session(cwd=str(project), session_id=session)
        _, replayed = await editor.wait_for(lambda s, u: isinstance(u, schema.AgentPlanUpdate))
        assert [(e.content, e.status) for e in replayed.entries] == [
            ("read", "completed"),
            ("fix", "in_progress"),
        ]
