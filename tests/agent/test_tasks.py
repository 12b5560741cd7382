"""``Tasks``: every background task has an owner that observes how it ended, and cancelling awaits what
it cancels (issue 16: the reply drains and the run driver no longer live in unowned sets)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from ink.agent.abort import AbortSignal, run_unless_aborted
from ink.agent.tasks import Straggler, Tasks, cancel_and_wait


async def test_a_failed_task_is_observed_logged_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    reported: list[tuple[str, BaseException]] = []
    tasks = Tasks(on_error=lambda name, error: reported.append((name, error)))

    async def fail() -> None:
        raise ValueError("broken drain")

    task = tasks.spawn(fail(), "reply drain")
    await asyncio.wait((task,))
    await asyncio.sleep(0)  # the done callback runs on the next loop step
    assert [(name, str(error)) for name, error in reported] == [("reply drain", "broken drain")]
    assert "background task reply drain failed" in caplog.text
    assert len(tasks) == 0  # ended: no longer held
    assert await tasks.aclose(1.0) == ()


async def test_aclose_cancels_waits_and_names_the_stragglers() -> None:
    tasks = Tasks()
    release = asyncio.Event()
    ended: list[str] = []

    async def obedient() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            ended.append("obedient")

    async def stubborn() -> None:  # swallows the cancellation until released
        while True:
            try:
                await release.wait()
                ended.append("stubborn")
                return
            except asyncio.CancelledError:
                continue

    tasks.spawn(obedient(), "obedient")
    late = tasks.spawn(stubborn(), "stubborn")
    await asyncio.sleep(0)  # both started
    assert await tasks.aclose(0.05) == (Straggler("stubborn"),)
    assert ended == ["obedient"]  # the cancelled one had ended when aclose returned
    release.set()
    await late
    assert ended == ["obedient", "stubborn"] and len(tasks) == 0


async def test_cancel_and_wait_returns_once_the_task_has_ended() -> None:
    cleaned = asyncio.Event()

    async def slow_clean_up() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # clean-up that itself awaits
            await asyncio.sleep(0)
            cleaned.set()

    task = asyncio.ensure_future(slow_clean_up())
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert task.cancelled() and cleaned.is_set()


async def test_R17_cancelling_the_caller_of_run_unless_aborted_awaits_the_inner_task() -> None:
    cleaned = asyncio.Event()
    inner_started = asyncio.Event()

    async def inner() -> None:
        inner_started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)
            cleaned.set()

    outer = asyncio.ensure_future(run_unless_aborted(inner(), AbortSignal()))
    await inner_started.wait()
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert cleaned.is_set()  # the inner task had ended before the cancellation went on


async def test_the_run_driver_is_owned_by_the_controllers_tasks(caplog: pytest.LogCaptureFixture) -> None:
    from ink.agent.loop import LoopSetup
    from ink.run.controller import RunController

    caplog.set_level(logging.ERROR)
    tasks = Tasks()

    class NoProvider:
        name = "none"

        def stream(self, request: object) -> object:
            raise AssertionError("not called")

        async def aclose(self) -> None:
            return None

    controller = RunController(LoopSetup(NoProvider(), "m", "s"), tasks=tasks)  # type: ignore[arg-type]
    started = asyncio.Event()

    async def work(signal: AbortSignal) -> None:
        started.set()
        await signal.wait_aborted()

    assert controller.run_command(work)
    await started.wait()
    assert len(tasks) == 1  # the driver, held by its owner
    controller.abort()
    await controller.wait_idle()
    await asyncio.sleep(0)
    assert len(tasks) == 0
