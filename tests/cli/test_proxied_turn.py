"""``ink -p`` behind a proxy from the environment: the start-up probe knocks at the proxy (the service's
name resolves nowhere else) and the turn goes through it, by the one rule both share (ink.proxies)."""

from __future__ import annotations

from pathlib import Path

from tests.ai.wire_peers import CountingProxy, served_in_a_thread
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, say


def test_a_turn_goes_through_the_proxy_the_environment_names(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.script(say("through the proxy"))
    base_url = f"http://model.test:{fake_server.port}/v1"
    with served_in_a_thread(CountingProxy()) as proxy:
        env = ink_env(tmp_path, HTTP_PROXY=proxy.url)
        done = run_ink(["-p", "--no-session", "--base-url", base_url, "hello"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "through the proxy"
    assert proxy.forwarded == [f"{base_url}/chat/completions"]


def test_a_local_server_is_never_sent_to_the_proxy(fake_server: FakeModelServer, tmp_path: Path) -> None:
    """A proxy for everything (and a dead one): a model server on this machine is still reached direct,
    by the probe and by the turn. NO_PROXY itself is proven in tests/ai/test_http1.py."""
    fake_server.script(say("direct"))
    env = ink_env(tmp_path, HTTP_PROXY="http://127.0.0.1:9", ALL_PROXY="http://127.0.0.1:9")
    args = ["-p", "--no-session", "--base-url", fake_server.openai_base_url, "hi"]
    done = run_ink(args, env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "direct"


def test_a_socks_proxy_is_one_line_at_start_up(tmp_path: Path) -> None:
    env = ink_env(tmp_path, ALL_PROXY="socks5://me:secret@127.0.0.1:1080")
    done = run_ink(["-p", "--no-session", "--base-url", "http://model.test:8080/v1", "hi"], env, tmp_path)
    assert done.returncode == 2
    assert "socks5 proxy; ink speaks only to http:// and https:// proxies" in done.stderr
    assert "secret" not in done.stderr and "Traceback" not in done.stderr
