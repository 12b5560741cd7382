"""MCP: the tools of Model Context Protocol servers, as ink tools with ink's run control.

``manager.McpManager`` starts the configured servers (``ink.config.mcp``) and offers their tools
(``tool.McpTool``, named by ``names``). ``connection`` speaks to one server through ink's own JSON-RPC
client (``rpc``, ``wire``) over ``stdio`` or Streamable ``http`` (on ``ink.ai.http1``): importing the
official SDK cost ~0.9 s of pydantic models at every start with a server configured (docs/mcp.md).
"""
