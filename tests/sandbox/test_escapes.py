"""R41: what a command in the sandbox cannot do, tried for real; and ``off`` allowing all of it."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.sandbox import Confinement, find_denial, make_private_temporary
from ink.tools import ProcessRegistry, run_shell
from tests.sandbox.conftest import confinement, policy
from tests.waiting import wait_until

PY = shlex.quote(sys.executable)


def escapes(target: Path, workspace: Path) -> dict[str, str]:
    """Ways to write ``target`` (a file outside every writable folder), each a bash command."""
    name = str(target)
    python = shlex.quote(f"open({name!r}, 'w').write('x')")
    return {
        "directly": f"echo x > {shlex.quote(name)}",
        "through a symlink": f"ln -s {shlex.quote(str(target.parent))} link && echo x > link/{target.name}",
        "through /proc/self/root": f"echo x > /proc/self/root{shlex.quote(name)}",
        "from Python": f"{PY} -c {python}",
        "with cp": f"echo x > mine && cp mine {shlex.quote(name)}",
        "by renaming into it": f"echo x > mine && mv mine {shlex.quote(name)}",
    }


async def run(
    command: str, cwd: Path, registry: ProcessRegistry, confined: Confinement | None
) -> tuple[int | None, str]:
    result = await run_shell(command, cwd, AbortSignal(), registry, timeout=60, confinement=confined)
    return result.exit_code, result.output


@pytest.mark.parametrize("how", list(escapes(Path("/x/y"), Path("/w"))))
async def test_R41_writes_outside_the_workspace_are_refused(
    how: str, tmp_path: Path, outside: Path, registry: ProcessRegistry
) -> None:
    target = outside / "escaped"
    confined = confinement("workspace-write", tmp_path)
    code, output = await run(escapes(target, tmp_path)[how], tmp_path, registry, confined)
    assert not target.exists(), output
    assert code != 0
    denial = find_denial(output, confined.policy, tmp_path)
    assert denial is not None and denial.kind == "write", output


@pytest.mark.parametrize("how", list(escapes(Path("/x/y"), Path("/w"))))
async def test_R41_off_allows_the_same_writes(
    how: str, tmp_path: Path, outside: Path, registry: ProcessRegistry
) -> None:
    target = outside / "escaped"
    code, output = await run(escapes(target, tmp_path)[how], tmp_path, registry, None)
    assert code == 0, output
    assert target.read_text().strip() == "x"


async def test_R41_the_workspace_and_the_temporary_folders_are_writable(
    tmp_path: Path, outside: Path, registry: ProcessRegistry
) -> None:
    workspace = outside / "ws"  # not under /tmp: the write there is the workspace's rule alone
    workspace.mkdir()
    confined = confinement("workspace-write", workspace)
    command = (
        'mkdir -p a/b && echo x > a/b/f && mv a/b/f a/g && t=$(mktemp) && echo y > "$t" && rm "$t" && cat a/g'
    )
    code, output = await run(command, workspace, registry, confined)
    assert (code, output.strip()) == (0, "x")


async def test_R41_a_detached_child_cannot_write_after_the_tool_returned(
    tmp_path: Path, outside: Path, registry: ProcessRegistry
) -> None:
    target, marker = outside / "late", tmp_path / "tried"
    confined = confinement("workspace-write", tmp_path)
    late = f"sleep 0.2; echo x > {shlex.quote(str(target))}; echo done > {shlex.quote(str(marker))}"
    command = f"setsid bash -c {shlex.quote(late)} > /dev/null 2>&1 < /dev/null & echo started"
    code, output = await run(command, tmp_path, registry, confined)
    assert (code, output.strip()) == (0, "started")  # the tool returned; the child lives on
    await wait_until(marker.exists, 30, "the detached child's attempt")
    assert not target.exists()


async def test_R41_secret_folders_are_not_readable(
    tmp_path: Path, fake_home: Path, registry: ProcessRegistry
) -> None:
    confined = confinement("workspace-write", tmp_path, fake_home)
    key = fake_home / ".ssh" / "id_ed25519"
    code, output = await run(f"cat {key}", tmp_path, registry, confined)
    assert code != 0 and "PRIVATE KEY" not in output
    denial = find_denial(output, confined.policy, tmp_path)
    assert denial is not None and denial.kind == "read"
    code, output = await run(f"cat {fake_home / 'notes.txt'}", tmp_path, registry, confined)  # the rest: yes
    assert (code, output.strip()) == (0, "readable")
    code, output = await run(f"cat {key}", tmp_path, registry, None)
    assert "PRIVATE KEY" in output  # off: readable


@pytest.fixture
def listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    return server


def connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            server.accept()[0].close()
        except BlockingIOError:
            return count
        count += 1


@pytest.mark.parametrize("client", ["bash", "python"])
async def test_R41_no_network_by_default(
    client: str, tmp_path: Path, registry: ProcessRegistry, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    command = {
        "bash": f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected",
        "python": f"{PY} -c "
        + shlex.quote(f"import socket; socket.create_connection(('127.0.0.1', {port})); print('connected')"),
    }[client]
    confined = confinement("workspace-write", tmp_path)
    code, output = await run(command, tmp_path, registry, confined)
    assert code != 0 and "connected" not in output.replace("unreachable", "")
    assert connections(listener) == 0
    denial = find_denial(output, confined.policy, tmp_path)
    assert denial is not None and denial.kind == "network", output
    allowed = confinement("workspace-write", tmp_path, network=True)
    code, output = await run(command, tmp_path, registry, allowed)
    assert code == 0 and "connected" in output
    code, output = await run(command, tmp_path, registry, None)
    assert code == 0 and connections(listener) == 2


async def test_R41_read_only_refuses_workspace_writes(tmp_path: Path, registry: ProcessRegistry) -> None:
    temporary = make_private_temporary()
    try:
        confined = confinement("read-only", tmp_path, temporary=temporary)
        code, output = await run("echo x > in-workspace", tmp_path, registry, confined)
        assert code != 0 and not (tmp_path / "in-workspace").exists()
        assert find_denial(output, confined.policy, tmp_path) is not None
        code, output = await run(
            'echo y > "$TMPDIR/mine" && cat "$TMPDIR/mine" && ls /', tmp_path, registry, confined
        )
        assert code == 0 and output.startswith("y\n")  # its private temporary folder, and reads
        assert (temporary / "mine").exists()
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


async def test_R41_cannot_signal_or_trace_processes_outside(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    bystander = subprocess.Popen(["sleep", "100"])  # noqa: ASYNC220 (started once, never awaited)
    try:
        confined = confinement("workspace-write", tmp_path)
        code, output = await run(f"kill -TERM {bystander.pid}", tmp_path, registry, confined)
        assert code != 0 and bystander.poll() is None
        denial = find_denial(output, confined.policy, tmp_path)
        assert denial is not None and denial.kind == "signal"
        attach = f"import ctypes; print(ctypes.CDLL(None).ptrace(16, {bystander.pid}, 0, 0))"
        trace = f"{PY} -c {shlex.quote(attach)}"
        code, output = await run(trace, tmp_path, registry, confined)  # PTRACE_ATTACH
        assert output.strip().endswith("-1"), output
        code, output = await run("sleep 100 & kill $! && wait $!; echo $?", tmp_path, registry, confined)
        assert output.strip() == "143"  # its own children: as usual
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


async def test_R35_abort_ends_a_sandboxed_tree_escapees_included(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    confined = confinement("workspace-write", tmp_path)
    pids = tmp_path / "pids"
    command = f"(setsid sleep 100 & echo $! >> {pids}; sleep 100 & echo $! >> {pids}; wait) & "
    command += f"echo $$ >> {pids}; wait"
    stop = AbortSignal()
    task = asyncio.ensure_future(
        run_shell(command, tmp_path, stop, registry, timeout=60, kill_delay=0.2, confinement=confined)
    )
    await wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 3, 30, "three processes")
    stop.abort("user")
    result = await asyncio.wait_for(task, 30)
    assert result.interrupted and not result.survivors
    for pid in map(int, pids.read_text().split()):
        await wait_until(lambda pid=pid: _gone(pid), 10, f"process {pid} gone")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except OSError:
        return True


def test_policy_is_what_the_mode_says(tmp_path: Path, fake_home: Path) -> None:
    write = policy("workspace-write", tmp_path, fake_home)
    assert Path("/tmp").resolve() in write.writable and tmp_path.resolve() in write.writable
    assert (fake_home / ".ssh").resolve() in write.secrets and write.network is False
    assert policy("off", tmp_path).active is False
    assert signal.SIGTERM  # (the module is used above)
