"""What a server says it serves (``ink.ai.model_list``, ``/model`` on a server of the user's), against a
server that answers JSON nested too deep to parse: one ``ModelListError`` line, never a RecursionError
out of the menu (a success body and an error body alike)."""

from __future__ import annotations

import asyncio

import pytest

from ink.ai.http1 import HttpClient
from ink.ai.model_list import ModelListError, served_models
from tests.ai.wire_peers import Received, ScriptedServer

DEEP = b"[" * 200_000  # far past the parser's recursion limit, well under the list's size bound


@pytest.mark.parametrize("status", [200, 500])
async def test_a_list_nested_too_deep_to_parse_is_one_model_list_error(status: int) -> None:
    async def deep(_request: Received, writer: asyncio.StreamWriter) -> bool:
        head = b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
        writer.write(head % (status, len(DEEP)) + DEEP)
        await writer.drain()
        return False

    async with ScriptedServer(deep) as server:
        client = HttpClient(env={})
        try:
            with pytest.raises(ModelListError) as raised:
                await served_models(client, "openai", f"http://127.0.0.1:{server.port}/v1", None)
        finally:
            await client.aclose()
    assert len(server.requests) == 1 and server.requests[0].target == "/v1/models"
    said = str(raised.value)
    assert said.startswith(f"http://127.0.0.1:{server.port}/v1/models") and "\n" not in said
    assert (status == 200) == ("did not answer with a model list" in said)
    assert (status == 500) == ("answered HTTP 500" in said)
