"""Approval of MCP servers that a project declares: a cloned repository must not start programs.

A server in a project's ``.ink/config.toml`` starts only once the user approved it (``ink mcp approve
NAME``, or ``/mcp approve NAME`` in the terminal UI). The approval is remembered like remembered
permissions and project hooks (``ink.store.trust``): the digest of the server's definition is kept in
``$INK_HOME/trusted-mcp.json``, keyed by the file that declared it and the name, so an approved server
whose command, arguments, environment or URL later change needs approval again. Servers of the user's own
file, and those an editor passes over ACP, need none.
"""

from __future__ import annotations

import json
from pathlib import Path

from ink.config.mcp import McpServerSpec
from ink.store.trust import TrustRecord

TRUST_FILE = "trusted-mcp.json"


class McpApprovals:
    def __init__(self, ink_home: Path) -> None:
        self.path = ink_home / TRUST_FILE
        self._record = TrustRecord(self.path)

    def approved(self, spec: McpServerSpec) -> bool:
        if spec.origin != "project":  # the user's own file, or the user's editor (ACP)
            return True
        return self._record.trusts(_key(spec), _definition(spec))

    def approve(self, spec: McpServerSpec) -> None:
        """Remember that the user approved ``spec``. Raises ``OSError`` when it cannot be written."""
        self._record.trust(_key(spec), _definition(spec))


def _key(spec: McpServerSpec) -> str:
    declared_in = spec.where.rsplit(":", 1)[0] if spec.where else spec.origin
    return f"{declared_in}#{spec.name}"


def _definition(spec: McpServerSpec) -> bytes:
    definition = {
        "command": spec.command,
        "args": list(spec.args),
        "env": dict(spec.env),
        "cwd": spec.cwd,
        "url": spec.url,
        "headers": dict(spec.headers),
    }
    return json.dumps(definition, sort_keys=True).encode("utf-8")
