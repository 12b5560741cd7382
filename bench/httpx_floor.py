"""The floor of ink's own stack: asyncio + httpx doing the one streaming request, nothing else.

The difference between this and ``ink -p`` is what ink itself adds (its modules, settings, tools, the
loop); the difference between this and baseline_loop.py is the price of asyncio + httpx.
Usage: ``python bench/httpx_floor.py BASE_URL`` (BASE_URL ends in /v1); prints the reply's text.
"""

from __future__ import annotations

import asyncio
import json
import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # as ink does: no CLI deps
import httpx  # noqa: E402


async def main(base_url: str) -> None:
    body = {"model": "gpt-4.1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    text: list[str] = []
    async with (
        httpx.AsyncClient(verify=not base_url.startswith("http://")) as client,
        client.stream("POST", f"{base_url}/chat/completions", json=body) as response,
    ):
        async for line in response.aiter_lines():
            data = line.removeprefix("data:").strip()
            if line.startswith("data:") and data != "[DONE]":
                for choice in json.loads(data).get("choices", []):
                    text.append(choice.get("delta", {}).get("content") or "")
    print("".join(text))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
