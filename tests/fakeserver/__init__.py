"""A scripted fake model server over real HTTP, speaking OpenAI Chat Completions and Anthropic Messages.

See ``server.py`` for the server, ``script.py`` for the reply script, ``strict.py`` for the history rules.
"""

from tests.fakeserver.log import RecordedRequest
from tests.fakeserver.script import (
    Chatter,
    Disconnect,
    Fault,
    Gate,
    Malformed,
    Pause,
    Raw,
    Reply,
    Text,
    Thinking,
    ToolCallStep,
    Usage,
    call,
    chatter,
    disconnect,
    gate,
    malformed,
    pause,
    say,
    text,
    thinking,
    tool_call,
)
from tests.fakeserver.server import FakeModelServer
from tests.fakeserver.strict import check_anthropic_history, check_openai_history

__all__ = [
    "Chatter",
    "Disconnect",
    "FakeModelServer",
    "Fault",
    "Gate",
    "Malformed",
    "Pause",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Text",
    "Thinking",
    "ToolCallStep",
    "Usage",
    "call",
    "chatter",
    "check_anthropic_history",
    "check_openai_history",
    "disconnect",
    "gate",
    "malformed",
    "pause",
    "say",
    "text",
    "thinking",
    "tool_call",
]
