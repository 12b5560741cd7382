"""``ink mcp list`` / ``ink mcp approve``, RPC ``get_mcp`` and a project server awaiting approval."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.mcp_tools.servers import SERVER
from tests.rpc.client import RpcClient


def server_table(name: str, mode: str = "stdio") -> str:
    return (
        f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([SERVER, mode])}\nstartup_timeout = 90\n"
    )


def test_ink_mcp_list_shows_each_server_its_state_and_tools(tmp_path: Path) -> None:
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        server_table("t") + '[mcp.servers.off]\ncommand = "nothing"\nenabled = false\n'
    )
    project = tmp_path / "proj"
    (project / ".ink").mkdir(parents=True)
    (project / ".ink" / "config.toml").write_text(server_table("repo"))
    done = run_ink(["mcp", "list"], env, project, timeout=180)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("t  ready  stdio  9 tools")
    assert "  mcp__t__echo  Say the text back.  (read-only, the server says)\n" in done.stdout
    assert "  mcp__t__wipe  Pretend to delete something (destructive).\n" in done.stdout
    assert any(line.startswith("off  disabled  stdio  0 tools") for line in lines)
    repo = next(line for line in lines if line.startswith("repo "))
    assert "needs_approval" in repo and "ink mcp approve repo" in repo
    assert f"  runs: {sys.executable} {SERVER} stdio" in lines  # what approving it would pin (R40)

    approved = run_ink(["mcp", "approve", "repo"], env, project)
    assert approved.returncode == 0 and "approved repo" in approved.stdout
    again = run_ink(["mcp", "list"], env, project, timeout=180)
    assert any(line.startswith("repo  ready  stdio  9 tools") for line in again.stdout.splitlines())

    unknown = run_ink(["mcp", "approve", "nope"], env, project)
    assert unknown.returncode == 2 and "no MCP server named 'nope'" in unknown.stderr


def hostile_env(tmp_path: Path) -> dict[str, str]:
    """ink's environment with the hostile test server (hostile.py) configured as ``h``."""
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    hostile = str(Path(SERVER).with_name("hostile.py"))
    table = f"[mcp.servers.h]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([hostile])}\n"
    (home / "config.toml").write_text(table)
    return env


def test_ink_mcp_help_and_a_list_with_what_was_left_out(tmp_path: Path) -> None:
    env = hostile_env(tmp_path)
    helped = run_ink(["mcp", "--help"], env, tmp_path)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ink mcp list | ink mcp approve NAME")
    assert "call_timeout" in helped.stdout and "--permission-mode" not in helped.stdout  # not the main help
    done = run_ink(["mcp", "list"], env, tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("h  ready  stdio  12 tools")
    assert "  prompts: /mcp__h__review /mcp__h__hello" in lines
    assert "  resources: 2 (mention one as @h:URI)" in lines
    task_only = "  note: tool 'later' left out: it runs only as an MCP task, which ink does not support yet"
    assert task_only in lines
    assert any("U+202E" in line for line in lines) and "\u202e" not in done.stdout


def test_rpc_get_mcp_reports_the_servers(tmp_path: Path, fake_server: FakeModelServer) -> None:
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(server_table("t") + server_table("hang", "hang").replace("= 90", "= 1"))
    with RpcClient.start(
        ["--base-url", fake_server.openai_base_url, "--no-session"], env, tmp_path
    ) as client:
        notice = client.wait_event("notice", timeout=180)  # the servers' start settled
        data = client.ok("get_mcp")
    servers = {s["name"]: s for s in data["servers"]}
    assert servers["t"]["state"] == "ready" and "mcp__t__echo" in servers["t"]["tools"]
    assert servers["hang"]["state"] == "failed" and "did not start within 1 s" in servers["hang"]["error"]
    assert (
        notice["level"] == "warning" and "t: 9 tools" in notice["text"] and "hang: failed" in notice["text"]
    )


def test_rpc_puts_a_servers_question_to_the_client_and_returns_its_answer(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Issue 26: elicitation/create -> elicitation_request {id, server, message, schema}, answered by
    elicitation_response {id, action, content?}; content that does not fit is refused and the question
    stays open."""
    env = hostile_env(tmp_path)
    fake_server.script(call("mcp__h__ask", {}), say("thanks"), call("mcp__h__ask", {}), say("stopped"))
    flags = ["--base-url", fake_server.openai_base_url, "--no-session", "--permission-mode", "yolo"]
    with RpcClient.start(flags, env, tmp_path) as client:
        client.wait_event("notice", timeout=120)
        client.ok("prompt", text="ask me")
        asked = client.wait_event("elicitation_request", timeout=60)
        assert (asked["server"], asked["message"]) == ("h", "Which color?")
        assert asked["schema"]["required"] == ["color"]
        assert client.ok("get_state")["elicitationRequests"][0]["id"] == asked["id"]
        client.send_json(
            {"type": "elicitation_response", "id": asked["id"], "action": "accept", "content": {}}
        )
        refused = client.wait_response(asked["id"])
        assert refused["ok"] is False and "'color' is required" in refused["error"]
        answer = {"type": "elicitation_response", "id": asked["id"], "action": "accept"}
        client.send_json(answer | {"content": {"color": "blue"}})
        client.wait_event("elicitation_resolved", id=asked["id"], action="accept")
        answered = [r for r in client.responses() if r.get("id") == asked["id"]]
        assert [r["ok"] for r in answered] == [False, True]
        client.wait_event("run_end", timeout=60)
        at = client.mark()
        client.ok("prompt", text="ask again")
        again = client.wait_event("elicitation_request", after=at, timeout=60)
        client.ok("abort")  # the question goes with the run it belonged to
        client.wait_event("elicitation_resolved", id=again["id"], action="cancel", timeout=60)
        assert client.wait_event("run_end", after=at, timeout=60)["stopReason"] == "aborted"
        assert client.ok("get_state")["elicitationRequests"] == []
    result = fake_server.requests[1].tool_results()[-1][1]
    assert json.loads(result) == {"action": "accept", "content": {"color": "blue"}}


def test_a_tool_a_server_adds_mid_run_is_offered_at_the_next_request_and_runs(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Issue 26: after tools/list_changed the next model request sees the new tool. A run's tools were
    read once at its start, so a tool added by a call of the run was offered only from the next run, and
    calling it in the same run was 'Unknown tool'."""
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(server_table("t"))
    fake_server.script(call("mcp__t__grow", {}), call("mcp__t__extra", {}), say("done"))
    flags = ["-p", "--base-url", fake_server.openai_base_url, "--no-session", "--permission-mode", "yolo"]
    done = run_ink([*flags, "grow and use it"], env, tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    offered = [[t["function"]["name"] for t in r.body["tools"]] for r in fake_server.requests]
    assert "mcp__t__extra" not in offered[0] and "mcp__t__extra" in offered[1]
    results = dict(fake_server.requests[-1].tool_results())
    assert any(text.startswith("extra ran") for text in results.values()), results
