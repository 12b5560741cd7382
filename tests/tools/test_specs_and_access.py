"""Tool specs as the model and the scheduler see them, and what a call would touch (for permissions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastjsonschema
import pytest

from ink.agent.tool import Tool
from ink.agent.validation import validate_arguments
from ink.tools import ProcessRegistry, default_tools, resolve_path
from ink.tools.limits import MAX_ECHO_CHARS
from ink.tools.output import HeadTailBuffer
from tests.tools.conftest import call, write_bytes


def test_default_tools_names_and_concurrency(tools: dict[str, Tool]) -> None:
    assert list(tools) == ["read", "write", "edit", "bash", "grep", "glob", "ls", "plan"]
    safe = {name for name, tool in tools.items() if tool.concurrency_safe}
    assert safe == {"read", "grep", "glob", "ls", "plan"}


def test_schemas_compile_and_forbid_extra_arguments(tools: dict[str, Tool]) -> None:
    for name, tool in tools.items():
        spec = tool.spec
        assert spec.name == name and len(spec.description) > 80
        fastjsonschema.compile(dict(spec.parameters))
        assert spec.parameters["additionalProperties"] is False
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
        minimal = {key: _sample(spec.parameters["properties"][key]) for key in spec.parameters["required"]}
        assert validate_arguments(spec.parameters, minimal) is None
        problem = validate_arguments(spec.parameters, {**minimal, "bogus": 1})
        assert problem is not None and "bogus" in problem


def _sample(schema: dict[str, Any]) -> Any:
    """A smallest valid value of a property's schema: a string, an enum's first value, a list of one."""
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("type") == "array":
        return [_sample(schema["items"])]
    if schema.get("type") == "object":
        return {key: _sample(schema["properties"][key]) for key in schema.get("required", [])}
    return "x"


def test_validation_catches_wrong_types(tools: dict[str, Tool]) -> None:
    edit = tools["edit"].spec
    assert validate_arguments(edit.parameters, {"path": "a", "edits": [{"old_text": "x"}]}) is not None
    assert validate_arguments(edit.parameters, {"path": "a", "old_text": "x", "new_text": "y"}) is None
    bash = tools["bash"].spec
    assert validate_arguments(bash.parameters, {"command": "ls", "timeout": 0}) is not None
    assert validate_arguments(bash.parameters, {"command": "ls", "timeout": 1.5}) is None


def test_resolve_path(tmp_path: Path) -> None:
    assert resolve_path(tmp_path, "a/../b.txt") == tmp_path / "b.txt"
    assert resolve_path(tmp_path, "/etc/hosts") == Path("/etc/hosts")
    assert resolve_path(tmp_path, "~/x") == Path.home() / "x"
    assert resolve_path(tmp_path, "") == tmp_path


def test_what_each_call_touches(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write = tools["write"].describe({"path": "a/b.txt", "content": ""})
    assert write.paths == (tmp_path / "a" / "b.txt",) and write.command is None
    assert tools["read"].describe({"path": "x"}).paths == (tmp_path / "x",)
    assert tools["ls"].describe({}).paths == (tmp_path,)
    bash = tools["bash"].describe({"command": "git status && rm -rf x"})
    assert (bash.paths, bash.command) == ((), "git status && rm -rf x")
    assert tools["edit"].describe({"path": 3}).paths == ()


def test_a_written_path_follows_symlinks_out_of_the_workspace(tmp_path: Path) -> None:
    outside = write_bytes(tmp_path / "outside" / "secret.txt", b"")
    work = tmp_path / "work"
    work.mkdir()
    (work / "innocent.txt").symlink_to(outside)
    tools = {t.spec.name: t for t in default_tools(work, ProcessRegistry())}
    assert tools["edit"].describe({"path": "innocent.txt"}).paths[0] == outside
    new = tools["write"].describe({"path": "../outside/new.txt", "content": ""})
    assert new.paths == (tmp_path / "outside" / "new.txt",)
    assert tools["read"].describe({"path": "innocent.txt"}).paths == (work / "innocent.txt",)  # as named


def test_head_tail_buffer_small_output_is_untouched() -> None:
    buffer = HeadTailBuffer(100, 10)
    buffer.feed(b"a\r\nb\n")
    assert buffer.render() == "a\nb\n"


def test_head_tail_buffer_line_cap_without_byte_cut() -> None:
    buffer = HeadTailBuffer(10_000, 4)
    for i in range(10):
        buffer.feed(f"{i}\n".encode())
    assert buffer.render() == (
        "0\n1\n[... 6 lines (12 bytes) cut from the middle of the output; "
        "showing the first 2 and the last 2 lines ...]\n8\n9\n"
    )


def test_head_tail_buffer_is_bounded_and_decodes_split_characters() -> None:
    buffer = HeadTailBuffer(64, 100)
    for _ in range(10_000):
        buffer.feed("é".encode() * 10 + b"\n")
    text = buffer.render()
    assert len(text.encode()) < 300
    assert buffer.total_bytes == 210_000 and buffer.total_lines == 10_000
    assert "cut from the middle" in text and "\ufffd" not in text.split("]\n")[-1]


def test_head_only_buffer() -> None:
    buffer = HeadTailBuffer(10, 100, keep_tail=False)
    buffer.feed(b"one\ntwo\nthree\nfour\n")
    assert buffer.render() == "one\ntwo\n[... 2 more lines (11 bytes) not shown ...]\n"


def test_each_tool_describes_its_kind_and_what_a_call_touches(tmp_path: Path, tools: dict[str, Tool]) -> None:
    kinds = {name: tool.kind for name, tool in tools.items()}
    assert kinds == {
        "read": "read", "write": "edit", "edit": "edit", "bash": "execute",
        "grep": "search", "glob": "search", "ls": "read", "plan": "read",
    }  # fmt: skip
    read = tools["read"].describe({"path": "a.py", "offset": 40})
    assert (read.title, read.paths, read.line) == ("read a.py (from line 40)", (tmp_path / "a.py",), 40)
    bash = tools["bash"].describe({"command": "npm test\nnpm run lint"})
    assert (bash.title, bash.paths, bash.command) == ("bash npm test…", (), "npm test\nnpm run lint")
    assert tools["grep"].describe({"pattern": "TODO", "path": "src"}).title == "grep TODO in src"
    assert tools["ls"].describe({}).paths == (tmp_path,)
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    write = tools["write"].describe({"path": "link.txt", "content": "new\n"})
    assert write.paths == (tmp_path / "real.txt", tmp_path / "link.txt")  # the real file first
    assert [(d.before, d.after) for d in write.preview] == [("old\n", "new\n")]
    edit = tools["edit"].describe({"path": "real.txt", "edits": [{"old_text": "a", "new_text": "b"}] * 2})
    assert [(d.before, d.after) for d in edit.preview] == [("a", "b"), ("a", "b")]
    for tool in tools.values():  # odd arguments: described, never raised
        assert tool.describe({"path": 3, "command": None, "edits": "x"}).title


@pytest.mark.parametrize("tool", ["read", "ls", "glob", "grep", "write", "edit"])
@pytest.mark.parametrize("where", ["inside", "outside"])
async def test_a_huge_path_is_not_echoed_whole(tools: dict[str, Tool], tool: str, where: str) -> None:
    """Issue 11: a read error echoed a 20 MB path. Every message quotes at most MAX_ECHO_CHARS of it."""
    huge = ("/" if where == "outside" else "") + "a" * 20_000_000
    args: dict[str, Any] = {"path": huge}
    if tool in ("glob", "grep"):
        args["pattern"] = "x"
    if tool == "write":
        args["content"] = "x"
    if tool == "edit":
        args["edits"] = [{"old_text": "a", "new_text": "b"}]
    out = await call(tools[tool], **args)
    assert out.is_error, out.output[:200]
    assert len(out.output) < 2 * MAX_ECHO_CHARS, (tool, out.output[:2000])


async def test_a_huge_pattern_is_not_echoed_whole(tmp_path: Path, tools: dict[str, Tool]) -> None:
    out = await call(tools["grep"], pattern="q" * 1_000_000)
    assert len(out.output) < 2 * MAX_ECHO_CHARS, out.output[:2000]
