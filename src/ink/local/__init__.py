"""Local models run by ink itself: a llama.cpp server (the ``xllamacpp`` wheel of the ``local`` extra) in
a child process on a free loopback port, and the tiny starter model fetched on first use.

``runtime`` starts and stops the child, ``serve`` is the child, ``starter`` fetches the starter model,
``props`` asks a llama.cpp server whether its chat template handles tools. Nothing here is imported unless
``--provider local`` (or a llama.cpp server) is in use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink.config import Settings


def serves_locally(settings: Settings) -> bool:
    """``--provider local`` without a base URL of its own: ink runs the model server itself (the app's
    local model part, ``ink.wiring.local_part``)."""
    return settings.provider == "local" and settings.origins.get("base_url", "default") == "default"
