"""A hook whose script lives in ``$INK_HOME`` cannot run in the sandbox: say so when ink starts.

Every hook runs in the sandbox (R41), and the sandbox hides ``$INK_HOME`` (remembered answers, sessions,
the user's config with its keys) from everything it contains. A hook command naming a file there
(``python3 ~/.ink/hooks/guard.py``) is refused its own script and, failing, blocks every call it
matches (R39: fail closed). That is safe but baffling, so the start says it once, naming the hook and
where to keep its script instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ink.config.hooks import HookSpec

_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def hidden_hook_warnings(
    hooks: Iterable[HookSpec], ink_home: Path, home: Path | None, sandbox_mode: str | None
) -> list[str]:
    """One warning per hook whose command names a path inside ``ink_home``, unless the sandbox is off."""
    if sandbox_mode == "off":
        return []
    hidden = Path(os.path.abspath(ink_home))
    found = []
    for hook in hooks:
        inside = next((p for p in _paths(hook.command, ink_home, home) if p.is_relative_to(hidden)), None)
        if inside is not None:
            found.append(
                f"{hook.label} runs {inside}, inside $INK_HOME, which the sandbox hides from hooks and "
                "commands: the hook would fail and block the calls it matches; keep hook scripts "
                "elsewhere (for example ~/.config/ink/hooks/) or turn the sandbox off (--sandbox off)"
            )
    return found


def _paths(command: str, ink_home: Path, home: Path | None) -> list[Path]:
    """The absolute paths among ``command``'s words, with ``~``, ``$HOME`` and ``$INK_HOME`` expanded."""
    import shlex  # only where hooks are configured: a plain turn imports none of it

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    values = {"INK_HOME": str(ink_home)} | ({"HOME": str(home)} if home is not None else {})
    paths = []
    for word in words:
        if word.startswith("~/") and home is not None:
            word = str(home) + word[1:]
        word = _VARIABLE.sub(lambda m: values.get(m[1] or m[2], m[0]), word)
        if word.startswith("/"):
            paths.append(Path(os.path.abspath(word)))
    return paths
