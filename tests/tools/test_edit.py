"""edit: exact replacement, ambiguity refused with line numbers, all-or-nothing, endings and encoding kept."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ink.agent.tool import Tool
from ink.ai.details import FileDiff
from tests.tools.conftest import call, ctx, write_bytes

CODE = b"def a():\n    return 1\n\n\ndef b():\n    return 1\n\n\ndef c():\n    return 2\n"


async def test_single_edit_returns_a_unified_diff(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "m.py", CODE)
    out = await call(
        tools["edit"], path="m.py", old_text="def c():\n    return 2", new_text="def c():\n    return 3"
    )
    assert not out.is_error
    assert out.output == (
        "Edited m.py: 1 replacement.\n\n"
        "--- a/m.py\n+++ b/m.py\n@@ -7,4 +7,4 @@\n \n \n def c():\n-    return 2\n+    return 3\n"
    )
    assert (tmp_path / "m.py").read_bytes() == CODE.replace(b"return 2", b"return 3")
    assert out.details == (
        FileDiff(str(tmp_path / "m.py"), CODE.decode(), CODE.decode().replace("return 2", "return 3"),
                 out.output.partition("\n\n")[2]),
    )  # fmt: skip


async def test_not_unique_lists_every_candidate_line(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "m.py", CODE)
    out = await call(tools["edit"], path="m.py", old_text="    return 1\n", new_text="    return 0\n")
    assert out.is_error
    assert "occurs 2 times, starting at lines 2, 6" in out.output
    assert out.output.startswith("No change made to m.py.")
    assert (tmp_path / "m.py").read_bytes() == CODE


async def test_replace_all_changes_every_occurrence(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "m.py", CODE)
    out = await call(tools["edit"], path="m.py", old_text="return 1", new_text="return 0", replace_all=True)
    assert out.output.startswith("Edited m.py: 2 replacements.")
    assert (tmp_path / "m.py").read_bytes().count(b"return 0") == 2


async def test_missing_text_is_refused_with_the_closest_line(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "m.py", CODE)
    out = await call(tools["edit"], path="m.py", old_text="def cc():\n    return 2", new_text="x")
    assert out.is_error
    assert "old_text was not found in the file. The closest line is 9: 'def c():'" in out.output


async def test_indentation_mismatch_is_pointed_out(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "m.py", CODE)
    out = await call(tools["edit"], path="m.py", old_text="\treturn 2", new_text="\treturn 3")
    assert "Line 10 has the same text with different indentation" in out.output


async def test_multi_edit_applies_in_order(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "m.py", CODE)
    edits = [
        {"old_text": "def a():", "new_text": "def first():"},
        {"old_text": "def first():\n    return 1", "new_text": "def first():\n    return 10"},
        {"old_text": "return 2", "new_text": "return 20"},
    ]
    out = await call(tools["edit"], path="m.py", edits=edits)
    assert out.output.startswith("Edited m.py: 3 replacements in 3 edits.")
    text = (tmp_path / "m.py").read_text()
    assert text.startswith("def first():\n    return 10\n") and "return 20" in text


async def test_multi_edit_is_all_or_nothing(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "m.py", CODE)
    before = path.stat()
    edits = [
        {"old_text": "def a():", "new_text": "def first():"},
        {"old_text": "return 1", "new_text": "return 0"},  # ambiguous: the whole call fails
    ]
    out = await call(tools["edit"], path="m.py", edits=edits)
    assert out.is_error
    assert "Edit 2 of 2: old_text is not unique: it occurs 2 times, starting at lines 2, 6" in out.output
    assert path.read_bytes() == CODE
    assert path.stat().st_ino == before.st_ino and path.stat().st_mtime_ns == before.st_mtime_ns


async def test_crlf_file_matches_lf_text_and_stays_crlf(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "w.txt", b"one\r\ntwo\r\nthree\r\n")
    out = await call(tools["edit"], path="w.txt", old_text="one\ntwo\n", new_text="one\n2\nzwei\n")
    assert not out.is_error
    assert path.read_bytes() == b"one\r\n2\r\nzwei\r\nthree\r\n"
    assert "\r" not in out.output  # the diff is shown with plain newlines


async def test_crlf_text_from_the_model_also_matches(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "w.txt", b"one\r\ntwo\r\n")
    await call(tools["edit"], path="w.txt", old_text="one\r\ntwo", new_text="1\r\n2")
    assert path.read_bytes() == b"1\r\n2\r\n"


async def test_mixed_line_endings_are_left_alone_outside_the_edit(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    path = write_bytes(tmp_path / "m.txt", b"lf\ncrlf a\r\ncrlf b\r\nlf end\n")
    await call(tools["edit"], path="m.txt", old_text="crlf a\ncrlf b", new_text="A\nB")
    assert path.read_bytes() == b"lf\nA\r\nB\r\nlf end\n"


async def test_utf8_bom_is_kept(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "b.cs", b"\xef\xbb\xbfclass A {}\n")
    await call(tools["edit"], path="b.cs", old_text="class A", new_text="class B")
    assert path.read_bytes() == b"\xef\xbb\xbfclass B {}\n"


async def test_file_without_bom_gets_none(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "n.txt", "naïve\n".encode())
    await call(tools["edit"], path="n.txt", old_text="naïve", new_text="naïf")
    assert path.read_bytes() == "naïf\n".encode()


async def test_latin1_is_kept_and_unencodable_text_refused(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "l.txt", "prix: 5 €uro café\n".replace("€", "E").encode("latin-1"))
    await call(tools["edit"], path="l.txt", old_text="café", new_text="thé")
    assert path.read_bytes() == "prix: 5 Euro thé\n".encode("latin-1")
    out = await call(tools["edit"], path="l.txt", old_text="thé", new_text="茶")
    assert out.is_error
    assert "it is latin-1 text, which cannot hold '茶'" in out.output
    assert path.read_bytes() == "prix: 5 Euro thé\n".encode("latin-1")


async def test_mode_is_kept(tmp_path: Path, tools: dict[str, Tool]) -> None:
    path = write_bytes(tmp_path / "x.sh", b"echo 1\n", mode=0o750)
    await call(tools["edit"], path="x.sh", old_text="1", new_text="2")
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert os.listdir(tmp_path) == ["x.sh"]  # no temporary file left behind


async def test_no_final_newline_is_kept_and_marked_in_the_diff(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    path = write_bytes(tmp_path / "n.txt", b"a\nlast")
    out = await call(tools["edit"], path="n.txt", old_text="last", new_text="final")
    assert path.read_bytes() == b"a\nfinal"
    assert "-last\n\\ No newline at end of file\n+final\n\\ No newline at end of file\n" in out.output


async def test_refusals_name_the_problem(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "f.txt", b"abc\n")
    write_bytes(tmp_path / "bin", b"\x00\x01")
    cases: dict[str, tuple[dict[str, object], str]] = {
        "empty": ({"old_text": "", "new_text": "x"}, "old_text is empty"),
        "same": ({"old_text": "abc", "new_text": "abc"}, "the same; there is nothing to change"),
        "both": (
            {"old_text": "a", "new_text": "b", "edits": [{"old_text": "a", "new_text": "b"}]},
            "give either old_text/new_text or edits, not both",
        ),
        "neither": ({}, "old_text and new_text are required"),
    }
    for name, (args, expected) in cases.items():
        out = await tools["edit"].run({"path": "f.txt", **args}, ctx())
        assert out.is_error and expected in out.output, name
    missing = await call(tools["edit"], path="nope.txt", old_text="a", new_text="b")
    assert missing.output == "File not found: nope.txt. To create a file use write."
    binary = await call(tools["edit"], path="bin", old_text="a", new_text="b")
    assert binary.output == "Cannot edit bin: it looks binary (NUL byte at offset 0)."
    assert (tmp_path / "f.txt").read_bytes() == b"abc\n"


async def test_edit_through_a_symlink_changes_the_target(tmp_path: Path, tools: dict[str, Tool]) -> None:
    real = write_bytes(tmp_path / "real.txt", b"old\n")
    (tmp_path / "link.txt").symlink_to(real)
    await call(tools["edit"], path="link.txt", old_text="old", new_text="new")
    assert (tmp_path / "link.txt").is_symlink() and real.read_bytes() == b"new\n"


def test_describe_previews_the_whole_file_as_it_will_be(tmp_path: Path, tools: dict[str, Tool]) -> None:
    """A permission question shows the real diff: the file read, the edits applied in memory, nothing
    written; an edit that would be refused falls back to the texts given."""
    write_bytes(tmp_path / "m.py", CODE)
    call_args = {"path": "m.py", "old_text": "return 2", "new_text": "return 3"}
    [preview] = tools["edit"].describe(call_args).preview
    assert (preview.before, preview.after) == (CODE.decode(), CODE.decode().replace("return 2", "return 3"))
    assert "@@ -7,4 +7,4 @@\n \n \n def c():\n-    return 2\n+    return 3" in preview.unified
    assert (tmp_path / "m.py").read_bytes() == CODE  # only described
    refused = tools["edit"].describe({"path": "m.py", "old_text": "return 1", "new_text": "x"}).preview
    assert [(d.before, d.after) for d in refused] == [("return 1", "x")]  # ambiguous: the texts given
