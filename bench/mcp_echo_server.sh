#!/bin/sh
# A trivial MCP server over stdio in POSIX sh (about a millisecond to start): one echo tool. The
# start-up bench configures it so that its MCP row measures ink's own cost (client, handshake, tool
# list), not a server's start-up. ink writes "id" second in every request, so the id is cut out of the
# line; a notification has no "id" and gets no answer.
while IFS= read -r line; do
  case $line in
    *'"id":'*) ;;
    *) continue ;;
  esac
  id=${line#*\"id\":}
  id=${id%%,*}
  case $line in
    *'"method":"initialize"'*)
      result='{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}' ;;
    *'"method":"tools/list"'*)
      result='{"tools":[{"name":"echo","description":"Say the text back.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}' ;;
    *'"method":"tools/call"'*)
      result='{"content":[{"type":"text","text":"echoed"}]}' ;;
    *) result='{}' ;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$result"
done
