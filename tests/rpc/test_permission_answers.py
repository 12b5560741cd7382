"""R39 over RPC: a permission answer that is garbage, ambiguous, huge, late, repeated or for a question
that is not open never becomes an allow. Each is refused with a reason and the question stays open; only
an exact ``permission {requestId, decision}`` for the open question answers it.

One real ``ink --mode rpc`` holds a question open while the hostile answers arrive; the property test
reads generated lines through the same ``parse_line`` the server uses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ink.frontends.rpc.protocol import Command, Rejection, parse_line
from ink.frontends.rpc.server import MAX_LINE_BYTES
from tests.fakeserver import FakeModelServer, call, say
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc

ASK = ("--permission-mode", "ask")
TOUCH = "echo ran > out.txt"


def still_open(ink: RpcClient, request_id: str) -> None:
    state = ink.ok("get_state")
    assert [q["requestId"] for q in state["permissionRequests"]] == [request_id]
    assert ink.events("permission_resolved") == []


def near_misses(request_id: str) -> list[Any]:
    number = request_id.removeprefix("perm-")
    return [
        request_id.upper(),
        f" {request_id}",
        f"{request_id}\u0000",
        f"{request_id}\u200b",  # a zero-width space
        request_id.replace("-", "\u2010"),  # a hyphen that looks the same
        f"perm-0{number}",
        f"perm-{int(number) + 1}",
        "perm-*",
        "",
        int(number),
        [request_id],
        {"id": request_id},
        None,
    ]


GARBAGE_DECISIONS: list[Any] = [
    "Allow",
    "ALWAYS",
    "allow ",
    "yes",
    "y",
    "",
    True,
    1,
    ["allow"],
    {"allow": 1},
    None,
]


def test_hostile_answers_are_refused_and_leave_the_question_open(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("done"))
    ink = start_rpc(*ASK)
    ink.ok("prompt", text="make the file")
    request_id = ink.wait_event("permission_request", toolCallId="c1")["requestId"]
    for wrong in near_misses(request_id):
        ink.fail("permission", requestId=wrong, decision="allow")
    for garbage in GARBAGE_DECISIONS:
        ink.fail("permission", requestId=request_id, decision=garbage)
    ink.fail("permission", requestId=request_id, decision="allow", remember="bash(*)")  # unknown field
    ambiguous = [
        f'{{"type":"permission","id":"d1","requestId":"{request_id}","decision":"deny","decision":"allow"}}',
        f'{{"type":"permission","id":"d2","requestId":"nope","requestId":"{request_id}","decision":"allow"}}',
        f'{{"type":"prompt","type":"permission","id":"d3","requestId":"{request_id}","decision":"allow"}}',
    ]
    for number, line in enumerate(ambiguous, start=1):
        ink.send_raw(line.encode() + b"\n")
        if number < 3:  # the type itself named twice: no command to echo
            refused = ink.wait_response(f"d{number}")
            assert refused["ok"] is False and "appears twice" in refused["error"], refused
    huge = {"type": "permission", "id": "h1", "requestId": request_id, "decision": "allow"}
    ink.send_raw(json.dumps(huge | {"pad": "x" * MAX_LINE_BYTES}).encode() + b"\n")
    assert "longer than the limit" in ink.wait_response("h1")["error"]
    still_open(ink, request_id)
    assert not (project / "out.txt").exists()

    ink.ok("permission", requestId=request_id, decision="deny")
    assert ink.wait_event("permission_resolved", requestId=request_id)["decision"] == "deny"
    for late in ("allow", "always", "deny"):  # a repeated answer changes nothing
        assert "no open permission request" in ink.fail("permission", requestId=request_id, decision=late)
    ink.wait_event("run_end", stopReason="completed")
    assert not (project / "out.txt").exists()


def test_a_late_allow_after_an_abort_does_not_answer_the_next_question(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"))
    ink = start_rpc(*ASK)
    ink.ok("prompt", text="make the file")
    first = ink.wait_event("permission_request", toolCallId="c1")["requestId"]
    ink.ok("abort")
    at, _ = ink.wait_event_at("run_end", stopReason="aborted")
    fake_server.script(call("bash", {"command": TOUCH}, id="c2"), say("done"))
    ink.ok("prompt", text="again")
    second = ink.wait_event("permission_request", toolCallId="c2", after=at)["requestId"]
    assert second != first
    for late in ("allow", "always"):  # meant for the aborted run's question
        assert "no open permission request" in ink.fail("permission", requestId=first, decision=late)
    state = ink.ok("get_state")
    assert [q["requestId"] for q in state["permissionRequests"]] == [second]
    ink.ok("permission", requestId=second, decision="deny")
    ink.wait_event("run_end", stopReason="completed", after=at)
    assert not (project / "out.txt").exists()


def pairs_object(pairs: list[tuple[str, Any]]) -> str:
    """A JSON object written from ``pairs`` as they are: a key may come twice."""
    return "{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in pairs) + "}"


KEYS = st.sampled_from(["type", "id", "requestId", "decision", "remember", "Decision", "requestid"])
VALUES = st.one_of(
    st.sampled_from(["permission", "allow", "always", "deny", "perm-1", "perm-2", "Allow", ""]),
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.lists(st.sampled_from(["allow", "perm-1"]), max_size=2),
    st.text(max_size=8),
)


@settings(max_examples=500)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=7))
def test_only_an_exact_unambiguous_permission_command_is_read_as_an_answer(
    pairs: list[tuple[str, Any]],
) -> None:
    """Property: a line is a permission answer only when it names each key once, ``type`` is
    ``permission``, ``requestId`` a string, ``decision`` one of allow/deny/always, and nothing else
    but an ``id``; every other line is a rejection. An allow is never read from an ambiguous line."""
    parsed = parse_line(pairs_object(pairs).encode())
    keys = [k for k, _ in pairs]
    data = dict(pairs)
    exact = (
        len(keys) == len(set(keys))
        and data.get("type") == "permission"
        and isinstance(data.get("requestId"), str)
        and data.get("decision") in ("allow", "deny", "always")
        and set(keys) <= {"type", "id", "requestId", "decision"}
        and ("id" not in data or (isinstance(data["id"], str | int) and not isinstance(data["id"], bool)))
    )
    if exact:
        assert isinstance(parsed, Command) and parsed.fields == {
            "requestId": data["requestId"],
            "decision": data["decision"],
        }
    elif isinstance(parsed, Command):
        assert parsed.type != "permission", (pairs, parsed)
    else:
        assert isinstance(parsed, Rejection)
        if len(keys) != len(set(keys)):
            assert "appears twice" in parsed.reason or "JSON" in parsed.reason


# A key named twice, and after that object what cannot be read even leniently: more after the value, or
# nesting too deep. Refused like any ambiguous line, never let out of the reader.
UNREADABLE_AFTER_A_TWICE_NAMED_KEY = [
    b'{"type":"get_state","id":"u1","a":1,"a":2}x',
    b'[{"a":1,"a":2},' + b"[" * 100_000,
]


def test_a_line_naming_a_key_twice_that_cannot_be_read_otherwise_is_refused_and_ink_goes_on(
    start_rpc: StartRpc,
) -> None:
    ink = start_rpc()
    for line in UNREADABLE_AFTER_A_TWICE_NAMED_KEY:
        at = ink.mark()
        ink.send_raw(line + b"\n")
        refused = ink.wait_line(lambda x: x.get("type") == "response", after=at)[1]
        assert refused["ok"] is False and "appears twice" in refused["error"], refused
    assert ink.ok("get_queue") == {"queue": []}  # the same process: it read on
