"""Frontends: print, rpc, acp, tui, sessions. Each is a subscriber to the run controller's events.

The command line (``ink.cli``) picks one and calls its ``main(settings: Settings, invocation: Invocation)
-> int`` (the process exit status) after the settings were resolved and checked (key present, base URL
reachable). A frontend builds its parts with ``ink.wiring.build_app(settings)`` inside its event loop and
closes them with ``await app.aclose()``. Modules here are imported only when their mode is chosen, so
each may import what it needs (prompt_toolkit, rich) at the top.
"""
