"""A session's configuration as ACP's schema shows it, and the changes an editor asks for.

Two views of the same two settings, because editors read one or the other:
- config options (``configOptions`` in the ``session/new`` and ``session/load`` answers, changed with
  ``session/set_config_option``): ``model`` (category ``model``) and ``mode`` (category ``mode``);
- session modes (``modes``, changed with ``session/set_mode``): ink's permission modes.
A change through either is announced through the other (``config_option_update``,
``current_mode_update``), so both stay true. The model also keeps the pre-schema ``models`` field and
``session/set_model`` for the editors that still send it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ink.config.keys import PERMISSION_MODES, PermissionMode

if TYPE_CHECKING:
    from ink.app import App

MODEL_OPTION = "model"
MODE_OPTION = "mode"

# What each permission mode lets run without asking (docs/permissions.md); deny rules hold in every mode.
MODES: dict[PermissionMode, tuple[str, str]] = {
    "ask": ("Ask", "Reads run; file changes, shell commands and other tools ask first"),
    "accept-edits": ("Accept edits", "Reads and file changes inside the workspace run; commands ask"),
    "yolo": ("Yolo", "Everything runs without asking; deny rules still refuse"),
}


class BadOption(ValueError):
    """The editor asked for an option or value the session does not have (``-32602``)."""


def config_options(app: App) -> list[dict[str, Any]]:
    """The session's ``configOptions``: every option with its current value."""
    models = [{"value": m, "name": m} for m in app.model_choices()]
    modes = [
        {"value": mode, "name": name, "description": description}
        for mode, (name, description) in MODES.items()
    ]
    return [
        _select(MODEL_OPTION, "Model", "model", app.settings.model, models),
        _select(MODE_OPTION, "Permission mode", "mode", app.settings.permission_mode, modes),
    ]


def session_modes(app: App) -> dict[str, Any]:
    """ACP's ``SessionModeState``: ink's permission modes."""
    available = [
        {"id": mode, "name": name, "description": description} for mode, (name, description) in MODES.items()
    ]
    return {"currentModeId": app.settings.permission_mode, "availableModes": available}


def model_state(app: App) -> dict[str, Any]:
    """The pre-schema ``models`` field (``SessionModelState``) some editors still read."""
    choices = [{"modelId": m, "name": m} for m in app.model_choices()]
    return {"currentModelId": app.settings.model, "availableModels": choices}


def session_state(app: App) -> dict[str, Any]:
    """What the ``session/new`` and ``session/load`` answers carry besides the session id."""
    return {"configOptions": config_options(app), "modes": session_modes(app), "models": model_state(app)}


def set_option(app: App, params: Mapping[str, Any]) -> str:
    """Apply ``session/set_config_option``; returns the option changed. Raises ``BadOption``."""
    option, value = params.get("configId"), params.get("value")
    if params.get("type", "select") != "select" or isinstance(value, bool):
        raise BadOption(f"{option!r} is a select option: its value is the id of one of its choices")
    if not isinstance(value, str):
        raise BadOption("value must be a string")
    if option == MODEL_OPTION:
        if value not in app.model_choices():
            raise BadOption(f"unknown model {value!r} (choices: {', '.join(app.model_choices())})")
        try:
            app.switch_model(value)  # later runs; a run going on keeps its model (R13)
        except ValueError as exc:  # a model without known prices under a cost limit (R45)
            raise BadOption(str(exc)) from None
        return MODEL_OPTION
    if option == MODE_OPTION:
        set_mode(app, value)
        return MODE_OPTION
    raise BadOption(f"unknown config option {option!r} (options: {MODEL_OPTION}, {MODE_OPTION})")


def set_mode(app: App, mode: object) -> None:
    """Judge the next tool call in permission mode ``mode``. Raises ``BadOption``."""
    if mode not in PERMISSION_MODES:
        raise BadOption(f"unknown mode {mode!r} (modes: {', '.join(PERMISSION_MODES)})")
    if not app.set_permission_mode(mode):
        raise BadOption("this session's permission checks are not ink's own: its mode cannot change")


def _select(
    option: str, name: str, category: str, current: str, options: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": option,
        "name": name,
        "category": category,
        "type": "select",
        "currentValue": current,
        "options": options,
    }
