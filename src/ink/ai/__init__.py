"""Talking to models: messages, stream events, the Provider protocol, the providers, their errors."""

import sys

# httpx (which the MCP SDK's HTTP transport uses; the providers do not) imports its own command-line
# client (click, rich, pygments: ~30 ms, and a UI library in the core's process) whenever click happens
# to be installed; ink never uses it, so keep it out before anything imports httpx.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
