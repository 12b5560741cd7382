"""build_app attaches the permission step, and wraps the provider for redaction once for all its users."""

from __future__ import annotations

from pathlib import Path

from ink.ai.redacting import RedactingProvider
from ink.config import Flags, Settings, load_settings
from ink.extend.hooks import HookSet
from ink.permissions import PermissionHook
from ink.wiring import build_app
from ink.wiring.sandboxing import leave_check


def settings(tmp_path: Path, config: str = "", **flags: object) -> Settings:
    home = tmp_path / "inkhome"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config)
    env = {"INK_HOME": str(home), "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-env-key-123456"}
    return load_settings(Flags(base_url="http://127.0.0.1:9/v1", **flags), env, tmp_path)  # type: ignore[arg-type]


async def test_the_hook_and_the_question_timeout_follow_the_settings(tmp_path: Path) -> None:
    app = build_app(settings(tmp_path, "permission_timeout = 12\n", permission_mode="accept-edits"))
    try:
        hook = app.permission
        assert isinstance(hook, PermissionHook)
        chain = app.controller.setup.before_tool
        assert app.checkpoints is not None
        assert chain == (
            app.checkpoints.gate,
            app.command_limit,
            leave_check,
            hook,
        )  # the checkpoint first, the policy last
        assert hook.asker is app.controller.permissions and hook.policy.mode == "accept-edits"
        assert app.controller.permissions.timeout_seconds == 12
        assert isinstance(app.controller.setup.provider, RedactingProvider)
        assert app.controller.setup.provider.redact.secrets == ("sk-env-key-123456",)
        assert app.compactor.provider is app.controller.setup.provider is app.provider  # wrapped once
        app.switch_model("gpt-4o-mini")
        assert app.controller.setup.provider is app.provider and app.compactor.provider is app.provider
        assert app.controller.setup.before_tool == chain  # the checks survive the switch
    finally:
        await app.aclose()
    app = build_app(settings(tmp_path, "permission_timeout = 0\n"), can_ask=False)
    try:
        hook = app.permission
        assert isinstance(hook, PermissionHook) and hook.asker is None  # print mode: nobody to ask
        assert app.controller.permissions.timeout_seconds is None  # 0: wait for ever
    finally:
        await app.aclose()


async def test_a_step_given_by_the_frontend_replaces_the_policy(tmp_path: Path) -> None:
    async def anything_goes(_ctx: object) -> None:
        return None

    app = build_app(settings(tmp_path), before_tool=anything_goes)
    try:
        assert app.permission is anything_goes
        assert app.controller.setup.before_tool[-1] is anything_goes
    finally:
        await app.aclose()


async def test_the_chain_is_one_list_checkpoint_limit_hooks_policy(tmp_path: Path) -> None:
    """Every check a call passes is one entry of one list, read top to bottom (ink.wiring.chain)."""
    app = build_app(settings(tmp_path, '[[hooks.pre_tool]]\ncommand = "true"\n'))
    try:
        assert app.checkpoints is not None
        gate, limit, leave, hooks, policy = app.controller.setup.before_tool
        assert (gate, limit, policy) == (app.checkpoints.gate, app.command_limit, app.permission)
        assert leave is leave_check  # a call that asks to leave the sandbox says why (R41)
        assert isinstance(hooks.__self__, HookSet) and hooks.__func__ is HookSet.before_tool  # type: ignore[attr-defined]
    finally:
        await app.aclose()
