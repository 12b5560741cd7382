"""Resolving the settings of one ink process from flags, environment, config files and defaults.

Precedence, highest first (docs/config.md explains why):

    1. command-line flags
    2. environment: OPENAI_API_KEY / OPENAI_BASE_URL, ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL
       (each read only for its own provider)
    3. the project file: the nearest ``.ink/config.toml`` from the working directory up to the
       repository root or the home directory, when only its owner can write it (``project``)
    4. the user file: ``$INK_HOME/config.toml`` (INK_HOME defaults to ~/.ink)
    5. built-in defaults (``catalogue.PROVIDERS`` for models and URLs)

Within a file, a top-level key beats the ``[providers.<name>]`` table of the same file. A top-level
``model``, ``base_url`` or ``api_key`` belongs to the provider chosen next to it: it is ignored when a
higher layer picked a different provider (``--provider anthropic`` must not inherit ``model = "gpt-4.1"``).

A project file is written by whoever wrote the repository, so it may not choose where the API key is
sent (``base_url``), hold a key, move session storage (``session_dir``: transcripts in the working tree
get committed), loosen ``permission_mode`` or add ``[permissions] allow`` rules: such entries are
ignored with a warning (its deny rules apply). Permission rules are not layered like keys but collected:
``--allow``/``--deny`` flags, then the project's denies, then the user file's rules.
``Settings.secrets`` lists every credential the process knows of, for redaction (``ink.redaction``).

``load_settings`` is a pure function of its arguments (flags, an environment mapping, a directory), so
tests pass their own environment instead of patching ``os.environ``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
from msgspec.structs import replace

from ink.config.catalogue import DEFAULT_PROVIDER, PROVIDERS, ProviderInfo
from ink.config.errors import ConfigError
from ink.config.files import ConfigFile, Located, read_config_file
from ink.config.hidden_hooks import hidden_hook_warnings
from ink.config.hooks import HookSpec
from ink.config.keys import (
    PERMISSION_MODES,
    TOP_KEYS,
    PermissionMode,
    ThinkingLevel,
    check_base_url,
)
from ink.config.limits import LimitSettings, resolve_limits
from ink.config.notify import NotifySettings, resolve_notify
from ink.config.project import find_project_file, read_project_file
from ink.config.rules import RuleText, parse_rule
from ink.config.sandbox import SandboxSettings, resolve_sandbox
from ink.vocabulary import TakeMode

if TYPE_CHECKING:
    from ink.config.claude import ClaudeSetup
    from ink.config.mcp import McpServerSpec

DEFAULTS: dict[str, Any] = {
    "max_iterations": 0,
    "steering_mode": "all",
    "follow_up_mode": "one-at-a-time",
    "permission_mode": "ask",
    "permission_timeout": 300.0,
    "grace_seconds": 10.0,
    "kill_delay": 0.5,
    "question_delay": 0.5,
    "theme": "auto",
    "code_theme": "",
    "thinking": "off",
    "max_tokens": 8192,
    "connect_timeout": 15.0,  # the same defaults as ink.ai.http.RequestTimeouts (not imported here)
    "first_byte_timeout": 300.0,
    "idle_timeout": 300.0,
}
DEFAULT_LAYER, USER_LAYER, PROJECT_LAYER, ENV_LAYER, FLAG_LAYER = range(5)


class Flags(msgspec.Struct, frozen=True):
    """What the command line said; None means "not given"."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    cwd: str | None = None
    max_iterations: int | None = None
    steering_mode: str | None = None
    follow_up_mode: str | None = None
    permission_mode: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    debug: bool = False
    allow: tuple[str, ...] = ()  # --allow RULE, repeatable
    deny: tuple[str, ...] = ()  # --deny RULE, repeatable
    model_path: str | None = None  # --model-path FILE.gguf (with --provider local)
    sandbox: str | None = None  # --sandbox read-only|workspace-write|off
    max_cost: float | None = None  # --max-cost USD: the session's cost limit (R45; 0: none)
    max_total_tokens: int | None = None  # --max-tokens N: the session's token limit (not a reply's)
    max_time: float | None = None  # --max-time SECONDS: the session's time limit


class Settings(msgspec.Struct, frozen=True):
    """Everything a run is configured with, resolved from flags, environment, files and defaults."""

    provider: str
    model: str
    base_url: str
    api_key: str | None  # never in the repr (below)
    cwd: Path
    ink_home: Path
    session_dir: Path
    no_session: bool
    max_iterations: int | None  # None: no limit
    steering_mode: TakeMode
    follow_up_mode: TakeMode
    permission_mode: PermissionMode
    grace_seconds: float
    kill_delay: float
    thinking: ThinkingLevel
    max_tokens: int
    debug: bool = False
    permission_timeout: float = 300.0  # seconds a permission question waits; 0: no limit
    question_delay: float = 0.5  # seconds a question is shown before its answer keys count (TUI)
    theme: str = "auto"  # TUI colours: auto (ask the terminal), dark or light
    code_theme: str = ""  # a pygments style for code and diffs ("": the theme's)
    connect_timeout: float = 15.0  # seconds; the model request's deadlines (docs/config.md)
    first_byte_timeout: float = 300.0
    idle_timeout: float = 300.0
    permission_rules: tuple[RuleText, ...] = ()  # flags first, then the project's denies, then the user's
    secrets: tuple[str, ...] = ()  # values to redact wherever ink writes text; never in the repr
    # key -> "--flag", "ENV", "path:line", "default"
    origins: Mapping[str, str] = msgspec.field(default_factory=dict)
    files: tuple[Path, ...] = ()
    warnings: tuple[str, ...] = ()
    model_path: Path | None = None  # the GGUF file ``--provider local`` serves; None: the starter model
    context_window: int | None = None  # tokens; None: the catalogue's (a local server says its own)
    local_temperature: float | None = None  # INK_LOCAL_TEMPERATURE: that server's default temperature
    hooks: tuple[HookSpec, ...] = ()  # the user's, then the project's (which run only once approved)
    mcp_servers: tuple[McpServerSpec, ...] = ()  # the user's, then the project's (see docs/mcp.md)
    notify: NotifySettings = msgspec.field(default_factory=NotifySettings)  # [notify] (R46)
    # ${VAR} in MCP env, headers; never in the repr
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    sandbox: SandboxSettings = SandboxSettings()  # [sandbox] and --sandbox (ink.config.sandbox)
    claude: bool = True  # [compat] claude: read Claude Code's files too (ink.config.claude)
    home: Path | None = None  # $HOME, whose ~/.claude is the user's (None: no home, no ~/.claude)
    limits: LimitSettings = LimitSettings()  # [limits.session], [limits.run] and the flags (R45)

    def __repr__(self) -> str:
        """Every field but the secret ones: a settings object in a log or a traceback shows no key."""
        shown = (f"{name}={getattr(self, name)!r}" for name in self.__struct_fields__ if name not in _UNSHOWN)
        return f"Settings({', '.join(shown)})"

    def __rich_repr__(self) -> list[tuple[str, Any]]:
        """rich's pretty printer asks this instead of ``repr``: the same fields."""
        return [(name, getattr(self, name)) for name in self.__struct_fields__ if name not in _UNSHOWN]

    @property
    def provider_info(self) -> ProviderInfo:
        return PROVIDERS[self.provider]


_UNSHOWN = frozenset({"api_key", "secrets", "env"})  # Settings fields kept out of its repr


class _Pick(NamedTuple):
    value: Any
    where: str
    layer: int


def load_settings(flags: Flags, env: Mapping[str, str], start_dir: Path) -> Settings:
    """Resolve every setting. Raises ``ConfigError`` (one line with the fix) on any bad value or file."""
    cwd = _working_dir(flags.cwd, start_dir)
    ink_home = _ink_home(env, start_dir)
    user = read_config_file(ink_home / "config.toml")
    warnings: list[str] = []
    project_path = find_project_file(cwd, ink_home, env)
    project = read_project_file(project_path, warnings) if project_path is not None else None
    if project is not None:
        project = _without_untrusted(project, user, warnings)
    mine, claude = _claude_compat(user, project)
    found = _claude_setup(cwd, ink_home, env, warnings, project=claude) if mine else None
    rules = (  # flags, the project's denies (.ink, then .claude), the user's rules (config, then ~/.claude)
        _flag_rules(flags)
        + tuple(project.rules if project else ())
        + (found.project_rules if found else ())
        + tuple(user.rules if user else ())
        + (found.user_rules if found else ())
    )
    layers = _Layers(flags, env, user, project)
    picks = {name: layers.pick(name) for name in DEFAULTS}
    provider = layers.pick("provider", DEFAULT_PROVIDER)
    info = PROVIDERS[provider.value]
    model = layers.tied("model", info, provider.layer) or _Pick(info.default_model, "default", DEFAULT_LAYER)
    url = layers.tied("base_url", info, provider.layer) or _Pick(info.default_base_url, "default", 0)
    key = layers.tied("api_key", info, provider.layer)
    session_dir = layers.session_dir(ink_home, start_dir)
    origins = {name: pick.where for name, pick in picks.items()}
    origins |= {"provider": provider.where, "model": model.where, "base_url": url.where}
    origins |= {"api_key": key.where if key else "unset", "session_dir": session_dir.where}
    servers = mcp_servers(user, project, found.servers if found else (), warnings)
    notify = resolve_notify(user, project, warnings)  # before ``warnings`` is frozen below
    limits = resolve_limits(
        _limit_flags(flags), user.tables if user else {}, project.tables if project else {}, warnings
    )
    sandbox = resolve_sandbox(
        flags.sandbox, user.sandbox if user else {}, project.sandbox if project else {}, cwd, warnings
    )
    hooks = _all_hooks(user, project, found)
    warnings += hidden_hook_warnings(hooks, ink_home, _home_dir(env), sandbox.mode)
    return Settings(
        provider=provider.value,
        model=model.value,
        base_url=check_base_url(url.value, url.where),
        api_key=key.value if key else None,
        cwd=cwd,
        ink_home=ink_home,
        session_dir=session_dir.value,
        no_session=flags.no_session,
        max_iterations=picks["max_iterations"].value or None,
        steering_mode=picks["steering_mode"].value,
        follow_up_mode=picks["follow_up_mode"].value,
        permission_mode=picks["permission_mode"].value,
        grace_seconds=picks["grace_seconds"].value,
        kill_delay=picks["kill_delay"].value,
        thinking=picks["thinking"].value,
        max_tokens=picks["max_tokens"].value,
        debug=flags.debug,
        permission_timeout=picks["permission_timeout"].value,
        hooks=hooks,
        question_delay=picks["question_delay"].value,
        theme=picks["theme"].value,
        code_theme=picks["code_theme"].value,
        connect_timeout=picks["connect_timeout"].value,
        first_byte_timeout=picks["first_byte_timeout"].value,
        idle_timeout=picks["idle_timeout"].value,
        permission_rules=rules,
        secrets=_secrets(env, key, user) + _server_secrets(servers, env),
        origins=origins,
        files=tuple(f.path for f in (project, user) if f is not None),
        warnings=tuple(warnings),
        model_path=_model_path(flags.model_path, provider.value, start_dir),
        local_temperature=_local_temperature(env) if provider.value == "local" else None,
        mcp_servers=servers,
        notify=notify,
        env=dict(env) if servers else {},
        sandbox=sandbox,
        claude=claude,
        home=_home_dir(env),
        limits=limits,
    )


def _limit_flags(flags: Flags) -> dict[str, float | int | None]:
    tokens = flags.max_total_tokens
    return {"max_cost_usd": flags.max_cost, "max_tokens": tokens, "max_seconds": flags.max_time}


def _claude_compat(user: ConfigFile | None, project: ConfigFile | None) -> tuple[bool, bool]:
    """``[compat] claude``: the user's choice (default true), and whether the project's Claude Code files
    are read too: a project file may only turn that off. It never turns off the user's own
    ``~/.claude`` deny rules and hooks (a repository could otherwise drop them: a "no" turned "yes")."""
    mine = user.tables.get("compat", {}).get("claude") if user else None
    theirs = project.tables.get("compat", {}).get("claude") if project else None
    on = mine.value if mine else True
    return on, on and (theirs.value if theirs else True)


def _claude_setup(
    cwd: Path, ink_home: Path, env: Mapping[str, str], warnings: list[str], *, project: bool
) -> ClaudeSetup:
    from ink.config.claude import load_claude_setup  # reads files only where a .claude or .mcp.json is

    return load_claude_setup(cwd, ink_home, _home_dir(env), warnings, project=project)


def _home_dir(env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME", "").strip()
    return Path(home) if home else None


def _all_hooks(
    user: ConfigFile | None, project: ConfigFile | None, claude: ClaudeSetup | None
) -> tuple[HookSpec, ...]:
    """The user's hooks (config.toml, then ~/.claude), then the project's (.ink, then .claude): a
    project's run only once approved (docs/hooks.md)."""
    hooks = tuple(user.hooks if user else ()) + (claude.user_hooks if claude else ())
    return hooks + _project_hooks(project) + (claude.project_hooks if claude else ())


def _local_temperature(env: Mapping[str, str]) -> float | None:
    """``INK_LOCAL_TEMPERATURE``: the local server's default sampling temperature (0: repeatable runs)."""
    raw = env.get("INK_LOCAL_TEMPERATURE", "").strip()
    try:
        return float(raw) if raw else None
    except ValueError:
        raise ConfigError(f"INK_LOCAL_TEMPERATURE must be a number (got {raw!r})") from None


def _server_secrets(servers: tuple[McpServerSpec, ...], env: Mapping[str, str]) -> tuple[str, ...]:
    if not servers:
        return ()
    from ink.config.mcp import referenced_secrets

    return tuple(referenced_secrets(servers, env))


def mcp_servers(
    user: ConfigFile | None,
    project: ConfigFile | None,
    claude: tuple[McpServerSpec, ...] = (),
    warnings: list[str] | None = None,
) -> tuple[McpServerSpec, ...]:
    """The user's servers, then the project's, then its ``.mcp.json``'s (``claude``); a project server
    named like one of the user's is dropped: the repository may add servers, never redefine one the user
    set up. A ``.mcp.json`` server named like one of ``.ink/config.toml``'s gives way to it, with a notice."""
    own = list(user.mcp_servers) if user else []
    names = {spec.name for spec in own}
    found = own + [spec for spec in (project.mcp_servers if project else []) if spec.name not in names]
    taken = {spec.name: spec for spec in found}
    for spec in claude:
        if spec.name in taken:
            if warnings is not None and taken[spec.name].origin == "project":
                warnings.append(
                    f"{spec.where}: the server {spec.name!r} of .ink/config.toml is used instead of this one"
                )
            continue
        found.append(spec)
    return tuple(found)


class _Layers:
    def __init__(
        self, flags: Flags, env: Mapping[str, str], user: ConfigFile | None, project: ConfigFile | None
    ) -> None:
        self.flags = flags
        self.env = env
        self.files = [(f, layer) for f, layer in ((project, PROJECT_LAYER), (user, USER_LAYER)) if f]

    def pick(self, name: str, default: Any = None) -> _Pick:
        flag = getattr(self.flags, name, None)
        if flag is not None:
            return _Pick(TOP_KEYS[name].check(flag, _flag(name)), _flag(name), FLAG_LAYER)
        for file, layer in self.files:
            if name in file.top:
                return _Pick(file.top[name].value, file.top[name].where, layer)
        return _Pick(DEFAULTS.get(name, default), "default", DEFAULT_LAYER)

    def tied(self, name: str, info: ProviderInfo, provider_layer: int) -> _Pick | None:
        """A provider-bound value: flag, the provider's env var, then each file (top level when it belongs
        to the chosen provider, then its ``[providers.<name>]`` table); None when nobody set it."""
        flag = getattr(self.flags, name)
        if flag is not None:
            return _Pick(TOP_KEYS[name].check(flag, _flag(name)), _flag(name), FLAG_LAYER)
        env_name = {"base_url": info.url_env, "api_key": info.key_env}.get(name)
        if env_name and self.env.get(env_name, "").strip():
            return _Pick(self.env[env_name].strip(), env_name, ENV_LAYER)
        for file, layer in self.files:
            table = file.providers.get(info.name, {})
            found: Located | None = file.top.get(name) if layer >= provider_layer else None
            found = found or table.get(name)
            if found is not None:
                return _Pick(found.value, found.where, layer)
        return None

    def session_dir(self, ink_home: Path, start_dir: Path) -> _Pick:
        if self.flags.session_dir is not None:
            path = (start_dir / Path(self.flags.session_dir).expanduser()).resolve()
            return _Pick(path, "--session-dir", FLAG_LAYER)
        for file, layer in self.files:
            if "session_dir" in file.top:
                found = file.top["session_dir"]  # only the user file can hold it (``_without_untrusted``)
                return _Pick((ink_home / Path(found.value).expanduser()).resolve(), found.where, layer)
        return _Pick(ink_home / "sessions", "default", DEFAULT_LAYER)


def _flag_rules(flags: Flags) -> tuple[RuleText, ...]:
    allow = tuple(parse_rule("allow", text, "--allow") for text in flags.allow)
    return allow + tuple(parse_rule("deny", text, "--deny") for text in flags.deny)


def _secrets(env: Mapping[str, str], key: _Pick | None, user: ConfigFile | None) -> tuple[str, ...]:
    """Every credential this process knows of, to be redacted from what it writes: the key in use, and
    each provider's key in the environment or the user file. (A base URL holds none: ``check_base_url``
    refuses ``user:password@``.)"""
    found = [key.value if key else None]
    found += [env.get(info.key_env, "").strip() for info in PROVIDERS.values()]
    if user is not None:
        tables = [user.top, *user.providers.values()]
        found += [table["api_key"].value for table in tables if "api_key" in table]
    return tuple(value for value in found if value)


def _model_path(flag: str | None, provider: str, start_dir: Path) -> Path | None:
    if flag is None:
        return None
    if provider != "local":
        raise ConfigError(f"--model-path is for --provider local (the provider is {provider})")
    path = (start_dir / Path(flag).expanduser()).resolve()
    if not path.is_file():
        raise ConfigError(f"--model-path {flag}: no such file; give a .gguf model file")
    return path


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _working_dir(flag: str | None, start_dir: Path) -> Path:
    if flag is None:
        return start_dir.resolve()
    path = (start_dir / Path(flag).expanduser()).resolve()
    if not path.is_dir():
        raise ConfigError(f"--cwd {flag}: no such directory; give an existing project directory")
    return path


def _ink_home(env: Mapping[str, str], start_dir: Path) -> Path:
    raw = env.get("INK_HOME", "").strip()
    if raw:
        return (start_dir / Path(raw).expanduser()).resolve()
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".ink"


def _without_untrusted(project: ConfigFile, user: ConfigFile | None, warnings: list[str]) -> ConfigFile:
    """Drop what a repository's config must not decide for the person running ink (see module doc)."""
    top = dict(project.top)
    providers = {name: dict(table) for name, table in project.providers.items()}
    tables = [("", top), *((f"providers.{n}.", t) for n, t in providers.items())]
    for prefix, table in tables:
        for key, why in (
            ("base_url", "a project file may not choose where your API key is sent"),
            ("api_key", "keys do not belong in files a repository shares"),
            ("session_dir", "a project file may not move your session transcripts"),
            ("question_delay", "a project file may not shorten how long you read a permission question"),
        ):
            if key in table:
                found = table.pop(key)
                warnings.append(
                    f"{found.where}: ignoring {prefix}{key}: {why}; set it in $INK_HOME/config.toml, "
                    "the provider's environment variable or a flag"
                )
    permission = top.get("permission_mode")
    user_permission = user.top.get("permission_mode") if user else None
    baseline = user_permission.value if user_permission else DEFAULTS["permission_mode"]
    if permission and PERMISSION_MODES.index(permission.value) > PERMISSION_MODES.index(baseline):
        top.pop("permission_mode")
        warnings.append(
            f"{permission.where}: ignoring permission_mode = {permission.value!r}: a project file may only "
            f"make it stricter than {baseline!r}; use --permission-mode {permission.value} if you trust it"
        )
    rules = []
    for rule in project.rules:
        if rule.effect == "allow":
            warnings.append(
                f"{rule.where}: ignoring allow rule {rule.text!r}: a project file may only add deny rules; "
                f"put it in [permissions] allow of $INK_HOME/config.toml, or pass --allow {rule.text!r}"
            )
        else:
            rules.append(rule)
    servers = [replace(spec, origin="project") for spec in project.mcp_servers]
    return ConfigFile(
        project.path, top, providers, rules, project.hooks, servers, project.tables, project.sandbox
    )


def _project_hooks(project: ConfigFile | None) -> tuple[HookSpec, ...]:
    return tuple(replace(hook, scope="project") for hook in project.hooks) if project else ()


def starts_on_starter(settings: Settings, env: Mapping[str, str]) -> bool:
    """A first run: nothing chose a provider, a model or a base URL (no flag, variable or config file)
    and no provider's key variable is set. ink then starts on its embedded starter model (``--provider
    local``) instead of refusing for want of a key; a key set or a provider chosen wins as before."""
    chosen = ("provider", "model", "base_url")
    if any(settings.origins.get(name, "default") != "default" for name in chosen):
        return False
    if settings.origins.get("api_key", "unset") != "unset":
        return False
    return not any(env.get(info.key_env) for info in PROVIDERS.values() if info.key_env)


def missing_key_problem(settings: Settings) -> str | None:
    """A key is required for the provider's own service; a custom base URL (a local OpenAI-compatible
    server such as Ollama or llama.cpp) may need none, so there a missing key is left to the server."""
    info = settings.provider_info
    if (
        not info.key_required
        or settings.api_key is not None
        or settings.base_url != info.default_base_url.rstrip("/")
    ):
        return None
    return (
        f"no API key for {info.name}: set {info.key_env} (or pass --api-key); {info.key_help}, "
        f"or choose another provider with --provider (no key at all? try --provider local)"
    )
