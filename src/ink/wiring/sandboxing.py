"""The sandbox of an app, from its settings (R41): the mode the command line resolved, or, for an app
built without one (tests, embedders), the default where this machine can run it; and the sandbox's step
of the before-tool chain (``leave_check``)."""

from __future__ import annotations

from ink.agent.tool import Refusal, ToolCallContext, describe_call
from ink.app.service import AppStartError
from ink.config import Settings
from ink.sandbox import Sandbox, SandboxMode, SandboxUnavailable, choose_mode, no_sandbox, open_sandbox, probe


def resolved_mode(settings: Settings) -> tuple[SandboxMode, str | None]:
    """The mode to run with and the one notice to show; raises ``SandboxRefused`` for a mode the user
    asked for that cannot start (exit 2)."""
    requested = settings.sandbox.mode
    if requested == "off":
        return "off", None
    return choose_mode(requested, probe())  # type: ignore[arg-type]


def build_sandbox(settings: Settings) -> Sandbox:
    """The app's sandbox. A mode the user asked for that cannot be set up raises ``AppStartError``; the
    default falls back to ``off`` with a notice (``Sandbox.notice``)."""
    mode, notice = resolved_mode(settings)
    if mode == "off":
        return no_sandbox(settings.cwd, notice)
    config = settings.sandbox
    try:
        return open_sandbox(
            mode,
            settings.cwd,
            network=config.network,
            writable_roots=config.writable_roots,
            ink_home=settings.ink_home,
            notice=notice,
        )
    except SandboxUnavailable as exc:
        if config.where != "default":  # asked for by a flag or a config file
            raise AppStartError(
                f"--sandbox {mode} cannot start: {exc}; `ink sandbox check` says more"
            ) from None
        return no_sandbox(settings.cwd, f"sandbox off: {exc} (`ink sandbox check` says more)")


LEAVE_WITHOUT_REASON = (
    "Not executed: `sandbox: false` needs a `reason`: say why this command must run outside the sandbox "
    "(the user reads it before answering), or run it inside."
)


async def leave_check(ctx: ToolCallContext) -> Refusal | None:
    """The sandbox's step of the before-tool chain (``ink.wiring.chain``): a call that asks to run outside
    the sandbox must say why before anyone is asked; whether it may is the permission step's question,
    judged by the one precedence (R37, R41)."""
    if ctx.call.arguments.get("sandbox") is not False:  # most calls: nothing to describe
        return None
    leaves = describe_call(ctx.tool, ctx.call.name, ctx.call.arguments).leaves_sandbox
    if leaves is not None and not leaves.strip():
        return Refusal(LEAVE_WITHOUT_REASON)
    return None
