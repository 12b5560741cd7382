"""The one exception of the config layer."""

from __future__ import annotations


class ConfigError(Exception):
    """A setting cannot be used. ``str(error)`` is one line naming the problem, where it came from
    (``path:line``, ``--flag`` or ``ENV_VAR``) and the fix; the command line prints it and exits 2."""
