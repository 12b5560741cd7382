"""The floor under ink's streaming: httpx + httpx-sse + json alone read one Chat Completions stream.

    python bench/bare_sse.py BASE_URL

Prints the text it received (one word per chunk) so the caller can check completeness. No ink code is
imported: the CPU this process spends is what the HTTP stack itself costs per chunk.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from httpx_sse import aconnect_sse


async def read(base_url: str) -> str:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    words: list[str] = []
    async with httpx.AsyncClient(timeout=60) as client:
        url = base_url.rstrip("/") + "/chat/completions"
        async with aconnect_sse(client, "POST", url, json=body) as source:
            async for event in source.aiter_sse():
                if event.data.strip() == "[DONE]":
                    break
                choices = json.loads(event.data).get("choices") or [{}]
                words.append((choices[0].get("delta") or {}).get("content") or "")
    return "".join(words)


if __name__ == "__main__":
    sys.stdout.write(asyncio.run(read(sys.argv[1])))
