"""R45 through the real ``ink``: ``--max-cost``/``--max-tokens``/``--max-time`` in print mode (exit 5 at a
limit, the warning and the stop said on stderr, ``budget_warning`` and ``run_end.budget`` in stream-json),
a cost limit with an unpriced model refused at start (exit 2), and over RPC: a switch to an unpriced
model refused, a sub-agent's tokens counted toward its parent's run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.inkproc import ink_env, one_line_error, run_ink
from tests.extend.test_subagents import route, task
from tests.fakeserver import FakeModelServer, Reply, Usage, call, say, text, tool_call
from tests.jsonl_client import provider_args
from tests.rpc.client import RpcClient

PRICED = ("--model", "gpt-4.1")


def ink_args(server: FakeModelServer, *more: str) -> list[str]:
    return ["-p", "--no-session", "--base-url", server.openai_base_url, "--api-key", "k", *more]


def reads(n: int) -> list[Reply]:
    return [call("read", {"path": "notes.txt"}, id=f"r{i}", say_first=f"step {i}") for i in range(n)]


@pytest.mark.parametrize("flag", ["--max-cost", "--max-time"])
def test_R45_a_cost_limit_with_an_unpriced_model_is_refused_at_start(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, flag: str
) -> None:
    args = ink_args(fake_server, "--model", "my-own-model", "--max-cost", "1", "go")
    if flag == "--max-time":  # a time limit needs no price: the same model runs
        fake_server.script(say("ok"))
        args = ink_args(fake_server, "--model", "my-own-model", "--max-time", "600", "go")
        assert run_ink(args, ink_env(tmp_path), project).returncode == 0
        return
    done = run_ink(args, ink_env(tmp_path), project)
    assert done.returncode == 2
    line = one_line_error(done.stderr)
    assert "--max-cost" in line and "my-own-model" in line and "known prices" in line
    assert fake_server.requests == []


def test_R45_a_resumed_session_of_an_unpriced_model_is_not_gone_on_with_under_a_cost_limit(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """The start's refusal is not skipped by resuming: a session whose model has no known prices is not
    gone on with under a cost limit (its cost could not be kept, as a switch to it is refused); the
    invocation's own model is, and a warning says why. Without a cost limit the session's model goes on."""
    fake_server.script(say("one"), say("two"), say("three"))
    env, base = ink_env(tmp_path), ["-p", "--base-url", fake_server.openai_base_url, "--api-key", "k"]
    assert run_ink([*base, "--model", "my-own-model", "hi"], env, project).returncode == 0
    kept = run_ink([*base, "--continue", "--max-time", "600", "again"], env, project)
    assert kept.returncode == 0, kept.stderr
    limited = run_ink([*base, "--continue", "--max-cost", "1", "and again"], env, project)
    assert limited.returncode == 0, limited.stderr
    assert "instead of the session's my-own-model" in limited.stderr and "known prices" in limited.stderr
    used = [r.body["model"] for r in fake_server.requests]
    assert used[:2] == ["my-own-model", "my-own-model"] and used[2] != "my-own-model"


def test_R45_print_mode_stops_at_the_token_limit_with_exit_5(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(*reads(5))  # 15 tokens a reply (10 in, 5 out)
    done = run_ink(ink_args(fake_server, *PRICED, "--max-tokens", "40", "go"), ink_env(tmp_path), project)
    assert done.returncode == 5, done.stderr
    assert "warning: the session used 30 tokens of its tokens limit of 40 tokens (75%)" not in done.stderr
    assert "warning: the session used 45 tokens" in done.stderr  # 80 % crossed with the third reply
    assert "stopped at a budget limit before the task was finished" in done.stderr
    assert done.stdout == "step 2\n"  # the model's last words, printed
    assert len(fake_server.requests) == 3


def test_R45_stream_json_carries_the_warning_and_the_limit(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    big = Usage(input_tokens=100_000, output_tokens=1_000)  # $0.208 a reply at gpt-4.1's prices
    fake_server.script(*[Reply([text("x"), tool_call("read", {"path": "notes.txt"})], usage=big)] * 4)
    args = ink_args(fake_server, *PRICED, "--output-format", "stream-json", "--max-cost", "0.5", "go")
    done = run_ink(args, ink_env(tmp_path), project)
    assert done.returncode == 5
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [warning] = [e for e in events if e["type"] == "budget_warning"]
    assert (warning["kind"], warning["scope"], warning["limit"]) == ("cost", "session", 0.5)
    assert warning["used"] == pytest.approx(0.416)
    end = events[-1]
    assert end["type"] == "run_end" and end["stopReason"] == "budget"
    assert end["budget"] == {"kind": "cost", "scope": "session", "used": pytest.approx(0.624), "limit": 0.5}
    results = [e["result"] for e in events if e["type"] == "tool_end"]
    assert "stopped at its budget" in results[-1]["output"]


def test_R45_a_config_run_limit_ends_each_run_and_the_next_starts_afresh(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    env = ink_env(tmp_path)
    Path(env["INK_HOME"]).mkdir(parents=True)
    (Path(env["INK_HOME"]) / "config.toml").write_text("[limits.run]\nmax_tokens = 20\n")
    fake_server.script(*reads(3))
    flags = provider_args(fake_server, "openai", *PRICED, "--permission-mode", "yolo")
    with RpcClient.start(flags, env, project) as ink:
        ink.ok("prompt", text="go")
        end = ink.wait_event("run_end")
        assert end["stopReason"] == "budget" and end["budget"]["scope"] == "run"
        fake_server.clear_script()
        fake_server.script(say("fresh"))
        mark = ink.mark()
        ink.ok("prompt", text="again")
        assert ink.wait_event("run_end", after=mark)["stopReason"] == "completed"


def test_R45_a_switch_to_an_unpriced_model_is_refused_under_a_cost_limit(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    flags = provider_args(fake_server, "openai", *PRICED, "--max-cost", "2")
    with RpcClient.start(flags, ink_env(tmp_path), project) as ink:
        reason = ink.fail("set_model", model="my-own-model")
        assert "not switched to my-own-model" in reason and "known prices" in reason
        state = ink.ok("get_state")
        assert state["model"] == "gpt-4.1"
        assert state["budget"] == [{"scope": "session", "kind": "cost", "used": 0.0, "limit": 2.0}]
        assert ink.ok("set_model", model="gpt-4.1-mini")["model"] == "gpt-4.1-mini"


def test_R45_a_sub_agents_tokens_count_toward_its_parents_run(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    first = Reply([task("t1", "dig", "general")])
    heavy = Usage(input_tokens=1000, output_tokens=10)

    def sub(request: Any) -> Reply:
        return Reply([text("digging"), tool_call("read", {"path": "notes.txt"})], usage=heavy)

    fake_server.responder = route(lambda r: first if not r.tool_results() else say("done"), {"dig": sub})
    flags = provider_args(fake_server, "openai", *PRICED, "--permission-mode", "yolo", "--max-tokens", "2500")
    with RpcClient.start(flags, ink_env(tmp_path), project) as ink:
        ink.ok("prompt", text="go")
        warning = ink.wait_event("budget_warning")
        assert warning["used"] >= 2000 and "source" not in warning
        end = ink.wait_event("run_end")
        assert end["stopReason"] == "budget" and end["budget"]["kind"] == "tokens"
        [task_end] = [e for e in ink.events("tool_end") if e["toolCallId"] == "t1"]
        assert (
            "did not finish" in task_end["result"]["output"]
            and "tokens limit" in task_end["result"]["output"]
        )
    assert sum(1 for r in fake_server.requests if r.user_texts()[0] == "dig") == 3  # 3 x 1010 > 2500
