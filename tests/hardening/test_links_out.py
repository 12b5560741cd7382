"""A cloned repository's files that are links to the user's secrets (issue 29): ``AGENTS.md ->
../../.ssh/id_rsa`` put the user's private key in the system prompt, sent to the model's service, past
the sandbox that keeps ``~/.ssh`` from every command; an agent type or a command linked so would have
made it a prompt. A link that stays in the repository is read as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ink.frontends.tui.mentions import attach
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


def test_a_mention_of_a_workspace_file_that_links_out_is_not_attached(tmp_path: Path) -> None:
    """``@README.md`` where the repository's README.md is a link to ``~/.ssh/id_rsa`` would have sent
    the key with the prompt; a path typed out of the workspace is what the user asked for."""
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET + "\n")
    work = tmp_path / "home" / "repo"
    (work / "docs").mkdir(parents=True)
    (work / "README.md").symlink_to("../.ssh/id_rsa")
    (work / "docs" / "notes.md").write_text("notes\n")
    (work / "NOTES.md").symlink_to("docs/notes.md")
    attached = attach("see @README.md and @NOTES.md", work)
    assert SECRET not in attached.prompt and attached.paths == ("NOTES.md",)
    assert attached.problems == (
        f"@README.md: a link out of the workspace, to {secret}; not attached (@ that path)",
    )
    explicit = attach(f"see @{secret}", work)  # typed by the user: sent
    assert SECRET in explicit.prompt
