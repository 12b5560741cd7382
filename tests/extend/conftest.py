"""The extension suites drive ink through RPC and the TUI: the fixtures of those suites, shared."""

from tests.acp.conftest import start_acp
from tests.rpc.conftest import start_rpc
from tests.tui.conftest import start_ink

__all__ = ["start_acp", "start_ink", "start_rpc"]
