"""read: numbered lines, paging, caps, encodings, and every error as an error result."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from ink.agent.tool import Tool
from ink.tools import MAX_LINE_CHARS, MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES
from tests.tools.conftest import call, write_bytes


async def test_lines_are_numbered_like_cat_n(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "a.py", b"import os\n\nprint(os.getcwd())\n")
    out = await call(tools["read"], path="a.py")
    assert not out.is_error
    assert out.output == "     1\timport os\n     2\t\n     3\tprint(os.getcwd())\n"


async def test_unicode_text_is_shown_as_is(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "u.txt", "héllo wörld\n日本語のテキスト\n🙂 emoji\n".encode())
    out = await call(tools["read"], path="u.txt")
    assert out.output == "     1\théllo wörld\n     2\t日本語のテキスト\n     3\t🙂 emoji\n"


async def test_empty_file_says_so_and_is_not_an_error(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "empty.txt", b"")
    out = await call(tools["read"], path="empty.txt")
    assert not out.is_error
    assert out.output == "[The file is empty.]\n"


async def test_last_line_without_final_newline_is_shown(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "n.txt", b"one\ntwo")
    out = await call(tools["read"], path="n.txt")
    assert out.output == "     1\tone\n     2\ttwo\n"


async def test_offset_and_limit_page_through_with_a_footer(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "f.txt", "".join(f"line {i}\n" for i in range(1, 101)).encode())
    out = await call(tools["read"], path="f.txt", offset=10, limit=3)
    assert out.output.splitlines()[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert out.output.endswith("[Showing lines 10-12 of 100. Use offset=13 to read more.]\n")
    rest = await call(tools["read"], path="f.txt", offset=99)
    assert rest.output == "    99\tline 99\n   100\tline 100\n"  # reaches the end: no footer


async def test_footer_counts_a_last_line_without_newline(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "f.txt", b"a\nb\nc")
    out = await call(tools["read"], path="f.txt", limit=1)
    assert out.output.endswith("[Showing lines 1-1 of 3. Use offset=2 to read more.]\n")


async def test_offset_past_the_end_is_an_error_naming_the_length(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    write_bytes(tmp_path / "f.txt", b"a\nb\n")
    out = await call(tools["read"], path="f.txt", offset=5)
    assert out.is_error
    assert "offset 5 is past the end of f.txt, which has 2 lines" in out.output


async def test_default_page_is_capped_in_lines(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "f.txt", b"x\n" * (MAX_OUTPUT_LINES + 500))
    out = await call(tools["read"], path="f.txt")
    lines = out.output.splitlines()
    assert lines[MAX_OUTPUT_LINES - 1] == f"{MAX_OUTPUT_LINES:>6}\tx"
    assert lines[-1] == (
        f"[Showing lines 1-{MAX_OUTPUT_LINES} of {MAX_OUTPUT_LINES + 500}. "
        f"Use offset={MAX_OUTPUT_LINES + 1} to read more.]"
    )


async def test_page_is_capped_in_bytes_with_a_notice(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "wide.txt", ("y" * 199 + "\n").encode() * 1000)  # 200 KB
    out = await call(tools["read"], path="wide.txt")
    body, footer = out.output.rsplit("\n\n", 1)
    shown = len(body.splitlines())
    assert len(body.encode()) <= MAX_OUTPUT_BYTES
    assert shown == MAX_OUTPUT_BYTES // (6 + 1 + 199 + 1)
    assert footer == (
        f"[Showing lines 1-{shown} of 1000 (output capped at {MAX_OUTPUT_BYTES // 1000} KB). "
        f"Use offset={shown + 1} to read more.]\n"
    )


async def test_long_line_is_cut_with_the_exact_count(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "long.txt", b"a" * (MAX_LINE_CHARS + 1234) + b"\nshort\n")
    out = await call(tools["read"], path="long.txt")
    first, second = out.output.splitlines()
    assert first == f"     1\t{'a' * MAX_LINE_CHARS} [... line cut: 1234 more bytes]"
    assert second == "     2\tshort"


async def test_ten_megabyte_file_first_page_and_total(tmp_path: Path, tools: dict[str, Tool]) -> None:
    line = b"0123456789" * 9 + b"abcdefghi\n"  # 100 bytes
    write_bytes(tmp_path / "big.txt", line * 100_000)  # 10 MB
    out = await call(tools["read"], path="big.txt", limit=5)
    assert out.output.startswith("     1\t" + line.decode().rstrip("\n"))
    assert out.output.endswith("[Showing lines 1-5 of 100000. Use offset=6 to read more.]\n")
    end = await call(tools["read"], path="big.txt", offset=99_999)
    assert end.output.splitlines()[0].startswith(" 99999\t0123")
    assert len(end.output.splitlines()) == 2


async def test_ten_megabyte_single_line_is_cut_not_loaded(tmp_path: Path, tools: dict[str, Tool]) -> None:
    size = 10 * 1024 * 1024
    write_bytes(tmp_path / "one.min.js", b"x" * size)
    out = await call(tools["read"], path="one.min.js")
    assert (
        out.output == f"     1\t{'x' * MAX_LINE_CHARS} [... line cut: {size - MAX_LINE_CHARS} more bytes]\n"
    )


async def test_crlf_lines_show_without_carriage_returns(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "w.txt", b"a\r\nb\r\n")
    out = await call(tools["read"], path="w.txt")
    assert out.output == "     1\ta\n     2\tb\n"


async def test_utf8_bom_is_not_shown(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "bom.txt", b"\xef\xbb\xbfhello\n")
    out = await call(tools["read"], path="bom.txt")
    assert out.output == "     1\thello\n"


async def test_latin1_text_is_decoded(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "l1.txt", "café crème\n".encode("latin-1"))
    out = await call(tools["read"], path="l1.txt")
    assert out.output == "     1\tcafé crème\n"


async def test_binary_file_is_refused(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    out = await call(tools["read"], path="img.png")
    assert out.is_error
    assert (
        out.output
        == "Cannot read img.png: it looks binary (NUL byte at offset 8). read shows text files only."
    )


async def test_undecodable_control_bytes_are_refused(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "blob.bin", bytes([0xFF, 0x01, 0x02, 0x03, 0xFE, 0x05]) * 50)
    out = await call(tools["read"], path="blob.bin")
    assert out.is_error
    assert "it looks binary (not UTF-8, and full of control bytes)" in out.output


async def test_missing_file_names_close_matches(tmp_path: Path, tools: dict[str, Tool]) -> None:
    write_bytes(tmp_path / "src" / "main.py", b"")
    out = await call(tools["read"], path="src/main.pu")
    assert out.is_error
    assert out.output == "File not found: src/main.pu. Similar names in that folder: main.py"
    bare = await call(tools["read"], path="nothing/here.txt")
    assert bare.output == "File not found: nothing/here.txt"


async def test_directory_is_an_error_with_a_hint(tmp_path: Path, tools: dict[str, Tool]) -> None:
    (tmp_path / "pkg").mkdir()
    out = await call(tools["read"], path="pkg")
    assert out.is_error
    assert "pkg is a directory" in out.output and "ls" in out.output and "glob" in out.output


async def test_absolute_path_outside_workspace_is_shown_as_given(tools: dict[str, Tool]) -> None:
    with tempfile.TemporaryDirectory() as other:
        missing = os.path.join(other, "gone.txt")
        out = await call(tools["read"], path=missing)
        assert out.output == f"File not found: {missing}"


async def test_fifo_is_refused_without_blocking(tmp_path: Path, tools: dict[str, Tool]) -> None:
    os.mkfifo(tmp_path / "pipe")
    out = await call(tools["read"], path="pipe")
    assert out.is_error
    assert "not a regular file" in out.output


ROOT_DENIED = "/proc/sys/vm/compact_memory"
"""Root reads any file whatever its mode, but the kernel still refuses to let anyone read this one."""


@pytest.mark.skipif(os.geteuid() == 0 and not os.path.exists(ROOT_DENIED), reason="no file root may not read")
async def test_permission_denied_is_an_error_result(tmp_path: Path, tools: dict[str, Tool]) -> None:
    if os.geteuid() == 0:
        given = ROOT_DENIED
    else:
        write_bytes(tmp_path / "secret.txt", b"top\n", mode=0o000)
        given = "secret.txt"
    out = await call(tools["read"], path=given)
    assert out.is_error
    assert out.output == f"Permission denied: {given}"


@pytest.mark.parametrize("offset", [0, -1])
async def test_bad_offset_called_directly_is_an_error_result(
    tmp_path: Path, tools: dict[str, Tool], offset: int
) -> None:
    write_bytes(tmp_path / "f.txt", b"a\n")
    out = await call(tools["read"], path="f.txt", offset=offset)
    assert out.is_error
    assert re.fullmatch(r"Invalid arguments for read: offset must be an integer >= 1\.", out.output)
