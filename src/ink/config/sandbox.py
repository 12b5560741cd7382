"""The ``[sandbox]`` table and ``--sandbox``: which mode commands run in, network, extra writable folders.

    [sandbox]
    mode = "workspace-write"        # read-only | workspace-write | off (default: workspace-write where
                                    # the system allows, else off with one notice; ``ink sandbox check``)
    network = false                 # let sandboxed commands reach the network
    writable_roots = ["~/.cache"]   # folders writable besides the workspace and the temporary folders

A project's file (a repository's) may only make the sandbox stricter: a looser ``mode``, ``network =
true`` or ``writable_roots`` there are ignored with a warning, as ``permission_mode`` is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ink.config.errors import ConfigError

SANDBOX_MODES = ("off", "workspace-write", "read-only")  # loosest first (the names of ink.sandbox.MODES)
SANDBOX_KEYS = ("mode", "network", "writable_roots")


class SandboxSettings(msgspec.Struct, frozen=True):
    """``mode`` None: nobody chose one (the default applies, and falls back quietly where it cannot
    start). ``where``: who chose the mode (``--sandbox``, ``path:line``), for messages."""

    mode: str | None = None
    network: bool = False
    writable_roots: tuple[Path, ...] = ()
    where: str = "default"


def check_sandbox_table(value: Any, where: str) -> dict[str, tuple[Any, str]]:
    """The checked entries of one file's ``[sandbox]`` table: name -> (value, where)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: sandbox must be a table like [sandbox]")
    checked: dict[str, tuple[Any, str]] = {}
    for name, item in value.items():
        if name not in SANDBOX_KEYS:
            raise ConfigError(
                f"{where}: unknown key {name!r} in [sandbox] (known: {', '.join(SANDBOX_KEYS)})"
            )
        if name == "mode" and item not in SANDBOX_MODES:
            raise ConfigError(
                f"{where}: sandbox.mode must be one of {', '.join(SANDBOX_MODES)} (got {item!r})"
            )
        if name == "network" and not isinstance(item, bool):
            raise ConfigError(f"{where}: sandbox.network must be true or false (got {item!r})")
        if name == "writable_roots" and (
            not isinstance(item, list) or not all(isinstance(p, str) and p.strip() for p in item)
        ):
            raise ConfigError(f'{where}: sandbox.writable_roots must be a list of folders, e.g. ["~/.cache"]')
        checked[name] = (item, where)
    return checked


def resolve_sandbox(
    flag: str | None,
    user: dict[str, tuple[Any, str]],
    project: dict[str, tuple[Any, str]],
    cwd: Path,
    warnings: list[str],
) -> SandboxSettings:
    """The flag, then the project's table (only where it is stricter than the user's), then the user's."""
    mode, where = (flag, "--sandbox") if flag is not None else (None, "default")
    if mode is None and "mode" in user:
        mode, where = user["mode"]
    if "mode" in project:
        asked, at = project["mode"]
        baseline = mode or "workspace-write"
        if SANDBOX_MODES.index(asked) >= SANDBOX_MODES.index(baseline) and flag is None:
            mode, where = asked, at
        elif flag is None:
            warnings.append(
                f"{at}: ignoring sandbox.mode = {asked!r}: a project file may only make the sandbox stricter "
                f"than {baseline!r}; use --sandbox {asked} if you trust it"
            )
    for key in ("network", "writable_roots"):
        if key in project and project[key][0]:
            warnings.append(
                f"{project[key][1]}: ignoring sandbox.{key}: a project file may not loosen the sandbox; set "
                "it in $INK_HOME/config.toml"
            )
    network = bool(user.get("network", (False, ""))[0])
    roots = tuple((cwd / Path(p).expanduser()).resolve() for p in user.get("writable_roots", ([], ""))[0])
    return SandboxSettings(mode, network, roots, where)
