"""run_shell and the process registry with real processes: abort kills the whole tree (R17, R35),
background children cannot hang a command, timeouts, output caps, setsid escapees."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import psutil

from ink.agent.abort import AbortSignal
from ink.tools import ProcessRegistry, ShellResult, run_shell
from tests.tools.conftest import Marker, is_gone, wait_until


def describe(pid: int) -> str:
    try:
        proc = psutil.Process(pid)
        return f"{pid} {proc.status()} {proc.cmdline()} ppid={proc.ppid()} env={proc.environ()}"
    except psutil.Error as exc:
        return f"{pid}: {exc!r}"


def descendants(pid: int) -> list[int]:
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


async def start(
    command: str, cwd: Path, registry: ProcessRegistry, marker: str, kill_delay: float = 0.5
) -> tuple[asyncio.Future[ShellResult], AbortSignal, int]:
    """Start ``command``; return once it printed ``marker``: (running task, its signal, leader pid)."""
    signal = AbortSignal()
    seen = Marker(marker)
    task = asyncio.ensure_future(
        run_shell(command, cwd, signal, registry, on_output=seen, kill_delay=kill_delay)
    )
    await asyncio.wait_for(seen.seen.wait(), 10)
    return task, signal, registry.entries[-1].pid


async def test_R17_abort_kills_the_whole_group_within_a_second(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    signal = AbortSignal()
    task = asyncio.ensure_future(run_shell("sleep 100 & sleep 100", tmp_path, signal, registry))
    await wait_until(lambda: bool(registry.entries) and len(descendants(registry.entries[-1].pid)) == 2)
    leader = registry.entries[-1].pid
    pids = [leader, *descendants(leader)]
    assert all(psutil.Process(pid).name() in ("bash", "sleep") for pid in pids)
    aborted_at = time.monotonic()
    signal.abort("user")
    result = await task
    elapsed = time.monotonic() - aborted_at
    # no waiting out the kill delay is what SIGTERM below says; the time is a hang bound only (a loaded
    # two-core machine once took 1.5 s here)
    assert elapsed < 5.0
    assert all(is_gone(pid) for pid in pids)
    assert result.interrupted and not result.timed_out
    assert result.signal_name == "SIGTERM"
    assert result.survivors == ()
    assert registry.entries == ()  # a tree proven dead is forgotten


async def test_abort_returns_the_output_so_far(tmp_path: Path, registry: ProcessRegistry) -> None:
    task, signal, _ = await start("echo first; echo second; sleep 100", tmp_path, registry, "second")
    signal.abort()
    result = await task
    assert result.output == "first\nsecond\n"
    assert result.exit_code == -15


async def test_R35_term_ignored_gets_kill_after_the_delay(tmp_path: Path, registry: ProcessRegistry) -> None:
    task, signal, leader = await start(
        "trap '' TERM; sleep 100 & echo ready; wait", tmp_path, registry, "ready", kill_delay=0.2
    )
    pids = [leader, *descendants(leader)]
    aborted_at = time.monotonic()
    signal.abort()
    result = await task
    elapsed = time.monotonic() - aborted_at
    assert 0.2 <= elapsed < 5.0  # the kill delay was waited out, then KILL: no hang
    assert result.signal_name == "SIGKILL"
    assert all(is_gone(pid) for pid in pids)


async def test_kill_delay_is_capped_at_two_seconds(tmp_path: Path, registry: ProcessRegistry) -> None:
    task, signal, _ = await start(
        "trap '' TERM; echo ready; sleep 100", tmp_path, registry, "ready", kill_delay=60
    )
    aborted_at = time.monotonic()
    signal.abort()
    await task
    assert time.monotonic() - aborted_at < 10.0  # capped at 2 s, not the 60 asked for


async def test_background_child_holding_stdout_does_not_hang(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    started = time.monotonic()
    result = await run_shell("sleep 100 & echo $!", tmp_path, AbortSignal(), registry)
    assert time.monotonic() - started < 30.0  # not the sleep's 100 s
    assert result.exit_code == 0 and not result.interrupted
    assert result.held_open
    assert is_gone(int(result.output.strip()))


async def test_subshell_background_child_does_not_hang(tmp_path: Path, registry: ProcessRegistry) -> None:
    started = time.monotonic()
    result = await run_shell("(sleep 100 &); echo hi", tmp_path, AbortSignal(), registry)
    assert time.monotonic() - started < 30.0  # not the sleep's 100 s
    assert result.output == "hi\n" and result.exit_code == 0 and result.held_open


async def test_detached_background_child_is_left_running_but_registered(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    """Output redirected away: the command returns at once, the child lives on and is reaped later."""
    result = await run_shell("sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, AbortSignal(), registry)
    child = int(result.output)
    assert not result.held_open and not is_gone(child)
    assert [p.pid for p in registry.alive()] == [child]
    assert await registry.terminate_all(0.2) == []
    assert is_gone(child)


async def test_timeout_stops_the_command(tmp_path: Path, registry: ProcessRegistry) -> None:
    result = await run_shell("echo start; sleep 100", tmp_path, AbortSignal(), registry, timeout=0.3)
    assert result.timed_out and not result.interrupted
    assert result.output == "start\n"
    assert result.signal_name == "SIGTERM"
    assert 0.3 <= result.duration < 1.5


async def test_exit_code_and_stderr_are_reported(tmp_path: Path, registry: ProcessRegistry) -> None:
    result = await run_shell("echo out; echo err >&2; exit 7", tmp_path, AbortSignal(), registry)
    assert result.output == "out\nerr\n"
    assert result.exit_code == 7 and result.signal_name is None


async def test_runs_in_cwd_with_stdin_empty(tmp_path: Path, registry: ProcessRegistry) -> None:
    result = await run_shell("pwd; cat; echo rc=$?", tmp_path, AbortSignal(), registry)
    assert result.output == f"{tmp_path}\nrc=0\n"


async def test_output_cap_keeps_head_and_tail(tmp_path: Path, registry: ProcessRegistry) -> None:
    result = await run_shell("seq 1 100000", tmp_path, AbortSignal(), registry, output_cap=2000)
    lines = result.output.splitlines()
    assert lines[0] == "1" and lines[-1] == "100000"
    notice = next(line for line in lines if line.startswith("[..."))
    head = lines[: lines.index(notice)]
    tail = lines[lines.index(notice) + 1 :]
    assert head == [str(i) for i in range(1, len(head) + 1)]
    assert tail == [str(i) for i in range(100001 - len(tail), 100001)]
    total_bytes = sum(len(str(i)) + 1 for i in range(1, 100001))
    kept_bytes = sum(len(x) + 1 for x in head + tail)
    assert notice == (
        f"[... {100000 - len(head) - len(tail)} lines ({total_bytes - kept_bytes} bytes) cut from the middle "
        f"of the output; showing the first {len(head)} and the last {len(tail)} lines ...]"
    )
    assert kept_bytes <= 2000


async def test_already_aborted_signal_starts_nothing(tmp_path: Path, registry: ProcessRegistry) -> None:
    signal = AbortSignal()
    signal.abort()
    result = await run_shell(f"touch {tmp_path}/ran", tmp_path, signal, registry)
    assert result.interrupted and result.exit_code is None
    assert registry.entries == () and not (tmp_path / "ran").exists()


async def test_missing_cwd_raises_oserror(tmp_path: Path, registry: ProcessRegistry) -> None:
    try:
        await run_shell("true", tmp_path / "missing", AbortSignal(), registry)
    except OSError:
        pass
    else:
        raise AssertionError("expected OSError")


async def test_cancelling_the_caller_kills_the_group_at_once(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    task, _, leader = await start("sleep 100 & echo ready; wait", tmp_path, registry, "ready")
    pids = [leader, *descendants(leader)]
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await wait_until(lambda: all(is_gone(pid) for pid in pids), timeout=1.0)


async def start_escapee(
    command: str, tmp_path: Path, registry: ProcessRegistry
) -> tuple[asyncio.Future[ShellResult], AbortSignal, int]:
    """Start ``command``, which prints ``pid=N`` for a ``setsid`` child, and wait until that child runs
    ``sleep`` in its own session. Returns the running task, its signal and the escapee's pid."""
    signal = AbortSignal()
    seen = Marker("\n")
    task = asyncio.ensure_future(run_shell(command, tmp_path, signal, registry, on_output=seen))
    await asyncio.wait_for(seen.seen.wait(), 10)
    escapee = int(seen.text.strip().removeprefix("pid="))
    await wait_until(lambda: os.getsid(escapee) == escapee and psutil.Process(escapee).name() == "sleep")
    return task, signal, escapee


async def test_R35_setsid_escapee_is_killed_on_abort(tmp_path: Path, registry: ProcessRegistry) -> None:
    command = "setsid sleep 100 > /dev/null 2>&1 & echo pid=$!; sleep 100"
    task, signal, escapee = await start_escapee(command, tmp_path, registry)
    leader = registry.entries[-1].pid
    signal.abort()
    result = await task
    assert result.interrupted and result.survivors == ()
    assert is_gone(escapee) and is_gone(leader)


async def test_R35_escapee_without_token_is_found_by_snapshot(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    """``env -i`` drops ink's token; the escapee is still the shell's descendant when the abort lands."""
    command = "env -i setsid sleep 100 > /dev/null 2>&1 & echo pid=$!; sleep 100"
    task, signal, escapee = await start_escapee(command, tmp_path, registry)
    assert "INK_PROCESS_TOKEN" not in psutil.Process(escapee).environ()
    signal.abort()
    await task
    assert is_gone(escapee)


async def test_R35_orphaned_setsid_escapee_is_found_by_terminate_all(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    """The command has ended and the escapee was re-parented: only its environment token links it to ink."""
    result = await run_shell(
        "(setsid sleep 100 > /dev/null 2>&1 < /dev/null & echo $!)", tmp_path, AbortSignal(), registry
    )
    escapee = int(result.output)
    await wait_until(lambda: os.getsid(escapee) == escapee and psutil.Process(escapee).name() == "sleep")
    assert psutil.Process(escapee).ppid() != os.getpid()
    assert [p.pid for p in registry.alive()] == [escapee]
    survivors = await registry.terminate_all(0.2)
    assert survivors == []
    assert is_gone(escapee)


async def test_terminate_all_reaches_every_registered_tree(tmp_path: Path, registry: ProcessRegistry) -> None:
    first = await run_shell("sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, AbortSignal(), registry)
    second = await run_shell("sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, AbortSignal(), registry)
    pids = [int(first.output), int(second.output)]
    assert not any(is_gone(pid) for pid in pids)
    started = time.monotonic()
    assert await registry.terminate_all(0.5) == []
    assert time.monotonic() - started < 5.0  # bounded: TERM ends them, nothing waits for a timeout
    assert all(is_gone(pid) for pid in pids), [describe(pid) for pid in pids]
    assert registry.entries == ()


async def test_kill_all_now_sends_sigkill_without_waiting(tmp_path: Path, registry: ProcessRegistry) -> None:
    result = await run_shell(
        "trap '' TERM; sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, AbortSignal(), registry
    )
    child = int(result.output)
    registry.kill_all_now()
    await wait_until(lambda: is_gone(child), timeout=1.0)


async def test_unrelated_processes_are_never_signalled(tmp_path: Path, registry: ProcessRegistry) -> None:
    """A process ink did not start, even in a fresh group, survives terminate_all."""
    bystander = await asyncio.create_subprocess_exec("sleep", "100", start_new_session=True)
    try:
        await run_shell("true", tmp_path, AbortSignal(), registry)
        await registry.terminate_all(0.1)
        assert not is_gone(bystander.pid)
    finally:
        bystander.kill()
        await bystander.wait()


async def test_finished_entries_are_pruned_but_live_trees_kept(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    background = await run_shell("sleep 100 > /dev/null 2>&1 & echo $!", tmp_path, AbortSignal(), registry)
    for _ in range(70):
        await run_shell("true", tmp_path, AbortSignal(), registry)
    assert len(registry.entries) < 70
    assert registry.entries[0].command == "sleep 100 > /dev/null 2>&1 & echo $!"
    assert [p.pid for p in registry.alive()] == [int(background.output)]
