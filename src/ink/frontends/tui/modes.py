"""Shift+Tab: the permission mode, switched while ink runs (ask -> accept-edits -> yolo -> ask).

The switch itself is the app's (``App.set_permission_mode``, which ACP's ``session/set_mode`` uses too):
the next tool call is judged by the new mode.
"""

from __future__ import annotations

from ink.app import App
from ink.config.keys import PERMISSION_MODES, PermissionMode


def next_mode(mode: PermissionMode) -> PermissionMode:
    return PERMISSION_MODES[(PERMISSION_MODES.index(mode) + 1) % len(PERMISSION_MODES)]


def cycle_permission_mode(core: App) -> PermissionMode | None:
    """Switch to the next mode; None when ink cannot change the mode (``App.set_permission_mode``)."""
    mode = next_mode(core.settings.permission_mode)
    return mode if core.set_permission_mode(mode) else None
