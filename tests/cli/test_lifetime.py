"""The app's lifetime (issue 16): ``open_app`` prepares and starts its parts in order and closes them in
reverse; a part that cannot start gives a clear error and everything begun is closed; what the app's
background tasks raise reaches the user; model switches are the app's."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from ink.agent.events import Notice
from ink.app.plan import PlanKeeper
from ink.config import Flags, Settings, load_settings
from ink.run.events import RunEnd, RunEvent
from ink.wiring import App, AppPart, AppStartError, open_app
from tests.fakeserver import FakeModelServer, say


def settings(tmp_path: Path, **flags: object) -> Settings:
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path)}
    return load_settings(Flags(no_session=True, **flags), env, tmp_path)  # type: ignore[arg-type]


class Recorder(AppPart):
    """A part that writes what happens to it into a shared journal, and fails where it is told to."""

    def __init__(self, name: str, journal: list[str], fail_in: str = "") -> None:
        self.name = name
        self.journal = journal
        self.fail_in = fail_in
        self.app: App | None = None

    async def prepare(self, settings: Settings) -> Settings:
        self.journal.append(f"prepare {self.name}")
        if self.fail_in == "prepare":
            raise OSError("no such device")
        return settings

    async def start(self, app: App) -> None:
        self.journal.append(f"start {self.name}")
        self.app = app
        if self.fail_in == "start":
            raise RuntimeError("handshake refused")

    async def aclose(self) -> None:
        self.journal.append(f"close {self.name}")


async def test_parts_start_in_order_and_close_in_reverse(tmp_path: Path) -> None:
    journal: list[str] = []
    parts = [Recorder("a", journal), Recorder("b", journal)]
    async with open_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1"), parts=parts) as app:
        journal.append("use")
        own = (app.checkpoints, app.part(PlanKeeper))  # the app's own parts first, then the frontend's
        assert app.parts == (*own, *parts) and app.part(Recorder) is parts[0]
    assert journal == ["prepare a", "prepare b", "start a", "start b", "use", "close b", "close a"]


async def test_a_part_that_fails_to_start_is_named_and_the_others_are_closed(tmp_path: Path) -> None:
    journal: list[str] = []
    failing = Recorder("the b server", journal, fail_in="start")
    parts = [Recorder("a", journal), failing, Recorder("c", journal)]
    with pytest.raises(AppStartError, match=r"the b server could not start: RuntimeError: handshake refused"):
        async with open_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1"), parts=parts):
            journal.append("use")  # never reached
    started = ["prepare a", "prepare the b server", "prepare c", "start a", "start the b server"]
    assert journal == [*started, "close c", "close the b server", "close a"]
    app = parts[0].app
    assert app is not None and app.controller.state == "idle" and len(app.tasks) == 0


async def test_a_part_that_fails_to_prepare_closes_only_what_began(tmp_path: Path) -> None:
    journal: list[str] = []
    parts = [Recorder("a", journal), Recorder("b", journal, fail_in="prepare"), Recorder("c", journal)]
    with pytest.raises(AppStartError, match="b could not prepare: OSError: no such device"):
        async with open_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1"), parts=parts):
            pass
    assert journal == ["prepare a", "prepare b", "close b", "close a"]


async def test_what_a_part_prepares_is_what_the_app_is_built_with(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    class Server(AppPart):
        name = "a model server"

        async def prepare(self, settings: Settings) -> Settings:
            return msgspec.structs.replace(
                settings, base_url=fake_server.openai_base_url, model="served-model"
            )

        async def aclose(self) -> None:
            return None

    fake_server.script(say("hello"))
    events: list[RunEvent] = []
    async with open_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1"), parts=[Server()]) as app:
        app.controller.subscribe(events.append)
        app.submit("hi")
        await app.controller.wait_idle()
    assert [e.stop_reason for e in events if isinstance(e, RunEnd)] == ["completed"]
    assert fake_server.requests[0].body["model"] == "served-model"


async def test_a_failing_background_task_of_the_app_becomes_a_notice(tmp_path: Path) -> None:
    events: list[RunEvent] = []
    async with open_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1"), parts=[]) as app:
        app.controller.subscribe(events.append)

        async def broken() -> None:
            raise LookupError("lost the catalogue")

        task = app.tasks.spawn(broken(), "catalogue refresh")
        with pytest.raises(LookupError):
            await task
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices == ["internal error in catalogue refresh: LookupError: lost the catalogue"]


async def test_switch_model_changes_the_next_runs_model_and_records_it(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.script(say("one"), say("two"))
    flags = {"base_url": fake_server.openai_base_url, "session_dir": str(tmp_path / "sessions")}
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path)}
    with_sessions = load_settings(Flags(**flags), env, tmp_path)  # type: ignore[arg-type]
    async with open_app(with_sessions) as app:
        app.submit("first")
        await app.controller.wait_idle()
        app.switch_model("gpt-4o-mini")
        app.submit("second")
        await app.controller.wait_idle()
        assert app.session is not None
        path = app.session.path
    assert [r.body["model"] for r in fake_server.requests] == [with_sessions.model, "gpt-4o-mini"]
    assert '"gpt-4o-mini"' in path.read_text()  # the session file says when the model changed
    with pytest.raises(ValueError, match="unknown provider"):
        async with open_app(settings(tmp_path, base_url="http://127.0.0.1:9/v1")) as app:
            app.switch_model("x", provider="no-such-service")
