"""A server's prompts as ``/mcp__SERVER__PROMPT ARGS`` and its resources as ``@SERVER:URI`` (issue 26),
through the whole app and in print mode; a server's lists changing mid-session reach the next request."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec

from ink.agent.events import Notice
from ink.config import Flags, Settings, load_settings
from ink.run.events import InputRestored, RunEnd, RunEvent
from ink.wiring import start_app
from ink.wiring.mcp_part import mcp_of
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.waiting import wait_until

HOSTILE = str(Path(__file__).with_name("hostile.py"))
TABLE = f"[mcp.servers.h]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([HOSTILE])}\n"


def configure(tmp_path: Path, fake: FakeModelServer) -> Settings:
    home = tmp_path / "inkhome"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(TABLE)
    env = {"INK_HOME": str(home), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    flags = Flags(provider="openai", base_url=fake.openai_base_url, api_key="k", permission_mode="yolo")
    return load_settings(msgspec.structs.replace(flags, no_session=True), env, tmp_path)


async def test_prompts_and_mentions_expand_as_the_input_is_taken(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.script(say("reviewed"), say("read it"))
    app = await start_app(configure(tmp_path, fake_server))
    seen: list[RunEvent] = []
    app.controller.subscribe(seen.append)
    try:
        part = mcp_of(app)
        assert part is not None and part.starting is not None
        await part.starting
        await app.controller.wait_idle()
        assert ("mcp__h__review", "Review a file") in part.prompt_commands()
        assert ("h:notes://plan", "the plan") in part.resource_mentions()
        assert part.names_prompt("/mcp__h__review x") and not part.names_prompt("/mcp__h__nope")
        app.controller.submit('/mcp__h__review src/a.py "and more"')
        await wait_until(lambda: [e for e in seen if isinstance(e, RunEnd)], 60, "the prompt's run")
        await app.controller.wait_idle()
        app.controller.submit("/mcp__h__review")  # its required argument is missing
        await wait_until(lambda: [e for e in seen if isinstance(e, InputRestored)], 60, "the hand-back")
        await app.controller.wait_idle()
        app.controller.submit("summarise @h:notes://today please, and @h:notes://gone too")
        await wait_until(
            lambda: len([e for e in seen if isinstance(e, RunEnd)]) >= 3, 60, "the mention's run"
        )
    finally:
        await app.aclose()
    assert fake_server.requests[0].user_texts()[-1] == 'review with {"path": "src/a.py and more"}'
    notices = [e.text for e in seen if isinstance(e, Notice)]
    assert any("missing path: /mcp__h__review PATH" in text for text in notices)
    last = fake_server.requests[1].user_texts()[-1]
    assert last.startswith("summarise @h:notes://today please")
    assert '<attached resource="h:notes://today">' in last and "the content of notes://today" in last
    assert len(fake_server.requests) == 2  # the refused prompt never reached the model


def test_print_mode_runs_a_prompt_command(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(TABLE)
    fake_server.script(say("hello back"))
    done = run_ink(
        ["-p", "--base-url", fake_server.openai_base_url, "/mcp__h__hello"], env, tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "hello back" in done.stdout
    assert fake_server.requests[0].user_texts()[-1] == "hello with {}"


async def test_a_tool_the_server_adds_is_offered_and_one_it_drops_is_not(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.script(call("mcp__h__grow", {}), say("grown"), call("mcp__h__extra", {}), say("done"))
    app = await start_app(configure(tmp_path, fake_server))
    seen: list[RunEvent] = []
    app.controller.subscribe(seen.append)
    try:
        app.controller.submit("grow")
        await wait_until(lambda: [e for e in seen if isinstance(e, RunEnd)], 60, "the first run")
        await wait_until(
            lambda: any(isinstance(e, Notice) and "changed its lists" in e.text for e in seen),
            60,
            "the change",
        )
        await app.controller.wait_idle()
        app.controller.submit("use it")
        await wait_until(lambda: len([e for e in seen if isinstance(e, RunEnd)]) >= 2, 60, "the second run")
    finally:
        await app.aclose()
    offered = lambda n: {t["function"]["name"] for t in fake_server.requests[n].body["tools"]}  # noqa: E731
    assert "mcp__h__extra" not in offered(0) and "mcp__h__extra" in offered(2)
    assert fake_server.requests[3].tool_results()[-1][1] == "extra ran"
