"""Bounded depth everywhere (issue 11): deep config and deep protocol lines get clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, one_line_error
from tests.fakeserver import FakeModelServer, say
from tests.hardening.inkbytes import print_args, run_bytes
from tests.rpc.conftest import StartRpc


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 5000 + "1" + "}" * 5000])
def test_a_config_nested_5000_deep_is_a_config_error_not_an_internal_error(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, value: str
) -> None:
    env = ink_env(tmp_path)
    config = Path(env["INK_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"model = 'm'\nx = {value}\n")
    done = run_bytes([*print_args(fake_server), "hi"], env, project)
    assert done.returncode == 2
    error = one_line_error(done.stderr.decode())
    assert f"config error: {config}: arrays or inline tables nest too deeply" in error
    assert fake_server.requests == []


def test_an_rpc_line_nested_100000_deep_is_refused_and_the_next_one_served(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    fake_server.script(say("fine"))
    ink = start_rpc()
    ink.send_raw(b'{"type":"prompt","id":1,"text":' + b"[" * 100_000 + b"\n")
    assert ink.wait_line(lambda x: x.get("type") == "response")[1]["ok"] is False
    ink.ok("prompt", text="hello")
    ink.wait_event("run_end", stopReason="completed")
