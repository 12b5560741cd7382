"""The hardening suite starts RPC processes like the RPC suite does."""

from tests.rpc.conftest import start_rpc

__all__ = ["start_rpc"]
