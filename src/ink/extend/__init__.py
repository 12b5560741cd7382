"""User logic around the run: custom commands' tool limits and hooks (docs/commands.md, docs/hooks.md).

Everything here plugs into the loop through its existing seams (``BeforeToolHook`` and friends) and is
assembled by ``ink.wiring``; nothing here knows a frontend.
"""
