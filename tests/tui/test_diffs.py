"""Reading a unified diff into styled lines: roles, the language of each file, the words that changed."""

from __future__ import annotations

from ink.frontends.tui.diffs import diff_lines


def changed_words(text: str, sign: str) -> list[str]:
    [line] = [line for line in diff_lines(text) if line.sign == sign]
    return [part.text for part in line.parts if part.changed]


def test_roles_and_the_words_that_changed_in_a_replaced_line() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep = 1\n-total = a + b\n+total = a - b\n"
    lines = diff_lines(text)
    assert [line.role for line in lines] == ["file", "file", "hunk", "context", "del", "add", "note"]
    assert changed_words(text, "-") == ["+"] and changed_words(text, "+") == ["-"]
    assert any(part.token is not None for part in lines[3].parts)  # x.py: lexed as Python


def test_lines_too_different_are_not_marked_word_by_word_and_unknown_files_are_plain() -> None:
    text = "--- a/x.unknownext\n+++ b/x.unknownext\n@@ -1 +1 @@\n-alpha beta gamma\n+12345\n"
    assert changed_words(text, "-") == [] and changed_words(text, "+") == []
    assert all(part.token is None for line in diff_lines(text) for part in line.parts)


def test_each_file_of_a_diff_keeps_its_own_hunks_and_text_that_is_no_diff_is_notes() -> None:
    two = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n--- a/b.md\n+++ b/b.md\n@@ -1 +1 @@\n-c\n+d"
    assert [line.role for line in diff_lines(two)].count("file") == 4
    assert [line.role for line in diff_lines("just words\n-not a hunk")] == ["note", "note"]
