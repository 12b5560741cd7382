"""Slash commands: ``/help``, ``/model``, ``/modes``, ``/clear``, ``/quit``, ``/sessions``, ``/resume``,
``/compact``, ``/mcp``, ``/rewind``, ``/jobs``, ``/pause``, ``/budget``, ``/cost``, ``/status``, ``/config``,
``/permissions`` (info_commands.py, permissions_view.py), ``/init`` (project_init.py). Each prints
what it did into the scrollback; none keeps run-control state of its own.

A line that starts with ``//`` is sent to the model with one ``/`` removed (a path, say).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import msgspec

from ink.app import App
from ink.app.jobs import resume_note
from ink.config.commands import CustomCommand
from ink.frontends.tui.agentcontrol import agents_command
from ink.frontends.tui.blocks import Block
from ink.frontends.tui.budget import budget_block
from ink.frontends.tui.folds import header
from ink.frontends.tui.jobs import jobs_command
from ink.frontends.tui.keys import KEYS
from ink.frontends.tui.pausing import toggle_pause
from ink.frontends.tui.replay import replay
from ink.frontends.tui.served_models import ServedModels
from ink.frontends.tui.view import EventView
from ink.run.controller import QueueError
from ink.vocabulary import TAKE_MODES, InputMode
from ink.wiring.mcp_part import McpPart, mcp_of


class CommandHost(Protocol):
    @property
    def core(self) -> App: ...

    @property
    def view(self) -> EventView: ...

    def quit(self, status: int) -> None: ...

    def open_rewind(self) -> None: ...

    @property
    def served_models(self) -> ServedModels: ...


class Command(msgspec.Struct, frozen=True):
    name: str
    usage: str
    help: str
    run: Callable[[CommandHost, str], None]


def is_command(text: str) -> bool:
    return text.startswith("/") and not text.startswith("//")


def run_command(host: CommandHost, line: str, mode: InputMode = "steer", typed: str | None = None) -> None:
    """Run one ``/command args`` line: a built-in one, else a custom one (its prompt is submitted with
    ``mode``; the scrollback shows ``typed``, the line as the user typed it, not the expansion).
    Unknown commands and bad arguments print a one-line error."""
    name, _, args = line[1:].strip().partition(" ")
    command = COMMANDS.get(name.lower())
    if command is None and host.core.commands.expand(line, COMMANDS) is not None:
        submitted = host.core.submit(line, mode, reserved=COMMANDS)
        host.view.typed[submitted.input_id] = typed or line
        return
    part = mcp_of(host.core)
    if command is None and part is not None and part.names_prompt(line):
        submitted = host.core.submit(line, mode)  # an MCP prompt: fetched as the input is taken
        host.view.typed[submitted.input_id] = typed or line
        return
    if command is None:
        say(host, f"unknown command /{name}: /help lists them (text starting with /: write //)", "error")
        return
    command.run(host, args.strip())


def say(host: CommandHost, text: str, kind: str = "info") -> None:
    host.view.print(Block(kind, text))  # type: ignore[arg-type]


def help_text() -> str:
    """The keys and commands as a listing (``TERM<TAB>WHAT`` rows under headings)."""
    keys = [f"{key}\t{what}" for key, what in KEYS]
    cmds = [f"{c.usage}\t{c.help}" for c in COMMANDS.values()]
    shell = "A line starting with ! runs in the shell."
    return "\n".join(["Keys:", *keys, "", "Commands:", *cmds, "", shell])


def _help(host: CommandHost, args: str) -> None:
    custom = host.core.commands.commands.values()
    lines = [f"{_usage(c)}\t{c.summary}" for c in custom if c.name not in COMMANDS]
    more = ["", "Custom commands (.ink/commands/, $INK_HOME/commands/):", *lines] if lines else []
    host.view.print(Block("listing", "\n".join([help_text(), *more])))


def _usage(command: CustomCommand) -> str:
    return f"/{command.name} {command.argument_hint}".rstrip()


def palette_commands(core: App) -> list[tuple[str, str, str]]:
    """Every slash command's name, usage and what it does, for the palette: built-in ones first, then
    the custom ones, then the MCP servers' prompts."""
    names = [(c.name, c.usage, c.help) for c in COMMANDS.values()]
    custom = core.commands.commands.values()
    names += [(c.name, _usage(c), c.summary) for c in custom if c.name not in COMMANDS]
    part = mcp_of(core)
    prompts = part.prompt_commands() if part is not None else []
    return names + [(name, f"/{name}", what) for name, what in prompts]


def _rewind(host: CommandHost, args: str) -> None:
    host.open_rewind()  # docs/rewind.md


def _quit(host: CommandHost, args: str) -> None:
    host.quit(0)


def _model(host: CommandHost, args: str) -> None:
    """``/model NAME``: later runs use NAME (same provider); the running one keeps its model (R13's rule:
    a run reads its set-up once, at its start)."""
    core = host.core
    served = host.served_models
    if not args and served.applies:  # a server of the user's: what it lists, not the catalogue
        served.list_them()
        return
    if not args:
        lines = [f"{'*' if m == core.settings.model else ' '} {m}" for m in core.model_choices()]
        head = f"model: {core.settings.model} ({core.settings.provider}); change it with /model NAME"
        host.view.print(Block("output", "\n".join([head, *lines])))
        return
    try:
        core.switch_model(args)  # the hooks, tools and checks stay as they are: only the model changes
    except ValueError as exc:  # a model without known prices under a cost limit (R45)
        say(host, str(exc), "error")
        return
    later = " from the next run on" if core.controller.state == "running" else ""
    say(host, f"model: {core.settings.model}{later}")
    if served.applies:
        served.check(core.settings.model)


def _modes(host: CommandHost, args: str) -> None:
    """``/modes [steer M] [follow-up M]``, M one of all, one-at-a-time (R13: read at each run's start)."""
    controller = host.core.controller
    words = args.split()
    steering, follow_up = controller.modes.steering, controller.modes.follow_up
    while words:
        which, value = words[0], words[1] if len(words) > 1 else ""
        if which not in ("steer", "follow-up") or value not in TAKE_MODES:
            say(host, "usage: /modes [steer all|one-at-a-time] [follow-up all|one-at-a-time]", "error")
            return
        if which == "steer":
            steering = value
        else:
            follow_up = value
        words = words[2:]
    host.core.set_queue_modes(steering, follow_up)
    say(host, f"steer: {steering} · follow-up: {follow_up} (entries one take removes; from the next run on)")


def _clear(host: CommandHost, args: str) -> None:
    try:
        host.core.new_session()
    except QueueError:
        say(host, "/clear works while idle: interrupt the run first (Esc)", "error")
        return
    session = host.core.session
    say(host, "── new conversation" + (f" · session {session.id[:8]}" if session is not None else "") + " ──")


def _sessions(host: CommandHost, args: str) -> None:
    from ink.frontends.sessions import format_line

    core = host.core
    if core.sessions is None:
        say(host, "sessions are off (--no-session)")
        return
    found = core.sessions.sessions(core.settings.cwd)
    if not found:
        say(host, f"no sessions in {core.settings.cwd} yet")
        return
    current = core.session_id
    lines = [("* " if info.id == current else "  ") + format_line(info) for info in found]
    lines += ["", "resume one with /resume ID (a prefix is enough)"]
    host.view.print(Block("output", "\n".join(lines)))


def _resume(host: CommandHost, args: str) -> None:
    from ink.store import SessionError

    core = host.core
    if not args:
        _sessions(host, "")
        return
    if core.sessions is None:
        say(host, "sessions are off (--no-session)", "error")
        return
    if core.controller.state != "idle":
        say(host, "/resume works while idle: interrupt the run first (Esc)", "error")
        return
    try:
        info = core.sessions.resolve(core.settings.cwd, args)
        if info.id == core.session_id:
            say(host, f"already in session {info.id[:8]}")
            return
        core.resume_session(info)
    except SessionError as exc:
        say(host, str(exc), "error")
        return
    say(host, f"── resumed session {info.id[:8]} · {info.message_count} messages ──")
    host.view.print(*replay(core.controller.history.messages, core.tools.find))
    ended = resume_note(core.jobs, "/jobs")  # R43: what the session's last ink process ended
    if ended is not None:
        say(host, ended, "warning")


def _compact(host: CommandHost, args: str) -> None:
    if not host.core.compact(args):
        say(host, "a run is going on: the history is compacted by itself when it must; /compact when idle")
        return
    say(host, "compacting the history…")


def _folds(host: CommandHost, args: str) -> None:
    """``/folds``: every tool result of this session kept whole, numbered, newest last."""
    folds = list(host.view.folds)
    if not folds:
        say(host, "no tool results yet")
        return
    lines = [f"  #{f.number:<4} {f.title}" + (" (folded)" if f.cut else "") for f in folds[-30:]]
    more = [f"  … {len(folds) - 30} earlier"] if len(folds) > 30 else []
    host.view.print(Block("output", "\n".join([*more, *lines, "", "show one whole with /expand N"])))


def _expand(host: CommandHost, args: str) -> None:
    fold = host.view.folds.get(int(args.lstrip("#"))) if args.lstrip("#").isdecimal() else None
    if fold is None:
        say(host, "usage: /expand N, N a number from /folds", "error")
        return
    host.view.print(header(fold), fold.block)


def _mcp(host: CommandHost, args: str) -> None:
    """``/mcp``: each MCP server, its state and tools; ``/mcp approve NAME``: start a project's server."""
    from ink.frontends.mcp import status_lines

    part = mcp_of(host.core)
    if part is None or part.manager is None:
        say(host, "no MCP servers configured: add [mcp.servers.NAME] to $INK_HOME/config.toml (docs/mcp.md)")
        return
    words = args.split()
    if words[:1] and words[0] in ("answer", "decline", "cancel"):
        _answer_mcp(host, part, words[0], args.strip()[len(words[0]) :])
        return
    if len(words) == 2 and words[0] == "approve":
        problem = part.approve(words[1])
        say(
            host,
            problem or f"approved {words[1]}: starting it; /mcp shows when it is ready",
            "error" if problem else "info",
        )
        return
    lines = []
    descriptions = {tool.name: tool.spec.description for tool in part.manager.tools()}
    for status in part.manager.statuses():
        lines += status_lines(status, descriptions)
    host.view.print(Block("output", "\n".join(lines)))


def _answer_mcp(host: CommandHost, part: McpPart, action: str, text: str) -> None:
    """``/mcp answer name=value ...``, ``/mcp decline``, ``/mcp cancel``: the oldest open question of an
    MCP server (tui/mcp_question.py)."""
    from ink.frontends.tui.mcp_question import parse_answer
    from ink.mcp.elicitation import BadAnswer

    questions = part.questions.open_questions() if part.questions is not None else []
    if not questions:
        say(host, "no MCP server is asking anything", "error")
        return
    question = questions[0]
    try:
        content = parse_answer(question.schema, text) if action == "answer" else None
        assert part.questions is not None
        part.questions.answer(question.id, "accept" if action == "answer" else action, content)
    except BadAnswer as exc:
        say(host, f"{exc}; the question is still open", "error")


def _cost(host: CommandHost, args: str) -> None:
    from ink.frontends.tui.info_commands import cost_text

    host.view.print(Block("listing", cost_text(host.core.usage)))


def _status(host: CommandHost, args: str) -> None:
    from ink.frontends.tui.info_commands import status_text

    host.view.print(Block("listing", status_text(host.core, shorten_home(host.core.settings.cwd))))


def _config(host: CommandHost, args: str) -> None:
    from ink.frontends.tui.info_commands import config_text

    host.view.print(Block("listing", config_text(host.core.settings)))


def _perms(host: CommandHost, args: str) -> None:
    from ink.frontends.tui.permissions_view import permissions_command

    host.view.print(permissions_command(host.core, args))


def _init(host: CommandHost, args: str) -> None:
    """``/init``: the model writes the project's AGENTS.md (or improves it), as a custom command would."""
    from ink.frontends.tui.project_init import init_prompt

    submitted = host.core.controller.submit(init_prompt(host.core.settings.cwd))
    host.view.typed[submitted.input_id] = "/init"


def _jobs(host: CommandHost, args: str) -> None:
    jobs_command(host.core.jobs, host.view.print, args)


def _budget(host: CommandHost, args: str) -> None:
    """``/budget``: what the session and the run used of each limit (R45)."""
    host.view.print(budget_block(host.core.budget))


def _pause(host: CommandHost, args: str) -> None:
    """``/pause``: as Ctrl+S, pause the run at its next safe point or resume it (R44)."""
    block = toggle_pause(host.core.controller)
    if block is not None:
        host.view.print(block)


def _agents(host: CommandHost, args: str) -> None:
    host.view.print(agents_command(host.view.sub_agents, host.core.agents, args))


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("help", "/help", "keys and commands", _help),
        Command("model", "/model [NAME]", "show or switch the model (your server: what it serves)", _model),
        Command("modes", "/modes [steer M] [follow-up M]", "queued entries one take removes", _modes),
        Command("clear", "/clear", "start a new conversation (and session)", _clear),
        Command("sessions", "/sessions", "list the sessions of this directory", _sessions),
        Command("resume", "/resume ID", "continue another session of this directory", _resume),
        Command("compact", "/compact [INSTRUCTIONS]", "summarise the older history now", _compact),
        Command("folds", "/folds", "list every tool result of the session, kept whole", _folds),
        Command("expand", "/expand N", "show tool result N of /folds whole", _expand),
        Command("mcp", "/mcp [approve NAME|answer ...]", "MCP servers, their state and tools", _mcp),
        Command("rewind", "/rewind", "undo files and/or conversation to before an input (Esc Esc)", _rewind),
        Command("budget", "/budget", "what the session and the run used of their limits", _budget),
        Command("pause", "/pause", "pause the run at its next safe point; again: resume (ctrl+s)", _pause),
        Command("agents", "/agents [N|VERB]", "sub-agents: pick one; stop, steer, pause, resume it", _agents),
        Command("jobs", "/jobs [ID|kill ID]", "background jobs: list, read one's output, kill one", _jobs),
        Command("cost", "/cost", "tokens and cost of this session, per model (sub-agents included)", _cost),
        Command("status", "/status", "model, modes, sandbox, MCP servers, session, context use", _status),
        Command("config", "/config", "the settings in force and where each came from", _config),
        Command("permissions", "/permissions [remove N]", "the rules in force, where each is kept", _perms),
        Command("init", "/init", "the model looks at the project, writes or improves AGENTS.md", _init),
        Command("quit", "/quit", "leave ink (also /exit)", _quit),
        Command("exit", "/exit", "leave ink", _quit),
    )
}


def shorten_home(path: str | Path) -> str:
    text, home = str(path), str(Path.home())
    return "~" + text[len(home) :] if home != "/" and (text == home or text.startswith(home + "/")) else text
