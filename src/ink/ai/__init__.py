"""Talking to models: messages, stream events, the Provider protocol, the providers, their errors."""

import sys

# httpx imports its own command-line client (click, rich, pygments: ~30 ms, and a UI library in the
# core's process) whenever click happens to be installed; ink never uses it, so keep it out before any
# provider imports httpx.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
