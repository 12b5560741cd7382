"""Fixtures of the background-job suite: ``start_rpc``, ``start_acp`` and ``start_ink`` (the TUI in a
pseudo-terminal) as in their own suites."""

from tests.acp.conftest import start_acp
from tests.rpc.conftest import start_rpc
from tests.tui.conftest import start_ink

__all__ = ["start_acp", "start_ink", "start_rpc"]
