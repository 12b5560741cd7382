"""Scripted failures: HTTP errors in each protocol's format, cuts, malformed chunks, gates, exhaustion."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, malformed, text
from tests.fakeserver_test.client import anthropic_body, openai_body, post, sse_events

BODIES = {"openai": openai_body(), "anthropic": anthropic_body()}
PATHS = {"openai": "/chat/completions", "anthropic": "/v1/messages"}


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_http_fault_with_retry_after(fake_server: FakeModelServer, protocol: str) -> None:
    fake_server.script(Fault.http(429, "slow down", retry_after=0.25))
    response = post(fake_server, protocol, BODIES[protocol])
    assert response.status_code == 429
    assert response.headers["retry-after"] == "0.25"
    data = response.json()
    if protocol == "openai":
        assert data["error"]["message"] == "slow down"
    else:
        assert data["type"] == "error"
        assert data["error"] == {"type": "rate_limit_error", "message": "slow down"}
    assert fake_server.requests[0].wait_finished() == "error"


def test_anthropic_overloaded_uses_its_error_type(fake_server: FakeModelServer) -> None:
    fake_server.script(Fault.http(529))
    response = post(fake_server, "anthropic", BODIES["anthropic"])
    assert response.status_code == 529
    assert response.json()["error"]["type"] == "overloaded_error"


def test_context_overflow_words_per_protocol(fake_server: FakeModelServer) -> None:
    fake_server.script(Fault.context_overflow(), Fault.context_overflow())
    openai = post(fake_server, "openai", BODIES["openai"]).json()
    assert openai["error"]["code"] == "context_length_exceeded"
    anthropic = post(fake_server, "anthropic", BODIES["anthropic"]).json()
    assert anthropic["error"]["message"].startswith("prompt is too long")


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_disconnect_after_chunks(fake_server: FakeModelServer, protocol: str) -> None:
    fake_server.script(Reply([text("a"), text("b"), text("c")], fault=Fault.disconnect_after(2)))
    with pytest.raises(httpx.RemoteProtocolError):
        post(fake_server, protocol, BODIES[protocol])
    request = fake_server.requests[0]
    assert request.wait_finished() == "disconnected"
    assert request.chunks_sent == 2


def test_malformed_chunk_is_written_in_place(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply([text("a"), malformed("{not json"), text("b")]))
    response = post(fake_server, "openai", BODIES["openai"])
    datas = [d for _, d in sse_events(response)]
    assert "{not json" in datas
    fake_server.script(Reply([text("a")], fault=Fault.malformed_after(1, raw='{"choices": 7}')))
    datas = [d for _, d in sse_events(post(fake_server, "openai", BODIES["openai"]))]
    assert datas[1] == '{"choices": 7}'


def test_script_exhausted_is_a_clear_500(fake_server: FakeModelServer) -> None:
    response = post(fake_server, "openai", BODIES["openai"])
    assert response.status_code == 500
    assert "script exhausted" in response.json()["error"]["message"]


def test_responder_answers_when_script_is_empty(fake_server: FakeModelServer) -> None:
    fake_server.script("scripted")
    fake_server.responder = lambda request: f"dynamic {request.index}"
    texts = []
    for _ in range(3):
        events = sse_events(post(fake_server, "anthropic", BODIES["anthropic"]))
        deltas = [json.loads(d)["delta"] for _, d in events if '"text_delta"' in d]
        texts.append("".join(d["text"] for d in deltas))
    assert texts == ["scripted", "dynamic 1", "dynamic 2"]


def test_a_failing_responder_shows_as_500(fake_server: FakeModelServer) -> None:
    def responder(request: object) -> Reply:
        raise RuntimeError("bug in test")

    fake_server.responder = responder
    response = post(fake_server, "anthropic", BODIES["anthropic"])
    assert response.status_code == 500
    assert "bug in test" in response.json()["error"]["message"]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_auth_failure_in_protocol_format(protocol: str) -> None:
    with FakeModelServer(api_key="right") as server:
        server.script("ok", "ok")
        wrong = {"authorization": "Bearer wrong"} if protocol == "openai" else {"x-api-key": "wrong"}
        response = post(server, protocol, BODIES[protocol], **wrong)
        assert response.status_code == 401
        err = response.json()["error"]
        assert err["type"] == ("authentication_error" if protocol == "anthropic" else "invalid_request_error")
        right = {"authorization": "Bearer right"} if protocol == "openai" else {"x-api-key": "right"}
        assert post(server, protocol, BODIES[protocol], **right).status_code == 200
        assert server.pending == 1, "a refused request does not consume a scripted reply"


def test_gate_holds_the_stream_and_sees_the_client_leave(fake_server: FakeModelServer) -> None:
    gate = Gate()
    fake_server.script(Reply([text("before"), gate, text("after")]))
    with socket.create_connection(("127.0.0.1", fake_server.port)) as sock:
        body = json.dumps(BODIES["openai"]).encode()
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        gate.wait_reached()
        assert b"before" in sock.recv(65536)
        closed_at = time.monotonic()
    request = fake_server.requests[0]
    assert request.wait_finished() == "client_left"
    assert request.client_left_at is not None and request.client_left_at >= closed_at
    assert request.client_left_at - closed_at < 1.0


def test_gate_opened_lets_the_stream_finish(fake_server: FakeModelServer) -> None:
    gate = Gate()
    fake_server.script(Reply([text("before"), gate, text("after")]))
    with (
        httpx.Client(timeout=10) as client,
        client.stream(
            "POST", fake_server.openai_base_url + "/chat/completions", json=BODIES["openai"]
        ) as response,
    ):
        lines = response.iter_lines()
        first = [next(lines) for _ in range(4)]
        assert '"before"' in first[2]
        gate.wait_reached()
        assert fake_server.requests[0].outcome == "in_progress"
        gate.open()
        rest = list(lines)
    assert any('"after"' in line for line in rest)
    assert fake_server.requests[0].wait_finished() == "completed"


def test_stall_fault_and_gate_timeout_cut_the_stream(fake_server: FakeModelServer) -> None:
    gate = Gate(timeout=0.2)
    fake_server.script(Reply([text("a"), text("b")], fault=Fault.stall_after(2, gate)))
    with pytest.raises(httpx.RemoteProtocolError):
        post(fake_server, "anthropic", BODIES["anthropic"])
    assert gate.reached.is_set()
    assert fake_server.requests[0].wait_finished() == "gate_timeout"
    assert fake_server.requests[0].chunks_sent == 2


def test_wait_for_requests_times_out_clearly(fake_server: FakeModelServer) -> None:
    with pytest.raises(TimeoutError, match="got 0 requests, expected 1"):
        fake_server.wait_for_requests(1, timeout=0.05)


def test_unknown_path_is_404(fake_server: FakeModelServer) -> None:
    response = httpx.post(fake_server.url + "/v1/nothing", json={})
    assert response.status_code == 404


def test_standalone_server_serves_a_script_file(tmp_path: Path) -> None:
    script = [{"steps": [{"text": "from file"}]}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(script))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakeserver", "--port", "0", "--script-file", str(path)],
        cwd=root,
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        response = httpx.post(url + "/v1/chat/completions", json=BODIES["openai"], timeout=10)
        assert "from file" in response.text
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()


def test_end_after_closes_the_body_cleanly_without_the_last_events(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply([text("a"), text("b")], fault=Fault.end_after(2)))
    response = post(fake_server, "openai", BODIES["openai"])
    assert response.status_code == 200
    assert len(sse_events(response)) == 2 and "[DONE]" not in response.text
    assert fake_server.requests[0].wait_finished() == "disconnected"


def test_request_flags_are_truthy_only_when_set(fake_server: FakeModelServer) -> None:
    gate = Gate()
    fake_server.script(Reply([gate]))
    with (
        httpx.Client(timeout=10) as client,
        client.stream("POST", fake_server.openai_base_url + "/chat/completions", json=BODIES["openai"]),
    ):
        gate.wait_reached()
        request = fake_server.requests[0]
        assert not request.finished and not request.client_left
        gate.open()
        request.wait_finished()
        assert request.finished and request.finished.is_set()
