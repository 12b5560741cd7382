"""Reading a bash command the way bash will run it, before it runs: which simple commands, which files
its redirections write, and what makes it impossible to judge from its parts.

``git status && rm -rf x`` is two simple commands, and a rule must allow both. Anything whose effect
cannot be read off the text (command or process substitution, subshells, loops, functions, a computed
command name, redirections to computed file names, text bashlex cannot parse) is reported in ``unsure``:
the policy then asks instead of trusting a rule.

Deny rules see more, and must not be fooled (docs/permissions.md, "Deny rules"): every command found
anywhere (substitutions, subshells, function bodies, ``bash -c '...'`` and ``eval`` nested up to
``MAX_DEPTH`` levels, a shell's here-document or here-string), under the name bash looks it up by
(``/usr/bin/rm`` is ``rm``), behind wrappers (``sudo``, ``env``, ``time``, ``xargs``, ...), with its words
as bash will see them (``words.template``: ``$'rm'`` is ``rm``, ``$(echo rm)`` is any text). What cannot be
read at all is recorded in ``unprovable`` (nesting too deep, a shell reading commands from its input, a
computed ``bash -c`` text), and text bashlex cannot parse is covered by ``words.rough_commands``.

A command of plain words only (``plain_words``: no quotes, expansions, globs, operators or comments) is
split at its spaces without bashlex, whose import costs more CPU (~25 ms) than the rest of judging a
command; bash splits such a text the same way (tests/permissions/test_plain_words.py checks it against
real bash).
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from typing import Any

import msgspec

from ink.permissions.words import WILD, command_name, rough_commands, substitutions, template

MAX_DEPTH = 8  # bash -c 'bash -c "..."': deeper nesting cannot be proven harmless
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "busybox"})
# Commands that run their arguments as another command (the argument list after options).
WRAPPERS = frozenset(
    {"env", "command", "builtin", "exec", "nohup", "nice", "time", "timeout", "sudo", "doas", "xargs",
     "stdbuf", "setsid", "ionice", "chronic", "watch", "flock", "unbuffer", "caffeinate", "find",
     "busybox", "taskset", "chrt", "strace", "ltrace", "runuser", "unshare", "nsenter", "firejail",
     "systemd-run", "parallel", "valgrind", "numactl", "prlimit", "fakeroot", "faketime", "torsocks",
     "proxychains", "proxychains4", "xvfb-run", "catchsegv", "dbus-run-session"}
)  # fmt: skip
DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
SUBSTITUTION_TEXT = re.compile(r"\$\(|`|<\(|>\(")
COMPUTED = re.compile(r"[$`{}*?\[]")
SHELL_OPTIONS_WITH_ARGUMENT = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Programs that run the text after ``-c`` (``--command``) as a shell command line: ``su -c 'rm x'``.
COMMAND_OPTION = frozenset({"su", "runuser", "script", "flock", "sg"})
CALLBACK_OPTION = frozenset({"mapfile", "readarray", "compgen"})  # builtins evaluating ``-C CODE``
# Expansions that evaluate a variable's value again, as arithmetic (where ``a[$(rm x)]`` runs ``rm x``) or
# as a prompt: ``${!x}``, ``${x@P}``, ``${s:x}``, ``${@:x}`` (an offset that is not a plain number).
REEVALUATING = re.compile(
    r"\$\{!|@P\}|\$\{#?(?:[A-Za-z_][A-Za-z0-9_]*|[@*]|\d+)(?:\[[^\]]*\])?:(?![-=?+])[^}]*[^\d\s:}-][^}]*\}"
    r"|\$\{#?[A-Za-z_][A-Za-z0-9_]*\[[^\]]*[^\]\d\s@*-][^\]]*\]"  # ${#a[x]}: a subscript not a number
)
# Builtins that take a variable's name and may evaluate it (``printf -v "$x"``, ``read "$x"``, an array
# subscript in it is arithmetic), or give a variable the integer attribute (``declare -i``).
NAMING_BUILTINS = frozenset(
    {"declare", "typeset", "local", "readonly", "export", "read", "printf", "test", "[", "wait", "let"}
)
READ_OPTIONS_WITH_ARGUMENT = "adinNptu"
SUBSCRIPT = re.compile(r"\[[^\]]*[^\]\d\s@*-][^\]]*\]")  # a subscript that is not a plain number
# Programs that add words read from their input to the command they run: ``xargs sh -c`` runs what the
# input says, and ``-I {}`` puts it anywhere.
FEEDERS = frozenset({"xargs", "parallel"})
# Variables naming a file a shell reads code from when it starts (``BASH_ENV=/dev/stdin bash -c true``).
STARTUP_CODE = re.compile(r"(?:BASH_ENV|ENV)=(.*)", re.DOTALL)
SOURCERS = frozenset({"source", "."})  # run a file's text as commands in the current shell
# Words bash reads as plain text wherever they stand (no quoting, expansion, globbing, operator or
# comment), joined by spaces alone.
PLAIN = re.compile(r"[A-Za-z0-9_\-./=:,+@% ]*")
# Words that mean something else first in a command: a plain text starting with one goes to the parser.
RESERVED_WORDS = frozenset(
    {"case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select",
     "then", "time", "until", "while"}
)  # fmt: skip


@cache
def _code_from_elsewhere() -> re.Pattern[str]:
    """A file name whose text is another process's output: a process substitution, or a standard input or
    descriptor path. A shell or ``source`` reading code from one runs what only that process knows.
    Compiled on first use (~0.3 ms): only a shell, ``source`` or a startup-file variable is judged by it."""
    return re.compile(r"[<>]\(.*|-|/dev/stdin|/dev/fd/\d+|/proc/(?:self|thread-self|\d+)/fd/\d+", re.DOTALL)


class SimpleCommand(msgspec.Struct, frozen=True):
    """One simple command: its words after quote removal, and the ``NAME=value`` words before them.
    ``templates``: its words as bash will see them (``words.template``), for deny rules."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """How allow rules see it: assignments included (``PATH=/tmp npm test`` is not ``npm test``)."""
        return " ".join((*self.assignments, *self.words))

    def deny_texts(self) -> list[str]:
        """How deny rules see it: as written, without assignments, under the name bash looks it up by,
        and every tail a wrapper (or a computed name) may run (``sudo rm -rf x`` is also ``rm -rf x``)."""
        words = self.templates or self.words
        texts = [self.text, " ".join(words)]
        if not words:
            return texts
        name = command_name(words[0])
        starts = range(len(words)) if name in WRAPPERS or name == WILD else range(1)
        texts += [" ".join([command_name(words[i]), *words[i + 1 :]]) for i in starts]
        return texts


class CommandShape(msgspec.Struct):
    """``commands``: the top-level simple commands, each of which an allow rule must cover. ``nested``:
    every simple command found anywhere, for deny rules. ``writes``: files redirections write, as written.
    ``unsure``: why the command cannot be judged from its parts (empty when it can). ``rough``: command
    templates that may run, from text the parser could not read. ``unprovable``: why some command it runs
    cannot be read at all (then no deny rule can be ruled out). ``doubts``: why a template holds ``WILD``."""

    commands: list[SimpleCommand] = msgspec.field(default_factory=list)
    nested: list[SimpleCommand] = msgspec.field(default_factory=list)
    writes: list[str] = msgspec.field(default_factory=list)
    unsure: list[str] = msgspec.field(default_factory=list)
    rough: list[str] = msgspec.field(default_factory=list)
    unprovable: list[str] = msgspec.field(default_factory=list)
    doubts: list[str] = msgspec.field(default_factory=list)

    def deny_texts(self) -> list[str]:
        """Texts bash certainly runs: a deny rule that matches one refuses the command."""
        texts = (t for c in self.nested for t in c.deny_texts())
        return list(dict.fromkeys(t for t in texts if t and WILD not in t))

    def possible_texts(self) -> list[str]:
        """Templates with computed parts (``WILD``) and rough pieces: a deny rule that may match one can
        not be ruled out."""
        texts = [t for c in self.nested for t in c.deny_texts() if WILD in t] + self.rough
        return list(dict.fromkeys(texts))

    def doubt(self) -> str:
        """Why a deny rule cannot be ruled out, for messages."""
        return (self.unprovable or self.doubts or ["parts of it are only known when it runs"])[0]


def analyse(command: str) -> CommandShape:
    """Split ``command`` into what it runs. Never raises: what cannot be parsed is ``unsure``."""
    shape = CommandShape()
    _analyse_into(command, shape, depth=0, top=True)
    if SUBSTITUTION_TEXT.search(command) and not any("substitution" in u for u in shape.unsure):
        shape.unsure.append("it contains a command or process substitution")
    return shape


def plain_words(command: str) -> list[str] | None:
    """The words of ``command`` if it is one simple command of plain words (``PLAIN``) whose first word is
    not a reserved word, an assignment (``NAME=value``) or a job (``%1`` runs ``fg %1``); else None: only
    the parser can tell."""
    if not PLAIN.fullmatch(command):
        return None
    words = command.split()
    if words and (words[0] in RESERVED_WORDS or "=" in words[0] or words[0].startswith("%")):
        return None
    return words


def _analyse_into(command: str, shape: CommandShape, *, depth: int, top: bool) -> None:
    if depth > MAX_DEPTH:
        shape.unprovable.append(f"it nests commands more than {MAX_DEPTH} levels deep")
        return
    words = plain_words(command)
    if words is None:
        _parse_into(command, shape, depth=depth, top=top)
    elif words:  # its templates are its words: nothing in them is computed
        _Walker(shape, depth, command).add(SimpleCommand(tuple(words), (), tuple(words)), [], top=top)


def _parse_into(command: str, shape: CommandShape, *, depth: int, top: bool) -> None:
    """``_analyse_into`` through bashlex: any command, imported on first use."""
    from ink.permissions.bash_tables import bashlex as load_bashlex

    bashlex = load_bashlex()
    try:
        trees = bashlex.parse(command) if command.strip() else []
    except Exception as exc:  # bashlex raises ParsingError, NotImplementedError and worse on odd input
        shape.unsure.append(f"bash syntax ink cannot check ({_first_line(exc)})")
        _rough_into(command, shape, depth=depth)
        return
    walker = _Walker(shape, depth, command)
    for tree in trees:
        walker.visit(tree, top=top)


def _rough_into(command: str, shape: CommandShape, *, depth: int) -> None:
    rough = rough_commands(command)
    shape.rough += rough.tails
    shape.doubts.append("it uses bash syntax ink cannot read exactly")
    for text in rough.nested:
        _analyse_into(text, shape, depth=depth + 1, top=False)


class _Walker:
    def __init__(self, shape: CommandShape, depth: int, source: str) -> None:
        self.shape = shape
        self.depth = depth
        self.source = source

    def visit(self, node: Any, *, top: bool) -> None:
        kind = node.kind
        if kind in ("list", "pipeline"):
            for part in node.parts:
                if part.kind not in ("operator", "pipe", "reservedword"):  # reservedword: `! cmd`
                    self.visit(part, top=top)
        elif kind == "command":
            self.simple(node, top=top)
        else:
            if top:
                self.shape.unsure.append(_construct(node))
            self.inner(node)

    def inner(self, node: Any) -> None:
        """Every command below ``node``: these run too, but no allow rule can vouch for the whole."""
        for child in _children(node):
            if child.kind == "command":
                self.simple(child, top=False)
            elif child.kind in ("commandsubstitution", "processsubstitution"):
                self.visit(child.command, top=False)
            else:
                self.inner(child)

    def simple(self, node: Any, *, top: bool) -> None:
        words: list[str] = []
        templates: list[str] = []
        assignments: list[str] = []
        for part in node.parts:
            if part.kind == "assignment":
                assignments.append(part.word)
            elif part.kind == "word":
                words.append(part.word)
                templates.append(template(self.source[part.pos[0] : part.pos[1]]))
            elif part.kind == "redirect":
                self.redirect(part, top=top)
            self.inner(part)  # substitutions inside words and redirections
            self.hidden(part)
        found = SimpleCommand(tuple(words), tuple(assignments), tuple(templates))
        self.add(found, [p for p in node.parts if p.kind == "redirect"], top=top)

    def hidden(self, part: Any) -> None:
        """Substitutions bash may run that the parser does not descend into: inside ``${...}``
        (``${x:-$(rm x)}``), and in quoted text a builtin evaluates again (``let 'a[$(rm x)]'``,
        ``printf -v 'a[$(rm x)]' 1``, ``declare``, ``test -v``). For deny rules, every ``$(..)`` and
        backtick in a word's text is read as a command, less those the parser found itself."""
        start, end = getattr(part, "pos", (0, 0))
        if REEVALUATING.search(self.source[start:end]):
            self.shape.unprovable.append(
                f"`{_shorten(self.source[start:end])}` evaluates a variable's value again when it runs"
            )
        text = list(self.source[start:end])
        if "$(" not in self.source[start:end] and "`" not in self.source[start:end]:
            return
        for found in _substitution_nodes(part):
            first, last = found.pos
            text[first - start : last - start] = " " * (last - first)
        for code in substitutions("".join(text)):
            self.nested(code)

    def add(self, found: SimpleCommand, redirects: list[Any], *, top: bool) -> None:
        """Record one simple command (its ``redirects``: the parser's nodes) and what it runs itself."""
        self.shape.nested.append(found)
        if top:
            self.shape.commands.append(found)
            if found.words and COMPUTED.search(found.words[0]):
                self.shape.unsure.append(f"the command name {found.words[0]!r} is computed when it runs")
        if any(WILD in t for t in found.templates):
            self.shape.doubts.append(f"`{_shorten(found.text)}` is only known when it runs")
        for word in (*found.assignments, *found.templates):
            startup = STARTUP_CODE.fullmatch(word)
            if startup and (WILD in startup[1] or _code_from_elsewhere().fullmatch(startup[1])):
                self.shape.unprovable.append(
                    f"`{_shorten(word)}` makes a shell run code another process writes"
                )
        self.command_strings(list(found.templates), redirects)

    def redirect(self, node: Any, *, top: bool) -> None:
        target: Any = getattr(node, "output", None)
        if node.type not in WRITE_REDIRECTS or not hasattr(target, "word"):
            return  # input, here-documents, fd duplication (2>&1)
        if COMPUTED.search(target.word.replace("~", "")):
            self.shape.unsure.append(f"it redirects to a computed file name ({target.word})")
        elif top:
            self.shape.writes.append(target.word)

    def command_strings(self, templates: list[str], redirects: list[Any]) -> None:
        """Text run as commands: ``bash -c 'text'``, ``eval text``, a shell's here-document or here-string,
        and the substitutions inside any here-document; read too, for deny rules."""
        inputs = [self.redirect_input(r) for r in redirects]
        for kind, body in inputs:
            for text in substitutions(body or "") if kind == "<<" else ():
                self.nested(text)
        name = command_name(templates[0]) if templates else ""
        if name in FEEDERS:  # what the input adds is only known when it runs
            templates = [*_fed(templates), WILD]
        starts = range(len(templates)) if name in WRAPPERS or name == WILD else range(min(1, len(templates)))
        for start in starts:
            run = templates[start:]
            name = command_name(run[0])
            if name == "eval":
                self.nested(" ".join(run[1:]))
            elif name in SHELLS:
                self.shell(run, [b for _, b in inputs if b is not None])
            elif name in SOURCERS:
                self.sourced(run)
            else:
                self.code_arguments(name, run)

    def code_arguments(self, name: str, words: list[str]) -> None:
        """Commands that take code as an argument (``trap 'rm x' EXIT``, ``alias r='rm x'``, ``su -c``,
        ``env -S``, ``mapfile -C 'rm x'``) or run code ink cannot see (``fc`` runs the history again,
        ``hash -p`` makes a name run another program)."""
        arguments = words[1:]
        if name == "trap":
            code = next((w for w in arguments if w == "-" or not w.startswith("-")), None)
            if code is not None:
                self.nested(code)
        elif name == "alias":
            for word in arguments:
                if "=" in word:
                    self.nested(word.partition("=")[2])
        elif name == "fc" and not any(w.startswith("-") and "l" in w for w in arguments):
            self.shape.unprovable.append("`fc` runs commands again from the shell's history")
        elif name == "hash" and any(w.startswith("-") and "p" in w for w in arguments):
            self.shape.unprovable.append("`hash -p` makes a name run another program")
        elif name == "env":
            text = _option_text(arguments, "S", "--split-string")
            if text is not None:
                self.nested(text)
        elif name in COMMAND_OPTION:
            text = _option_text(arguments, "c", "--command", anywhere=True)
            if text is None and name == "su":  # su's other spelling of -c
                text = _option_text(arguments, "\0", "--session-command", anywhere=True)
            if text is not None:
                self.nested(text)
        elif name in CALLBACK_OPTION:
            for text in _callbacks(arguments):
                self.nested(text)
        if name in NAMING_BUILTINS and _evaluates_a_name(name, arguments):
            self.shape.unprovable.append(f"`{_shorten(' '.join(words))}` evaluates a computed variable name")

    def sourced(self, words: list[str]) -> None:
        """``source FILE``/``. FILE``: a script file is out of reach (like ``bash build.sh``); code read
        from a process substitution or standard input (``source <(curl ...)``) cannot be known at all."""
        if len(words) > 1 and _code_from_elsewhere().fullmatch(words[1]):
            self.shape.unprovable.append(f"`{_shorten(' '.join(words))}` runs code another process writes")

    def shell(self, words: list[str], inputs: list[str]) -> None:
        """A shell runs its ``-c`` text, or a script file (not read: out of reach, like ``make``), or else
        the commands on its input: a here-document or here-string is read, anything else is unknowable."""
        elsewhere = next((w for w in words[1:] if _code_from_elsewhere().fullmatch(w) and w != "-"), None)
        if elsewhere is not None:  # bash <(curl ...), bash /dev/stdin, bash --rcfile <(...)
            self.shape.unprovable.append(f"`{_shorten(' '.join(words))}` runs code another process writes")
            return
        text = _shell_command_text(words[1:])
        if text is not None:
            self.nested(text)
        elif not _shell_script_given(words[1:]):
            if not inputs:
                self.shape.unprovable.append(f"`{_shorten(' '.join(words))}` runs commands from its input")
            for body in inputs:
                self.nested(body)

    def nested(self, text: str) -> None:
        if WILD in text:
            self.shape.unprovable.append(f"it runs a command text only known when it runs ({_shorten(text)})")
            return
        _analyse_into(text, self.shape, depth=self.depth + 1, top=False)

    def redirect_input(self, node: Any) -> tuple[str, str | None]:
        """(type, the text a here-document or here-string feeds in), None for other redirections."""
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            value = str(getattr(heredoc, "value", ""))
            return "<<", value.rsplit("\n", 1)[0] if "\n" in value else ""
        start, end = getattr(getattr(node, "output", None), "pos", (0, 0))
        if node.type == "<<<" and end > start:
            return "<<<", template(self.source[start:end])
        return str(node.type), None


def _shell_command_text(arguments: list[str]) -> str | None:
    """The text after ``-c`` (also ``-ec``, ``-lc``...): the first argument that is not an option (nor
    the argument of one: ``bash -o errexit -c 'rm x'``, ``--rcfile FILE``)."""
    given = skip = False
    for word in arguments:
        if skip:
            skip = False
        elif word in SHELL_OPTIONS_WITH_ARGUMENT:
            skip = True
        elif given and word.startswith(("-", "+")):
            continue
        elif given:
            return word
        elif word[:1] == "-" and word[1:2] != "-" and "c" in word[1:]:
            given = True
        elif not word.startswith(("-", "+")):
            return None  # a script file and its arguments
    return "" if given else None


def _option_text(arguments: list[str], short: str, long: str, *, anywhere: bool = False) -> str | None:
    """The text an option takes: ``-S TEXT``, ``-STEXT``, ``-iS TEXT``, ``--split-string=TEXT``,
    ``--split-string TEXT`` (``short`` ``S``, ``long`` ``--split-string``); None when not given.
    ``anywhere``: options may follow other arguments (``su USER -c``, ``flock FILE -c``)."""
    for at, word in enumerate(arguments):
        following = arguments[at + 1] if at + 1 < len(arguments) else None
        if word == long:
            return following
        if word.startswith(long + "="):
            return word.partition("=")[2]
        if word[:1] == "-" and word[1:2] != "-" and short in word:
            attached = word.partition(short)[2]
            return attached or following
        if not anywhere and (word == "--" or not word.startswith("-")):
            return None  # the options end: the command and its arguments
    return None


def _evaluates_a_name(name: str, arguments: list[str]) -> bool:
    """Whether a builtin is given a computed variable name (``printf -v "$x"``, ``read "$x"``,
    ``test -v "$x"``, ``wait -p "$x"``, ``declare "$x"=1``), the integer attribute (``declare -i``) or a
    name reference (``declare -n``): bash evaluates a subscript in the name, or the value assigned, as
    arithmetic, which runs any ``$(..)`` in it."""
    if name in ("printf", "test", "[", "wait"):
        option = "-p" if name == "wait" else "-v"
        return any(
            w[:1] == "-" and w.endswith(option[1]) and _evaluated(n) for w, n in itertools.pairwise(arguments)
        )
    if name == "let":  # every word is arithmetic: a variable named there is evaluated again
        return any(re.search(r"[A-Za-z_]", w) for w in arguments)
    names: list[str] = []
    skip = False
    for word in arguments:
        if skip:
            skip = False
        elif name == "read" and word[:1] == "-" and len(word) > 1:
            skip = word[-1] in READ_OPTIONS_WITH_ARGUMENT
        elif word[:1] in "-+" and len(word) > 1 and WILD not in word:
            if name != "read" and ("i" in word[1:] or "n" in word[1:]):
                return True  # the integer attribute, or a name reference (``declare -n r=$x; r=1``)
        else:
            names.append(word.partition("=")[0])
    return any(_evaluated(n) for n in names)


def _evaluated(name: str) -> bool:
    """A variable name whose subscript bash evaluates: computed (``"$x"``), or not a plain number
    (``'y[x]'``: ``x``'s value is evaluated as arithmetic)."""
    return WILD in name or SUBSCRIPT.search(name) is not None


def _callbacks(arguments: list[str]) -> list[str]:
    """The code of every ``-C CODE`` (``-tC CODE``, ``-CCODE``), wherever it stands before ``--``: bash
    evaluates it (``mapfile -c 1 -C 'rm x;:'`` per line read, ``compgen -C 'rm x'`` at once)."""
    texts = []
    for at, word in enumerate(arguments):
        if word == "--":
            break
        if word[:1] == "-" and word[1:2] != "-" and "C" in word:
            text = word.partition("C")[2] or (arguments[at + 1] if at + 1 < len(arguments) else "")
            texts.append(text)
    return texts


def _fed(templates: list[str]) -> list[str]:
    """``xargs``' (``parallel``'s) words with the place holders its input fills in made ``WILD``:
    ``{}`` (``-i``, ``parallel``), and what ``-I R``, ``-IR``, ``-iR``, ``--replace=R`` name."""
    holders = {"{}"}
    for at, word in enumerate(templates):
        if word == "-I" and at + 1 < len(templates):
            holders.add(templates[at + 1])
        elif word.startswith(("-I", "-i")) and len(word) > 2:
            holders.add(word[2:])
        elif word.startswith("--replace="):
            holders.add(word.partition("=")[2])
    found = [h for h in holders if h]
    out = [templates[0]]
    for word in templates[1:]:
        for holder in found:
            word = word.replace(holder, WILD)
        out.append(word)
    return out


def _substitution_nodes(node: Any) -> list[Any]:
    """The command and process substitutions the parser found below ``node`` (not inside them)."""
    found: list[Any] = []
    for child in _children(node):
        if child.kind in ("commandsubstitution", "processsubstitution"):
            found.append(child)
        else:
            found += _substitution_nodes(child)
    return found


def _shell_script_given(arguments: list[str]) -> bool:
    """Is a script file named (a first argument that is not an option)? ``-s`` reads the input instead."""
    skip = False
    for word in arguments:
        if skip:
            skip = False
            continue
        if word in SHELL_OPTIONS_WITH_ARGUMENT:
            skip = True
        elif word == "-s" or (word[:1] == "-" and word[1:2] != "-" and "s" in word[1:]):
            return False
        elif not word.startswith(("-", "+")):
            return True
    return False


def _children(node: Any) -> list[Any]:
    children = list(getattr(node, "parts", None) or getattr(node, "list", None) or [])
    command = getattr(node, "command", None)
    if command is not None:
        children.append(command)
    output = getattr(node, "output", None)
    if hasattr(output, "kind"):
        children.append(output)
    return [c for c in children if hasattr(c, "kind")]


def _construct(node: Any) -> str:
    """Why a compound construct asks: named the way a user would recognise it."""
    if node.kind == "function":
        return "it defines a shell function"
    first = (getattr(node, "list", None) or [None])[0]
    opener = str(getattr(first, "word", None) or getattr(first, "kind", ""))
    names = {"(": "a subshell ( ... )", "{": "a group { ... }", "for": "a for loop", "while": "a while loop",
             "until": "an until loop", "if": "an if statement", "case": "a case statement"}  # fmt: skip
    return f"it runs {names.get(opener, f'a compound command ({opener})')}"


def _shorten(text: str, limit: int = 80) -> str:
    text = text.replace(WILD, "…")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
