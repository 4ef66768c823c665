"""Scout inside another agent: the MCP server (`scout mcp`) and the approvals it leaves pending.

A host agent (Claude Code and the like) calls Scout's tools over MCP; every call runs through
the session Scout builds for `scout run` (agent/runtime/builder.py): the same executor, gate,
wall, plan grant and transcript. What the gate would ask a person is never answered by the
client: the call comes back as a pending approval, a person decides it with `scout approvals`
(or the signed webhook decides it), and the client calls again with the approval's id. The SDK
(`mcp`, the optional extra `scout-agent[mcp]`) is imported only here and in the face that starts
it.
"""
