"""Every setting a config file may hold: its type, allowed values and range, checked in one place.

The same checks serve config files, flags and environment values, so a wrong value gets the same
message wherever it came from; only the "where" differs (``path:line``, ``--flag``, ``ENV_VAR``).
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple, TypeAlias

from ink.config.catalogue import provider_names
from ink.config.errors import ConfigError
from ink.vocabulary import TAKE_MODES

PermissionMode: TypeAlias = Literal["ask", "accept-edits", "yolo"]
ThinkingLevel: TypeAlias = Literal["off", "low", "medium", "high"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("ask", "accept-edits", "yolo")  # strictest first
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "low", "medium", "high")


class Key(NamedTuple):  # a NamedTuple, not a dataclass: ~10x cheaper to define on the start-up path
    name: str
    kind: type  # str, int, float or bool
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    help: str = ""

    def check(self, value: Any, where: str) -> Any:
        """Return ``value`` (ints widened for float keys). Raises ``ConfigError`` naming ``where``."""
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: {self.name} must be true or false (got {value!r})")
            return value
        if not isinstance(value, self.kind) or isinstance(value, bool):
            raise ConfigError(f"{where}: {self.name} must be {_kind_name(self.kind)} (got {value!r})")
        if self.choices and value not in self.choices:
            allowed = ", ".join(self.choices)
            raise ConfigError(f"{where}: {self.name} must be one of {allowed} (got {value!r})")
        if isinstance(value, str) and not value.strip():
            raise ConfigError(f"{where}: {self.name} must not be empty")
        number = float(value) if isinstance(value, int | float) else 0.0
        if not math.isfinite(number):  # TOML's nan passes every bound, and inf is no number of seconds
            raise ConfigError(f"{where}: {self.name} must be a finite number (got {value!r})")
        if self.minimum is not None and number < self.minimum:
            raise ConfigError(f"{where}: {self.name} must be at least {self.minimum:g} (got {value!r})")
        if self.maximum is not None and number > self.maximum:
            raise ConfigError(f"{where}: {self.name} must be at most {self.maximum:g} (got {value!r})")
        return value


def _kind_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number"}.get(kind, kind.__name__)


def _keys(*keys: Key) -> dict[str, Key]:
    return {k.name: k for k in keys}


# Keys allowed at the top level of a config file.
TOP_KEYS = _keys(
    Key("provider", str, provider_names(), help="which model service to use"),
    Key("model", str, help="model name for the chosen provider"),
    Key("base_url", str, help="service URL (OpenAI-compatible servers: include /v1)"),
    Key("api_key", str, help="discouraged in files: prefer the provider's environment variable"),
    Key("max_iterations", int, minimum=0, help="tool batches per run; 0 means no limit (R28)"),
    Key("steering_mode", str, TAKE_MODES, help="how many steer entries one take removes (R13)"),
    Key("follow_up_mode", str, TAKE_MODES, help="how many follow-up entries one take removes (R13)"),
    Key("permission_mode", str, PERMISSION_MODES, help="what tools may do without asking"),
    Key("permission_timeout", float, minimum=0, maximum=86400, help="seconds a question waits; 0: forever"),
    Key("question_delay", float, minimum=0.2, maximum=10, help="pause before a question takes keys"),
    Key("theme", str, ("auto", "dark", "light"), help="TUI colours for a dark or light terminal"),
    Key("code_theme", str, help="pygments style of code and diffs in the TUI (default: by theme)"),
    Key("session_dir", str, help="where session files go (default $INK_HOME/sessions)"),
    Key("grace_seconds", float, minimum=0, maximum=600, help="wait for an aborted tool (R20)"),
    Key("kill_delay", float, minimum=0, maximum=2, help="TERM to KILL delay for tool processes (R35)"),
    Key("thinking", str, THINKING_LEVELS, help="reasoning effort where the model supports it"),
    Key("max_tokens", int, minimum=1, help="output token limit of one model reply"),
    Key("connect_timeout", float, minimum=0.01, maximum=600, help="seconds to connect to the model service"),
    Key("first_byte_timeout", float, minimum=0.01, maximum=86400, help="seconds to a reply's first event"),
    Key("idle_timeout", float, minimum=0.01, maximum=86400, help="seconds of silence mid-reply"),
)

# Keys of ``[notify]`` (R46): how the terminal UI gets the user's attention when it matters.
NOTIFY_KEYS = _keys(
    Key("bell", bool, help="ring the terminal (BEL, and OSC 9 where the terminal shows it)"),
    Key("command", str, help="run this shell command with the event as JSON on stdin"),
    Key("after_seconds", float, minimum=0, maximum=86400, help="no key for this long: the user may be away"),
)

# Keys of ``[compat]``: other agents' set-up files ink reads (docs/claude-code.md).
COMPAT_KEYS = _keys(
    Key(
        "claude",
        bool,
        help="read .claude/ (hooks, commands, agents), .mcp.json and ~/.claude/ (default true)",
    ),
)

# Tables of plain keys (``[name]`` with ``key = value`` lines), each read into ``ConfigFile.tables``.
TABLE_KEYS: dict[str, dict[str, Key]] = {"notify": NOTIFY_KEYS, "compat": COMPAT_KEYS}

# Keys allowed in a ``[providers.<name>]`` table: defaults for that provider only.
PROVIDER_KEYS = _keys(
    Key("model", str, help="default model of this provider"),
    Key("base_url", str, help="service URL of this provider"),
    Key("api_key", str, help="discouraged in files: prefer the provider's environment variable"),
)


def check_base_url(url: str, where: str) -> str:
    """A base URL must be absolute http(s) with a host, and hold no ``user:password@``: HTTP clients
    (httpx among them) send that as Basic auth in place of the API key. Returns it without a trailing
    slash. Errors never quote the password (``shown_url``)."""
    from urllib.parse import urlsplit

    shown = shown_url(url)
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # an unclosed "[" of an IPv6 address
        raise ConfigError(f"{where}: base URL {shown!r} has an invalid host") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{where}: base URL {shown!r} is not an http(s) URL; give the full address, "
            "for example http://localhost:11434/v1"
        )
    try:
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError:
        raise ConfigError(f"{where}: base URL {shown!r} has an invalid port") from None
    if "@" in parts.netloc:
        raise ConfigError(
            f"{where}: base URL {shown!r} holds a user name or password; ink authenticates with the API "
            "key (--api-key or the provider's key variable), so remove the 'user:password@' part"
        )
    return url.strip().rstrip("/")


def shown_url(url: str) -> str:
    """``url`` fit for a message: the user information before ``@`` in its authority becomes
    ``[REDACTED]`` (a base URL's password must not reach an error line or a log)."""
    import re

    return re.sub(r"^((?:[^:/?#]*:)?//)?[^/?#]*@", r"\1[REDACTED]@", url.strip())
