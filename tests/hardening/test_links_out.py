"""A cloned repository's files that are links to the user's secrets (issue 29): ``AGENTS.md ->
../../.ssh/id_rsa`` put the user's private key in the system prompt, sent to the model's service, past
the sandbox that keeps ``~/.ssh`` from every command; an agent type or a command linked so would have
made it a prompt. A link that stays in the repository is read as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer, say
from tests.jsonl_client import provider_args

SECRET = "PRIVATE KEY MATERIAL 8d1f"


def test_instruction_agent_and_command_files_linked_out_of_the_repository_are_not_read(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET + "\n")
    repo = home / "src" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").symlink_to("../../.ssh/id_rsa")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("use tabs\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "CLAUDE.md").symlink_to("../docs/guide.md")  # stays in the repository: read
    for kind in ("agents", "commands"):
        (repo / ".ink" / kind).mkdir(parents=True)
        (repo / ".ink" / kind / "helper.md").symlink_to(home / ".ssh" / "id_rsa")
    fake_server.script(say("hi"))
    argv = [*INK, "-p", *provider_args(fake_server, "openai"), "hello"]
    done = subprocess.run(
        argv, env=ink_env(tmp_path), cwd=repo / "pkg", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == "hi\n", done.stderr
    [request] = fake_server.requests
    assert SECRET not in request.raw_body.decode()
    assert "(not read: a link to a file outside the repository)" in request.system
    assert "use tabs" in request.system
    assert done.stderr.count("leads out of the project; not read") == 2, done.stderr
