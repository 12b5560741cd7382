"""Frontends: print, rpc, acp, tui, sessions. Each is a subscriber to the run controller's events.

The command line (``ink.cli``) picks one and calls its ``main(settings: Settings, invocation: Invocation) ->
int`` (the process exit status) after the settings were resolved and checked (key present, base URL
reachable). A frontend opens its app with ``async with ink.wiring.open_app(settings) as app:`` inside its
event loop (ACP, whose sessions come and go, with ``start_app`` and ``await app.aclose()``); model and session
switches are the app's methods (``switch_model``, ``new_session``, ``resume_session``). Modules here are
imported only when their mode is chosen, so each may import what it needs (prompt_toolkit, rich) at the top.
"""
