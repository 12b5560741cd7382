"""Property-based fuzzing of every boundary where text enters the history (issue 11; docs/security.md
"Input boundaries"): hostile prompts, model text, tool-call arguments of any shape and depth, file names
and command output of arbitrary bytes, RPC lines. After every case the next request passes the strict
fake server and the session reloads (``tests/hardening/fuzzing.py``). The real argv and stdin of an
``ink -p`` process are fuzzed with fewer examples (a process each)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ink.config import ConfigError
from ink.config.files import parse_config
from ink.frontends.rpc.protocol import Command, parse_line
from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, Reply, text, tool_call
from tests.hardening.fuzzing import RESUMED, assert_sendable_and_reloadable, hostile_text, run_turns
from tests.hardening.inkbytes import print_args, run_bytes

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FEW = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_text)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(hostile_text, inner, max_size=3)),
)


class Case:
    """A fresh project folder and ink home for one example (hypothesis runs many in one test)."""

    def __enter__(self) -> tuple[Path, Path]:
        self._dir = tempfile.TemporaryDirectory()
        root = Path(self._dir.name)
        (root / "proj").mkdir()
        return root / "proj", root / "home"

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def check_case(server: FakeModelServer, prompt: str, replies: list[Reply], protocol: str = "openai") -> None:
    since = len(server.requests)
    with Case() as (project, home):
        ends = run_turns(server, project, home, prompt, replies, protocol)
        assert [e.stop_reason for e in ends] == ["completed", "completed"], [e.error for e in ends]
        assert_sendable_and_reloadable(server, since, home)


@FUZZ
@given(prompt=hostile_text, protocol=st.sampled_from(["openai", "anthropic"]))
def test_any_prompt_text(fake_server: FakeModelServer, prompt: str, protocol: str) -> None:
    check_case(fake_server, "p " + prompt, [Reply([text("ok")])], protocol)


@FUZZ
@given(reply=hostile_text, args=json_value, protocol=st.sampled_from(["openai", "anthropic"]))
def test_any_model_text_and_tool_arguments(
    fake_server: FakeModelServer, reply: str, args: Any, protocol: str
) -> None:
    raw = json.dumps(
        {"path": args}
    )  # a lone surrogate travels as its JSON escape, as a real service sends it
    check_case(
        fake_server,
        "go",
        [Reply([text(reply), tool_call("read", raw, id="c1")]), Reply([text(reply)])],
        protocol,
    )


@FUZZ
@given(depth=st.integers(0, 1500), kind=st.sampled_from(["[", '{"a":']), cut=st.booleans())
def test_any_nesting_or_cut_of_tool_arguments(
    fake_server: FakeModelServer, depth: int, kind: str, cut: bool
) -> None:
    close = "]" if kind == "[" else "}"
    raw = '{"path":' + kind * depth + "1" + close * depth + "}"
    raw = raw[: len(raw) // 2] if cut else raw
    check_case(fake_server, "go", [Reply([tool_call("read", raw, id="c1")]), Reply([text("done")])])


names = st.binary(min_size=1, max_size=20).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")
)


@FUZZ
@given(name=names, content=st.binary(max_size=200), tool=st.sampled_from(["ls", "glob", "bash", "grep"]))
def test_any_file_name_and_file_content(
    fake_server: FakeModelServer, name: bytes, content: bytes, tool: str
) -> None:
    args = {
        "ls": {},
        "glob": {"pattern": "**/*"},
        "bash": {"command": "ls; cat -- *"},
        "grep": {"pattern": "."},
    }
    since = len(fake_server.requests)
    with Case() as (project, home):
        fd = os.open(os.path.join(os.fsencode(project), name), os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, content)
        os.close(fd)
        replies = [Reply([tool_call(tool, args[tool], id="c1")]), Reply([text("seen")])]
        ends = run_turns(fake_server, project, home, "look", replies, "openai")
        assert [e.stop_reason for e in ends] == ["completed", "completed"]
        assert_sendable_and_reloadable(fake_server, since, home)


@FUZZ
@given(
    line=st.one_of(
        st.binary(max_size=80), hostile_text.map(lambda t: json.dumps({"type": "prompt", "text": t}).encode())
    )
)
@example(line=b'{"type": "prompt", "text": " !"}')  # a bang line: see below
def test_any_rpc_line(fake_server: FakeModelServer, line: bytes) -> None:
    parsed = parse_line(line)  # never raises: a Command or a Rejection
    if isinstance(parsed, Command) and parsed.type == "prompt" and parsed.fields["text"].strip():
        # A text that starts with "!" runs in the shell and never reaches the model (R14): sent as the
        # tail of a prompt instead, so that every parsed text makes a turn.
        check_case(fake_server, "p " + parsed.fields["text"], [Reply([text("ok")])])


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 6000), kind=st.sampled_from(["[", "{a = "]))
def test_any_config_nesting_is_read_or_a_config_error(depth: int, kind: str) -> None:
    close = "]" if kind == "[" else "}"
    text_ = f"model = 'm'\nx = {kind * depth}1{close * depth}\n"
    try:
        parse_config(Path("config.toml"), text_.encode())
    except ConfigError as exc:
        assert "\n" not in str(exc)


@FEW
@given(data=st.binary(min_size=1, max_size=60))
def test_any_bytes_on_stdin_and_in_argv_of_a_real_process(
    fake_server: FakeModelServer, tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    since = len(fake_server.requests)
    root = tmp_path_factory.mktemp("proc")
    project = root / "proj"
    project.mkdir()
    env = ink_env(root)
    fake_server.script(Reply([text("one")]), Reply([text(RESUMED)]))
    argv_prompt = b"x" + data.replace(b"\0", b"")  # argv cannot hold NUL
    first = run_bytes([*print_args(fake_server), argv_prompt], env, project, stdin=data)
    assert first.returncode == 0, first.stderr
    piped = run_bytes(print_args(fake_server, "openai", "--continue"), env, project, stdin=b"y" + data)
    assert piped.returncode == 0, piped.stderr
    assert_sendable_and_reloadable(fake_server, since, Path(env["INK_HOME"]))
