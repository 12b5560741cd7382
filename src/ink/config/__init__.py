"""Settings: command-line flags, environment, config files and defaults, resolved in one place.

See ``settings`` for the precedence and docs/config.md for the user-facing description.
"""

from ink.config.catalogue import PROVIDERS, ProviderInfo
from ink.config.errors import ConfigError
from ink.config.invocation import Invocation, Mode, OutputFormat
from ink.config.settings import Flags, Settings, load_settings, missing_key_problem, starts_on_starter

__all__ = [
    "PROVIDERS",
    "ConfigError",
    "Flags",
    "Invocation",
    "Mode",
    "OutputFormat",
    "ProviderInfo",
    "Settings",
    "load_settings",
    "missing_key_problem",
    "starts_on_starter",
]
