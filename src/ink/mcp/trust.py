"""Approval of MCP servers that a project declares: a cloned repository must not start programs.

A server in a project's ``.ink/config.toml`` starts only once the user approved it (``ink mcp approve
NAME``, or ``/mcp approve NAME`` in the terminal UI). The approval is remembered like remembered
permissions and project hooks (``ink.store.trust``): the digest of the server's definition is kept in
``$INK_HOME/trusted-mcp.json``, keyed by the file that declared it and the name. The digest is of what
the approval pins (R40, ``ink.config.pinning``): the command and its arguments, the environment and
headers as written (their names, and the ``${VARS}`` they pull from the user's environment), the working
folder or URL, and the content of the repository files the command line names (``python tools/srv.py``),
so an approved server whose definition or script later changes (a ``git pull``) needs approval again.
Servers of the user's own file, and those an editor passes over ACP, need none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from ink.config.mcp import McpServerSpec
from ink.store.trust import TrustRecord

if TYPE_CHECKING:
    from ink.config.pinning import Pin

TRUST_FILE = "trusted-mcp.json"


class McpApprovals:
    def __init__(self, ink_home: Path, cwd: Path | None = None) -> None:
        """``cwd``: where ink starts servers (``pin``)."""
        self.path = ink_home / TRUST_FILE
        self.cwd = cwd
        self._record = TrustRecord(self.path)

    def approved(self, spec: McpServerSpec) -> bool:
        if spec.origin != "project":  # the user's own file, or the user's editor (ACP)
            return True
        return self._record.trusts(_key(spec), _definition(spec, self.cwd))

    def approve(self, spec: McpServerSpec) -> None:
        """Remember that the user approved ``spec``. Raises ``OSError`` when it cannot be written."""
        self._record.trust(_key(spec), _definition(spec, self.cwd))


def _key(spec: McpServerSpec) -> str:
    declared_in = spec.where.rsplit(":", 1)[0] if spec.where else spec.origin
    return f"{declared_in}#{spec.name}"


def pin(spec: McpServerSpec, cwd: Path | None = None) -> Pin:
    """What approving ``spec`` covers; ``pin(spec).lines()`` says it to the user. ``cwd``: where ink starts
    the server (its ``cwd`` key is below it), so the files pinned are the ones it runs; None: the
    declaring project's folder."""
    from ink.config.pinning import pin_command  # only for a project's server: ~3 ms of imports

    declared_in = Path(spec.where.rsplit(":", 1)[0]) if spec.where else Path.cwd() / ".ink" / "config.toml"
    # The folder holding the declaring .ink/config.toml, or .mcp.json itself: taking the .mcp.json's
    # parent's parent pinned no file of the project, and a server script changed after approval ran.
    root = declared_in.parent.parent if declared_in.parent.name == ".ink" else declared_in.parent
    runs_in = Path(cwd) if cwd is not None else root
    runs_in = runs_in / spec.cwd if spec.cwd else runs_in
    command = [spec.command, *spec.args] if spec.command is not None else ""
    pinned = pin_command(
        command, root, runs_in, env=spec.env, headers=spec.headers, url=spec.url, shown_cwd=spec.cwd
    )  # taking a server out of the sandbox (sandbox = true removed) asks again
    return replace(pinned, command=f"{pinned.command} (in the sandbox)") if spec.sandbox else pinned


def _definition(spec: McpServerSpec, cwd: Path | None) -> bytes:
    return pin(spec, cwd).digest()
