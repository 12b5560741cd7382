"""Strict mode: the history rules the real services enforce, answered with their words.

``check_openai_history(body)`` and ``check_anthropic_history(body)`` return None for a request the real
API would accept, else the 400 message it would give. They are plain functions so other tests (abort
fuzzing, session resume) can validate a request body or a converted history directly.
"""

from __future__ import annotations

from typing import Any

OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
OPENAI_MISSING_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
OPENAI_ORPHAN_RESULT = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
    "'tool_calls'."
)
OPENAI_EMPTY = (
    "Invalid 'messages': empty array. Expected an array with minimum length 1, "
    "but got an empty array instead."
)


def check_openai_history(body: Any) -> str | None:
    """The 400 message OpenAI Chat Completions would give for ``body``, or None if it is valid."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if messages is None:
        return "Missing required parameter: 'messages'."
    if not isinstance(messages, list) or not messages:
        return OPENAI_EMPTY
    return _openai_messages(messages) or _openai_tools(body.get("tools"))


def _openai_messages(messages: list[Any]) -> str | None:
    pending: list[str] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            return (
                f"Invalid type for 'messages[{i}]': expected an object, but got {type(m).__name__} instead."
            )
        role = m.get("role")
        if role not in OPENAI_ROLES:
            return (
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                "'function', 'tool', and 'developer'."
            )
        if role == "tool":
            call_id = m.get("tool_call_id")
            if not isinstance(call_id, str):
                return f"Missing required parameter: 'messages[{i}].tool_call_id'."
            if call_id not in pending:
                return OPENAI_ORPHAN_RESULT
            pending.remove(call_id)
            if (err := _openai_content(m, i, required=True)) is not None:
                return err
            continue
        if pending:
            return OPENAI_MISSING_RESULTS.format(ids=", ".join(pending))
        if role == "assistant":
            calls = m.get("tool_calls")
            if calls is not None:
                ids = _openai_call_ids(calls, i)
                if isinstance(ids, str):
                    return ids
                pending = ids
            if (err := _openai_content(m, i, required=not calls)) is not None:
                return err
        elif (err := _openai_content(m, i, required=True)) is not None:
            return err
    if pending:
        return OPENAI_MISSING_RESULTS.format(ids=", ".join(pending))
    return None


def _openai_call_ids(calls: Any, i: int) -> list[str] | str:
    if not isinstance(calls, list) or not calls:
        return f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum length 1."
    ids: list[str] = []
    for j, call in enumerate(calls):
        where = f"messages[{i}].tool_calls[{j}]"
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            return f"Missing required parameter: '{where}.id'."
        if call.get("type") != "function":
            return f"Missing required parameter: '{where}.type'."
        fn = call.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return f"Missing required parameter: '{where}.function.name'."
        if not isinstance(fn.get("arguments"), str):
            got = type(fn.get("arguments")).__name__
            return f"Invalid type for '{where}.function.arguments': expected a string, but got {got} instead."
        ids.append(call["id"])
    return ids


def _openai_content(m: dict[str, Any], i: int, *, required: bool) -> str | None:
    content = m.get("content")
    if content is None:
        return (
            f"Invalid value for 'messages[{i}].content': expected a string, got null." if required else None
        )
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"Invalid type for 'messages[{i}].content': expected one of a string or array of objects."
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in (
            "text",
            "image_url",
            "input_audio",
            "refusal",
        ):
            return f"Invalid value: 'messages[{i}].content[{j}].type'."
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            return f"Missing required parameter: 'messages[{i}].content[{j}].text'."
    return None


def _openai_tools(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "Invalid type for 'tools': expected an array."
    for j, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            return f"Missing required parameter: 'tools[{j}].function'."
        if not isinstance(fn.get("name"), str) or not fn["name"]:
            return f"Missing required parameter: 'tools[{j}].function.name'."
    return None


ANTHROPIC_USER_BLOCKS = ("text", "image", "document", "tool_result", "search_result")
ANTHROPIC_ASSISTANT_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use")
ANTHROPIC_MISSING_RESULTS = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
ANTHROPIC_ORPHAN_RESULT = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)


def check_anthropic_history(body: Any) -> str | None:
    """The 400 message Anthropic Messages would give for ``body``, or None if it is valid."""
    if not isinstance(body, dict):
        return "invalid request: could not parse the JSON body"
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    return _anthropic_system(body.get("system")) or _anthropic_messages(messages) or _anthropic_tools(body)


def _anthropic_system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid list"
    for j, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"system.{j}.type: Input should be 'text'"
        if err := _anthropic_text(block, f"system.{j}"):
            return err
    return None


def _anthropic_messages(messages: list[Any]) -> str | None:
    pending: list[str] = []
    seen_ids: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "system":
            return (
                'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
                'parameter, not "system" as an input message role.'
            )
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and role != "user":
            return 'messages: first message must use the "user" role'
        if i > 0 and messages[i - 1].get("role") == role:
            return (
                f'messages: roles must alternate between "user" and "assistant", but found multiple '
                f'"{role}" roles in a row'
            )
        blocks = _anthropic_blocks(m, i, last=i == len(messages) - 1)
        if isinstance(blocks, str):
            return blocks
        if err := _anthropic_pairing(blocks, pending, i):
            return err
        pending = []
        if role == "assistant":
            for j, block in enumerate(blocks):
                if block.get("type") == "tool_use":
                    if block["id"] in seen_ids:
                        return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
                    seen_ids.add(block["id"])
                    pending.append(block["id"])
    if pending:
        return ANTHROPIC_MISSING_RESULTS.format(i=len(messages) - 1, ids=", ".join(pending))
    return None


def _anthropic_pairing(blocks: list[dict[str, Any]], pending: list[str], i: int) -> str | None:
    """R19's strict check: a user message after tool_use starts with exactly those results."""
    answered: list[str] = []
    after_other = False
    for j, block in enumerate(blocks):
        if block.get("type") != "tool_result":
            after_other = True
            continue
        call_id = block.get("tool_use_id")
        if call_id not in pending or call_id in answered:
            return ANTHROPIC_ORPHAN_RESULT.format(i=i, j=j, id=call_id)
        if after_other:
            # The real API reads a tool_result after text as if the results were missing.
            return ANTHROPIC_MISSING_RESULTS.format(i=i - 1, ids=call_id)
        answered.append(call_id)
    missing = [p for p in pending if p not in answered]
    if missing:
        return ANTHROPIC_MISSING_RESULTS.format(i=i - 1, ids=", ".join(missing))
    return None


def _anthropic_blocks(m: dict[str, Any], i: int, *, last: bool) -> list[dict[str, Any]] | str:
    content = m.get("content")
    empty = (
        f"messages.{i}: all messages must have non-empty content except for the optional final "
        "assistant message"
    )
    if isinstance(content, str):
        if not content and not (last and m["role"] == "assistant"):
            return empty
        content = [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return f"messages.{i}.content: Input should be a valid list"
    if not content and not (last and m["role"] == "assistant"):
        return empty
    allowed = ANTHROPIC_USER_BLOCKS if m["role"] == "user" else ANTHROPIC_ASSISTANT_BLOCKS
    for j, block in enumerate(content):
        where = f"messages.{i}.content.{j}"
        if not isinstance(block, dict) or block.get("type") not in allowed:
            kind = block.get("type") if isinstance(block, dict) else block
            return f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags"
        if err := _anthropic_block(block, where):
            return err
    tail = content[-1] if content else {}
    if (
        last
        and m["role"] == "assistant"
        and tail.get("type") == "text"
        and tail["text"] != tail["text"].rstrip()
    ):
        return "messages: final assistant content cannot end with trailing whitespace"
    return content


def _anthropic_block(block: dict[str, Any], where: str) -> str | None:
    kind = block["type"]
    if kind == "text":
        return _anthropic_text(block, where)
    if kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            return f"{where}.thinking.thinking: Field required"
        if not isinstance(block.get("signature"), str):
            return f"{where}.thinking.signature: Field required"
    if kind == "tool_use":
        for name in ("id", "name"):
            if not isinstance(block.get(name), str) or not block[name]:
                return f"{where}.tool_use.{name}: Field required"
        if not isinstance(block.get("input"), dict):
            return f"{where}.tool_use.input: Input should be a valid dictionary"
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            return f"{where}.tool_result.tool_use_id: Field required"
        inner = block.get("content")
        if isinstance(inner, list):
            for k, part in enumerate(inner):
                is_text = isinstance(part, dict) and part.get("type") == "text"
                if is_text and (err := _anthropic_text(part, f"{where}.tool_result.content.{k}")):
                    return err
        elif inner is not None and not isinstance(inner, str):
            return f"{where}.tool_result.content: Input should be a valid list"
    return None


def _anthropic_text(block: dict[str, Any], where: str) -> str | None:
    value = block.get("text")
    if not isinstance(value, str):
        return f"{where}.text: Field required"
    if not value:
        return "messages: text content blocks must be non-empty"
    if not value.strip():
        return "messages: text content blocks must contain non-whitespace text"
    return None


def _anthropic_tools(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    for j, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            return f"tools.{j}.name: Field required"
        if "type" not in tool and not isinstance(tool.get("input_schema"), dict):
            return f"tools.{j}.custom.input_schema: Field required"
    return None
