"""The ``[mcp.servers.NAME]`` tables of a config file: which MCP servers to start, checked and located.

    [mcp.servers.github]
    command = "github-mcp-server"
    args = ["stdio"]
    env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }

    [mcp.servers.docs]
    url = "http://127.0.0.1:8931/mcp"
    headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
    enabled = false

    [mcp.servers.local-tool]
    command = "npx"
    args = ["some-mcp-server"]
    sandbox = true                  # it runs in ink's sandbox, as commands do (docs/security.md)

A server has either ``command`` (stdio) or ``url`` (Streamable HTTP), never both. ``${VAR}`` in ``env``
and ``headers`` values is replaced by the environment variable when the server is started, so a token
never has to be written into a file; the replaced values are secrets (redacted wherever ink writes).
Nothing here starts anything or imports the MCP SDK (``ink.mcp`` does, when a server is configured).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from ink.config.errors import ConfigError

DEFAULT_STARTUP_TIMEOUT = 15.0
DEFAULT_CALL_TIMEOUT = 300.0  # seconds a call may go without an answer or a progress notification
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SERVER_KEYS = (
    "command", "args", "env", "cwd", "url", "headers", "enabled", "startup_timeout", "call_timeout", "sandbox"
)  # fmt: skip


class McpServerSpec(msgspec.Struct, frozen=True):
    """One configured server. ``env`` and ``headers`` hold the text as written (``${VAR}`` unexpanded);
    ``expand`` gives the values to use. ``project``: declared by a project's ``.ink/config.toml`` (or by
    an editor over ACP: ``origin``), so it starts only once the user approved it (``ink.mcp.trust``)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    enabled: bool = True
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    sandbox: bool = False  # a command server runs in ink's sandbox (R41): not started where there is none
    where: str = ""
    origin: Literal["user", "project", "client"] = "user"

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def project(self) -> bool:
        return self.origin == "project"

    def target(self) -> str:
        """What it runs or reaches, for lists: the command line or the URL (never a header)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return self.url or ""


def expand(values: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """``values`` with every ``${VAR}`` replaced by ``env[VAR]``. Raises ``ConfigError`` naming the
    variable when it is not set (a server started with an empty token fails in confusing ways)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ConfigError(f"the environment variable {name} is not set; export it before starting ink")
        return env[name]

    return {key: _REFERENCE.sub(one, value) for key, value in values.items()}


def referenced_secrets(specs: tuple[McpServerSpec, ...], env: Mapping[str, str]) -> list[str]:
    """The values ``${VAR}`` references expand to in every server's env and headers: for redaction."""
    found = []
    for spec in specs:
        for text in (*spec.env.values(), *spec.headers.values()):
            found += [env[name] for name in _REFERENCE.findall(text) if env.get(name)]
        found += [value for key, value in spec.headers.items() if key.lower() == "authorization"]
    return [value for value in found if value and "${" not in value]


def server_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a server, or None. ``__`` separates the server from the tool in
    ``mcp__SERVER__TOOL``: a server named ``a__b`` could pass for server ``a``'s tools."""
    if not isinstance(name, str) or not SERVER_NAME.match(name):
        return f"server name {name!r} may use only letters, digits, _ and - (1-64 of them)"
    if "__" in name:
        return f"server name {name!r} may not hold '__' (it separates server and tool in mcp__SERVER__TOOL)"
    return None


def check_mcp(value: Any, where: Callable[[tuple[str, ...], str | None], str]) -> list[McpServerSpec]:
    """The ``[mcp]`` table of one file: only ``servers``, a table of server tables. ``where(table, key)``
    gives ``path:line`` of a key (or of the table's header when key is None). Raises ``ConfigError``."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where((), 'mcp')}: mcp must be a table like [mcp.servers.NAME]")
    for key in value:
        if key != "servers":
            raise ConfigError(f"{where(('mcp',), key)}: unknown key {key!r} in [mcp] (known: servers)")
    servers = value.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{where(('mcp',), 'servers')}: mcp.servers must be a table of [mcp.servers.NAME]")
    return [_check_server(name, table, where) for name, table in servers.items()]


def _check_server(
    name: str, table: Any, where: Callable[[tuple[str, ...], str | None], str]
) -> McpServerSpec:
    header = ("mcp", "servers", name)
    at = where(header, None)
    problem = server_name_problem(name)
    if problem is not None:
        raise ConfigError(f"{at}: {problem}")
    if not isinstance(table, dict):
        raise ConfigError(f"{at}: mcp.servers.{name} must be a table")
    for key in table:
        if key not in SERVER_KEYS:
            known = ", ".join(SERVER_KEYS)
            problem = f"unknown key {key!r} in [mcp.servers.{name}] (known: {known})"
            raise ConfigError(f"{where(header, key)}: {problem}")
    spec = McpServerSpec(name, where=at)
    checks: dict[str, Callable[[Any, str], Any]] = {
        "command": _text,
        "args": _texts,
        "env": _text_table,
        "cwd": _text,
        "url": _url,
        "headers": _text_table,
        "enabled": _flag,
        "startup_timeout": _seconds,
        "call_timeout": _call_seconds,
        "sandbox": _flag,
    }
    for key, item in table.items():
        spec = replace(spec, **{key: checks[key](item, f"{where(header, key)}: mcp.servers.{name}.{key}")})
    if (spec.command is None) == (spec.url is None):
        raise ConfigError(f"{at}: mcp.servers.{name} needs either command (stdio) or url (HTTP), not both")
    if spec.url is not None and (spec.args or spec.env or spec.cwd or spec.sandbox):
        raise ConfigError(
            f"{at}: mcp.servers.{name}: args, env, cwd and sandbox are for command servers, not url"
        )
    if spec.command is not None and spec.headers:
        raise ConfigError(f"{at}: mcp.servers.{name}: headers are for url servers, not command")
    return spec


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} must be a non-empty string (got {value!r})")
    return value


def _texts(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f'{what} must be a list of strings, e.g. ["--port", "0"] (got {value!r})')
    return tuple(value)


def _text_table(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        example = '{ TOKEN = "${TOKEN}" }'
        raise ConfigError(f"{what} must be a table of strings, e.g. {example} (got {value!r})")
    return dict(value)


def _url(value: Any, what: str) -> str:
    from urllib.parse import urlsplit

    text = _text(value, what)
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{what} must be an http(s) URL such as http://127.0.0.1:8000/mcp (got {text!r})")
    return text


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{what} must be true or false (got {value!r})")
    return value


def _call_seconds(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise ConfigError(f"{what} must be a number of seconds between 0 and 86400 (got {value!r})")
    return float(value)


def _seconds(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 600:
        raise ConfigError(f"{what} must be a number of seconds between 0 and 600 (got {value!r})")
    return float(value)
