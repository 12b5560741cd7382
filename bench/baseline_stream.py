"""The stdlib floor for ``bench/run.py rpc``: the same streamed reply read by urllib + json, every chunk
written out as a JSON line, as ink's RPC frontend does, with no framework at all.

    python bench/baseline_stream.py BASE_URL        # BASE_URL ends in /v1 (Chat Completions)

For each line on stdin it sends one streaming request, parses each SSE event's JSON, writes one
``{"type": "text_delta", "text": ...}`` line per text chunk and a ``{"type": "run_end", ...}`` line at the
end (stdout buffered, flushed once per reply). It ends with stdin.
"""

from __future__ import annotations

import json
import sys
import urllib.request


def one_reply(base_url: str, out: list[str]) -> None:
    body = {"model": "gpt-4.1", "stream": True, "messages": [{"role": "user", "content": "stream please"}]}
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer k"},
    )
    with urllib.request.urlopen(request) as response:
        for raw in response:
            if not raw.startswith(b"data:"):
                continue
            data = raw[5:].strip()
            if data == b"[DONE]":
                break
            for choice in json.loads(data).get("choices", []):
                text = (choice.get("delta") or {}).get("content")
                if text:
                    out.append(json.dumps({"type": "text_delta", "text": text}))
                    if len(out) >= 256:  # written in batches, as ink's writer does once per loop turn
                        sys.stdout.write("\n".join(out) + "\n")
                        out.clear()
    out.append(json.dumps({"type": "run_end", "stopReason": "completed"}))
    sys.stdout.write("\n".join(out) + "\n")
    out.clear()
    sys.stdout.flush()


def main() -> int:
    base_url = sys.argv[1]
    print(json.dumps({"type": "response", "command": "ready"}), flush=True)
    for _line in sys.stdin:
        one_reply(base_url, [])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
