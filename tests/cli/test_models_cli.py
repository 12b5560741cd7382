"""``ink models`` and the presets from the command line: what is known, what a local server reports at
``/v1/models``, a clear error for an unknown provider, a keyless local preset, and the warning for a
llama.cpp server whose chat template drops the tools."""

from __future__ import annotations

from pathlib import Path

from tests.cli.inkproc import ink_env, one_line_error, run_ink
from tests.fakeserver import FakeModelServer, Reply, say, thinking, tool_call


def test_models_lists_every_provider_and_what_each_needs(tmp_path: Path) -> None:
    done = run_ink(["models"], ink_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    for name, needs in [("openai", "OPENAI_API_KEY"), ("groq", "GROQ_API_KEY"), ("ollama", "no key")]:
        line = next(line for line in done.stdout.splitlines() if line.startswith(name + " "))
        assert needs in line
    assert "gpt-4.1  (default)" in done.stdout and "deepseek-reasoner" in done.stdout


def test_models_asks_a_local_server_what_it_serves(fake_server: FakeModelServer, tmp_path: Path) -> None:
    fake_server.models = ["qwen-local:7b", "llama-tiny"]
    args = ["--provider", "ollama", "--base-url", fake_server.openai_base_url, "models"]
    done = run_ink(args, ink_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "qwen-local:7b  (served now)" in done.stdout and "llama-tiny  (served now)" in done.stdout
    assert "groq" not in done.stdout  # only the provider asked for
    assert fake_server.requests == []  # asking is no model call


def test_models_says_when_a_local_server_is_not_running(tmp_path: Path) -> None:
    done = run_ink(
        ["--provider", "vllm", "--base-url", "http://127.0.0.1:9/v1", "models"], ink_env(tmp_path), tmp_path
    )
    assert done.returncode == 0
    assert "server not running at http://127.0.0.1:9/v1" in done.stdout


def test_an_unknown_provider_names_the_choices(tmp_path: Path) -> None:
    done = run_ink(["--provider", "olama", "-p", "hi"], ink_env(tmp_path), tmp_path)
    assert done.returncode == 2
    line = one_line_error(done.stderr)
    assert "'olama'" in line and "'ollama'" in line and "'local'" in line


def test_a_local_preset_runs_without_a_key(fake_server: FakeModelServer, tmp_path: Path) -> None:
    fake_server.script(say("hello from the box"))
    args = ["--provider", "lmstudio", "--base-url", fake_server.openai_base_url, "-p", "hi"]
    done = run_ink(args, ink_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello from the box" in done.stdout
    assert "authorization" not in fake_server.requests[0].headers
    assert fake_server.requests[0].body["model"] == "qwen2.5-coder-7b-instruct"


def test_a_llamacpp_template_without_tools_gets_a_warning(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.props = {"chat_template_caps": {"supports_tools": False, "supports_tool_calls": False}}
    fake_server.script(say("ok"))
    args = ["--provider", "llamacpp", "--base-url", fake_server.openai_base_url, "-p", "hi"]
    done = run_ink(args, ink_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "chat template does not support tools" in done.stderr
    fake_server.props = {"chat_template_caps": {"supports_tools": True}}
    fake_server.script(say("ok"))
    again = run_ink(args, ink_env(tmp_path), tmp_path)
    assert again.returncode == 0 and "warning" not in again.stderr


def test_the_responses_provider_end_to_end(fake_server: FakeModelServer, tmp_path: Path) -> None:
    """``--provider openai-responses`` in print mode: a tool call, its result, the encrypted reasoning sent
    back unchanged in the next request (strict mode checks it), the answer printed."""
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_server.script(
        Reply([thinking("look at a.txt"), tool_call("read", {"path": "a.txt"}, id="c1")]),
        say("a.txt says alpha"),
    )
    env = ink_env(tmp_path, OPENAI_BASE_URL=fake_server.openai_base_url, OPENAI_API_KEY="k")
    done = run_ink(["--provider", "openai-responses", "-p", "what is in a.txt?"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "a.txt says alpha" in done.stdout
    first, second = fake_server.requests
    assert first.path == "/v1/responses" and first.body["model"] == "gpt-5.1"
    assert second.outcome == "completed", second.error_message
    assert [i.get("type", "message") for i in second.body["input"]] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    [(call_id, output)] = second.tool_results()
    assert call_id == "c1" and "alpha" in output


def test_a_responses_only_model_is_spoken_to_in_its_api(fake_server: FakeModelServer, tmp_path: Path) -> None:
    fake_server.script(say("from codex"), say("from gpt-4.1"))
    env = ink_env(tmp_path, OPENAI_BASE_URL=fake_server.openai_base_url, OPENAI_API_KEY="k")
    for model in ("gpt-5.1-codex-mini", "gpt-4.1"):
        done = run_ink(["--model", model, "--no-session", "-p", "hi"], env, tmp_path)
        assert done.returncode == 0, done.stderr
    assert [r.path for r in fake_server.requests] == ["/v1/responses", "/v1/chat/completions"]
