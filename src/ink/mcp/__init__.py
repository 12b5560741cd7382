"""MCP: the tools of Model Context Protocol servers, as ink tools with ink's run control.

``manager.McpManager`` starts the configured servers (``ink.config.mcp``) and offers their tools
(``tool.McpTool``, named by ``names``); ``connection`` is the only module that imports the MCP SDK, and
it is imported only when a server is to be started. See docs/mcp.md.
"""
