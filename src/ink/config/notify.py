"""``[notify]`` (R46): how the terminal UI gets the user's attention when a run ends, a question waits
or a background job ends while nobody is at the keyboard.

The user's file and the project's both may set ``bell`` and ``after_seconds`` (the project's wins, as
for other keys); only the user's may set ``command``: a repository must not get a command of its own run
on the user's machine each time a run ends.
"""

from __future__ import annotations

import msgspec

from ink.config.files import ConfigFile, Located

DEFAULT_AFTER_SECONDS = 10.0


class NotifySettings(msgspec.Struct, frozen=True):
    bell: bool = True  # BEL, and OSC 9 where the terminal shows it
    command: str | None = None  # a shell command, given the event as one JSON object on stdin
    after_seconds: float = DEFAULT_AFTER_SECONDS  # without a key for this long the user may be away


def resolve_notify(
    user: ConfigFile | None, project: ConfigFile | None, warnings: list[str]
) -> NotifySettings:
    """The ``[notify]`` settings of the two files (the project's above the user's, but for ``command``)."""
    mine = user.tables.get("notify", {}) if user is not None else {}
    theirs = dict(project.tables.get("notify", {})) if project is not None else {}
    command = theirs.pop("command", None)
    if command is not None:
        warnings.append(
            f"{command.where}: ignoring notify.command: a project file may not choose a command to run "
            "on your machine; set it in [notify] of $INK_HOME/config.toml"
        )
    merged: dict[str, Located] = {**mine, **theirs}
    return NotifySettings(**{name: found.value for name, found in merged.items()})
