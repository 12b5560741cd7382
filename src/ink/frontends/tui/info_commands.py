"""``/cost``, ``/status`` and ``/config``: what this session spent, what it runs on, and where each
setting came from. Each is a listing (``TERM<TAB>WHAT`` rows, ``paint.listing_rows``) built from the
app's own records; nothing here changes anything.

``/cost`` counts the model calls this ink process made for the session, per model, the sub-agents'
share among them (R7: their calls are the run's), and what a resumed session had cost before. A model
without known prices is said to be so, and the total is then a lower bound, never a silent $0.
"""

from __future__ import annotations

from ink.ai.messages import Usage
from ink.app import App
from ink.config import Settings
from ink.frontends.tui.blocks import plural, sanitize
from ink.run.usage import ModelUsage, UsageTotals

SECRET_KEYS = frozenset({"api_key"})


def cost_text(usage: UsageTotals) -> str:
    """Tokens and cost of the session: per model, the sub-agents' share, what came before, the total."""
    lines = ["Cost of this session (model calls since ink started, per model):"]
    for model, used in sorted(usage.models.items(), key=lambda m: -m[1].calls):
        lines.append(f"{sanitize(model)}\t{_calls(used)}")
    if not usage.models:
        lines.append("no model calls yet")
    if usage.sub_agents.calls:
        lines += ["", f"of which sub-agents\t{_calls(usage.sub_agents)}"]
    earlier = _before(usage)
    if earlier is not None:
        lines += ["", f"earlier in the session\t{earlier}"]
    total = usage.session
    cost = _money(total.cost_usd) if total.cost_usd is not None else _lower_bound(usage.known_cost)
    lines += ["", f"total\t{_tokens(total)} · {cost}"]
    return "\n".join(lines)


def _calls(used: ModelUsage) -> str:
    cost = _money(used.usage.cost_usd) if used.usage.cost_usd is not None else "price unknown"
    return f"{plural(used.calls, 'call')} · {_tokens(used.usage)} · {cost}"


def _tokens(usage: Usage) -> str:
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    prompt = usage.input_tokens + cached
    mark = {"estimated": "~", "missing": "≥"}.get(usage.accuracy or "", "")  # not the service's count
    read = f" ({count(usage.cache_read_tokens)} from cache)" if usage.cache_read_tokens else ""
    return f"{mark}{count(prompt)} in{read} · {mark}{count(usage.output_tokens)} out"


def _before(usage: UsageTotals) -> str | None:
    """What the session had used before this process went on with it (a resumed session), if anything."""
    now = Usage()
    for used in usage.models.values():
        now += used.usage
    session = usage.session
    fields = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    gone = [getattr(session, f) - getattr(now, f) for f in fields]
    if not any(gone):
        return None
    earlier = Usage(*gone)
    cost = None
    if session.cost_usd is not None and now.cost_usd is not None:
        cost = session.cost_usd - now.cost_usd
    return f"{_tokens(earlier)} · {_money(cost) if cost is not None else 'price unknown'}"


def _money(amount: float | None) -> str:
    if amount is None:
        return "price unknown"
    return f"${amount:.4f}" if 0 < amount < 0.01 else f"${amount:.2f}"


def _lower_bound(known: float) -> str:
    return f"at least {_money(known)} (some calls' prices are unknown)"


def count(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def status_text(core: App, home: str) -> str:
    """Model, provider, modes, MCP servers, session, context use of the window."""
    from ink.config.keys import shown_url

    settings = core.settings
    lines = ["Status:"]
    lines.append(f"model\t{sanitize(settings.model)} ({settings.provider}, {shown_url(settings.base_url)})")
    lines.append(f"permission mode\t{settings.permission_mode} (shift+tab switches it)")
    lines.append(f"sandbox\t{_sandbox(core)}")
    lines.append(f"working folder\t{home}")
    session = core.session
    if session is not None:
        lines.append(f"session\t{session.id} · {session.path}")
    else:
        lines.append("session\tnot kept (--no-session)")
    lines.append(f"context\t{_context(core)}")
    lines += _servers(core)
    running = core.jobs.running()
    if running:
        lines.append(f"background jobs\t{len(running)} running (/jobs)")
    return "\n".join(lines)


def _sandbox(core: App) -> str:
    sandbox = core.sandbox
    if sandbox.mode == "off":
        return "off: commands run with your rights"
    network = "network allowed" if sandbox.policy.network else "no network"
    return f"{sandbox.mode} · {network}"


def _context(core: App) -> str:
    """How much of the model's window the history takes now (estimated as compaction does)."""
    compactor = core.compactor
    used, window = compactor.estimate(core.controller.history), compactor.window
    share = 100 * used / window if window else 0.0
    return (
        f"~{count(used)} of {count(window)} tokens ({share:.0f}%); compacted by itself above "
        f"{count(compactor.limit)} (/compact now)"
    )


def _servers(core: App) -> list[str]:
    from ink.wiring.mcp_part import mcp_of

    part = mcp_of(core)
    if part is None or part.manager is None:
        return ["MCP servers\tnone configured"]
    lines = []
    for status in part.manager.statuses():
        tools = plural(len(status.tools), "tool")
        problem = f" ({sanitize(status.error)})" if status.error else ""
        lines.append(f"MCP {sanitize(status.name)}\t{status.state} · {tools}{problem}")
    return lines or ["MCP servers\tnone configured"]


def config_text(settings: Settings) -> str:
    """Every setting with its value and where it came from (flag, variable, ``file:line``, default)."""
    lines = ["Settings (highest first: flags > environment > project file > user file > defaults):"]
    for key, where in sorted(settings.origins.items()):
        lines.append(f"{key}\t{_value(settings, key)}  ← {_origin(where)}")
    sandbox = settings.sandbox
    lines.append(f"sandbox\t{sandbox.mode or 'default (workspace-write)'}  ← {_origin(sandbox.where)}")
    lines += ["", "Files read:"]
    lines += [f"{path}\t{_file_kind(path, settings)}" for path in settings.files] or ["none\t"]
    if settings.hooks or settings.mcp_servers:
        lines += ["", f"hooks\t{len(settings.hooks)} · MCP servers: {len(settings.mcp_servers)}"]
    if settings.warnings:
        lines += ["", "Ignored (see why):", *(f"{sanitize(w)}" for w in settings.warnings)]
    return "\n".join(lines)


def _value(settings: Settings, key: str) -> str:
    if key in SECRET_KEYS:
        return "set (hidden)" if getattr(settings, key, None) else "not set"
    value = getattr(settings, key, None)
    return "none" if value is None else '""' if value == "" else sanitize(str(value))


def _origin(where: str) -> str:
    return {"default": "default", "unset": "nobody set it"}.get(where, where)


def _file_kind(path: object, settings: Settings) -> str:
    return "user file" if str(path).startswith(str(settings.ink_home)) else "project file"
