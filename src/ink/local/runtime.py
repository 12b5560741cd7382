"""Running a GGUF model for the length of one ink process: ``LocalServer`` starts ``ink.local.serve`` as
a child, waits until it listens (progress on stderr), and ``stop`` ends it (no process left, R35).

The child is stopped by closing its stdin, then SIGTERM, then SIGKILL; a parent that dies without
stopping it closes that stdin too. It is in its own session, so a Ctrl-C meant for ink reaches ink only
(ink then stops it). llama.cpp's log goes to ``$INK_HOME/models/server.log``.

Chat template: llama.cpp serves with the model's own Jinja template. When that template cannot render
tools (``/props`` says so) and the model speaks ChatML, the server is restarted with ink's ChatML template
that has Hermes-style tool calls (``chatml_tools.jinja``), which llama.cpp parses back into tool calls.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import IO, TextIO

from ink.lineage import leader_preexec
from ink.local.props import read_props, supports_tools
from ink.store.paths import make_private_dirs
from ink.tools.orphans import own_child, own_child_done

READY_TIMEOUT = 600.0  # seconds a model may take to load (a big model from a slow disk)
PROGRESS_EVERY = 5.0
STOP_WAIT = 5.0


class LocalModelError(Exception):
    """The local model cannot be served; the message says why and what to do."""


def require_runtime() -> None:
    """Raise ``LocalModelError`` unless the ``local`` extra (xllamacpp) is installed."""
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelError(
            "--provider local needs the local model runtime: pip install 'ink-agent[local]'"
        )


def template_path() -> Path:
    return Path(str(resources.files("ink.local") / "chatml_tools.jinja"))


class LocalServer:
    """One llama.cpp server child for ``model``. ``start`` returns its OpenAI base URL (``.../v1``)."""

    def __init__(
        self,
        model: Path,
        log_path: Path,
        progress: TextIO,
        *,
        template: Path | None = None,
        temperature: float | None = None,
        began: float | None = None,
    ) -> None:
        """``began``: when the start began (``time.monotonic``), for a restart: "still loading" counts the
        whole start's time, not the restart's (it said "(5 s)" twice)."""
        self.model = model
        self._began = began
        self.temperature = temperature
        self.log_path = log_path
        self.progress = progress
        self.template = template
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def start(self, timeout: float = READY_TIMEOUT) -> str:
        command = [sys.executable, "-m", "ink.local.serve", str(self.model)]
        if self.template is not None:
            command += ["--template", str(self.template)]
        if self.temperature is not None:
            command += ["--temp", str(self.temperature)]
        make_private_dirs(self.log_path.parent)  # beside the models in $INK_HOME: private like the rest
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                preexec_fn=leader_preexec(),  # ends with ink, even a SIGKILLed one
            )
        own_child(self.process.pid)  # ink's own child, not a command's escaped descendant to be ended
        if self.template is None:  # a restart with ink's template is the same start, said once
            self._say(f"starting the local model server for {self.model.name}")
        try:
            line = _first_line(self.process, timeout, self._still_loading)
        except BaseException:
            self.stop()
            raise
        if not line.startswith("listening "):
            self.stop()
            raise LocalModelError(
                f"the local model server could not serve {self.model} (see {self.log_path}): "
                f"{_last_line(self.log_path) or 'it exited'}"
            )
        self.base_url = line.removeprefix("listening ").strip().rstrip("/") + "/v1"
        return self.base_url

    def stop(self) -> None:
        """End the child and reap it. Idempotent."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        for signal_it in (None, process.terminate, process.kill):
            if signal_it is not None:
                signal_it()
            try:
                process.wait(STOP_WAIT)
                break
            except subprocess.TimeoutExpired:
                continue
        if process.stdout is not None:
            process.stdout.close()
        if process.returncode is not None:
            own_child_done(process.pid)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def _still_loading(self, seconds: float) -> None:
        if self._began is not None:
            seconds = time.monotonic() - self._began
        self._say(f"still loading {self.model.name} ({seconds:.0f} s)")

    def _say(self, text: str) -> None:
        self.progress.write(f"ink: {text}\n")
        self.progress.flush()


def start_local(
    model: Path, ink_home: Path, progress: TextIO, *, temperature: float | None = None
) -> LocalServer:
    """A started server for ``model``, with a chat template that renders tools whenever one can be had
    (see the module doc). ``temperature``: the server's default for requests that set none. Raises
    ``LocalModelError``."""
    require_runtime()
    log = ink_home / "models" / "server.log"
    began = time.monotonic()
    server = LocalServer(model, log, progress, temperature=temperature)
    server.start()
    props = read_props(server.base_url) or {}
    if supports_tools(props) is False:
        if "<|im_start|>" in str(props.get("chat_template", "")):
            server.stop()
            server = LocalServer(
                model, log, progress, template=template_path(), temperature=temperature, began=began
            )
            server.start()
        else:
            progress.write(
                f"ink: warning: {model.name}'s chat template has no tool calls: the model will not see "
                "ink's tools\n"
            )
    progress.write(f"ink: local model ready in {time.monotonic() - began:.1f} s at {server.base_url}\n")
    progress.flush()
    return server


def _first_line(process: subprocess.Popen[bytes], timeout: float, tick: Callable[[float], None]) -> str:
    """The child's first stdout line ('' if it exits first). Raises ``LocalModelError`` on timeout."""
    assert process.stdout is not None
    stdout: IO[bytes] = process.stdout
    began = time.monotonic()
    buffered = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        next_tick = PROGRESS_EVERY
        while b"\n" not in buffered:
            waited = time.monotonic() - began
            if waited > timeout:
                raise LocalModelError(f"the local model server was not ready after {timeout:.0f} s")
            if waited > next_tick:
                tick(waited)
                next_tick += PROGRESS_EVERY
            if selector.select(timeout=0.5):
                piece = os.read(stdout.fileno(), 4096)
                if not piece:
                    return buffered.decode(errors="replace")
                buffered += piece
    return buffered.split(b"\n", 1)[0].decode(errors="replace")


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""
