"""The ``ink`` command: parse the command line, resolve settings, check them, start one frontend.

This module is the only one that sees every layer, and it is on the path of ``ink --version``, so its
top-level imports are the standard library's lightest: the settings, the provider (and its HTTP client)
and each frontend are imported only once the chosen mode needs them.

Exit statuses: 0 success, 1 a failed run (print mode) or an internal error, 2 bad input (an unknown
flag, a bad value, a config error, a missing key, an unreachable base URL), 130 interrupted.
Errors are one line on stderr; a traceback only with ``--debug``.

``--provider local`` is the one provider with a process of its own: the model server child is a part
of the app, started when the frontend opens it and stopped when it closes (``ink.wiring.local_part``).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import argparse

    from ink.config import Invocation, Mode, Settings
    from ink.redaction import Redactor

SUBCOMMANDS = ("acp", "sessions", "models", "mcp", "sandbox")
MODEL_MODES = ("tui", "print", "rpc", "acp")  # modes that talk to a model: key and URL are checked
FRONTEND_MODULES = {
    "tui": "ink.frontends.tui",
    "print": "ink.frontends.print",
    "rpc": "ink.frontends.rpc",
    "acp": "ink.frontends.acp",
    "sessions": "ink.frontends.sessions",
    "models": "ink.frontends.models",
    "mcp": "ink.frontends.mcp",
    "sandbox": "ink.frontends.sandbox",
}


class UsageError(Exception):
    """Bad command-line input: printed as ``ink: <problem> (see ink --help)``, exit 2."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):  # the fast path: not even argparse
        from ink import __version__

        print(f"ink {__version__}")
        return 0
    _unblock_interrupts()
    from ink import lineage

    lineage.become_subreaper()  # before any child exists: every orphaned descendant comes back to ink
    if args[:1] == ["mcp"] and {"--help", "-h"} & set(args):  # the MCP help, not the main one
        from ink.frontends.mcp import HELP

        print(HELP)
        return 0
    if args[:1] == ["batch"]:
        from ink.batch.cli import main as batch_main

        return batch_main(args[1:], check_settings=_batch_settings)
    debug = "--debug" in args
    from ink.redaction import Redactor

    redactor = Redactor()  # filled with the keys once the settings are known
    gc.disable()  # until the frontend starts: see _end_of_start_up
    try:
        return _main(args, redactor)
    except UsageError as exc:
        return _fail(f"{exc} (see ink --help)", 2)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:  # the traceback, with every known key and credential taken out
            import traceback

            sys.stderr.write(redactor(traceback.format_exc()))
            return 1
        problem = f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)"
        return _fail(redactor(problem), 1)
    finally:
        gc.enable()  # a failure before the frontend started


def _unblock_interrupts() -> None:
    """A blocked signal mask is inherited across exec: a parent that blocks SIGINT (a Ray worker does)
    would leave Ctrl+C and ``kill -INT`` pending forever. ink's interrupt must always arrive."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))


def _main(args: list[str], redactor: Redactor) -> int:
    from ink.config import ConfigError

    ns = _parser().parse_args(args)
    invocation = _invocation(ns, args)
    _setup_logging(ns.debug, redactor)
    module_name = FRONTEND_MODULES[invocation.mode]
    if not _module_exists(module_name):
        return _fail(f"{_mode_label(invocation.mode)} is not available yet in this version of ink", 2)
    try:
        settings = _settings(ns)
    except ConfigError as exc:
        return _fail(str(exc), 2)
    redactor.add(settings.secrets)
    for warning in settings.warnings:
        print(f"ink: warning: {warning}", file=sys.stderr)
    problem = _preflight(settings) if invocation.mode in MODEL_MODES else None
    if problem is not None:
        starter = _starter_settings(ns, settings)
        if starter is None:
            return _fail(f"{problem}{_STARTER_HINT if _runtime_missing() else ''}", 2)
        settings = starter
    if invocation.mode in MODEL_MODES:
        from ink.sandbox import SandboxRefused

        try:
            settings = _with_sandbox_mode(settings)
        except SandboxRefused as exc:  # R39: a sandbox the user asked for never quietly turns into none
            return _fail(str(exc), 2)
        problem = _budget_problem(settings)
        if problem is not None:
            return _fail(problem, 2)
    return _start(module_name, settings, invocation, redactor)


_STARTER_HINT = "; to try ink with no key at all, install its local runtime: pip install 'ink-agent[local]'"


def _starter_settings(ns: argparse.Namespace, settings: Settings) -> Settings | None:
    """A first run with no key (``starts_on_starter``) goes on with the embedded starter model, if the
    local runtime is installed, saying so in one line and how to pick a real provider; else None."""
    from ink.config import ConfigError, starts_on_starter

    if not starts_on_starter(settings, os.environ) or _runtime_missing():
        return None
    ns.provider = "local"
    try:
        starter = _settings(ns)
    except ConfigError:  # the same files and flags with another provider: then the key problem stands
        return None
    print(
        "ink: no provider key is set, so ink runs its small starter model on this machine (a toy for "
        "trying ink): for real work set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pick a provider with "
        "--provider (ink models lists them)",
        file=sys.stderr,
    )
    return starter


def _runtime_missing() -> bool:
    import importlib.util

    return importlib.util.find_spec("xllamacpp") is None


def _with_sandbox_mode(settings: Settings) -> Settings:
    """The settings with the sandbox mode this process runs with (R41): the one asked for, which must
    start, or the default, which falls back to ``off`` with one notice where it cannot."""
    from msgspec.structs import replace

    from ink.wiring.sandboxing import resolved_mode

    mode, notice = resolved_mode(settings)
    if notice is not None:
        print(f"ink: {notice}", file=sys.stderr)
    return replace(settings, sandbox=replace(settings.sandbox, mode=mode))


def _start(module_name: str, settings: Settings, invocation: Invocation, redactor: Redactor) -> int:
    """Import the frontend (the wiring and what it builds on) while the reachability probe runs, then start
    it. The local model server ink runs itself is not probed: it starts with the app
    (``ink.wiring.local_part``)."""
    import importlib

    from ink.local import serves_locally

    talks = invocation.mode in MODEL_MODES
    probe = _probe(settings) if talks and not serves_locally(settings) else None
    frontend: Any = importlib.import_module(module_name)
    problem = probe.problem() if probe is not None else None
    if problem is not None:
        return _fail(redactor(problem), 2)  # a base URL may carry a password
    if probe is not None and not settings.provider_info.key_required:
        settings = _ask_local_server(settings)
    from ink.store import SessionError
    from ink.wiring import AppStartError

    _end_of_start_up()
    try:
        status = frontend.main(settings, invocation)
    except SessionError as exc:  # --continue / --resume named nothing usable: bad input
        return _fail(str(exc), 2)
    except AppStartError as exc:  # a part of the app (the local model server) could not start
        return _fail(redactor(str(exc)), 2)
    return int(status)


def _end_of_start_up() -> None:
    """Start-up (modules, classes, settings) creates ~25,000 objects the cyclic garbage collector tracks,
    nearly all of which live as long as the process. Collecting while they are created finds next to
    nothing and cost ~80 collections, ~4% of the CPU of a one-turn ``ink -p`` (counted with
    ``gc.callbacks``). So ``main`` pauses the collector, and here, before the frontend runs, the objects
    are moved out of its sight for good (``gc.freeze``: a few hundred unreachable ones, the argument
    parser, are kept) and it resumes for the run."""
    gc.freeze()
    gc.enable()


def _ask_local_server(settings: Settings) -> Settings:
    """A local server (a keyless preset) says what ink should know before the first request: whether its
    chat template drops the tools (a warning; ink's own server has already handled that), its context
    window (compaction works within it), and, for a preset whose model is a placeholder, the model it
    serves. A server that answers none of it (not llama.cpp) leaves the settings as they are."""
    from msgspec.structs import replace

    from ink.config.catalogue import PLACEHOLDER_MODEL
    from ink.local.props import context_window, read_props, served_model, tools_warning

    props = read_props(settings.base_url)
    if props is None:
        return settings
    if settings.provider != "local":
        warning = tools_warning(settings.base_url, props)
        if warning is not None:
            print(f"ink: warning: {warning}", file=sys.stderr)
    settings = replace(settings, context_window=context_window(props))
    if settings.model == PLACEHOLDER_MODEL and settings.origins.get("model", "default") == "default":
        settings = replace(settings, model=served_model(settings.base_url) or settings.model)
    return settings


def _settings(ns: argparse.Namespace) -> Settings:
    from pathlib import Path

    from ink.config import Flags, load_settings

    flags = Flags(
        provider=ns.provider,
        model=ns.model,
        base_url=ns.base_url,
        api_key=ns.api_key,
        cwd=ns.cwd,
        max_iterations=ns.max_iterations,
        steering_mode=ns.steering_mode,
        follow_up_mode=ns.follow_up_mode,
        permission_mode=ns.permission_mode,
        session_dir=ns.session_dir,
        no_session=ns.no_session,
        debug=ns.debug,
        allow=tuple(ns.allow or ()),
        deny=tuple(ns.deny or ()),
        model_path=ns.model_path,
        sandbox=ns.sandbox,
        max_cost=ns.max_cost,
        max_total_tokens=ns.max_tokens,
        max_time=ns.max_time,
    )
    return load_settings(flags, os.environ, Path.cwd())


def _batch_settings(flags: list[str]) -> Settings | str:
    """The settings of ``ink -p`` with ``flags``, or what it would refuse before running: the settings
    and the key (for ``ink batch``, which checks once what each of its runs would otherwise fail on)."""
    from ink.config import ConfigError

    try:
        settings = _settings(_parser().parse_args([*flags, "-p", "-"]))
    except (UsageError, ConfigError) as exc:
        return str(exc)
    problem = _preflight(settings) or _budget_problem(settings)
    return settings if problem is None else problem


def _preflight(settings: Settings) -> str | None:
    from ink.config import missing_key_problem

    return missing_key_problem(settings)


def _budget_problem(settings: Settings) -> str | None:
    """R45: a cost limit with a model whose prices are unknown is refused at start."""
    if not settings.limits.cost_limited:
        return None
    from ink.run.budget import unpriced_problem

    return unpriced_problem(settings.limits, settings.model)


def _probe(settings: Settings) -> Any:
    from ink.config.reach import Probe

    return Probe(settings.base_url, settings.origins.get("base_url", "default"), os.environ)


# -- the command line --------------------------------------------------------------------------------


def _new_parser() -> argparse.ArgumentParser:
    """argparse, made to report every problem as one line (``UsageError``) instead of usage + exit."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(_clearer(message))

    return Parser(
        prog="ink",
        description="A coding agent for the terminal with first-class run control.",
        epilog="Subcommands: 'ink acp' (Agent Client Protocol over stdio), 'ink sessions' (list "
        "sessions of this directory), 'ink models' (providers and their models), 'ink batch TASKS.jsonl "
        "--out DIR' (many headless runs: docs/batch.md), 'ink mcp list' (MCP servers and their tools), "
        "'ink sandbox check' (what the sandbox can do here). "
        "Settings and their precedence: docs/config.md.",
        allow_abbrev=False,
    )


def _parser() -> argparse.ArgumentParser:
    from ink import __version__
    from ink.config.catalogue import provider_names
    from ink.config.keys import PERMISSION_MODES
    from ink.config.sandbox import SANDBOX_MODES
    from ink.vocabulary import TAKE_MODES

    p = _new_parser()
    p.add_argument("prompt", nargs="*", help="the first prompt (print mode: the task)")
    p.add_argument("-V", "--version", action="version", version=f"ink {__version__}")
    p.add_argument(
        "-p",
        "--print",
        action="store_true",
        help="print mode: run to the end, print the answer; text piped on stdin goes after the prompt",
    )
    p.add_argument("--output-format", choices=("text", "stream-json"), help="print mode output")
    p.add_argument("--mode", choices=("rpc",), help="rpc: JSON lines on stdin/stdout")
    p.add_argument("-c", "--continue", dest="continue_session", action="store_true", help="latest session")
    p.add_argument(
        "-r", "--resume", metavar="ID", nargs="?", const="", help="continue the session ID; no ID: pick one"
    )
    p.add_argument("--provider", choices=provider_names(), help="model service (default: openai)")
    p.add_argument("--model", metavar="NAME", help="model name (default: per provider)")
    p.add_argument("--model-path", metavar="FILE", help="a .gguf model for --provider local to run")
    p.add_argument("--base-url", metavar="URL", help="service URL, e.g. http://localhost:11434/v1")
    p.add_argument("--api-key", metavar="KEY", help="prefer the provider's environment variable")
    p.add_argument("--cwd", metavar="DIR", help="project directory (default: the current one)")
    p.add_argument("--max-iterations", metavar="N", type=_count, help="tool batches per run; 0: no limit")
    p.add_argument("--max-cost", metavar="USD", type=_amount, help="what this ink may spend; 0: no limit")
    p.add_argument("--max-tokens", metavar="N", type=_count, help="tokens it may use (in + out); 0: no limit")
    p.add_argument("--max-time", metavar="SECONDS", type=_amount, help="time runs may take; 0: no limit")
    p.add_argument("--steering-mode", choices=TAKE_MODES, help="steer messages taken at once")
    p.add_argument("--follow-up-mode", choices=TAKE_MODES, help="follow-ups taken at once")
    p.add_argument("--permission-mode", choices=PERMISSION_MODES, help="what tools may do unasked")
    p.add_argument(
        "--sandbox", choices=SANDBOX_MODES, help="what commands may touch (default: workspace-write)"
    )
    p.add_argument("--allow", metavar="RULE", action="append", help='run unasked: "bash(npm test)"')
    p.add_argument("--deny", metavar="RULE", action="append", help='never run: "bash(git push *)"')
    p.add_argument("--session-dir", metavar="DIR", help="where sessions are kept")
    p.add_argument("--no-session", action="store_true", help="do not write a session file")
    p.add_argument("--debug", action="store_true", help="log to stderr, show tracebacks")
    return p


def _amount(text: str) -> float:
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value < 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number") from None
    return value


def _count(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def _clearer(message: str) -> str:
    """argparse's wording, made to name the problem plainly (and guess the flag that was meant)."""
    if message.startswith("unrecognized arguments: "):
        unknown = message.removeprefix("unrecognized arguments: ").split()
        flag = next((u for u in unknown if u.startswith("-")), unknown[0])
        return (
            f"unknown option {flag}{_did_you_mean(flag)}" if flag.startswith("-") else f"unexpected {flag!r}"
        )
    if message.startswith("argument --mode: invalid choice: 'acp'"):  # a mode of its own, not of --mode
        message += "; the ACP server is the subcommand 'ink acp'"
    return message.replace("argument ", "", 1) if message.startswith("argument ") else message


def _did_you_mean(flag: str) -> str:
    import difflib

    known = [a for action in _parser()._actions for a in action.option_strings]
    guesses = difflib.get_close_matches(flag.split("=", 1)[0], known, n=2, cutoff=0.75)
    return f" (did you mean {' or '.join(guesses)}?)" if guesses else ""


def _invocation(ns: argparse.Namespace, args: list[str]) -> Invocation:
    """Decide the mode from the parsed flags; contradictory combinations are usage errors."""
    from ink.ai.unicode import sendable_text
    from ink.config import Invocation

    words: list[str] = ns.prompt
    sub = words[0] if words and words[0] in SUBCOMMANDS and not _after_dashdash(args, words[0]) else None
    if sub is not None:
        if sub in ("mcp", "sandbox"):  # ink mcp list | ink mcp approve NAME | ink sandbox check
            return Invocation(sub, " ".join(words[1:]) or None)  # type: ignore[arg-type]
        if len(words) > 1:
            raise UsageError(f"'ink {sub}' takes no prompt (got {' '.join(words[1:])!r})")
        if ns.print or ns.mode:
            raise UsageError(f"'ink {sub}' cannot be combined with {'-p' if ns.print else '--mode'}")
        return Invocation(sub)  # type: ignore[arg-type]
    resuming = ns.resume is not None
    if ns.continue_session and resuming:
        raise UsageError("--continue and --resume exclude each other: pick one")
    if ns.no_session and (ns.continue_session or resuming):
        raise UsageError("--no-session cannot be combined with --continue or --resume")
    if ns.output_format and not ns.print:
        raise UsageError("--output-format only applies to print mode: add -p")
    pick = resuming and not ns.resume.strip()  # --resume without an id: the TUI's picker
    if pick and (ns.print or ns.mode):
        raise UsageError(
            f"{'print mode' if ns.print else '--mode rpc'} needs the session's id: --resume ID "
            "(`ink sessions` lists them; --resume alone opens a picker in the interactive UI)"
        )
    if ns.mode == "rpc":
        if ns.print or words:
            raise UsageError("--mode rpc reads its prompts from stdin: drop -p and the prompt")
        return Invocation("rpc", continue_session=ns.continue_session, resume_id=ns.resume)
    # argv arrives with undecodable bytes as surrogate escapes: the prompt gets them as \xNN instead
    prompt = sendable_text(" ".join(words)) if words else None
    if ns.print and prompt is None and (sys.stdin is None or sys.stdin.isatty()):
        raise UsageError('print mode needs a prompt: ink -p "your task", or pipe it: echo task | ink -p')
    mode: Mode = "print" if ns.print else "tui"
    return Invocation(
        mode,
        prompt,
        ns.output_format or "text",
        continue_session=ns.continue_session,
        resume_id=None if pick else ns.resume,
        pick_session=pick,
    )


def _after_dashdash(args: list[str], word: str) -> bool:
    """``ink -- sessions`` sends the word as a prompt instead of running the subcommand."""
    return "--" in args and args.index("--") < args.index(word)


def _module_exists(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def _mode_label(mode: str) -> str:
    return {
        "tui": "the interactive terminal UI",
        "rpc": "--mode rpc",
        "acp": "'ink acp'",
        "sessions": "'ink sessions'",
        "models": "'ink models'",
        "mcp": "'ink mcp'",
        "print": "print mode",
    }[mode]


def _setup_logging(debug: bool, redactor: Redactor) -> None:
    """Logs go to stderr. Without --debug: warnings and worse, one line each, no traceback. Every line
    passes through ``redactor`` (keys, ``Authorization`` headers), tracebacks included."""
    import logging

    from ink.redaction import redact_handler

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            exc = record.exc_info[1] if record.exc_info else None
            cause = f": {type(exc).__name__}: {exc}" if exc is not None else ""
            return f"ink: {record.getMessage()}{cause} (run with --debug for details)"

    handler = logging.StreamHandler(sys.stderr)
    verbose = logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s")
    handler.setFormatter(verbose if debug else OneLine())
    redact_handler(handler, redactor)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)


def _fail(message: str, status: int) -> int:
    print(f"ink: {message}", file=sys.stderr)
    return status
