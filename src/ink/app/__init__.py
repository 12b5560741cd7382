"""The application service: everything one ink session runs on (``App``: submit, model and session
switches, rewind through its checkpoints part, the one clean-up call) and what each run's set-up is made
of (``ink.app.setup``). Built by ``ink.wiring``, which holds construction only."""

from ink.app.service import App

__all__ = ["App"]
