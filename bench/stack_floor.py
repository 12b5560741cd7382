"""The floor of ink's own stack: asyncio + ink's HTTP/1.1 client (h11, ``ink.ai.http1``) doing the one
streaming request, nothing else.

The difference between this and ``ink -p`` is what ink itself adds (its modules, settings, tools, the
loop); the difference between this and baseline_loop.py is the price of asyncio + the HTTP client.
Usage: ``python bench/stack_floor.py BASE_URL`` (BASE_URL ends in /v1); prints the reply's text.
"""

from __future__ import annotations

import asyncio
import json
import sys

from ink.ai.http1 import HttpClient


async def main(base_url: str) -> None:
    body = {"model": "gpt-4.1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    client = HttpClient()
    response = await client.send(
        "POST", f"{base_url}/chat/completions", headers=headers, content=json.dumps(body).encode()
    )
    text: list[str] = []
    pending = b""
    try:
        async for chunk in response.aiter_bytes():
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                data = line.removeprefix(b"data:").strip()
                if line.startswith(b"data:") and data != b"[DONE]":
                    for choice in json.loads(data).get("choices", []):
                        text.append(choice.get("delta", {}).get("content") or "")
    finally:
        response.close()
        await client.aclose()
    print("".join(text))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
