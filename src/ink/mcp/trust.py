"""Approval of MCP servers that a project declares: a cloned repository must not start programs.

A server in a project's ``.ink/config.toml`` (or sent by an editor over ACP) starts only once the user
approved it (``ink mcp approve NAME``, or ``/mcp approve NAME`` in the terminal UI). The approval is
remembered the way remembered permissions are (``ink.permissions.memory``): a SHA-256 of the server's
definition is kept in ``$INK_HOME/trusted-mcp.json``, keyed by the file that declared it and the name, so
an approved server whose command, arguments, environment or URL later change needs approval again.
"""

from __future__ import annotations

import json
from pathlib import Path

from ink.config.mcp import McpServerSpec
from ink.permissions.memory import _digest, _write_atomically

TRUST_FILE = "trusted-mcp.json"


class McpApprovals:
    def __init__(self, ink_home: Path) -> None:
        self.path = ink_home / TRUST_FILE

    def approved(self, spec: McpServerSpec) -> bool:
        """Servers of the user's file or editor need none; a project's, one for exactly this definition."""
        if spec.origin != "project":  # the user's own file, or the user's editor (ACP)
            return True
        return self._record().get(_key(spec)) == _definition_digest(spec)

    def approve(self, spec: McpServerSpec) -> None:
        """Remember that the user approved ``spec``. Raises ``OSError`` when it cannot be written."""
        record = self._record() | {_key(spec): _definition_digest(spec)}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps(record, indent=1, sort_keys=True) + "\n"
        _write_atomically(self.path, text.encode("utf-8"), mode=0o600)

    def _record(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}


def _key(spec: McpServerSpec) -> str:
    declared_in = spec.where.rsplit(":", 1)[0] if spec.where else spec.origin
    return f"{declared_in}#{spec.name}"


def _definition_digest(spec: McpServerSpec) -> str:
    definition = {
        "command": spec.command,
        "args": list(spec.args),
        "env": dict(spec.env),
        "cwd": spec.cwd,
        "url": spec.url,
        "headers": dict(spec.headers),
    }
    return _digest(json.dumps(definition, sort_keys=True).encode("utf-8"))
