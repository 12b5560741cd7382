"""What bash makes of a word before it runs it, read from the word's source text: quotes removed (``'..'``,
``".."``, ``$'..'`` with its escapes, backslashes), and every part only known when it runs (``$x``,
``$(..)``, backticks, globs, brace expansion, ``~``) replaced by ``WILD``, which stands for any text.

Deny rules are matched against these templates (``rules.CommandPattern.may_match``): ``$'rm' x`` is
``rm x``, ``$(echo rm) x`` is ``WILD x``, which a rule ``rm *`` cannot be proven not to match.

``rough_commands`` is the fallback for text the bash parser cannot read: an over-approximation of the
commands it may run (every tail of every piece between operators), so nothing a deny rule names hides in
syntax the parser does not know.
"""

from __future__ import annotations

import re
from functools import cache

import msgspec

WILD = "\x00"  # any text, spaces and slashes included (a NUL cannot be part of a real argument)
ANSI_C = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
          "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip
OPERATORS = frozenset(";&|()<>\n")


def template(source: str) -> str:
    """The template of one word as written (see the module doc). Never raises."""
    out: list[str] = []
    i, end = 0, len(source)
    while i < end:
        char = source[i]
        if char == "\\":
            out.append(source[i + 1 : i + 2].replace("\n", ""))
            i += 2
        elif char == "'":
            close = _find(source, "'", i + 1)
            out.append(source[i + 1 : close])
            i = close + 1
        elif source.startswith("$'", i):
            text, i = _ansi_c(source, i + 2)
            out.append(text)
        elif char == '"' or source.startswith('$"', i):
            i = _double_quoted(source, i + (2 if char == "$" else 1), out)
        elif char in "$`" and _expansion(source, i) > i + 1:
            i = _expansion(source, i)
            out.append(WILD)
        elif _is_glob(source, i) or (char == "~" and i == 0):
            i = _glob_end(source, i)
            out.append(WILD)
        else:
            out.append(char)
            i += 1
    return re.sub(f"{WILD}+", WILD, "".join(out))


def command_name(word: str) -> str:
    """The name a command template is looked up by: its basename (``/usr/bin/rm`` runs ``rm``). A name
    whose last part is computed may be anything (``/usr/bin/r$x``, ``a$x`` with ``x=/rm``)."""
    if WILD not in word:
        return word.rsplit("/", 1)[-1] or word
    tail = word.rsplit(WILD, 1)[-1]
    return word.rsplit("/", 1)[-1] if "/" in tail else WILD


def substitutions(text: str) -> list[str]:
    """The command texts of every ``$(..)`` and backtick substitution in ``text`` (a here-document body,
    where bash runs them although the parser does not look)."""
    found: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("$(", i) and not text.startswith("$((", i):
            end = _balanced(text, i + 2)
            found.append(text[i + 2 : end - 1])
            i = end
        elif text[i] == "`":
            end = _find(text, "`", i + 1)
            found.append(text[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return found


_SCRIPT_CHARS = frozenset("'\"\\ \t\n;|&$`()")


class RoughCommands(msgspec.Struct):
    """``tails``: templates of every piece's every tail (any of them may be a command bash runs).
    ``nested``: texts of substitutions, to be read as commands themselves."""

    tails: list[str] = msgspec.field(default_factory=list)
    nested: list[str] = msgspec.field(default_factory=list)


def rough_commands(text: str) -> RoughCommands:
    """An over-approximation of the simple commands ``text`` may run, without a parser: words split as
    bash splits them, pieces cut at every operator; each tail's first word is taken as a command name."""
    found = RoughCommands()
    for piece in _pieces(text, found.nested):
        words = [template(w) for w in piece]
        # A word that still holds shell syntax once unquoted may be script text (``bash -c``, ``eval``,
        # a here-document line): it is read as a command itself.
        found.nested.extend(w for w in words if any(c in w for c in _SCRIPT_CHARS))
        for start in range(len(words)):
            name = command_name(words[start])
            found.tails.append(" ".join([name, *words[start + 1 :]]))
    return found


# -- the scanner -----------------------------------------------------------------------------------


def _pieces(text: str, nested: list[str]) -> list[list[str]]:
    """Word sources, grouped into pieces between operators; substitution texts go to ``nested``."""
    pieces: list[list[str]] = [[]]
    i, start = 0, None
    while i <= len(text):
        char = text[i] if i < len(text) else " "
        if char in " \t" or (char in OPERATORS and not _opens_substitution(text, i)):
            if start is not None:
                pieces[-1].append(text[start:i])
                start = None
            if char in OPERATORS:
                pieces.append([])
            i += 1
            continue
        start = i if start is None else start
        i = _word_part_end(text, i, nested)
    return [p for p in pieces if p]


def _opens_substitution(text: str, i: int) -> bool:
    return text[i] in "<>" and text.startswith("(", i + 1)


def _word_part_end(text: str, i: int, nested: list[str]) -> int:
    """Where the part of a word that starts at ``i`` ends (a quoted string, a substitution, a char)."""
    char = text[i]
    if char == "\\":
        return i + 2
    if char == "'":
        return _find(text, "'", i + 1) + 1
    if text.startswith("$'", i):
        return _ansi_c(text, i + 2)[1]
    if char == '"':
        end = _double_quoted(text, i + 1, [])
        nested.extend(substitutions(text[i:end]))
        return end
    if char in "$`" or _opens_substitution(text, i):
        end = _expansion(text, i + 1 if char in "<>" else i)
        nested.extend(substitutions(text[i:end].lstrip("<>")))
        return end
    return i + 1


def _find(text: str, char: str, start: int) -> int:
    """The index of ``char`` from ``start``, past backslash escapes for backticks; the end if absent."""
    i = start
    while i < len(text):
        if text[i] == "\\" and char == "`":
            i += 2
            continue
        if text[i] == char:
            return i
        i += 1
    return len(text)


def _ansi_c(text: str, i: int) -> tuple[str, int]:
    """Decode ``$'...'`` from just after its opening quote; returns (text, index after the closing quote)."""
    out: list[str] = []
    while i < len(text) and text[i] != "'":
        if text[i] != "\\" or i + 1 >= len(text):
            out.append(text[i])
            i += 1
            continue
        decoded, i = _ansi_c_escape(text, i + 1)
        out.append(decoded)
    return "".join(out), i + 1


def _ansi_c_escape(text: str, i: int) -> tuple[str, int]:
    char = text[i]
    if char in ANSI_C:
        return ANSI_C[char], i + 1
    for lead, digits, base in (("x", 2, 16), ("u", 4, 16), ("U", 8, 16)):
        if char == lead:
            found = re.match(f"[0-9A-Fa-f]{{1,{digits}}}", text[i + 1 :])
            if found is None:
                return "\\" + char, i + 1
            return _char(int(found.group(), base)), i + 1 + len(found.group())
    octal = re.match("[0-7]{1,3}", text[i:])
    if octal is not None:
        return _char(int(octal.group(), 8) & 0xFF), i + len(octal.group())
    if char == "c" and i + 1 < len(text):
        return chr(ord(text[i + 1]) & 0x1F), i + 2
    return "\\" + char, i + 1


def _char(code: int) -> str:
    return WILD if code == 0 or code > 0x10FFFF else chr(code)  # bash cuts a string at NUL: unknowable


def _double_quoted(text: str, i: int, out: list[str]) -> int:
    """Read a double-quoted string from after its quote into ``out``; returns the index after it."""
    while i < len(text) and text[i] != '"':
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            out.append(text[i + 1].replace("\n", ""))
            i += 2
        elif char in "$`" and _expansion(text, i) > i + 1:
            i = _expansion(text, i)
            out.append(WILD)
        else:
            out.append(char)
            i += 1
    return i + 1


@cache  # compiled on first use: a command of plain words never reads a parameter name
def _name() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


def _expansion(text: str, i: int) -> int:
    """The end of the expansion starting at ``i`` (``$name``, ``${..}``, ``$(..)``, ``$[..]``, a backtick
    or a process substitution's parenthesis). A lone ``$`` is one character."""
    if text[i] == "`":
        return _find(text, "`", i + 1) + 1
    if text[i] == "(":
        return _balanced(text, i + 1)
    following = text[i + 1 : i + 2]
    if following == "(":
        return _balanced(text, i + 2)
    if following == "{":
        return _balanced(text, i + 2, "{", "}")
    if following == "[":
        return _balanced(text, i + 2, "[", "]")
    name = _name().match(text, i + 1)
    return name.end() if name else i + 1


def _balanced(text: str, i: int, opening: str = "(", closing: str = ")") -> int:
    """The index after the ``closing`` that balances an ``opening`` just before ``i`` (quotes skipped)."""
    depth = 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char in "'\"`":
            i = _find(text, char, i + 1) + 1
            continue
        depth += (char == opening) - (char == closing)
        i += 1
        if depth == 0:
            return i
    return len(text)


def _is_glob(text: str, i: int) -> bool:
    char = text[i]
    if char in "*?":
        return True
    if char == "[":
        return "]" in text[i + 1 :]
    if char == "{":
        close = text.find("}", i + 1)
        return close > 0 and ("," in text[i:close] or ".." in text[i:close])
    return False


def _glob_end(text: str, i: int) -> int:
    """The end of the computed part at ``i``: a bracket or brace expression whole, ``~user`` up to a
    slash, one character otherwise."""
    char = text[i]
    if char in "[{":
        return text.find("]" if char == "[" else "}", i + 1) + 1
    if char == "~":
        slash = text.find("/", i)
        return slash if slash > 0 else len(text)
    return i + 1
