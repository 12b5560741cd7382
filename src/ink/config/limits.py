"""Budgets (R45): ``[limits.session]``, ``[limits.run]`` and ``--max-cost``, ``--max-tokens``,
``--max-time``.

    [limits.session]        # what this ink process may spend, from its start to its exit (every run,
    max_cost_usd = 5        # sub-agents and compaction included; /clear does not reset it)
    max_tokens = 2_000_000  # input (cached or not) plus output tokens
    max_seconds = 3600      # time runs took, a pause excepted

    [limits.run]            # what one run may spend (a prompt and all it leads to)
    max_cost_usd = 1

The flags set the session's limits (``ink -p --max-cost 1``: this invocation may spend $1) and win over
the files; 0 means no limit, so a flag can lift a file's limit. A project's file (a repository's) may only
make a limit stricter than the user's: a higher one there, or a 0, is ignored with a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from ink.config.errors import ConfigError
from ink.config.keys import Key

Scope: TypeAlias = Literal["session", "run"]
SCOPES: tuple[Scope, ...] = ("session", "run")
LIMIT_KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("max_cost_usd", float, minimum=0, help="US dollars; 0: no limit"),
        Key("max_tokens", int, minimum=0, help="input plus output tokens; 0: no limit"),
        Key("max_seconds", float, minimum=0, help="seconds runs took (a pause excepted); 0: no limit"),
    )
}
FLAGS = {"max_cost_usd": "--max-cost", "max_tokens": "--max-tokens", "max_seconds": "--max-time"}


class Found(Protocol):
    """A checked value and where it was written (``ink.config.files.Located``)."""

    @property
    def value(self) -> Any: ...

    @property
    def where(self) -> str: ...


Tables = Mapping[str, Mapping[str, Found]]  # a file's tables: "limits.session" -> key -> value


class Limits(msgspec.Struct, frozen=True):
    """The limits of one scope; None: no limit."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_seconds: float | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.max_cost_usd, self.max_tokens, self.max_seconds))


class LimitSettings(msgspec.Struct, frozen=True):
    """The session's and the run's limits, and where each came from (``session.max_cost_usd`` ->
    ``--max-cost`` or ``path:line``), for messages."""

    session: Limits = Limits()
    run: Limits = Limits()
    origins: Mapping[str, str] = msgspec.field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.session) or bool(self.run)

    @property
    def cost_limited(self) -> bool:
        return self.session.max_cost_usd is not None or self.run.max_cost_usd is not None

    def cost_origin(self) -> str:
        """Who set a cost limit: ``--max-cost``, ``path:line``."""
        found = (self.origins.get(f"{scope}.max_cost_usd") for scope in SCOPES)
        return next((where for where in found if where), "a cost limit")


def check_limits_table(
    value: Any, where: Callable[[tuple[str, ...], str], str]
) -> dict[str, dict[str, tuple[Any, str]]]:
    """A file's ``[limits]`` table: ``limits.session`` / ``limits.run`` -> key -> (checked value, where).
    ``where(table, key)`` locates a key (``path:line``)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where((), 'limits')}: limits must hold tables like [limits.session]")
    tables: dict[str, dict[str, tuple[Any, str]]] = {}
    for scope, table in value.items():
        at = where(("limits",), scope)
        if scope not in SCOPES or not isinstance(table, dict):
            raise ConfigError(
                f"{at}: [limits] holds the tables [limits.session] and [limits.run] (got {scope!r}): "
                "for example [limits.session] max_cost_usd = 5"
            )
        checked: dict[str, tuple[Any, str]] = {}
        for name, item in table.items():
            key_at = where(("limits", scope), name)
            key = LIMIT_KEYS.get(name)
            if key is None:
                known = ", ".join(LIMIT_KEYS)
                raise ConfigError(f"{key_at}: unknown key {name!r} in [limits.{scope}] (known: {known})")
            checked[name] = (key.check(item, key_at), key_at)
        tables[f"limits.{scope}"] = checked
    return tables


def resolve_limits(
    flags: Mapping[str, float | int | None], user: Tables, project: Tables, warnings: list[str]
) -> LimitSettings:
    """The flags (the session's), then the project's tables where stricter than the user's, then the
    user's. ``flags``: ``max_cost_usd``/``max_tokens``/``max_seconds`` -> value (None: not given)."""
    values: dict[str, dict[str, float | int | None]] = {scope: {} for scope in SCOPES}
    origins: dict[str, str] = {}
    for scope in SCOPES:
        mine, theirs = user.get(f"limits.{scope}", {}), project.get(f"limits.{scope}", {})
        for name in LIMIT_KEYS:
            picked = _stricter(mine.get(name), theirs.get(name), f"limits.{scope}.{name}", warnings)
            if picked is not None:
                values[scope][name] = picked.value or None
                origins[f"{scope}.{name}"] = picked.where
    for name, flag in flags.items():
        if flag is not None:
            values["session"][name] = LIMIT_KEYS[name].check(flag, FLAGS[name]) or None
            origins[f"session.{name}"] = FLAGS[name]
    return LimitSettings(Limits(**values["session"]), Limits(**values["run"]), origins)  # type: ignore[arg-type]


def _stricter(mine: Found | None, theirs: Found | None, name: str, warnings: list[str]) -> Found | None:
    """The user's value unless the project's is a stricter one (a limit, lower than the user's)."""
    if theirs is None:
        return mine
    own = mine.value if mine is not None else 0
    if theirs.value and (not own or theirs.value < own):
        return theirs
    if theirs.value != own:
        baseline = f"{own:g}" if own else "no limit"
        warnings.append(
            f"{theirs.where}: ignoring {name} = {theirs.value:g}: a project file may only make a limit "
            f"stricter than yours ({baseline}); set it in $INK_HOME/config.toml or pass a flag"
        )
    return mine
