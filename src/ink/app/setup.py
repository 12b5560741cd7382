"""The set-up each run starts with, as a function of the app's settings, its tool registry and the fixed
parts of every run (the before-tool chain, the hooks): ``RunSetups``.

The run controller asks for it once, at the start of each run (R13), and hands it down: the run's calls
carry it (``ToolCallContext.setup``) and its sub-agents start from it. A model switch (``use``) or new
tools (``ToolRegistry.add``) change what the *next* run is given; a run going on keeps the value it
started with. The set-up is made when a run first needs it after a change, not when the app is built.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ink.agent.budget import RunBudget
from ink.agent.loop import LoopSetup, PromptHook, StopHook
from ink.agent.scheduler import SchedulerSettings
from ink.agent.tasks import Tasks
from ink.agent.tool import AfterToolHook, BeforeToolStep, Tool, find_tool
from ink.ai.provider import Provider, ToolSpec
from ink.ai.redacting import redacting
from ink.ai.thinking import thinking_options
from ink.config import Settings
from ink.run.compaction import Compactor
from ink.run.controller import Modes
from ink.run.usage import UsageTotals
from ink.system_prompt import Environment, build_system_prompt

Offer = Callable[[Sequence[Tool]], Sequence[ToolSpec]]


class ToolRegistry:
    """Every tool the app has (its own, a part's as they join: MCP), and which of them a model call is
    given (``offer``; default: all). Changing it changes the set-up of the runs to come."""

    def __init__(self, tools: Sequence[Tool], offer: Offer | None = None) -> None:
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.offer = offer
        self.version = 0  # counts the changes: a set-up made before one is made again

    def add(self, extra: Sequence[Tool], offer: Offer | None = None) -> None:
        """``extra`` from the next run on; ``offer``, when given, chooses what each model call is given."""
        if not extra and offer is None:
            return
        self.tools = (*self.tools, *extra)
        self.offer = offer or self.offer
        self.version += 1

    def joined_after(self, count: int) -> Callable[[], Sequence[Tool]]:
        """The tools added after the first ``count`` (``add`` appends): for a run that started with those,
        the ones that joined while it goes on."""
        return lambda: self.tools[count:]

    def find(self, name: str) -> Tool | None:
        return find_tool(self.tools, name)

    def specs(self) -> Sequence[ToolSpec]:
        """What the system prompt lists: the tools a model call is given."""
        return self.offer(self.tools) if self.offer is not None else [t.spec for t in self.tools]


class RunHooks(msgspec.Struct, frozen=True):
    """The parts of every run's set-up that no switch changes: the before-tool chain (``ink.wiring.chain``),
    the hooks, and the owner of background work."""

    before_tool: tuple[BeforeToolStep, ...] = ()
    after_tool: AfterToolHook | None = None
    on_prompt: PromptHook | None = None
    on_stop: StopHook | None = None
    tasks: Tasks = msgspec.field(default_factory=Tasks)
    notes: Callable[[], str] | None = None  # told to the model before a request (a background job ended)
    budget: RunBudget | None = None  # R45: the limits every run is checked against (ink.run.budget)


class RunSetups:
    """Gives each run its set-up (call it). The provider is made once per provider and address (a run
    may still use one the app switched away from: ``aclose`` closes them all), the context keeper once per
    model, the system prompt once per set of tools."""

    def __init__(
        self,
        settings: Settings,
        registry: ToolRegistry,
        hooks: RunHooks,
        usage: UsageTotals,
        provider: Provider | None = None,
    ) -> None:
        """``provider``: the model's, when not the settings' (a scripted one in tests)."""
        self.settings = settings
        self.registry = registry
        self.hooks = hooks
        self.usage = usage
        made = provider or build_provider(settings)
        self.provider = redacting(made, settings.secrets)  # errors and retry notes carry no key
        self._retired: list[Provider] = []
        self._compactor: Compactor | None = None
        self._made: tuple[int, LoopSetup] | None = None  # for the registry's version

    def __call__(self) -> LoopSetup:
        """The set-up of a run starting now: the one made last, unless something changed since."""
        made = self._made
        if made is not None and made[0] == self.registry.version:
            return made[1]
        setup = self._make()
        self._made = (self.registry.version, setup)
        return setup

    @property
    def compactor(self) -> Compactor:
        """The context keeper of the current model (``/compact`` uses it too)."""
        return self._keeper(self().system_prompt)

    def modes(self) -> Modes:
        """How the next run takes queued steer and follow-up input (R13): the settings' modes."""
        return Modes(self.settings.steering_mode, self.settings.follow_up_mode)

    def use(self, settings: Settings) -> None:
        """Later runs use ``settings`` (another model, provider, permission mode or queue modes); a run
        going on keeps the set-up it started with (R13)."""
        old = self.settings
        if (settings.provider, settings.base_url) != (old.provider, old.base_url):
            self._retired.append(self.provider)  # closed with the app: the running run may use it
            self.provider = redacting(build_provider(settings), settings.secrets)
        if (settings.model, settings.provider, settings.base_url, settings.context_window) != (
            old.model,
            old.provider,
            old.base_url,
            old.context_window,
        ):
            self._compactor = None  # the next run's keeper knows the new model's window
        kept = msgspec.structs.replace(
            old,
            permission_mode=settings.permission_mode,
            steering_mode=settings.steering_mode,
            follow_up_mode=settings.follow_up_mode,
        )
        if kept != settings:  # not only what no set-up holds (the policy and the controller read those)
            self._made = None
        self.settings = settings

    async def aclose(self) -> None:
        """Close every provider the app used."""
        for provider in (*self._retired, self.provider):
            await provider.aclose()

    def _make(self) -> LoopSetup:
        settings, registry, hooks = self.settings, self.registry, self.hooks
        prompt = build_system_prompt(registry.specs(), Environment.detect(settings.cwd))
        return LoopSetup(
            provider=self.provider,
            model=settings.model,
            system_prompt=prompt,
            tools=registry.tools,
            max_iterations=settings.max_iterations,
            max_tokens=settings.max_tokens,
            scheduler=SchedulerSettings(grace_seconds=settings.grace_seconds),
            before_tool=hooks.before_tool,
            after_tool=hooks.after_tool,
            on_prompt=hooks.on_prompt,
            on_stop=hooks.on_stop,
            context=self._keeper(prompt),
            options=request_options(settings),
            offer=registry.offer,
            joining=registry.joined_after(len(registry.tools)),
            tasks=hooks.tasks,
            notes=hooks.notes,
            budget=hooks.budget,
        )

    def _keeper(self, prompt: str) -> Compactor:
        """The context keeper, made once per model (it learns the window as it goes)."""
        if self._compactor is None:
            tools = self.registry.tools
            self._compactor = build_compactor(self.settings, self.provider, prompt, tools, self.usage)
        return self._compactor


def build_compactor(
    settings: Settings, provider: Provider, system_prompt: str, tools: Sequence[Tool], usage: UsageTotals
) -> Compactor:
    """The context keeper for ``settings.model``: compacts before a request would overflow (R-sessions).
    ``provider`` is the app's, already wrapped for redaction."""
    from ink.ai.models import lookup

    specs = json.dumps(
        [{"name": t.name, "d": t.description, "p": t.parameters} for t in (x.spec for x in tools)]
    )
    overhead = (len(system_prompt) + len(specs)) // 4
    info = lookup(settings.model)
    if settings.context_window is not None:  # what the server itself reports (a local llama.cpp)
        info = msgspec.structs.replace(info, context_window=settings.context_window)
    return Compactor(provider, settings.model, info, overhead_tokens=overhead, usage=usage)


def settings_for(settings: Settings, model: str, provider: str | None = None) -> Settings:
    """``settings`` with another model (of another provider: that provider's default URL and the key of
    its environment variable, when the settings have the environment). Raises ``ValueError``."""
    if provider is None or provider == settings.provider:
        return msgspec.structs.replace(settings, model=model)
    from ink.config.catalogue import PROVIDERS

    info = PROVIDERS.get(provider)
    if info is None:
        raise ValueError(f"unknown provider {provider!r} (known: {', '.join(sorted(PROVIDERS))})")
    key = os.environ.get(info.key_env) if info.key_env else None
    if info.key_required and not key:
        raise ValueError(f"{provider} needs a key: set {info.key_env}")
    origins = {**settings.origins, "provider": "switch", "model": "switch", "base_url": "default"}
    return msgspec.structs.replace(
        settings, provider=provider, model=model, base_url=info.default_base_url, api_key=key, origins=origins
    )


def build_provider(settings: Settings) -> Provider:
    """The provider for ``settings.provider``; its module (and the HTTP client) is imported only here."""
    from ink.ai.http import RequestTimeouts
    from ink.config.catalogue import protocol_for

    info = settings.provider_info
    protocol = protocol_for(info, settings.model)
    timeouts = RequestTimeouts(settings.connect_timeout, settings.first_byte_timeout, settings.idle_timeout)
    if protocol == "anthropic":
        from ink.ai.anthropic import AnthropicProvider

        return AnthropicProvider(
            api_key=settings.api_key, base_url=settings.base_url, name=info.name, timeouts=timeouts
        )
    if protocol == "openai-responses":
        from ink.ai.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(
            api_key=settings.api_key, base_url=settings.base_url, name=info.name, timeouts=timeouts
        )
    from ink.ai.openai import OpenAIProvider

    return OpenAIProvider(
        api_key=settings.api_key, base_url=settings.base_url, name=info.name, timeouts=timeouts
    )


def request_options(settings: Settings) -> dict[str, Any]:
    """Provider-specific request fields the settings ask for (the thinking level, mapped by ``ai``)."""
    from ink.config.catalogue import protocol_for

    protocol = protocol_for(settings.provider_info, settings.model)
    return thinking_options(protocol, settings.thinking, settings.max_tokens)
