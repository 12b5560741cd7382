"""Shift+Tab: the permission mode, switched while ink runs (ask -> accept-edits -> yolo -> ask).

The permission hook's policy reads its mode at every call, so the next tool call is judged by the new
one; the settings follow so that the status line and a rebuilt set-up (``/model``) agree.
"""

from __future__ import annotations

import msgspec

from ink.config.keys import PERMISSION_MODES, PermissionMode
from ink.wiring import App


def next_mode(mode: PermissionMode) -> PermissionMode:
    return PERMISSION_MODES[(PERMISSION_MODES.index(mode) + 1) % len(PERMISSION_MODES)]


def cycle_permission_mode(core: App) -> PermissionMode | None:
    """Switch to the next mode; None when the permission hook is not ink's own policy (a replaced
    ``before_tool``), whose mode ink cannot change."""
    policy = getattr(core.before_tool, "policy", None)
    if policy is None or getattr(policy, "mode", None) not in PERMISSION_MODES:
        return None
    mode = next_mode(policy.mode)
    policy.mode = mode
    core.settings = msgspec.structs.replace(core.settings, permission_mode=mode)
    return mode
