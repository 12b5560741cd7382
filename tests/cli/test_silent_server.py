"""``ink -p`` against a server that takes the request and never answers (issue 11, "Hangs"): the
configured first-byte deadline ends the run with one clear line and exit 1, after one request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, one_line_error, run_ink
from tests.fakeserver import FakeModelServer, Fault


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "fault", [Fault.hang(seconds=60), Fault.keep_alive(seconds=60)], ids=["hang", "keep-alive"]
)
def test_print_mode_gives_up_on_a_silent_server_once(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str, fault: Fault
) -> None:
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("first_byte_timeout = 0.5\nidle_timeout = 60\n")
    fake_server.script(fault, "never asked for")
    base = fake_server.base_url(protocol)
    args = ["-p", "--no-session", "--provider", protocol, "--base-url", base, "--api-key", "k", "hi"]
    done = run_ink(args, env, project, timeout=30)
    assert done.returncode == 1, done.stderr
    line = one_line_error(done.stderr)
    assert "first_byte_timeout = 0.5 s" in line and "not retried" in line
    (request,) = fake_server.wait_for_requests(1)  # under load the server may read it after ink gave up
    assert request.wait_finished() == "client_left"
    assert len(fake_server.requests) == 1 and fake_server.pending == 1
