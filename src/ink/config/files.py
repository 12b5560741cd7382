"""Reading one config file: TOML parsed with the stdlib, every key checked, every value located.

A malformed file, an unknown key or a wrong value is a ``ConfigError`` whose text starts with
``path:line:`` so the user can jump to it. Unknown keys are errors, not warnings: a misspelt
``permision_mode`` silently ignored would leave the user believing a safety setting is in force.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from ink.config.catalogue import PROVIDERS
from ink.config.errors import ConfigError
from ink.config.keys import PROVIDER_KEYS, TABLE_KEYS, TOP_KEYS, Key
from ink.config.rules import Effect, RuleText, parse_rule
from ink.regular_file import read_regular

if TYPE_CHECKING:
    from ink.config.hooks import HookSpec
    from ink.config.mcp import McpServerSpec

FIX = "fix the file or remove it"
MAX_CONFIG_BYTES = 1 << 20  # a config of a megabyte is a mistake or an attack, not settings


class Located(NamedTuple):
    """A checked value and where it was written (``path:line``)."""

    value: Any
    where: str


class ConfigFile(msgspec.Struct, frozen=True):
    """One config.toml as read: its top-level keys, provider tables, rules, hooks and MCP servers."""

    path: Path
    top: dict[str, Located] = msgspec.field(default_factory=dict)
    providers: dict[str, dict[str, Located]] = msgspec.field(default_factory=dict)
    rules: list[RuleText] = msgspec.field(default_factory=list)  # the [permissions] table, in file order
    hooks: list[HookSpec] = msgspec.field(default_factory=list)  # the [[hooks.EVENT]] tables, in file order
    # [mcp.servers.NAME], in file order
    mcp_servers: list[McpServerSpec] = msgspec.field(default_factory=list)
    tables: dict[str, dict[str, Located]] = msgspec.field(default_factory=dict)  # ``TABLE_KEYS``' tables
    sandbox: dict[str, tuple[Any, str]] = msgspec.field(
        default_factory=dict
    )  # [sandbox]: key -> (value, where)


def read_config_file(path: Path) -> ConfigFile | None:
    """Parse and check ``path``; None when it does not exist. Raises ``ConfigError`` (one line)."""
    raw = read_config_bytes(path)
    return None if raw is None else parse_config(path, raw[0])


def read_config_bytes(path: Path) -> tuple[bytes, os.stat_result] | None:
    """The bytes of ``path`` and the status of the very file they were read from (so an ownership check
    judges what was read, not what a racing rename put there later); None when it does not exist. A FIFO,
    a device or a file over ``MAX_CONFIG_BYTES`` is a ``ConfigError``, never opened or read whole."""
    try:
        read = read_regular(path, MAX_CONFIG_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(f"config error: {path}: cannot read it ({exc.strerror}) — {FIX}") from exc
    return read.data, read.status


def parse_config(path: Path, raw: bytes) -> ConfigFile:
    """Parse and check the bytes of the config file ``path``. Raises ``ConfigError`` (one line)."""
    import tomllib  # only when there is a file: start-up without one stays lighter

    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"config error: {path}:{line}: not valid UTF-8 text — {FIX}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config error: {_toml_problem(path, text, exc)} — {FIX}") from exc
    except RecursionError as exc:  # tomllib parses arrays and inline tables recursively
        problem = "arrays or inline tables nest too deeply to be read"
        raise ConfigError(f"config error: {path}: {problem} — {FIX}") from exc
    return _checked(path, text, data)


def _toml_problem(path: Path, text: str, exc: Exception) -> str:
    """tomllib ends its messages with "(at line L, column C)" or "(at end of document)"."""
    message = str(exc)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if found:
        problem = message[: found.start()]
        return f"{path}:{found.group(1)}: {_lower_first(problem)} (column {found.group(2)})"
    found = re.search(r"\s*\(at end of document\)\s*$", message)
    if found:
        last_line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        return f"{path}:{last_line}: {_lower_first(message[: found.start()])} (at the end of the file)"
    return f"{path}: {_lower_first(message)}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _checked(path: Path, text: str, data: dict[str, Any]) -> ConfigFile:
    result = ConfigFile(path)
    for name, value in data.items():
        where = f"{path}:{_line_of(text, (), name)}"
        if name == "providers":
            _check_providers(path, text, value, result)
            continue
        if name == "permissions":
            result.rules.extend(_check_permissions(path, text, value))
            continue
        if name == "hooks":
            from ink.config.hooks import parse_hooks  # only a file with hooks pays for them

            result.hooks.extend(parse_hooks(path, text, value))
            continue
        if name == "mcp":
            result.mcp_servers.extend(_check_mcp(path, text, value))
            continue
        if name in TABLE_KEYS:
            result.tables[name] = _check_table(path, text, name, value)
            continue
        if name == "sandbox":
            result.sandbox.update(_check_sandbox(path, text, value))
            continue
        if name == "limits":
            result.tables.update(_check_limits(path, text, value))
            continue
        result.top[name] = Located(_check(TOP_KEYS, name, value, where, "top level"), where)
    return result


def _check_providers(path: Path, text: str, value: Any, into: ConfigFile) -> None:
    if not isinstance(value, dict):
        where = f"{path}:{_line_of(text, (), 'providers')}"
        raise ConfigError(f"config error: {where}: providers must be a table like [providers.openai] — {FIX}")
    for provider, table in value.items():
        header = ("providers", provider)
        where = f"{path}:{_line_of(text, header, None)}"
        if provider not in PROVIDERS:
            known = ", ".join(PROVIDERS)
            problem = f"unknown provider {provider!r} (known: {known})"
            raise ConfigError(f"config error: {where}: {problem} — {FIX}")
        if not isinstance(table, dict):
            raise ConfigError(f"config error: {where}: providers.{provider} must be a table — {FIX}")
        checked: dict[str, Located] = {}
        for name, item in table.items():
            at = f"{path}:{_line_of(text, header, name)}"
            checked[name] = Located(_check(PROVIDER_KEYS, name, item, at, f"[providers.{provider}]"), at)
        into.providers[provider] = checked


def _check_mcp(path: Path, text: str, value: Any) -> list[McpServerSpec]:
    def where(table: tuple[str, ...], key: str | None) -> str:
        return f"{path}:{_line_of(text, table, key)}"

    from ink.config.mcp import check_mcp  # only for a file that has an [mcp] table

    try:
        return check_mcp(value, where)
    except ConfigError as exc:
        raise ConfigError(f"config error: {exc} — {FIX}") from None


def _check_table(path: Path, text: str, name: str, value: Any) -> dict[str, Located]:
    """A table of plain keys (``TABLE_KEYS[name]``), each value checked and located."""
    if not isinstance(value, dict):
        where = f"{path}:{_line_of(text, (), name)}"
        raise ConfigError(f"config error: {where}: {name} must be a table like [{name}] — {FIX}")
    checked: dict[str, Located] = {}
    for key, item in value.items():
        where = f"{path}:{_line_of(text, (name,), key)}"
        checked[key] = Located(_check(TABLE_KEYS[name], key, item, where, f"[{name}] table"), where)
    return checked


def _check_limits(path: Path, text: str, value: Any) -> dict[str, dict[str, Located]]:
    from ink.config.limits import check_limits_table  # only a file with [limits] pays for it

    def where(table: tuple[str, ...], key: str) -> str:
        return f"{path}:{_line_of(text, table, key)}"

    try:
        tables = check_limits_table(value, where)
    except ConfigError as exc:
        raise ConfigError(f"config error: {exc} — {FIX}") from None
    return {name: {key: Located(*found) for key, found in table.items()} for name, table in tables.items()}


def _check_sandbox(path: Path, text: str, value: Any) -> dict[str, tuple[Any, str]]:
    from ink.config.sandbox import check_sandbox_table

    try:
        checked = check_sandbox_table(value, f"{path}:{_line_of(text, (), 'sandbox')}")
    except ConfigError as exc:
        raise ConfigError(f"config error: {exc} — {FIX}") from None
    return {
        name: (item, f"{path}:{_line_of(text, ('sandbox',), name)}") for name, (item, _) in checked.items()
    }


PERMISSION_KEYS: tuple[Effect, ...] = ("allow", "deny")


def _check_permissions(path: Path, text: str, value: Any) -> list[RuleText]:
    """``[permissions]`` holds ``allow`` and ``deny``, each a list of rule strings."""
    header = ("permissions",)
    if not isinstance(value, dict):
        where = f"{path}:{_line_of(text, (), 'permissions')}"
        raise ConfigError(f"config error: {where}: permissions must be a table like [permissions] — {FIX}")
    rules: list[RuleText] = []
    for name, items in value.items():
        line = _line_of(text, header, name)
        if name not in PERMISSION_KEYS:
            hint = 'allow and deny, lists of rules like "bash(npm test)"'
            problem = f"unknown key {name!r} in [permissions] (known: {hint})"
            raise ConfigError(f"config error: {path}:{line}: {problem} — {FIX}")
        if not isinstance(items, list):
            problem = f'permissions.{name} must be a list of rules, e.g. {name} = ["bash(npm test)"]'
            raise ConfigError(f"config error: {path}:{line}: {problem} — {FIX}")
        for item in items:
            where = f"{path}:{_line_of_item(text, line, item)}"
            try:
                rules.append(parse_rule(name, item, where))
            except ConfigError as exc:
                raise ConfigError(f"config error: {exc} — {FIX}") from None
    return rules


def _line_of_item(text: str, key_line: int, item: Any) -> int:
    """The line of an array item: the first line from the key's on that holds the item's text."""
    if isinstance(item, str):
        for number, line in enumerate(text.splitlines()[key_line - 1 :], start=key_line):
            if item in line:
                return number
    return key_line


def _check(keys: dict[str, Key], name: str, value: Any, where: str, section: str) -> Any:
    key = keys.get(name)
    if key is None:
        import difflib

        guess = difflib.get_close_matches(name, keys, n=1)
        hint = f" (did you mean {guess[0]!r}?)" if guess else f" (known keys: {', '.join(keys)})"
        raise ConfigError(f"config error: {where}: unknown key {name!r} at the {section}{hint} — {FIX}")
    try:
        return key.check(value, where)
    except ConfigError as exc:
        raise ConfigError(f"config error: {exc} — {FIX}") from None


@cache  # compiled on first use: only a config error looks for its line
def _header() -> re.Pattern[str]:
    return re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")


def _line_of(text: str, table: tuple[str, ...], key: str | None) -> int:
    """The line where ``key`` is set inside ``[table]`` (or the header line when ``key`` is None).

    Best effort for the plain layouts people write; falls back to line 1 for exotic TOML (dotted keys,
    inline tables), which still names the file.
    """
    current: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _header().match(line)
        if header:
            current = tuple(part.strip().strip("\"'") for part in header.group(1).split("."))
            if key is None and current == table:
                return number
            continue
        if key is not None and current == table and _sets_key(line, key):
            return number
    return 1


def _sets_key(line: str, key: str) -> bool:
    stripped = line.lstrip()
    for spelled in (key, f'"{key}"', f"'{key}'"):
        if stripped.startswith(spelled) and stripped[len(spelled) :].lstrip().startswith("="):
            return True
    return False
