"""The Landlock ruleset of a policy whose grants overlap: a secret ($INK_HOME) inside a writable folder.
The read grant's walk around the secret leaves that folder to the write grant's walk, so each path gets
one rule (with an $INK_HOME in a crowded /tmp, two rules per entry of /tmp were most of what building
the sandbox cost a one-turn ``ink -p``), and the rules still grant what the policy says, tried for real."""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.agent.abort import AbortSignal
from ink.sandbox import Confinement, build_policy, landlock
from ink.sandbox.landlock import Kernel
from ink.tools import ProcessRegistry, run_shell
from tests.sandbox.conftest import OUTSIDE_PARENT, require_sandbox


class RecordingKernel(Kernel):
    """This machine's kernel, noting the path of each rule added."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def syscall(self, number: int, *args: object) -> int:
        if number == landlock.SYS_ADD_RULE:
            _rights, fd = struct.unpack("=Qi", args[2].raw)  # type: ignore[attr-defined]
            self.paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        return super().syscall(number, *args)


@pytest.fixture
def writable_root() -> Iterator[Path]:
    """A writable folder outside /tmp (which is writable anyway), beside the fake home."""
    require_sandbox()
    path = Path(tempfile.mkdtemp(prefix="ink-writable-", dir=OUTSIDE_PARENT))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_R41_a_secret_in_a_writable_folder_adds_one_rule_per_path_and_stays_unreadable(
    tmp_path: Path, writable_root: Path, fake_home: Path, registry: ProcessRegistry
) -> None:
    ink_home, beside = writable_root / "inkhome", writable_root / "beside"
    for folder in (ink_home, beside):
        folder.mkdir()
    (ink_home / "secret.txt").write_text("SECRET\n")
    (beside / "notes.txt").write_text("readable\n")
    policy = build_policy(
        "workspace-write",
        tmp_path,
        writable_roots=(writable_root,),
        ink_home=ink_home,
        environ={"HOME": str(fake_home)},
    )
    kernel = RecordingKernel()
    confined = Confinement(policy, kernel)

    async def run(command: str) -> tuple[int | None, str]:
        result = await run_shell(command, tmp_path, AbortSignal(), registry, timeout=60, confinement=confined)
        return result.exit_code, result.output.strip()

    try:
        assert await run(f"cat {ink_home / 'secret.txt'}") != (0, "SECRET")
        assert sorted(path for path, count in Counter(kernel.paths).items() if count > 1) == []
        assert str(beside) in kernel.paths and str(ink_home) not in kernel.paths
        assert await run(f"cat {beside / 'notes.txt'}") == (0, "readable")
        assert await run(f"echo x > {beside / 'new.txt'} && echo x > made.txt") == (0, "")
        assert (beside / "new.txt").exists() and (tmp_path / "made.txt").exists()
        assert (await run(f"cat {fake_home / '.ssh' / 'id_ed25519'}"))[0] != 0
        assert await run(f"cat {fake_home / 'notes.txt'}") == (0, "readable")
    finally:
        confined.close()


async def test_R41_the_ruleset_is_built_when_the_first_command_starts(
    tmp_path: Path, fake_home: Path, registry: ProcessRegistry
) -> None:
    """A run that starts no command (a text turn) never walks the folders around the secrets."""
    require_sandbox()
    policy = build_policy("workspace-write", tmp_path, environ={"HOME": str(fake_home)})
    kernel = RecordingKernel()
    confined = Confinement(policy, kernel)
    try:
        assert kernel.paths == []
        result = await run_shell(
            "echo hi", tmp_path, AbortSignal(), registry, timeout=60, confinement=confined
        )
        assert (result.exit_code, result.output.strip()) == (0, "hi")
        assert str(tmp_path) in kernel.paths
        built = len(kernel.paths)
        await run_shell("echo again", tmp_path, AbortSignal(), registry, timeout=60, confinement=confined)
        assert len(kernel.paths) == built  # kept for the next command
    finally:
        confined.close()
