"""``ink mcp list`` / ``ink mcp approve``, RPC ``get_mcp`` and a project server awaiting approval."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer
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
    assert lines[0].startswith("t  ready  stdio  7 tools")
    assert any(line.startswith("  mcp__t__echo  Say the text back.") for line in lines)
    assert any(line.startswith("off  disabled  stdio  0 tools") for line in lines)
    repo = next(line for line in lines if line.startswith("repo "))
    assert "needs_approval" in repo and "ink mcp approve repo" in repo

    approved = run_ink(["mcp", "approve", "repo"], env, project)
    assert approved.returncode == 0 and "approved repo" in approved.stdout
    again = run_ink(["mcp", "list"], env, project, timeout=180)
    assert any(line.startswith("repo  ready  stdio  7 tools") for line in again.stdout.splitlines())

    unknown = run_ink(["mcp", "approve", "nope"], env, project)
    assert unknown.returncode == 2 and "no MCP server named 'nope'" in unknown.stderr


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
        notice["level"] == "warning" and "t: 7 tools" in notice["text"] and "hang: failed" in notice["text"]
    )
