"""``/model`` against a server of the user's (``--base-url``, a provider's URL set in config, or a server
on this machine: Ollama, LM Studio, vLLM, llama.cpp, ink's own): the models offered are the ones the
server lists (``GET /v1/models``, ``ink.ai.model_list``), not ink's catalogue of the provider.

The server is asked in the background (at most ``ASK_SECONDS``), never on the way of a key: the ``/model``
menu shows the current model and "asking…" until the answer comes, then the list. ``/model`` asks again
each time and prints the list, or the one line of why it could not; ``/model NAME`` switches at once,
and when the server does not list NAME says so (with the names closest to it). It still switches: a
server may serve names it does not list (Ollama takes ``qwen3`` for ``qwen3:latest``, a LiteLLM proxy
routes by pattern), and its first reply tells if it does not.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Callable

from ink.app import App
from ink.config import Settings
from ink.frontends.tui.blocks import Block, sanitize

Answer = list[str] | str  # the names the server lists, or why it could not say
Key = tuple[str, str]  # (provider, base URL): a switch of either is another server


def asks_server(settings: Settings) -> bool:
    """True when the models to offer are the server's: its URL is not the provider's own service, or the
    provider is a server on this machine."""
    info = settings.provider_info
    return settings.base_url.rstrip("/") != info.default_base_url.rstrip("/") or not info.key_required


class ServedModels:
    """The answers of the servers asked in this session. ``say`` prints a block; ``changed`` is called
    when an answer came (the menu lists it)."""

    def __init__(self, core: App, say: Callable[[Block], None], changed: Callable[[], None]) -> None:
        self._core, self._say, self._changed = core, say, changed
        self._asked: dict[Key, asyncio.Task[Answer]] = {}

    @property
    def applies(self) -> bool:
        return asks_server(self._core.settings)

    def where(self) -> str:
        from ink.ai.model_list import shown_url

        return shown_url(self._core.settings.base_url)

    def ask(self, *, again: bool = False) -> asyncio.Task[Answer]:
        """The answer of the current server: the one asked for already (``again``: unless it came), else
        a new question."""
        settings = self._core.settings
        key = (settings.provider, settings.base_url)
        task = self._asked.get(key)
        if task is None or (again and task.done()):
            task = self._core.tasks.spawn(self._ask(settings), "the server's models")
            task.add_done_callback(lambda _done: self._changed())  # done: its answer can be read now
            self._asked[key] = task
        return task

    async def _ask(self, settings: Settings) -> Answer:
        from ink.ai.http import new_client
        from ink.ai.model_list import ModelListError, served_models

        client = new_client()
        try:
            protocol = settings.provider_info.protocol
            return await served_models(client, protocol, settings.base_url, settings.api_key)
        except ModelListError as exc:
            return sanitize(str(exc))
        finally:
            await client.aclose()

    def choices(self) -> list[tuple[str, str]]:
        """The ``/model`` menu's entries: the server's names (asked now, the first time), the current
        model first when the server does not list it."""
        current = self._core.settings.model
        task = self.ask()
        if not task.done():
            return [(current, "current · asking the server what it serves…")]
        answer = task.result()
        if isinstance(answer, str):
            return [(current, f"current · the server's list: {answer}")]
        rows = [(name, "current" if name == current else "served") for name in answer]
        return rows if current in answer else [(current, "current · not listed by the server"), *rows]

    def list_them(self) -> None:
        """``/model``: what the server serves, the current model marked, once it answered."""
        settings = self._core.settings
        head = f"model: {settings.model} ({settings.provider} at {self.where()}); change it with /model NAME"
        self._say(Block("info", f"{head} · asking the server what it serves…", "dim"))
        _when_answered(self.ask(again=True), lambda answer: self._say(self._listing(answer)))

    def _listing(self, answer: Answer) -> Block:
        current = self._core.settings.model
        if isinstance(answer, str):
            return Block("warning", f"the server could not say what it serves: {answer}")
        if not answer:
            return Block("warning", f"the server at {self.where()} lists no models")
        lines = [f"{'*' if name == current else ' '} {sanitize(name)}" for name in answer]
        if current not in answer:
            lines.append(f"({current}, the current model, is not in its list)")
        return Block("output", "\n".join([f"served at {self.where()}:", *lines]))

    def check(self, name: str) -> None:
        """After ``/model NAME``: a warning once the server answered, when it does not list NAME."""
        _when_answered(self.ask(), lambda answer: self._checked(name, answer))

    def _checked(self, name: str, answer: Answer) -> None:
        if isinstance(answer, str):
            self._say(Block("warning", f"could not check {name} against the server's list: {answer}"))
            return
        if name in answer:
            return
        close = difflib.get_close_matches(name, answer, n=3, cutoff=0.5)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        self._say(
            Block(
                "warning",
                f"the server at {self.where()} does not list {sanitize(name)}{hint}: switched anyway, its "
                "first reply will say if it serves it (/model lists what it serves)",
            )
        )


def _when_answered(task: asyncio.Task[Answer], then: Callable[[Answer], None]) -> None:
    """``then(answer)`` once ``task`` has its answer (never when it was cancelled: the app closed)."""
    task.add_done_callback(lambda done: None if done.cancelled() else then(done.result()))
