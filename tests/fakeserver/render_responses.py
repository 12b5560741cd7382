"""Rendering a neutral ``Reply`` as an OpenAI Responses API stream (``POST /v1/responses``).

Events as the real service sends them (``event: <type>`` plus ``data`` carrying the same ``type`` and a
``sequence_number``): ``response.created``, then per output item ``response.output_item.added`` ... its
deltas ... ``response.output_item.done``, then ``response.completed`` (``response.incomplete`` for a
``length`` stop). Consecutive thinking steps form one reasoning item, consecutive text steps one message;
control steps (gates, cuts) stay inside the open item, so a test can hold a stream mid-reasoning.

A reasoning item's ``encrypted_content`` is issued only when the request asked for it (``include``) and
is recorded in ``issued`` (item id -> content): strict mode accepts a reasoning item sent back only with
exactly the content issued for its id.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from tests.fakeserver.render import Item, NextId, _control, args_text, split_pieces
from tests.fakeserver.script import Reply, Text, Thinking, ToolCallStep


class _Events:
    def __init__(self, reply: Reply, body: dict[str, Any], next_id: NextId) -> None:
        self.out: list[Item] = []
        self.seq = itertools.count()
        self.index = -1
        self.open: dict[str, Any] | None = None  # the item being streamed
        self.pieces: list[str] = []
        self.next_id = next_id
        self.encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
        self.response = {
            "id": f"resp_fake{next_id()}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": reply.model or str(body.get("model", "fake-model")),
            "output": [],
            "store": body.get("store", True),
            "usage": None,
        }

    def emit(self, kind: str, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": next(self.seq), **fields}
        self.out.append(f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode())

    def start(self, item: dict[str, Any]) -> None:
        self.index += 1
        self.open, self.pieces = item, []
        self.emit("response.output_item.added", output_index=self.index, item=item)


def render_responses(
    reply: Reply, body: dict[str, Any], next_id: NextId, issued: dict[str, str]
) -> list[Item]:
    ev = _Events(reply, body, next_id)
    ev.emit("response.created", response=ev.response)
    done: list[dict[str, Any]] = []
    for step in reply.steps:
        kind = "reasoning" if isinstance(step, Thinking) else "message" if isinstance(step, Text) else None
        if ev.open is not None and (kind is None or ev.open["type"] != kind) and _control(step) is None:
            done.append(_close(ev, issued))
        if isinstance(step, Thinking):
            _thinking(ev, step)
        elif isinstance(step, Text):
            _text(ev, step)
        elif isinstance(step, ToolCallStep):
            done.append(_call(ev, step))
        elif (item := _control(step)) is not None:
            ev.out.append(item)
    if ev.open is not None:
        done.append(_close(ev, issued))
    _finish(ev, reply, done)
    if reply.linger is not None:
        ev.out.append(reply.linger)
    return ev.out


def _thinking(ev: _Events, step: Thinking) -> None:
    if ev.open is None:
        ev.start({"id": f"rs_fake{ev.next_id()}", "type": "reasoning", "summary": []})
        ev.emit("response.reasoning_summary_part.added", item_id=ev.open["id"], output_index=ev.index,
                summary_index=0, part={"type": "summary_text", "text": ""})  # fmt: skip
    assert ev.open is not None
    ev.pieces.append(step.text)
    ev.emit("response.reasoning_summary_text.delta", item_id=ev.open["id"], output_index=ev.index,
            summary_index=0, delta=step.text)  # fmt: skip


def _text(ev: _Events, step: Text) -> None:
    if ev.open is None:
        ev.start({"id": f"msg_fake{ev.next_id()}", "type": "message", "status": "in_progress",
                  "role": "assistant", "content": []})  # fmt: skip
        ev.emit("response.content_part.added", item_id=ev.open["id"], output_index=ev.index, content_index=0,
                part={"type": "output_text", "text": "", "annotations": []})  # fmt: skip
    assert ev.open is not None
    ev.pieces.append(step.text)
    ev.emit("response.output_text.delta", item_id=ev.open["id"], output_index=ev.index, content_index=0,
            delta=step.text, logprobs=[])  # fmt: skip


def _close(ev: _Events, issued: dict[str, str]) -> dict[str, Any]:
    item, text = dict(ev.open or {}), "".join(ev.pieces)
    ev.open = None
    if item["type"] == "reasoning":
        item["summary"] = [{"type": "summary_text", "text": text}] if text else []
        if ev.encrypted:
            item["encrypted_content"] = issued[item["id"]] = f"gAAAA-fake-{item['id']}-{time.monotonic_ns()}"
    else:
        part = {"type": "output_text", "text": text, "annotations": []}
        ev.emit(
            "response.output_text.done", item_id=item["id"], output_index=ev.index, content_index=0, text=text
        )
        ev.emit(
            "response.content_part.done",
            item_id=item["id"],
            output_index=ev.index,
            content_index=0,
            part=part,
        )
        item |= {"status": "completed", "content": [part]}
    ev.emit("response.output_item.done", output_index=ev.index, item=item)
    return item


def _call(ev: _Events, step: ToolCallStep) -> dict[str, Any]:
    call_id = step.id or f"call_fake{ev.next_id()}"
    item = {"id": f"fc_fake{ev.next_id()}", "type": "function_call", "status": "in_progress",
            "call_id": call_id, "name": step.name, "arguments": ""}  # fmt: skip
    ev.start(dict(item))
    arguments = args_text(step)
    for piece in split_pieces(arguments, step.pieces):
        ev.emit(
            "response.function_call_arguments.delta", item_id=item["id"], output_index=ev.index, delta=piece
        )
    ev.emit(
        "response.function_call_arguments.done",
        item_id=item["id"],
        output_index=ev.index,
        arguments=arguments,
    )
    item |= {"status": "completed", "arguments": arguments}
    ev.open = None
    ev.emit("response.output_item.done", output_index=ev.index, item=item)
    return item


def _finish(ev: _Events, reply: Reply, done: list[dict[str, Any]]) -> None:
    u = reply.usage
    reasoned = any(d["type"] == "reasoning" for d in done)
    usage = {
        "input_tokens": u.input_tokens + u.cache_read_tokens,
        "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.output_tokens // 2 if reasoned else 0},
        "total_tokens": u.input_tokens + u.cache_read_tokens + u.output_tokens,
    }  # fmt: skip
    length = reply.stop_reason == "length"
    status = "incomplete" if length else "completed"
    details = {"reason": "max_output_tokens"} if length else None
    reported = usage if reply.report_usage else None
    response = ev.response | {
        "status": status,
        "output": done,
        "usage": reported,
        "incomplete_details": details,
    }
    ev.emit(f"response.{status}", response=response)
