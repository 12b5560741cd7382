"""Fixtures of the background-job suite: ``start_rpc`` as in the RPC suite."""

from tests.rpc.conftest import start_rpc

__all__ = ["start_rpc"]
