"""Images the user attaches (``@shot.png``, issue 12) reach a model that takes images as image content of
the user message, in all three protocols; a text-only model gets the text alone; the session keeps them
and a resumed session sends them again."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from ink.ai.messages import ToolImage, UserMessage
from ink.config import Flags, Settings, load_settings
from ink.frontends.tui.mentions import Attached, attach
from ink.run.events import RunEnd, RunEvent
from ink.store import load_session
from ink.wiring import App, SessionChoice, build_app
from tests.fakeserver import FakeModelServer, say
from tests.waiting import wait_until

# The smallest valid PNG (1x1): what a screenshot is to the converters.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ENCODED = base64.b64encode(PNG).decode()
MODELS = {"openai": "gpt-4.1", "openai-responses": "gpt-5", "anthropic": "claude-sonnet-4-5"}


def configure(tmp_path: Path, fake: FakeModelServer, protocol: str, model: str) -> Settings:
    home = tmp_path / "inkhome"
    home.mkdir(exist_ok=True)
    env = {"INK_HOME": str(home), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    flags = Flags(
        provider=protocol,
        model=model,
        base_url=fake.base_url(protocol),
        api_key="k",
        permission_mode="yolo",
    )
    return load_settings(flags, env, tmp_path)


async def one_prompt(app: App, text: str, images: tuple[ToolImage, ...]) -> None:
    ends: list[RunEvent] = []
    app.controller.subscribe(lambda e: ends.append(e) if isinstance(e, RunEnd) else None)
    app.controller.submit(text, images=images)
    await wait_until(lambda: ends, 60, "the run to end")
    await app.controller.wait_idle()
    assert [e.stop_reason for e in ends if isinstance(e, RunEnd)] == ["completed"]


def attach_shot(folder: Path, model: str) -> Attached:
    (folder / "shot.png").write_bytes(PNG)
    return attach("what is in @shot.png", folder, model)


def image_parts(body: dict[str, object], protocol: str) -> list[dict[str, object]]:
    """The image parts of the last user message of a request body, in the protocol's own form."""
    messages = body["input"] if protocol == "openai-responses" else body["messages"]
    assert isinstance(messages, list)
    user = [m for m in messages if m.get("role") == "user"][-1]
    content = user["content"]
    kinds = {"openai": "image_url", "openai-responses": "input_image", "anthropic": "image"}
    return [p for p in content if p.get("type") == kinds[protocol]] if isinstance(content, list) else []


@pytest.mark.parametrize("protocol", sorted(MODELS))
async def test_an_attached_image_goes_as_image_content_and_survives_a_resume(
    fake_server: FakeModelServer, tmp_path: Path, protocol: str
) -> None:
    attached = attach_shot(tmp_path, MODELS[protocol])
    assert attached.problems == () and len(attached.images) == 1
    settings = configure(tmp_path, fake_server, protocol, MODELS[protocol])
    fake_server.script(say("A dot."), say("Still a dot."))
    app = build_app(settings)
    try:
        await one_prompt(app, attached.prompt, attached.images)
        session_path = app.session.path if app.session is not None else None
    finally:
        await app.aclose()
    encoded = ENCODED
    [part] = image_parts(fake_server.requests[0].body, protocol)
    if protocol == "anthropic":
        assert part["source"] == {"type": "base64", "media_type": "image/png", "data": encoded}
    else:
        url = part["image_url"]["url"] if protocol == "openai" else part["image_url"]  # type: ignore[index]
        assert url == f"data:image/png;base64,{encoded}"
    [text] = fake_server.requests[0].user_texts()
    assert text.startswith("what is in @shot.png") and '<attached path="shot.png">(image, image/png' in text

    assert session_path is not None
    loaded = load_session(session_path)
    [user] = [m for m in loaded.messages if isinstance(m, UserMessage)]
    assert user.images == (ToolImage("image/png", encoded),)  # kept with the session

    resumed = build_app(settings, session=SessionChoice(continue_latest=True))
    try:
        assert resumed.session is not None and resumed.session.id == loaded.header.id
        await one_prompt(resumed, "and now?", ())
    finally:
        await resumed.aclose()
    # The resumed history sends the image again, once.
    assert json.dumps(fake_server.requests[1].body).count(encoded) == 1


@pytest.mark.parametrize("protocol", sorted(MODELS))
async def test_a_text_only_model_gets_the_text_and_the_user_is_told(
    fake_server: FakeModelServer, tmp_path: Path, protocol: str
) -> None:
    model = "claude-3-5-haiku" if protocol == "anthropic" else "o3-mini"
    attached = attach_shot(tmp_path, model)
    assert attached.images == ()
    assert attached.problems == (f"shot.png: {model} does not take images; the image was not sent",)
    # A history that holds an image (a session from an image model, then /model) sends the text alone.
    settings = configure(tmp_path, fake_server, protocol, model)
    fake_server.script(say("No image seen."))
    app = build_app(settings)
    try:
        await one_prompt(app, "what is in @shot.png", (ToolImage("image/png", ENCODED),))
    finally:
        await app.aclose()
    assert image_parts(fake_server.requests[0].body, protocol) == []
    assert fake_server.requests[0].user_texts() == ["what is in @shot.png"]


def test_a_pasted_image_path_is_attached_like_a_mention(tmp_path: Path) -> None:
    folder = tmp_path / "with space"
    folder.mkdir()
    (folder / "drop.png").write_bytes(PNG)
    (tmp_path / "big.png").write_bytes(b"\0" * (5 * 1024 * 1024 + 1))
    dropped = f"see '{folder / 'drop.png'}' please"  # as a terminal pastes a dropped file
    attached = attach(dropped, tmp_path, "gpt-4.1")
    assert len(attached.images) == 1 and attached.paths == (str(folder / "drop.png"),)
    escaped_path = str(folder / "drop.png").replace(" ", "\\ ")
    escaped = attach(f"see {escaped_path}", tmp_path, "gpt-4.1")
    assert len(escaped.images) == 1
    too_big = attach(f"and {tmp_path / 'big.png'}", tmp_path, "gpt-4.1")
    assert too_big.images == () and "over the 5 MB" in too_big.problems[0]
    assert attach("a path like /usr/share/x.png that is not there", tmp_path, "gpt-4.1").images == ()
