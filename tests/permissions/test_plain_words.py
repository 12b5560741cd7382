"""The fast path for commands of plain words (``shell.plain_words``), proven against real bash: for every
generated text the fast path accepts, the words bash hands to the command are the fast path's words, and
the command shape equals the one bashlex gives. Texts it declines go to the parser."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ink.permissions import shell
from ink.permissions.shell import CommandShape, analyse, plain_words

# Every builtin is disabled and PATH names nothing, so whatever the first word is, bash looks it up,
# finds nothing and calls its not-found handler with the command's words: they are printed, NUL-separated.
BASH = shutil.which("bash") or "/bin/bash"
PRINTF = shutil.which("printf") or "/usr/bin/printf"
PRELUDE = f"command_not_found_handle() {{ {PRINTF} '%s\\0' \"$@\"; }}\nenable -n $(compgen -b)\n"
PLAIN_CHARS = "abcXYZ019_-.=:,+@%/"
OTHER_CHARS = "'\"$`\\*?[]{}~#;&|<>()!\t\n"


def bash_words(command: str, cwd: Path) -> list[str] | None:
    """The words bash runs for ``command`` (one simple command), None when it runs no command."""
    done = subprocess.run(
        [BASH, "-c", PRELUDE + command],
        cwd=cwd,
        env={"PATH": str(cwd / "nothing")},
        capture_output=True,
        timeout=30,
        check=False,
    )
    if not done.stdout:
        return None
    return done.stdout.decode().split("\0")[:-1]


def parsed(command: str) -> CommandShape:
    """The shape bashlex gives, without the fast path."""
    found = CommandShape()
    shell._parse_into(command, found, depth=0, top=True)
    return found


# A first word never holds a slash: bash runs such a name directly instead of calling the handler.
FIRST = st.one_of(
    st.text(alphabet=PLAIN_CHARS.replace("/", ""), min_size=1, max_size=6),
    st.sampled_from(["time", "if", "for", "while", "do", "coproc", "function", "!", "a=b", "a+=1", "x=",
                     "echo", "printf", "cd", ".", ":", "%1", "-", "=x", "a.b=c", "in", "{", "[[", "#x"]),
)  # fmt: skip
WORD = st.one_of(
    st.text(alphabet=PLAIN_CHARS, min_size=1, max_size=8),
    st.text(alphabet=PLAIN_CHARS + OTHER_CHARS, min_size=1, max_size=4),
)
GAP = st.sampled_from([" ", "  ", "   "])


@st.composite
def commands(draw: st.DrawFn) -> str:
    words = [draw(FIRST), *draw(st.lists(WORD, max_size=5))]
    text = draw(st.sampled_from(["", " "])) + words[0]
    for word in words[1:]:
        text += draw(GAP) + word
    return text + draw(st.sampled_from(["", " "]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands())
@example(command="echo hi")
@example(command=" ls  -la  src/x.py ")
@example(command="git commit -m=wip,@x:1+2%")
def test_plain_words_are_the_words_bash_runs(tmp_path: Path, command: str) -> None:
    words = plain_words(command)
    if words is None:
        return
    assert bash_words(command, tmp_path) == words, command
    assert analyse(command) == parsed(command), command


@pytest.mark.parametrize(
    "command",
    ["time zap x", "if x", "a=b zap", "a+=1 zap", "%1", "%zap x", "x= zap", "echo 'hi'", "echo $x", "ls *.py",
     "cd ~", "a;b", "a && b", "a|b", "a > f", "echo {a,b}", "ls # x", "echo a\\ b", "a\nb", "a\tb", "! zap"],
)  # fmt: skip
def test_anything_else_goes_to_the_parser(command: str) -> None:
    assert plain_words(command) is None


def test_a_plain_command_and_its_nested_texts_are_read_without_bashlex(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom ink.permissions.shell import analyse\n"
        "shape = analyse('env bash -c ls')\n"
        "print([c.text for c in shape.nested], 'bashlex' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout == "['env bash -c ls', 'ls'] False\n"
