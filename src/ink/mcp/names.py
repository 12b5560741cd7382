"""Tool names the model sees: ``mcp__SERVER__TOOL``, valid for every provider.

Providers accept ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI rejects a 65-character name outright). A name that
does not fit is made to fit deterministically: characters outside the set become ``_``, and a name that
changed or is too long is cut and given a suffix of its SHA-256, so the same server and tool always get
the same name, in every session, and two different tools never share one. The real tool name is kept by
the adapter and used for the call.
"""

from __future__ import annotations

import re

MAX_NAME = 64
PREFIX = "mcp__"
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_SUFFIX = 8  # hex characters of the digest


def tool_name(server: str, tool: str) -> str:
    """The provider-safe name of ``tool`` of ``server``."""
    wanted = f"{PREFIX}{server}__{tool}"
    cleaned = _INVALID.sub("_", wanted)
    if cleaned == wanted and len(wanted) <= MAX_NAME:
        return wanted
    import hashlib  # only for a name that must be made to fit

    digest = hashlib.sha256(wanted.encode("utf-8")).hexdigest()[:_SUFFIX]
    return f"{cleaned[: MAX_NAME - _SUFFIX - 1]}_{digest}"
