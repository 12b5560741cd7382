"""``/model`` on a server of the user's (``--base-url``): what the server lists (``GET /v1/models``),
asked off the key path and bounded in time, instead of ink's catalogue; a name it does not list is said
(issue 30). The fake model server answers ``/v1/models`` as OpenAI does."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from ink.ai.http import new_client
from ink.ai.model_list import ModelListError, model_ids, models_headers, models_url, served_models, shown_url
from ink.config import Flags, Settings, load_settings
from ink.frontends.tui.served_models import asks_server
from tests.fakeserver import FakeModelServer, say
from tests.tui.conftest import StartInk
from tests.tui.terminal import InkTerminal

TAB = "\t"


def _menu(ink: InkTerminal) -> list[str]:
    """The menu's rows: those between the live area and the rule above the input."""
    lines = ink.lines()
    rules = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
    rows = []
    for line in reversed(lines[: rules[-1]] if rules else []):
        if not line.startswith(("  ", "› ")) or not line.strip():
            break
        rows.append(line)
    return rows[::-1]


def test_model_lists_what_the_server_serves_and_tab_completes_from_it(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.models = ["qwen3:latest", "gpt-4.1-mini", "llama3.2:3b"]
    fake_server.script(say("From the served model."))
    ink = start_ink()
    ink.send("/model gpt-4.1-mi")
    served = lambda: any("gpt-4.1-mini" in row and "served" in row for row in _menu(ink))  # noqa: E731
    ink.wait_for(served, what="the server's list in the menu")
    ink.send(TAB)
    ink.wait_for(lambda: ink.editor_text() == "/model gpt-4.1-mini", what="the served name picked")
    ink.send("\r")
    ink.wait_printed("model: gpt-4.1-mini")
    ink.type_line("/model")
    ink.wait_printed(f"served at {fake_server.openai_base_url}:", whole_line=False)
    ink.wait_printed("  * gpt-4.1-mini")
    lines = ink.scrollback()
    assert "    qwen3:latest" in lines and "    llama3.2:3b" in lines
    assert not any("gpt-4o" in line for line in lines)  # not the catalogue of OpenAI
    assert not any("does not list" in line for line in lines)
    assert all(r.get("authorization") == "Bearer k" for r in fake_server.model_list_requests)
    ink.type_line("hello")
    ink.wait_text("From the served model.")
    assert fake_server.requests[0].body["model"] == "gpt-4.1-mini"


def test_a_name_the_server_does_not_list_is_said_with_the_closest_and_still_chosen(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.models = ["qwen3:latest", "llama3.2:3b"]
    fake_server.script(say("Served anyway."))
    ink = start_ink()
    ink.type_line("/model qwen3")
    ink.wait_printed("model: qwen3")
    ink.wait_printed("does not list qwen3 (did you mean qwen3:latest?)", whole_line=False)
    ink.wait_for(lambda: "qwen3 ·" in ink.text(), what="the status line naming the new model")
    ink.type_line("hi")
    ink.wait_text("Served anyway.")
    assert fake_server.requests[0].body["model"] == "qwen3"


def test_a_server_that_cannot_list_its_models_is_said_in_one_line(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.models_status = 404
    ink = start_ink()
    ink.type_line("/model")
    ink.wait_printed("the server could not say what it serves:", whole_line=False)
    [said] = [line for line in ink.scrollback() if "could not say" in line]
    assert f"{fake_server.openai_base_url}/models answered HTTP 404" in said
    ink.send("/model ")
    ink.wait_for(lambda: any("current · the server's list:" in row for row in _menu(ink)), what="the menu")


def test_a_server_that_does_not_answer_holds_no_key_and_is_given_up_after_3_s(
    fake_server: FakeModelServer, start_ink: StartInk
) -> None:
    fake_server.models_hold = threading.Event()
    try:
        ink = start_ink()
        ink.type_line("/model")
        ink.wait_printed("asking the server what it serves…", whole_line=False)
        ink.send("typed while it asks")  # the keys are not held up by the question
        ink.wait_for(lambda: ink.editor_text() == "typed while it asks", what="the keys echoed")
        assert not any("could not say" in line for line in ink.scrollback())
        ink.wait_printed("models did not answer within 3 s", whole_line=False, timeout=30)
        ink.wait_for(lambda: ink.editor_text() == "typed while it asks", what="the input kept")
    finally:
        fake_server.models_hold.set()


def test_which_servers_are_asked_and_how(tmp_path: Path) -> None:
    def settings(*flags: str) -> Settings:
        values = dict(zip(flags[::2], flags[1::2], strict=True))
        return load_settings(Flags(**values), {"OPENAI_API_KEY": "k", "INK_HOME": str(tmp_path)}, tmp_path)

    assert not asks_server(settings())  # OpenAI's own service: the catalogue
    assert asks_server(settings("base_url", "http://127.0.0.1:9/v1"))
    assert asks_server(settings("provider", "ollama"))  # a server on this machine
    assert models_url("openai", "http://h:1/v1/") == "http://h:1/v1/models"
    assert models_url("anthropic", "https://a.example/v1") == "https://a.example/v1/models?limit=1000"
    assert models_headers("anthropic", "sk")["x-api-key"] == "sk"
    assert models_headers("openai", None) == {"accept": "application/json"}
    assert shown_url("http://user:secret@h:1/v1/models?x=1") == "http://h:1/v1/models"
    data = {"data": [{"id": "/models/qwen.gguf"}, {"id": "a"}, {"id": "a"}, {"id": "\x1b[2J"}, {"x": 1}]}
    assert model_ids(data) == ["qwen", "a"]


async def _answer_nested(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Any request answered 200 with a JSON body nested 100,000 deep."""
    await reader.readuntil(b"\r\n\r\n")
    body = b"[" * 100_000
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    writer.write(b"content-length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    writer.close()


def test_a_list_nested_too_deeply_to_parse_is_said_in_one_line() -> None:
    """json's RecursionError was not caught: the question's task died with it instead of answering."""

    async def ask() -> str:
        server = await asyncio.start_server(_answer_nested, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = new_client()
        try:
            await served_models(client, "openai", f"http://127.0.0.1:{port}/v1", None)
        except ModelListError as exc:
            return str(exc)
        finally:
            await client.aclose()
            server.close()
        return "no error"

    assert asyncio.run(ask()).endswith("did not answer with a model list (nested too deeply to parse)")
