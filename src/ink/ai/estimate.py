"""Estimating the usage of a reply the service never counted: one cut off by an abort or an error before
its usage arrived. The prompt was sent (and is billed) all the same, so its tokens are estimated too.

Roughly four characters per token, on the JSON of what was sent and received; the result is marked
``accuracy="estimated"`` so nobody mistakes it for the service's count.
"""

from __future__ import annotations

import json

from ink.ai.messages import AssistantMessage, TextBlock, ThinkingBlock, Usage, message_to_json
from ink.ai.provider import ModelRequest

CHARS_PER_TOKEN = 4


def estimated_usage(request: ModelRequest, reply: AssistantMessage) -> Usage:
    sent = len(request.system) + sum(len(json.dumps(message_to_json(m))) for m in request.messages)
    sent += sum(len(t.name) + len(t.description) + len(json.dumps(dict(t.parameters))) for t in request.tools)
    received = 0
    for block in reply.content:
        if isinstance(block, TextBlock):
            received += len(block.text)
        elif isinstance(block, ThinkingBlock):
            received += len(block.thinking)
        else:
            received += len(block.name) + len(json.dumps(dict(block.arguments)))
    return Usage(
        input_tokens=sent // CHARS_PER_TOKEN,
        output_tokens=-(-received // CHARS_PER_TOKEN),
        accuracy="estimated",
    )
