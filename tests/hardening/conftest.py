"""The hardening suite starts RPC and ACP processes like their own suites do."""

from tests.acp.conftest import start_acp
from tests.rpc.conftest import start_rpc

__all__ = ["start_acp", "start_rpc"]
