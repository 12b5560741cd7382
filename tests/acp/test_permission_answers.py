"""R39 over ACP: the editor's answer to ``session/request_permission`` allows a call only when it is an
unambiguous reply, to that very request, selecting ``allow`` or ``always``. A reply to no open request (a
wrong id, a repeated or late one) is ignored; a malformed, ambiguous or unknown outcome denies; nothing of
it carries over to the next question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, call, say


def touch(name: str) -> dict[str, str]:
    return {"command": f"touch {name}"}


def selected(option: Any) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option}}


GARBAGE: list[Any] = [
    None,
    "allow",
    {"outcome": "selected", "optionId": "allow"},
    {"outcome": {"optionId": "allow"}},
    {"outcome": {"outcome": "cancelled", "optionId": "allow"}},
    {"outcome": {"outcome": "Selected", "optionId": "allow"}},
    selected("ALLOW"),
    selected("allow "),
    selected(["allow"]),
    selected({"id": "allow"}),
    selected(True),
    selected("allow" + "x" * (1 << 20)),
    {"outcome": [{"outcome": "selected", "optionId": "allow"}]},
]


def test_garbage_answers_deny_and_replies_to_no_open_request_are_ignored(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    calls = [call("bash", touch(f"made{n}.txt"), id=f"b{n}") for n in range(len(GARBAGE) + 2)]
    fake_server.script(*calls, say("finished"))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("make the files"))
    after = 0
    asked: list[Any] = []

    def next_question() -> Any:
        nonlocal after
        after, request = ink.wait_line(
            lambda m: m.get("method") == "session/request_permission" and "id" in m, after=after
        )
        after += 1
        asked.append(request["id"])
        return request["id"]

    first = next_question()
    for wrong in (f"{first}x", str(first).upper(), f" {first}", 1, None, [first]):  # no open request
        ink.send_json({"jsonrpc": "2.0", "id": wrong, "result": selected("allow")})
    ambiguous = (
        f'{{"jsonrpc":"2.0","id":{json.dumps(first)},'
        '"result":{"outcome":{"outcome":"selected","optionId":"deny","optionId":"allow"}}}'
    )
    ink.send_raw(ambiguous.encode() + b"\n")  # read two ways: denied, not guessed at
    for answer in GARBAGE:
        request_id = next_question()
        ink.answer(asked[-2], selected("allow"))  # the earlier question again: answered already
        ink.answer(request_id, answer)
    last = next_question()
    ink.answer(last, selected("deny"))
    assert ink.wait_response(prompt)["result"] == {"stopReason": "end_turn"}
    assert len(set(asked)) == len(GARBAGE) + 2  # each question its own request
    assert sorted(p.name for p in project.glob("made*.txt")) == []
    results = [output for _, output in fake_server.requests[-1].tool_results()]
    assert len(results) == len(GARBAGE) + 2 and all("denied" in r.lower() for r in results), results


def test_an_allow_after_the_cancel_is_ignored_and_the_next_question_is_asked(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(call("bash", touch("early.txt"), id="b1"))
    ink = start_acp()
    session = open_session(ink, project)
    prompt = ink.send("session/prompt", sessionId=session, prompt=text_prompt("make it"))
    first = ink.wait_request("session/request_permission")["id"]
    ink.notify("session/cancel", sessionId=session)
    assert ink.wait_response(prompt)["result"] == {"stopReason": "cancelled"}
    fake_server.script(call("bash", touch("late.txt"), id="b2"), say("done"))
    again = ink.send("session/prompt", sessionId=session, prompt=text_prompt("once more"))
    at, second = ink.wait_line(lambda m: m.get("method") == "session/request_permission" and m["id"] != first)
    ink.answer(first, selected("allow"))  # late, for the cancelled question
    ink.answer(first, selected("always"))
    ink.answer(second["id"], selected("deny"))
    assert ink.wait_response(again)["result"] == {"stopReason": "end_turn"}
    assert not (project / "early.txt").exists() and not (project / "late.txt").exists()
    assert at > 0
