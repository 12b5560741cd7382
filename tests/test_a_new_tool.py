"""Adding a tool is one file (issue 16): two tools defined here alone, registered into a real app, are
judged by the permission policy, shown by the TUI's renderer and by ACP as they describe themselves.

``peek`` reads (kind ``read``): it runs without a question in ``ask`` mode. ``stamp`` changes a file
(kind ``edit``): it asks, its question shows the change it proposes, and its result's ``FileDiff`` is
shown as a diff. Nothing outside this file knows their names. Run as a script, this file is ``ink``
with the two tools added (how the real ``ink acp`` below gets them).
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.tool import CallDescription, Tool, ToolCallContext, ToolKind, ToolOutput
from ink.ai.details import FileDiff
from ink.ai.provider import ToolSpec
from ink.config import Settings
from ink.sandbox import Sandbox
from ink.tools.jobs import JobRegistry
from ink.tools.processes import ProcessRegistry
from ink.wiring.pieces import build_tools

REPO = Path(__file__).resolve().parents[1]
PATH_ONLY = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class Peek:
    """Shows a file's first line."""

    kind: ToolKind = "read"
    concurrency_safe = True

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec("peek", "Show the first line of a file.", PATH_ONLY)

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        path = str(args.get("path", "?"))
        return CallDescription(f"peek at {path}", (self.root / path,))

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        return ToolOutput((self.root / str(args["path"])).read_text().split("\n")[0])


class Stamp:
    """Appends "stamped" to a file."""

    kind: ToolKind = "edit"
    concurrency_safe = False

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec("stamp", "Append the line 'stamped' to a file.", PATH_ONLY)

    def change(self, path: str) -> FileDiff:
        before = (self.root / path).read_text()
        after = before + "stamped\n"
        lines = difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}"
        )
        return FileDiff(str(self.root / path), before, after, "".join(lines))

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        path = str(args.get("path", "?"))
        return CallDescription(f"stamp {path}", (self.root / path,), preview=(self.change(path),))

    async def run(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        change = self.change(str(args["path"]))
        assert change.after is not None
        (self.root / str(args["path"])).write_text(change.after)
        return ToolOutput(f"Stamped {args['path']}.", details=(change,))  # the model reads only this


def with_new_tools(
    settings: Settings, processes: ProcessRegistry, sandbox: Sandbox, *, jobs: JobRegistry | None = None
) -> list[Tool]:
    """ink's tools with the two added: the one place a new tool is registered (``build_app(tools=)``)."""
    return [*build_tools(settings, processes, sandbox, jobs=jobs), Peek(settings.cwd), Stamp(settings.cwd)]


if __name__ == "__main__":  # ink itself, with the two tools
    import ink.wiring.build
    from ink.cli import main

    setattr(ink.wiring.build, "build_tools", with_new_tools)  # noqa: B010
    raise SystemExit(main())

import subprocess  # noqa: E402 - the test's side, not needed by the script above

from ink.config import Flags, load_settings  # noqa: E402
from ink.config.rules import parse_rule  # noqa: E402
from ink.frontends.tui.questionview import Asking, QuestionPanel  # noqa: E402
from ink.frontends.tui.view import EventView  # noqa: E402
from ink.permissions import PermissionPolicy, RuleSet  # noqa: E402
from ink.run.events import PermissionRequest, RunEnd, RunEvent  # noqa: E402
from tests.acp.client import AcpClient  # noqa: E402
from tests.acp.conftest import text_prompt  # noqa: E402
from tests.cli.inkproc import ink_env  # noqa: E402
from tests.fakeserver import FakeModelServer, Reply, call, say, tool_call  # noqa: E402
from tests.jsonl_client import provider_args  # noqa: E402
from tests.waiting import wait_until  # noqa: E402

NOTES = "first line\nsecond line\n"


def test_the_policy_judges_a_new_tool_by_its_kind(tmp_path: Path) -> None:
    tools: dict[str, Tool] = {"peek": Peek(tmp_path), "stamp": Stamp(tmp_path)}
    (tmp_path / "notes.txt").write_text(NOTES)

    def verdict(name: str, mode: Any = "ask", deny: tuple[str, ...] = ()) -> str:
        rules = RuleSet([parse_rule("deny", text, "test") for text in deny])
        return PermissionPolicy(mode, rules, tmp_path, tools.get).check(name, {"path": "notes.txt"}).kind

    assert verdict("peek") == "allow"  # a read runs in the default mode
    assert verdict("stamp") == "ask"  # a file change asks
    assert verdict("stamp", "accept-edits") == "allow"
    assert (
        verdict("peek", deny=("read(*.txt)",)) == verdict("stamp", "yolo", deny=("edit(notes.*)",)) == "deny"
    )


async def test_a_real_app_runs_them_and_the_tui_shows_them_as_they_describe_themselves(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    from ink.wiring import build_app

    (tmp_path / "notes.txt").write_text(NOTES)
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    flags = Flags(provider="openai", base_url=fake_server.base_url("openai"), api_key="k", no_session=True)
    settings = load_settings(flags, env, tmp_path)
    assert settings.permission_mode == "ask"
    fake_server.script(
        call("peek", {"path": "notes.txt"}, id="p1"),
        call("stamp", {"path": "notes.txt"}, id="s1"),
        say("done"),
    )
    app = build_app(settings, tools=with_new_tools)
    view = EventView(tools=app.tools.find)
    seen: list[RunEvent] = []
    questions: list[str] = []

    def on_event(event: RunEvent) -> None:
        seen.append(event)
        view.on_event(event)
        if isinstance(event, PermissionRequest):  # what the question panel draws, then "allow"
            drawn, _scroll = QuestionPanel().draw(Asking(event, view.described(event)), 100, 20)
            questions.append("".join(text for _style, text in drawn))
            app.controller.permissions.answer(event.request_id, "allow")

    app.controller.subscribe(on_event)
    try:
        app.controller.submit("peek, then stamp")
        await wait_until(lambda: any(isinstance(e, RunEnd) for e in seen), 60, "the run to end")
    finally:
        await app.aclose()
    assert [e.name for e in seen if isinstance(e, PermissionRequest)] == ["stamp"]  # peek was not asked
    [question] = questions
    assert question.startswith("allow stamp?") and "+stamped" in question and " second line" in question
    printed = [(b.kind, b.text) for b in view.take_printed()]
    assert any(kind == "tool" and text.startswith("✓ peek at notes.txt") for kind, text in printed)
    assert any(kind == "tool" and text.startswith("✓ stamp notes.txt") for kind, text in printed)
    diffs = [text for kind, text in printed if kind == "diff"]
    assert len(diffs) == 1 and "+stamped" in diffs[0] and "@@" in diffs[0]  # from the result's details
    assert (tmp_path / "notes.txt").read_text() == NOTES + "stamped\n"
    results = [text for _id, text in fake_server.requests[2].tool_results()]
    assert results == ["first line", "Stamped notes.txt."]  # the details never reach the model


def test_acp_shows_them_with_kind_title_locations_and_diffs(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.txt").write_text(NOTES)
    fake_server.script(
        Reply(
            [
                tool_call("peek", {"path": "notes.txt"}, id="p1"),
                tool_call("stamp", {"path": "notes.txt"}, id="s1"),
            ]
        ),
        say("done"),
    )
    env = ink_env(tmp_path, PYTHONPATH=os.pathsep.join([str(REPO), *sys.path[1:]]))
    args = [sys.executable, __file__, "acp", *provider_args(fake_server, "openai")]
    pipe = subprocess.PIPE
    process = subprocess.Popen(args, env=env, cwd=project, stdin=pipe, stdout=pipe, stderr=pipe)
    with AcpClient(process) as ink:
        ink.ok("initialize", protocolVersion=1, clientCapabilities={})
        session = ink.ok("session/new", cwd=str(project), mcpServers=[])["sessionId"]
        prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("peek, then stamp"))
        asked = ink.wait_request("session/request_permission")
        ink.answer(asked["id"], {"outcome": {"outcome": "selected", "optionId": "allow"}})
        assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
        peek = ink.wait_update("tool_call", toolCallId="p1")
        stamped = ink.wait_update("tool_call_update", toolCallId="s1", status="completed")
    asked_call = asked["params"]["toolCall"]
    assert (asked_call["toolCallId"], asked_call["kind"], asked_call["title"]) == (
        "s1",
        "edit",
        "stamp notes.txt",
    )
    diff = {
        "type": "diff",
        "path": str(project / "notes.txt"),
        "oldText": NOTES,
        "newText": NOTES + "stamped\n",
    }
    why = {
        "type": "content",
        "content": {"type": "text", "text": "file changes need permission in 'ask' mode"},
    }
    assert asked_call["content"] == [diff, why]  # the change it proposes, then why ink asks
    assert (peek["kind"], peek["title"]) == ("read", "peek at notes.txt")
    assert peek["locations"] == [{"path": str(project / "notes.txt")}]
    assert stamped["content"][0] == diff  # the change it made (its details), then its text
    assert stamped["content"][1]["content"]["text"] == "Stamped notes.txt."
