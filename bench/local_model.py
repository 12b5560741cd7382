"""Time to first token and tokens/s through ``ink --provider local``, beside the model server alone.

    .venv/bin/python bench/run.py local [--runs N] [--tokens T] [--model-path FILE.gguf]

The model: ``--model-path``, else the starter model cached for the real-model tests
(``$INK_TEST_MODELS``), else the starter model in ``$INK_HOME/models`` (fetched once if missing).

One model server (``ink.local.runtime.start_local``: the starter model, temperature 0) serves both:
- alone: this process POSTs the exact body ink would send (ink's system prompt, tool schemas and the
  prompt, built by ink's own converter) and times the stream with httpx;
- through ink: ``ink --mode rpc --provider local --base-url <that server>`` gets the same prompt; timed
  from writing the ``prompt`` line to the first ``text_delta`` and to ``run_end``.
The first request of each warms llama.cpp's prompt cache and is not counted. Tokens/s is the reply's
completion tokens over the time from its first token to its end. ink's overhead is the difference.
Results go to bench/results/local.md and stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from ink.ai.messages import UserMessage
from ink.ai.openai_convert import openai_body
from ink.ai.provider import ModelRequest
from ink.local.runtime import start_local
from ink.local.starter import FILE_NAME, starter_model
from ink.system_prompt import Environment, build_system_prompt
from ink.tools import default_tools
from ink.tools.processes import ProcessRegistry

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "local.md"
PROMPT = "Count from 1 to 100, separated by spaces, and nothing else."


def ink_body(work: Path, tokens: int) -> dict:
    tools = list(default_tools(work, ProcessRegistry(), kill_delay=0.5))
    specs = [t.spec for t in tools]
    system = build_system_prompt(specs, Environment.detect(work))
    request = ModelRequest("smollm2-135m-instruct", system, [UserMessage(PROMPT)], specs, max_tokens=tokens)
    return openai_body(request, max_tokens_field="max_tokens")


def alone(url: str, body: dict) -> tuple[float, float, int]:
    """(seconds to the first token, seconds from it to the end, completion tokens) of one request."""
    began = time.perf_counter()
    first, tokens = 0.0, 0
    with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=600) as answer:
        for line in answer.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if not first and any((c.get("delta") or {}).get("content") for c in chunk.get("choices") or []):
                first = time.perf_counter()
            tokens = (chunk.get("usage") or {}).get("completion_tokens", tokens)
    return first - began, time.perf_counter() - first, tokens


def through_ink(url: str, work: Path, tokens: int, runs: int) -> list[tuple[float, float, int]]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "INK_HOME": str(work / "inkhome")}
    (work / "inkhome").mkdir(exist_ok=True)
    (work / "inkhome" / "config.toml").write_text(f"max_tokens = {tokens}\n")
    argv = [
        sys.executable,
        "-m",
        "ink",
        "--mode",
        "rpc",
        "--no-session",
        "--provider",
        "local",
        "--base-url",
        url,
    ]
    cwd = work / "proj"  # $INK_HOME beside the workspace, not inside it
    cwd.mkdir(exist_ok=True)
    ink = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert ink.stdin is not None and ink.stdout is not None
    samples = []
    for n in range(runs + 1):
        ink.stdin.write(json.dumps({"type": "new_session", "id": f"n{n}"}) + "\n")
        ink.stdin.write(json.dumps({"type": "prompt", "id": n, "text": PROMPT}) + "\n")
        ink.stdin.flush()
        began, first, out = time.perf_counter(), 0.0, 0
        for line in ink.stdout:
            event = json.loads(line)
            if event.get("type") == "text_delta" and not first:
                first = time.perf_counter()
            elif event.get("type") == "message_end":
                out = event["message"]["usage"]["outputTokens"]
            elif event.get("type") == "run_end":
                break
        samples.append((first - began, time.perf_counter() - first, out))
    ink.stdin.close()
    ink.wait(30)
    return samples[1:]  # the first one warmed the prompt cache


def cached_model() -> Path | None:
    """The starter model as the real-model tests cache it (``INK_TEST_MODELS``), if it is there."""
    folder = os.environ.get("INK_TEST_MODELS", "")
    path = Path(folder) / FILE_NAME if folder else None
    return path if path is not None and path.is_file() else None


def row(name: str, samples: list[tuple[float, float, int]]) -> str:
    ttft = statistics.median(s[0] for s in samples)
    rate = statistics.median(s[2] / s[1] for s in samples if s[1] > 0)
    tokens = statistics.median(s[2] for s in samples)
    return f"| {name} | {ttft * 1000:.0f} | {rate:.1f} | {tokens:.0f} |"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/run.py local")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--model-path", type=Path, help="a GGUF file (default: the starter model)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = args.model_path or cached_model()
        if model is None:
            home = Path(os.environ.get("INK_HOME", Path.home() / ".ink"))
            model = starter_model(home / "models", sys.stderr)
        server = start_local(model, work, sys.stderr, temperature=0.0)
        try:
            body = ink_body(work, args.tokens)
            direct = [alone(server.base_url, body) for _ in range(args.runs + 1)][1:]
            via_ink = through_ink(server.base_url, work, args.tokens, args.runs)
        finally:
            server.stop()
    lines = [
        "# Local model: ink's overhead over the llama.cpp server alone",
        "",
        f"`.venv/bin/python bench/run.py local --runs {args.runs} --tokens {args.tokens}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')}: Python {platform.python_version()}, {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}. Starter model "
        "(SmolLM2-135M-Instruct Q4_1), temperature 0, ink's whole request (system prompt and tool schemas) "
        "in both rows, prompt cache warm; medians.",
        "",
        "| path | time to first token (ms) | tokens/s | completion tokens |",
        "| --- | --- | --- | --- |",
        row("server alone (the same request body, httpx)", direct),
        row("through `ink --mode rpc --provider local` (prompt line to first text_delta)", via_ink),
    ]
    text = "\n".join(lines) + "\n"
    RESULTS.write_text(text)
    print(text)
    return 0
