"""User logic around the run: custom commands' tool limits and hooks (docs/commands.md, docs/hooks.md).

Everything here plugs into the loop through its seams (before-tool steps and friends, each given the
call's ``ToolCallContext``) and is assembled by ``ink.wiring``; nothing here knows a frontend.
"""
